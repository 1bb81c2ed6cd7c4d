"""Read many rollout files in worker processes: the first load of a large history.

Each worker reads a batch of files into its own readers and sends them back whole (a
reader is small once read: offsets, counts and the turns). Batches are sized by bytes so
both cores stay busy and progress can be reported as they finish.
"""

from __future__ import annotations

import marshal
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Callable

from codexwatch.sources.reader import RolloutReader, WholeFileBuffer

BATCH_BYTES = 24 << 20


def _read_batch(jobs: list[tuple[str, bool]]) -> list[RolloutReader]:
    whole = WholeFileBuffer()
    readers = []
    for path, skim in jobs:
        reader = RolloutReader(path)
        reader.read_new(whole, skim)
        readers.append(reader)
    return readers


def _read_batch_exported(jobs: list[tuple[str, bool]]) -> bytes:
    # Plain values through marshal cross the process boundary far faster than pickled objects.
    return marshal.dumps([r.export_state() for r in _read_batch(jobs)])


def _batches(jobs: list[tuple[str, bool]]) -> list[list[tuple[str, bool]]]:
    batches: list[list[tuple[str, bool]]] = [[]]
    size = 0
    for path, skim in jobs:
        try:
            size += os.stat(path).st_size
        except OSError:
            pass
        batches[-1].append((path, skim))
        if size >= BATCH_BYTES:
            batches.append([])
            size = 0
    return [b for b in batches if b]


def read_all(
    jobs: list[tuple[str, bool]],
    workers: int,
    into: dict[str, RolloutReader],
    progress: Callable[[int, int], None] | None = None,
) -> None:
    # forkserver: safe to start from a thread of a running app, and cheap after the first.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    done = 0
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
            futures = [pool.submit(_read_batch_exported, batch) for batch in _batches(jobs)]
            for future in as_completed(futures):
                for state in marshal.loads(future.result()):
                    reader = RolloutReader.from_state(state)
                    into[reader.path] = reader
                    done += 1
                if progress is not None:
                    progress(done, len(jobs))
    except (BrokenProcessPool, OSError, RuntimeError):
        # No worker processes here (a restricted sandbox, an embedded interpreter):
        # read what is left in this process instead.
        rest = [job for job in jobs if job[0] not in into]
        for reader in _read_batch(rest):
            into[reader.path] = reader
            done += 1
            if progress is not None:
                progress(done, len(jobs))
