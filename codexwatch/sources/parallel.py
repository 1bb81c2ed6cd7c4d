"""Read many rollout files in helper processes: the first load of a large history.

Files are cut into batches of a few MiB. This process and its helpers claim batches from a
shared counter until none are left, so both cores stay busy to the end whatever each batch
costs, and nobody has to hand work out: a busy process cannot answer requests quickly (a
pool's manager thread waits for the reading loop to let go of the GIL). A helper sends each
batch's readers back as soon as it is read (a reader is small once read: offsets, counts and
the turns), and this process takes them in between its own batches.
"""

from __future__ import annotations

import marshal
import multiprocessing
import threading
from typing import Callable

from codexwatch.sources.reader import ReadJob, RolloutReader, WholeFileBuffer

BATCH_BYTES = 4 << 20


def _read_batch(jobs: list[ReadJob], whole: WholeFileBuffer | None = None) -> list[RolloutReader]:
    whole = whole or WholeFileBuffer()
    readers = []
    for job in jobs:
        reader = RolloutReader(job.path)
        reader.read_new(whole, job.skim, job.quiet_before)
        readers.append(reader)
    return readers


def _batches(jobs: list[ReadJob]) -> list[list[ReadJob]]:
    batches: list[list[ReadJob]] = [[]]
    size = 0
    for job in jobs:
        batches[-1].append(job)
        size += job.weight
        if size >= BATCH_BYTES:
            batches.append([])
            size = 0
    return [b for b in batches if b]


def _claim(counter, total: int) -> int | None:
    """The next unclaimed batch, for whichever process asks first."""
    with counter.get_lock():
        index = counter.value
        if index >= total:
            return None
        counter.value = index + 1
    return index


def _help(batches: list[list[ReadJob]], counter, conn) -> None:
    """A helper process: read batches until none are left, sending each one's readers."""
    whole = WholeFileBuffer()
    while (index := _claim(counter, len(batches))) is not None:
        # Plain values through marshal cross the process boundary far faster than pickles.
        conn.send_bytes(marshal.dumps([r.export_state() for r in _read_batch(batches[index], whole)]))
    conn.close()


def _start_method() -> str:
    # fork starts a helper at once with everything already imported, but is unsafe once
    # threads run (the dashboard's workers): then a forkserver.
    methods = multiprocessing.get_all_start_methods()
    if threading.active_count() == 1 and "fork" in methods:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def read_all(
    jobs: list[ReadJob],
    workers: int,
    into: dict[str, RolloutReader],
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Read every job with `workers - 1` helper processes and this one."""
    whole = WholeFileBuffer()

    def take(readers) -> None:
        for reader in readers:
            into[reader.path] = reader
        if progress is not None:
            progress(len(into), len(jobs))

    def take_sent(conn) -> None:
        take(RolloutReader.from_state(state) for state in marshal.loads(conn.recv_bytes()))

    batches = _batches(jobs)
    helpers = []
    try:
        ctx = multiprocessing.get_context(_start_method())
        counter = ctx.Value("q", 0)
        for _ in range(workers - 1):
            receive, send = ctx.Pipe(duplex=False)
            process = ctx.Process(target=_help, args=(batches, counter, send), daemon=True)
            process.start()
            send.close()  # the helper holds the only writing end: its exit ends the stream
            helpers.append((process, receive))
        while (index := _claim(counter, len(batches))) is not None:
            take(_read_batch(batches[index], whole))
            for _, receive in helpers:
                while receive.poll():
                    take_sent(receive)
        for process, receive in helpers:
            try:
                while True:
                    take_sent(receive)
            except EOFError:
                pass
            process.join()
    except (OSError, RuntimeError, ValueError, EOFError):
        # No helper processes here (a restricted sandbox, an embedded interpreter; under
        # Textual, stderr has no file descriptor and multiprocessing cannot start one), or
        # one died: what was not delivered is read below.
        pass
    finally:
        for process, receive in helpers:
            if process.is_alive():
                process.kill()
            receive.close()
    left = [job for job in jobs if job.path not in into]
    if left:
        take(_read_batch(left, whole))
