"""Read many rollout files in helper processes: the first load of a large history.

Files are cut into batches of a few MiB. This process and its helpers claim batches from a
pipe that holds every batch's number, so both cores stay busy to the end whatever each batch
costs, and nobody has to hand work out: a busy process cannot answer requests quickly. A
helper sends each batch's readers back as soon as it is read (a reader is small once read:
offsets, counts and the turns), and this process takes them in between its own batches.
Readers are handed on in the order of the jobs, so that whoever takes them (the statistics,
folding a file at a time) can let each go at once: only batches read ahead of the one
awaited are held.

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
from typing import Iterator

from codexwatch.sources.reader import ReadJob, RolloutReader, WholeFileBuffer, read_jobs

BATCH_BYTES = 4 << 20
_NUMBER = 4  # bytes of a batch number in the claims pipe
_MAX_BATCHES = 4_000  # numbers that fit in any pipe (16 KiB on macOS) before anyone reads one
_LENGTH = 8  # bytes of the length before each batch a helper sends
_AHEAD = 8  # batches read ahead of the one awaited, at most: what waits costs memory


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
        blob = marshal.dumps((index, [r.export_state() for r in read_jobs(batches[index], whole)]))
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


def read_in_order(jobs: list[ReadJob], workers: int,
                  whole: WholeFileBuffer | None = None) -> Iterator[RolloutReader]:
    """Every job's reader, in the order of `jobs`, read by `workers - 1` helper processes
    and this one (into `whole`, if given). The helpers start now, before the first reader
    is asked for."""
    batches = _batches(jobs)
    whole = whole or WholeFileBuffer()
    if workers < 2 or len(batches) < 2 or not _can_fork():
        return read_jobs(jobs, whole)
    return _Crew(batches, workers, whole).readers()


class _Crew:
    """This process and its helpers, reading the batches; hands readers on in order."""

    def __init__(self, batches: list[list[ReadJob]], workers: int, whole: WholeFileBuffer) -> None:
        self.batches = batches
        self.done: dict[int, list[RolloutReader]] = {}  # read, not yet handed on
        self.sending: dict[int, int] = {}  # the pipe a helper's batches come through -> its pid
        self.whole = whole
        self.claims, fill = os.pipe()
        try:
            _write_all(fill, b"".join(i.to_bytes(_NUMBER, "little") for i in range(len(batches))))
        finally:
            os.close(fill)  # read to its end, the pipe says every batch is claimed
        self.claimable = True
        self.next = 0  # the batch awaited
        try:
            for _ in range(workers - 1):
                pid, fd = _start_helper(batches, self.claims)
                self.sending[fd] = pid
        except OSError:
            pass  # fewer helpers, or none: this process reads what they would have

    def readers(self) -> Iterator[RolloutReader]:
        try:
            for number in range(len(self.batches)):
                self.next = number
                while number not in self.done:
                    self._step(number)
                yield from self.done.pop(number)
            while self.sending:  # each helper ends its stream once the claims run out
                self._take(next(iter(self.sending)))
        finally:
            for fd, pid in self.sending.items():  # helpers not done: stopped
                _stop(pid)
                os.close(fd)
            self.sending.clear()
            os.close(self.claims)

    def _step(self, number: int) -> None:
        """Bring batch `number` nearer: take what helpers sent, else read a batch here,
        else wait for a helper; a batch whose helper is gone is read here."""
        for fd in select.select(list(self.sending), [], [], 0)[0] if self.sending else ():
            self._take(fd)
        if number in self.done:
            return
        if self.claimable and len(self.done) < _AHEAD:
            index = _claim(self.claims)
            if index is None:
                self.claimable = False
            else:
                self.done[index] = list(read_jobs(self.batches[index], self.whole))
        elif self.sending:
            self._take(select.select(list(self.sending), [], [])[0][0])
        else:
            self.done[number] = list(read_jobs(self.batches[number], self.whole))

    def _take(self, fd: int) -> None:
        """One batch from a helper; once it has sent all, it is waited for. A helper that
        sends what does not load is stopped: its batches are read here."""
        try:
            head = _read_exactly(fd, _LENGTH)
            blob = _read_exactly(fd, int.from_bytes(head, "little")) if head is not None else None
            if blob is not None:
                index, states = marshal.loads(blob)
                readers = [RolloutReader.from_state(state) for state in states]
                if index in range(self.next, len(self.batches)):
                    self.done[index] = readers
                return
        except Exception:  # noqa: BLE001 - whatever a broken helper sent
            _stop(self.sending[fd])
        else:
            os.waitpid(self.sending[fd], 0)
        del self.sending[fd]
        os.close(fd)


def _stop(pid: int) -> None:
    import signal  # only when a read went wrong: a start's millisecond otherwise

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
