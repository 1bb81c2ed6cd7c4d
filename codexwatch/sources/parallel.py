"""Read many rollout files in worker processes: the first load of a large history.

Each worker reads a batch of files into its own readers and sends them back whole (a
reader is small once read: offsets, counts and the turns). Batches are sized by bytes so
both cores stay busy and progress can be reported as they finish.
"""

from __future__ import annotations

import marshal
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Callable

from codexwatch.sources.reader import ReadJob, RolloutReader, WholeFileBuffer

BATCH_BYTES = 16 << 20


def _read_batch(jobs: list[ReadJob], whole: WholeFileBuffer | None = None) -> list[RolloutReader]:
    whole = whole or WholeFileBuffer()
    readers = []
    for job in jobs:
        reader = RolloutReader(job.path)
        reader.read_new(whole, job.skim)
        readers.append(reader)
    return readers


def _read_batch_exported(jobs: list[ReadJob]) -> bytes:
    # Plain values through marshal cross the process boundary far faster than pickled objects.
    return marshal.dumps([r.export_state() for r in _read_batch(jobs)])


def _batches(jobs: list[ReadJob]) -> list[list[ReadJob]]:
    batches: list[list[ReadJob]] = [[]]
    size = 0
    for job in jobs:
        batches[-1].append(job)
        size += job.size
        if size >= BATCH_BYTES:
            batches.append([])
            size = 0
    return [b for b in batches if b]


def read_all(
    jobs: list[ReadJob],
    workers: int,
    into: dict[str, RolloutReader],
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Read every job: `workers - 1` helper processes are given their share up front, in
    parts, and this process reads the rest meanwhile, then takes back the parts no helper
    has begun. Work is not handed out batch by batch: each hand-over would need this busy
    process's attention."""
    # fork starts a helper at once with everything already imported, but is unsafe once
    # threads run (the dashboard's workers): then a forkserver.
    methods = multiprocessing.get_all_start_methods()
    if threading.active_count() == 1 and "fork" in methods:
        method = "fork"
    else:
        method = "forkserver" if "forkserver" in methods else "spawn"
    batches = _batches(jobs)
    # Helpers start ~0.1 s late: this process keeps a little more than its even share.
    mine = [b for i, b in enumerate(batches) if i % workers == 0]
    theirs = [b for i, b in enumerate(batches) if i % workers != 0]
    whole = WholeFileBuffer()

    def take(readers) -> None:
        for reader in readers:
            into[reader.path] = reader
        if progress is not None:
            progress(len(into), len(jobs))

    try:
        with ProcessPoolExecutor(workers - 1, mp_context=multiprocessing.get_context(method)) as pool:
            parts = _split(theirs, 8 * (workers - 1))
            futures = {pool.submit(_read_batches_exported, part): part for part in parts}
            for batch in mine:
                take(_read_batch(batch, whole))
            # Done first (the helpers started late): take back what they have not begun.
            for future, part in futures.items():
                if future.cancel():
                    take(_read_batch([job for batch in part for job in batch], whole))
            for future in as_completed([f for f in futures if not f.cancelled()]):
                take(RolloutReader.from_state(st) for st in marshal.loads(future.result()))
    except (BrokenProcessPool, OSError, RuntimeError, ValueError):
        # No helper processes here (a restricted sandbox, an embedded interpreter; under
        # Textual, stderr has no file descriptor and multiprocessing's resource tracker
        # cannot start): read what is left in this process instead.
        take(_read_batch([job for job in jobs if job.path not in into], whole))


def _split(items: list, parts: int) -> list[list]:
    return [items[i::parts] for i in range(parts) if items[i::parts]]


def _read_batches_exported(batches: list[list[ReadJob]]) -> bytes:
    return _read_batch_exported([job for batch in batches for job in batch])
