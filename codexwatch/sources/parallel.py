"""Read many rollout files in helper processes: the first load of a large history.

Files are cut into batches of a few MiB. A crew is this process and its helpers, forked
once and kept for every list of jobs it is given (a fold of a large history gives it one
list a few thousand files at a time). This process hands batches out, in order, a couple
to each helper at a time, reads others itself meanwhile, and takes each helper's readers
back as they come (a reader is small once read: offsets, counts and the turns). Readers
are handed on in the order of the jobs, so that whoever takes them (the statistics,
folding a file at a time) can let each go at once: only batches read ahead of the one
awaited are held.

Helpers are forked: they start at once with everything already imported, and nothing else
(no multiprocessing machinery, a sixtieth of a cold start) has to load first. They are
forked once, early, while this process is still small: a fork's copy of memory that was
shared grows as the helper writes to it, so a helper forked late, from a process holding
a large history's statistics, ends up a second copy of them. Where there is no fork, or
other threads run (a forked copy of a threaded process can deadlock: the dashboard loads
in a worker thread), everything is read in this process.
"""

from __future__ import annotations

import marshal
import os
import select
import threading
from pathlib import Path
from typing import Iterator

from codexwatch.sources.listing import RolloutFile, file_size, find_rollouts
from codexwatch.sources.reader import ReadJob, RolloutReader, WholeFileBuffer, line_starts, read_jobs

# A batch's bytes: 4 MiB made batches of 120 small sessions when their sizes were known
# (a window, not `all`), and the two processes waited on each other a quarter longer.
BATCH_BYTES = 2 << 20
# and files, at least: a batch costs both processes some 0.1 ms whatever it holds, and many
# small sessions (`codex exec` from scripts, 34 KB each) made 2,000 batches a GiB
BATCH_FILES = 64
PARALLEL_MIN_BYTES = 64 << 20  # below this, starting processes costs more than it saves
# A file too large to read whole, among few others, is cut into parts of about this many
# bytes, read by this process and the helpers at once (8 and 32 MiB did no better).
PART_BYTES = 16 << 20
_BATCH, _PART = 0, 1  # the two kinds of work a helper is given
_LENGTH = 8  # bytes of the length before each message
PIPE_BYTES = 1 << 20  # what a helper's pipe back holds, where it can be made to (Linux's limit)
_AHEAD = 8  # batches read ahead of the one awaited, at most: what waits costs memory
_IN_FLIGHT = 4  # batches a helper holds at a time: enough to read on while this process is busy


def _batches(jobs: list[ReadJob]) -> list[list[ReadJob]]:
    batches: list[list[ReadJob]] = [[]]
    size = 0
    for job in jobs:
        batches[-1].append(job)
        size += job.weight
        if size >= BATCH_BYTES and len(batches[-1]) >= BATCH_FILES:
            batches.append([])
            size = 0
    return [b for b in batches if b]


def _help(inbox: int, out: int) -> None:
    """A helper process: do each piece of work it is sent (a batch of files: their readers;
    a part of a large file: its records) and send what it made back, until its inbox
    closes."""
    whole = WholeFileBuffer()
    while (blob := _receive(inbox)) is not None:
        ticket, work = marshal.loads(blob)
        if work[0] == _PART:
            made = _read_part(whole, *work[1:])
        else:
            made = [r.state_blob() for r in read_jobs([ReadJob(*job) for job in work[1]], whole)]
        # Plain values through marshal cross the process boundary far faster than pickles.
        _send(out, marshal.dumps((ticket, made)))


def _read_part(whole: WholeFileBuffer, path: str, start: int, stop: int) -> tuple:
    """A part of a large file, read here for the process that reads the rest: (its
    records, its counts, whether it was read whole from the file that process reads)."""
    part = RolloutReader(path)
    records = part.read_part(whole, start, stop)
    return records, part.counts.export(), (part.identity, part.offset, part.error)


def _framed(blob: bytes) -> memoryview:
    """A message as it crosses a pipe: its length, then itself."""
    return memoryview(len(blob).to_bytes(_LENGTH, "little") + blob)


def _send(fd: int, blob: bytes) -> None:
    data = _framed(blob)
    while data:
        data = data[os.write(fd, data):]


def _receive(fd: int) -> bytes | None:
    """One message, or None when the pipe ends first (its writer is gone)."""
    head = _read_exactly(fd, _LENGTH)
    return _read_exactly(fd, int.from_bytes(head, "little")) if head is not None else None


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts, got = [], 0
    while got < size:
        part = os.read(fd, size - got)
        if not part:
            return None
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _widen(pipe: int) -> None:
    """Let a pipe hold what a helper reads ahead (Linux): at 64 KiB, the usual size, a
    batch of a few dozen sessions did not fit, and the helper waited for this process to
    take it, a fifth of its time, while this process read a batch of its own."""
    try:
        import fcntl

        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # elsewhere, or above the system's limit: the pipe as it is


def _can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


class _Helper:
    """A helper process, the pipes to and from it, and the tickets of the batches it holds."""

    def __init__(self, others: list["_Helper"]) -> None:
        to_helper, self.inbox = os.pipe()
        self.outbox, from_helper = os.pipe()
        _widen(from_helper)
        self.pid = os.fork()
        if self.pid == 0:  # the helper: never returns, never runs this process's exit handlers
            code = 1
            try:
                # Only this process may hold the other helpers' ends: their inbox ends only
                # when every copy of its writing end is closed.
                for fd in [self.inbox, self.outbox, *(f for h in others for f in (h.inbox, h.outbox))]:
                    os.close(fd)
                _help(to_helper, from_helper)
                code = 0
            finally:
                os._exit(code)
        os.close(to_helper)
        os.close(from_helper)
        os.set_blocking(self.inbox, False)  # see give()
        self.holding: list[int] = []
        self.sent: list[bytes] = []  # batches read, taken in while giving

    def give(self, ticket: int, work: tuple) -> None:
        """Raises OSError if the helper is gone."""
        self.holding.append(ticket)
        data = _framed(marshal.dumps((ticket, work)))
        while data:
            try:
                data = data[os.write(self.inbox, data):]
            except BlockingIOError:
                # Its inbox is full: the helper is reading a batch, or sending one and
                # waiting for this process to take it. Take it, or both would wait forever.
                if select.select([self.outbox], [self.inbox], [])[0]:
                    self.sent.append(self._next())

    def ready(self) -> bool:
        return bool(self.sent)

    def _next(self) -> bytes:
        blob = _receive(self.outbox)
        if blob is None:
            raise EOFError("helper gone")
        return blob

    def take(self) -> tuple[int, object]:
        """The next piece of work done: (its ticket, what was made); raises if the helper
        is gone or sent what does not load."""
        blob = self.sent.pop(0) if self.sent else self._next()
        ticket, made = marshal.loads(blob)
        self.holding.remove(ticket)
        return ticket, made

    def end(self, stop: bool = False) -> None:
        os.close(self.inbox)  # read to its end, the helper's inbox says: no more
        self.sent.clear()
        if stop:
            _stop(self.pid)
        else:
            while _receive(self.outbox) is not None:  # batches it still held
                pass
            os.waitpid(self.pid, 0)
        os.close(self.outbox)


class Crew:
    """This process and `workers - 1` helpers, forked when first needed, kept until
    `close()`."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.helpers: list[_Helper] = []
        self.started = False
        self.tickets = 0  # every batch given out has its own, whichever list it is from

    @classmethod
    def forked_now(cls, workers: int) -> "Crew":
        """A crew whose helpers are forked at once (none where this process cannot fork),
        to be handed to a thread that reads later (the dashboard's)."""
        crew = cls(workers)
        crew._staffed()
        return crew

    def read_in_order(self, jobs: list[ReadJob], whole: WholeFileBuffer) -> Iterator[RolloutReader]:
        """Every job's reader, in the order of `jobs`."""
        batches = _batches(jobs)
        if len(batches) < 2:
            return self._few(jobs, whole)
        if not self._staffed():
            return read_jobs(jobs, whole)
        return _Round(self, batches, whole).readers()

    def _few(self, jobs: list[ReadJob], whole: WholeFileBuffer) -> Iterator[RolloutReader]:
        """Too few files to share out: each read here, but a file too large to read whole
        (a TUI thread kept open for days) read by the crew, a part each."""
        for job in jobs:
            if job.size is not None and job.size > whole.limit and self._staffed():
                yield _Parts(self, job, whole).read()
            else:
                yield from read_jobs([job], whole)

    def _staffed(self) -> bool:
        if not self.started:
            self.started = True
            if _can_fork():
                try:
                    for _ in range(self.workers - 1):
                        self.helpers.append(_Helper(self.helpers))
                except OSError:
                    pass  # fewer helpers, or none: this process reads what they would have
        return bool(self.helpers)

    def lose(self, helper: _Helper) -> None:
        """A helper that failed: stopped (once; lost already, nothing); what it held is read
        here."""
        if helper in self.helpers:
            self.helpers.remove(helper)
            helper.end(stop=True)

    def close(self) -> None:
        for helper in self.helpers:
            helper.end()
        self.helpers.clear()


class _Round:
    """One list of jobs, read by a crew: batches handed out in order and handed on in
    order."""

    def __init__(self, crew: Crew, batches: list[list[ReadJob]], whole: WholeFileBuffer) -> None:
        self.crew, self.batches, self.whole = crew, batches, whole
        self.done: dict[int, list[RolloutReader]] = {}  # read, not yet handed on
        self.given: dict[int, tuple[int, _Helper]] = {}  # ticket -> (batch, helper)
        self.next = 0  # the first batch neither given out nor read here

    def readers(self) -> Iterator[RolloutReader]:
        try:
            for number in range(len(self.batches)):
                while number not in self.done:
                    self._step(number)
                yield from self.done.pop(number)
        finally:
            for _, helper in list(self.given.values()):  # left early: what helpers hold is dropped
                self.crew.lose(helper)

    def _step(self, number: int) -> None:
        """Bring batch `number` nearer: give helpers work, take what they sent, read a
        batch here, or wait for the helper that holds `number`."""
        self._give(number)
        helpers = self.crew.helpers
        readable = set(select.select([h.outbox for h in helpers], [], [], 0)[0]) if helpers else set()
        for helper in [h for h in helpers if h.ready() or h.outbox in readable]:
            self._take(helper)
        if number in self.done:
            return
        holder = next((h for b, h in self.given.values() if b == number), None)
        if holder is None:  # not given out, or its helper failed
            if number == self.next:
                self.next += 1
            self.done[number] = list(read_jobs(self.batches[number], self.whole))
        elif self.next < len(self.batches) and len(self.done) < _AHEAD:
            self.done[self.next] = list(read_jobs(self.batches[self.next], self.whole))
            self.next += 1
        else:
            self._take(holder)

    def _give(self, number: int) -> None:
        for helper in list(self.crew.helpers):
            while (len(helper.holding) < _IN_FLIGHT and self.next < len(self.batches)
                   and self.next < number + _AHEAD):
                self.crew.tickets += 1
                self.given[self.crew.tickets] = (self.next, helper)
                self.next += 1
                try:
                    helper.give(self.crew.tickets, (_BATCH, [tuple(job) for job in self.batches[self.next - 1]]))
                except (OSError, EOFError):
                    _lose(self.crew, self.given, helper)
                    break

    def _take(self, helper: _Helper) -> None:
        try:
            ticket, blobs = helper.take()
            readers = [RolloutReader.from_blob(blob) for blob in blobs]
        except Exception:  # noqa: BLE001 - whatever a broken helper did or sent
            _lose(self.crew, self.given, helper)
            return
        batch, _ = self.given.pop(ticket, (None, None))
        if batch is not None:
            self.done[batch] = readers


def _lose(crew: Crew, given: dict, helper: _Helper) -> None:
    """A helper that failed, for a round of batches or a file's parts (`given`: what was
    given out, each as (this, helper)): what it held is forgotten, each read here as it is
    awaited, and it is stopped."""
    for key in [k for k, (_, h) in given.items() if h is helper]:
        del given[key]
    crew.lose(helper)


_PARTS_HELD = 2  # parts a helper holds at a time: one to read, one waiting


class _Parts:
    """One large file read by a crew: cut where lines start into parts, given out in turn
    (one to this process, then one to each helper), and taken in order by one reader, as
    if it had read them all. A part a helper could not read whole (the file changed, the
    helper failed) is read here."""

    def __init__(self, crew: Crew, job: ReadJob, whole: WholeFileBuffer) -> None:
        self.crew, self.whole = crew, whole
        self.reader = RolloutReader(job.path)
        starts = line_starts(job.path, job.size, PART_BYTES)
        self.parts = list(zip([0, *starts], [*starts, None]))  # the last one to the end
        # Who reads which part: this process one, then each helper one. This process also
        # feeds every part's records to the reader; two parts to each helper for one here
        # did no better (giant, measured).
        self.rota = [None, *crew.helpers]
        self.given: dict[int, tuple[int, _Helper]] = {}  # part -> (ticket, helper)
        self.next = 1  # the first part not yet given out or passed over

    def read(self) -> RolloutReader:
        try:
            for number, (start, stop) in enumerate(self.parts):
                self._give(number)
                held = self.given.pop(number, None)
                if held is None or not self._take(number, *held):
                    self.reader.read_new(self.whole, until=stop)
                self.next = max(self.next, number + 1)
        finally:
            for _, helper in list(self.given.values()):  # left early: what helpers hold is dropped
                self.crew.lose(helper)
        return self.reader

    def _give(self, number: int) -> None:
        """Give helpers the parts theirs from here on, in order, as many as they can hold."""
        last = len(self.parts) - 1  # read here: it goes to the end, however far that is now
        while self.next < last:
            helper = self.rota[self.next % len(self.rota)]
            if helper in self.crew.helpers:  # else this process's part (or a lost helper's)
                if len(helper.holding) >= _PARTS_HELD:
                    return  # the part waits its turn
                self.crew.tickets += 1
                start, stop = self.parts[self.next]
                try:
                    helper.give(self.crew.tickets, (_PART, self.reader.path, start, stop))
                except (OSError, EOFError):
                    _lose(self.crew, self.given, helper)
                    return
                self.given[self.next] = (self.crew.tickets, helper)
            self.next += 1

    def _take(self, number: int, ticket: int, helper: _Helper) -> bool:
        """Take in the part a helper read; False if it is to be read here after all."""
        try:
            got, (records, counts, (identity, offset, error)) = helper.take()
            if got != ticket:
                raise ValueError("a part out of turn")
        except Exception:  # noqa: BLE001 - whatever a broken helper did or sent
            _lose(self.crew, self.given, helper)
            return False
        reader, (start, stop) = self.reader, self.parts[number]
        if (error is None and offset == stop and identity == reader.identity
                and reader.offset == start and reader.error is None
                and not reader.pending and reader.skipping_head is None):
            reader.take_part(records, counts, stop)
            return True
        return False


def read_in_order(jobs: list[ReadJob], workers: int,
                  whole: WholeFileBuffer | None = None) -> Iterator[RolloutReader]:
    """Every job's reader, in the order of `jobs`, read by `workers - 1` helper processes
    and this one, started for these jobs alone (into `whole`, if given)."""
    crew = Crew(workers)
    try:
        yield from crew.read_in_order(jobs, whole or WholeFileBuffer())
    finally:
        crew.close()


class Listing:
    """A home's rollouts (find_rollouts), listed by a process forked for it while this one
    goes on: the dashboard imports and starts Textual meanwhile, and a warm start's read,
    which begins with the listing (a stat of every file), finds it made. Where this
    process cannot fork, there is none (`files()` is None: list here)."""

    def __init__(self, home: Path, stat: bool) -> None:
        self.stat = stat
        self._fd: int | None = None
        self._pid = 0
        if not _can_fork():
            return
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return
        try:
            self._pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return
        if self._pid == 0:  # the helper: never returns, never runs this process's exit handlers
            code = 1
            try:
                os.close(read_end)
                files = find_rollouts(home, None, stat=stat)
                _send(write_end, marshal.dumps([tuple(f) for f in files]))
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        self._fd = read_end

    def files(self) -> list[RolloutFile] | None:
        """The listing, once; None if the helper did not give it."""
        if self._fd is None:
            return None
        try:
            blob = _receive(self._fd)
            if blob is None:
                return None
            os.waitpid(self._pid, 0)  # it has said all: it ends by itself
            self._pid = 0
            return [RolloutFile(path, size, mtime, tuple(ident) if ident else None)
                    for path, size, mtime, ident in marshal.loads(blob)]
        except Exception:  # noqa: BLE001 - whatever it sent: listed here instead
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Ends the helper: one still listing, or waiting to be read, is stopped."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._pid:
            _stop(self._pid)
            self._pid = 0


def _stop(pid: int) -> None:
    import signal  # only when a helper is stopped early: a start's millisecond otherwise

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


def default_workers() -> int:
    """How many processes read a large history when helpers are wanted (codexwatch's own
    headless commands): this one and a helper, on a machine with two cores or more."""
    return min(2, os.cpu_count() or 1)


def read_new(jobs: list[ReadJob], workers: int, whole: WholeFileBuffer,
             crew: Crew | None = None) -> Iterator[RolloutReader]:
    """Every job's reader, in the order of `jobs`: by `workers` processes when there are
    that many and the jobs weigh enough to pay for them (with `crew`'s helpers, if given;
    else helpers just for these), else here."""
    if workers > 1 and len(jobs) < BATCH_FILES:  # few files: which are large is worth a look
        jobs = [job if job.size is not None else job._replace(size=file_size(job.path)) for job in jobs]
    if workers > 1 and sum(job.weight for job in jobs) >= PARALLEL_MIN_BYTES:
        if crew is not None:
            return crew.read_in_order(jobs, whole)
        return read_in_order(jobs, workers, whole)
    return read_jobs(jobs, whole)
