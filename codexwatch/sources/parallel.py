"""Read many rollout files in helper processes: the first load of a large history.

Files are cut into batches of a few MiB. This process and its helpers claim batches from a
pipe that holds every batch's number, so both cores stay busy to the end whatever each batch
costs, and nobody has to hand work out: a busy process cannot answer requests quickly. A
helper sends each batch's readers back as soon as it is read (a reader is small once read:
offsets, counts and the turns), and this process takes them in between its own batches.

Helpers are forked: they start at once with everything already imported, and nothing else
(no multiprocessing machinery, a sixtieth of a cold start) has to load first. Where there
is no fork, or other threads run (a forked copy of a threaded process can deadlock: the
dashboard loads in a worker thread), everything is read in this process.
"""

from __future__ import annotations

import marshal
import os
import select
import threading
from typing import Callable

from codexwatch.sources.reader import ReadJob, RolloutReader, WholeFileBuffer

BATCH_BYTES = 4 << 20
_NUMBER = 4  # bytes of a batch number in the claims pipe
_MAX_BATCHES = 4_000  # numbers that fit in any pipe (16 KiB on macOS) before anyone reads one
_LENGTH = 8  # bytes of the length before each batch a helper sends


def _read_batch(jobs: list[ReadJob], whole: WholeFileBuffer | None = None) -> list[RolloutReader]:
    whole = whole or WholeFileBuffer()
    readers = []
    for job in jobs:
        reader = RolloutReader(job.path)
        reader.read_new(whole, job.skim, job.quiet_before)
        readers.append(reader)
    return readers


def _batches(jobs: list[ReadJob]) -> list[list[ReadJob]]:
    limit = max(BATCH_BYTES, sum(job.weight for job in jobs) // _MAX_BATCHES + 1)
    batches: list[list[ReadJob]] = [[]]
    size = 0
    for job in jobs:
        batches[-1].append(job)
        size += job.weight
        if size >= limit:
            batches.append([])
            size = 0
    return [b for b in batches if b]


def _claim(claims: int) -> int | None:
    """The next unclaimed batch, for whichever process asks first: a pipe hands each
    number to one reader only."""
    data = os.read(claims, _NUMBER)
    return int.from_bytes(data, "little") if len(data) == _NUMBER else None


def _help(batches: list[list[ReadJob]], claims: int, out: int) -> None:
    """A helper process: read batches until none are left, sending each one's readers."""
    whole = WholeFileBuffer()
    while (index := _claim(claims)) is not None:
        # Plain values through marshal cross the process boundary far faster than pickles.
        blob = marshal.dumps([r.export_state() for r in _read_batch(batches[index], whole)])
        _write_all(out, len(blob).to_bytes(_LENGTH, "little") + blob)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, size: int) -> bytes | None:
    """`size` bytes from a pipe, or None when it ends first (its writer is gone)."""
    parts, got = [], 0
    while got < size:
        part = os.read(fd, size - got)
        if not part:
            return None
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _received(fd: int) -> list[dict] | None:
    """The next batch a helper sent, None once it has sent all it will."""
    head = _read_exactly(fd, _LENGTH)
    blob = _read_exactly(fd, int.from_bytes(head, "little")) if head is not None else None
    return marshal.loads(blob) if blob is not None else None


def _can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


def _start_helper(batches: list[list[ReadJob]], claims: int) -> tuple[int, int]:
    """-> (the helper's pid, the pipe its batches come through)."""
    receive, send = os.pipe()
    pid = os.fork()
    if pid == 0:  # the helper: never returns, never runs this process's exit handlers
        code = 1
        try:
            os.close(receive)
            _help(batches, claims, send)
            code = 0
        finally:
            os._exit(code)
    os.close(send)  # the helper holds the only writing end: its exit ends the stream
    return pid, receive


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

    def take_sent(fd: int) -> None:
        """One batch from a helper; once it has sent all, it is waited for."""
        states = _received(fd)
        if states is None:
            pid = sending.pop(fd)
            os.close(fd)
            os.waitpid(pid, 0)
        else:
            take(RolloutReader.from_state(state) for state in states)

    batches = _batches(jobs)
    sending: dict[int, int] = {}  # the pipe a helper's batches come through -> its pid
    claims = -1
    try:
        if workers > 1 and len(batches) > 1 and _can_fork():
            claims, fill = os.pipe()
            _write_all(fill, b"".join(i.to_bytes(_NUMBER, "little") for i in range(len(batches))))
            os.close(fill)  # read to its end, the pipe says every batch is claimed
            for _ in range(workers - 1):
                pid, fd = _start_helper(batches, claims)
                sending[fd] = pid
            while (index := _claim(claims)) is not None:
                take(_read_batch(batches[index], whole))
                while sending and (ready := select.select(list(sending), [], [], 0)[0]):
                    for fd in ready:
                        take_sent(fd)
            while sending:
                take_sent(next(iter(sending)))
    except (OSError, ValueError, EOFError, TypeError):
        pass  # a helper that died, or sent what does not load: its files are read below
    finally:
        for fd, pid in sending.items():  # helpers not done: stopped
            _stop(pid)
            os.close(fd)
        if claims >= 0:
            os.close(claims)
    left = [job for job in jobs if job.path not in into]
    if left:
        take(_read_batch(left, whole))


def _stop(pid: int) -> None:
    import signal  # only when a read went wrong: a start's millisecond otherwise

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
