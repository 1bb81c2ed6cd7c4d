"""Follow one rollout file as Codex appends to it, reading each byte once.

The reader remembers its byte offset and the file's identity. A last line without its
newline stays pending until the newline arrives. A file that shrank or was replaced is read
again from the start. Lines longer than the cap are recognised by their head and skipped
without ever being held whole in memory.
"""

from __future__ import annotations

import marshal
import os
import stat
from dataclasses import dataclass
from typing import Iterable, Iterator, NamedTuple

from codexwatch.core import parse as P
from codexwatch.core.models import FileHealth, Turn
from codexwatch.core.turns import TurnAssembler

CHUNK = 8 << 20
MAX_LINE = 16 << 20  # a line this long is a tool output or an image, never a fact we need
IDLE_SECONDS = 600.0  # an open turn in a file untouched this long is not running any more
TYPICAL_BYTES = 256 << 10  # what a rollout not looked at yet is taken to weigh


class ReadJob(NamedTuple):
    """A file to read for the first time: `skim` it when nobody is writing it (when it was
    last written before `quiet_before`, if given, as it stands when it is opened)."""

    path: str
    skim: bool
    size: int | None  # None: not looked at before reading
    quiet_before: float | None = None

    @property
    def weight(self) -> int:
        return self.size if self.size is not None else TYPICAL_BYTES


@dataclass(slots=True)
class ReadResult:
    changed: bool  # new complete lines were read
    restarted: bool  # the file was truncated or replaced: everything was read anew
    error: str | None = None


class RolloutReader:
    def __init__(self, path: str, max_line: int = MAX_LINE) -> None:
        self.path = path
        self.max_line = max_line
        self._reset()

    def _reset(self) -> None:
        self.offset = 0
        self.identity: tuple[int, int] | None = None
        self.pending = b""
        self.skipping_head: bytes | None = None  # head of an oversized line being skipped
        self.counts = P.LineCounts()
        self.assembler = TurnAssembler(self.path)
        self.mtime = 0.0
        self.error: str | None = None
        self.skimmed = False  # the first read visited only turn boundaries
        self.settled = False  # only the turns are kept: any change means reading anew
        self._blob: bytes | None = None  # state_blob(), while it holds

    def export_state(self) -> dict:
        return {
            "path": self.path, "max_line": self.max_line, "offset": self.offset,
            "identity": self.identity, "pending": self.pending,
            "skipping_head": self.skipping_head, "mtime": self.mtime, "error": self.error,
            "skimmed": self.skimmed, "settled": self.settled,
            "counts": self.counts.export(),
            "assembler": self.assembler.export_state(),
        }

    def state_blob(self) -> bytes:
        """export_state(), marshalled: what crosses from a helper process and what the index
        keeps. A settled reader's is made once and kept until it reads again: a first read
        by a helper hands it to this process with the reader, and the index stores it as
        it came instead of exporting the reader a second time."""
        if self._blob is not None:
            return self._blob
        blob = marshal.dumps(self.export_state())
        if self.settled:
            self._blob = blob
        return blob

    @classmethod
    def from_blob(cls, blob: bytes) -> "RolloutReader":
        """The reader state_blob() gave."""
        reader = cls.from_state(marshal.loads(blob))
        if reader.settled:
            reader._blob = blob
        return reader

    @classmethod
    def from_state(cls, state: dict) -> "RolloutReader":
        """The reader `state` describes; takes the dict over (a warm start restores thousands,
        fresh from the index, that nobody else holds)."""
        if state.keys() != _STATE_KEYS:
            raise ValueError("reader state of another shape")
        reader = cls.__new__(cls)
        reader.__dict__ = state
        reader.identity = tuple(state["identity"]) if state["identity"] else None
        reader.counts = P.LineCounts(**state["counts"])
        reader.assembler = TurnAssembler.from_state(state["assembler"])
        reader._blob = None
        return reader

    def read_new(self, whole: "WholeFileBuffer | None" = None, skim: bool = False,
                 quiet_before: float | None = None, until: int | None = None) -> ReadResult:
        """Read what was appended. `whole`: read a file seen for the first time in one go
        into this reusable buffer; `skim`: and visit only its turn boundaries (if it was
        last written before `quiet_before`, when given). `until` (with `whole`): read no
        further than this offset, where a line starts; another process reads on from
        there (read_part, take_part)."""
        self._blob = None  # whatever this read finds (a new mtime, an error) is not in it
        return self._read(whole, skim, quiet_before, until, self.assembler.feed)

    def _read(self, whole: "WholeFileBuffer | None", skim: bool, quiet_before: float | None,
              until: int | None, feed) -> ReadResult:
        """_read_fd on the file opened; what goes wrong is this reader's error."""
        try:
            # O_NONBLOCK: a FIFO put where the file was must not block the open until a writer
            # comes (it changes nothing for regular files).
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            self.error = _describe(exc)
            return ReadResult(changed=False, restarted=False, error=self.error)
        try:
            return self._read_fd(fd, whole, skim, quiet_before, until, feed)
        except OSError as exc:
            self.error = _describe(exc)
            return ReadResult(changed=False, restarted=False, error=self.error)
        finally:
            os.close(fd)

    def _read_fd(self, fd: int, whole: "WholeFileBuffer | None", skim: bool,
                 quiet_before: float | None, until: int | None, feed) -> ReadResult:
        """Records of the lines read in chunks go to `feed` (the assembler's, but for a
        part read for another reader: read_part)."""
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a folder, FIFO or device put where the file was
            self.error = "not a regular file"
            return ReadResult(changed=False, restarted=False, error=self.error)
        identity = (st.st_dev, st.st_ino)
        restarted = False
        if self.identity is not None and (
            identity != self.identity or st.st_size < self.offset
            or (self.settled and st.st_size != self.offset)  # written again after all
        ):
            self._reset()
            restarted = True
        self.identity = identity
        self.mtime = st.st_mtime
        self.error = None
        if st.st_size == self.offset:
            return ReadResult(changed=restarted, restarted=restarted)
        lines_before = self.counts.lines
        if self.offset == 0 and whole is not None and st.st_size <= whole.limit and until is None:
            quiet = skim and (quiet_before is None or st.st_mtime < quiet_before)
            self._read_whole(fd, st.st_size, whole, quiet)
            # A fresh mtime on old lines is a copied or restored file (rsync without -t, a
            # backup), not one Codex writes: it stamps each line with the time.
            if quiet or (skim and self._lines_older_than(quiet_before)):
                self._settle()
            return ReadResult(changed=True, restarted=restarted)
        if whole is not None:  # a large first read: chunks into the reused buffer
            self._read_chunks(fd, whole, until, feed)
        else:
            os.lseek(fd, self.offset, os.SEEK_SET)
            while True:
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    break
                self.offset += len(chunk)
                self._consume(chunk)
        return ReadResult(changed=restarted or self.counts.lines != lines_before, restarted=restarted)

    def _read_whole(self, fd: int, size: int, whole: "WholeFileBuffer", skim: bool) -> None:
        buf = whole.fill(fd, size)
        got = whole.length
        self.offset = got
        skimmed = P.skim(buf, got, self.counts, self.max_line) if skim else None
        self.skimmed = skimmed is not None
        records, consumed = skimmed or P.scan(buf, 0, self.counts, self.max_line, got)
        if records:
            self.assembler.feed(records)
        self._keep_tail(buf, consumed, got)

    def _settle(self) -> None:
        """A quiet file (skimmed, or of a version that cannot be), read to its end, is done
        with: its reader keeps the turns only (a third of the memory, and of the index)."""
        if not self.pending and self.skipping_head is None:
            self.assembler.settle()
            self.settled = True

    def _lines_older_than(self, moment: float | None) -> bool:
        last = self.assembler.last_ts
        return moment is not None and last is not None and last < moment

    def _keep_tail(self, buf, consumed: int, length: int) -> None:
        """What follows the last newline waits for the rest of its line."""
        if length - consumed > self.max_line:
            self.skipping_head = bytes(buf[consumed:consumed + P.HEADER_BYTES])
            self.pending = b""
        else:
            self.pending = bytes(buf[consumed:length])

    def _read_chunks(self, fd: int, whole: "WholeFileBuffer", until: int | None, feed) -> None:
        """From the offset to the end (or `until`), a CHUNK at a time after what was
        pending, in `whole`'s buffer: a fresh chunk each time would be fresh memory to
        fault in each time (a third of reading a 300 MB session). Records go to `feed`."""
        while until is None or self.offset < until:
            kept = len(self.pending)
            size = CHUNK if until is None else min(CHUNK, until - self.offset)
            buf = whole.fill(fd, size, at=self.offset, keep=self.pending)
            if whole.length == kept:
                break
            self.offset += whole.length - kept
            self._consume_buffer(buf, whole.length, feed)

    def read_part(self, whole: "WholeFileBuffer", start: int, stop: int) -> list[tuple]:
        """The records of the lines from `start` to `stop` (offsets where lines start), for
        the reader that reads the rest of the file (take_part): a file too large to read
        whole is read by several processes at once, a part each. This reader keeps only
        what says how it went: its counts, identity, offset (`stop` if all was read) and
        error."""
        records: list[tuple] = []
        self.offset = start
        self._read(whole, False, None, stop, records.extend)
        return records

    def take_part(self, records: list[tuple], counts: dict, stop: int) -> None:
        """A part read elsewhere (read_part: its records and exported counts) from this
        reader's offset to `stop`, taken as if read here."""
        self._blob = None
        self.assembler.feed(records)
        self.counts.add(P.LineCounts(**counts))
        self.offset = stop

    def _consume(self, chunk: bytes) -> None:
        self._consume_buffer(self.pending + chunk if self.pending else chunk, None, self.assembler.feed)

    def _consume_buffer(self, buf, length: int | None, feed) -> None:
        """What is pending and what was read since, buf[:length] (all of it: None)."""
        length = len(buf) if length is None else length
        start = 0
        if self.skipping_head is not None:  # then nothing is pending
            newline = buf.find(b"\n", 0, length)
            if newline < 0:
                return
            head = self.skipping_head
            self.skipping_head = None
            self.counts.lines += 1  # as scan counts an oversized line read in one piece
            rec = P.parse_line(head, 0, len(head), self.counts, oversized=True)
            if rec is not None:
                feed([rec])
            start = newline + 1
        records, consumed = P.scan(buf, start, self.counts, self.max_line, length)
        if records:
            feed(records)
        self._keep_tail(buf, consumed, length)

    def turns(self, now: float) -> list[Turn]:
        """The file's turns as of `now`. A settled file's are its reader's own list, the same
        at every call: to be read, not changed."""
        if self.settled:
            return self.assembler.done
        if self.assembler.open is None:  # whether the file is idle matters to an open turn only
            return self.assembler.turns(idle=True)
        return self.assembler.turns(idle=self._idle(now))

    def _idle(self, now: float) -> bool:
        # A copied or restored file has a fresh mtime but old lines: trust the older clue.
        last_write = self.mtime
        if self.assembler.last_ts is not None:
            last_write = min(last_write, self.assembler.last_ts)
        return now - last_write > IDLE_SECONDS

    def fixed(self, now: float) -> bool:
        """Whether turns() gives the same at any time from `now` on, while the file stays
        as it is: no turn can still be running."""
        return self.error is None and (self.settled or self.assembler.open is None or self._idle(now))

    def health(self) -> FileHealth:
        a, c = self.assembler, self.counts
        return FileHealth(  # positional: made for every file whenever statistics are shown
            self.path, a.cli_version, c.lines, c.malformed, dict(c.unknown_types), c.oversized,
            a.unsupported, self.skimmed, self.error,
        )


_STATE_KEYS = set(RolloutReader("").export_state())


def _describe(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "file vanished"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or type(exc).__name__


def read_jobs(jobs: Iterable[ReadJob], whole: "WholeFileBuffer | None" = None) -> Iterator[RolloutReader]:
    """Read each job's file for the first time, here, one after the other."""
    whole = whole or WholeFileBuffer()
    for job in jobs:
        reader = RolloutReader(job.path)
        reader.read_new(whole, job.skim, job.quiet_before)
        yield reader


def line_starts(path: str, size: int, every: int) -> list[int]:
    """Offsets in the file's first `size` bytes where a line starts, about `every` bytes
    apart, the first past `every`: where a large file is cut into parts. A line longer
    than `every` merges two parts. [] if the file cannot be read."""
    starts: list[int] = []
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return starts
    try:
        for aim in range(every, size, every):
            if starts and starts[-1] >= aim:  # a long line reached past this aim
                continue
            at = aim - 1  # where the line before ends, if one starts at the aim
            while at < min(size, aim + every):
                window = os.pread(fd, 64 << 10, at)
                newline = window.find(b"\n")
                if newline >= 0 or not window:
                    break
                at += len(window)
            else:
                continue
            if newline >= 0 and at + newline + 1 < size:
                starts.append(at + newline + 1)
    except OSError:
        return []
    finally:
        os.close(fd)
    return starts


class WholeFileBuffer:
    """One growing buffer reused for every first read, so reading a large history does not
    allocate (and fault in) fresh memory for each file."""

    def __init__(self, limit: int = 32 << 20) -> None:
        self.limit = limit  # larger files are read in chunks instead
        self._buf = bytearray(0)
        self.length = 0

    def fill(self, fd: int, size: int, at: int = 0, keep: bytes = b"") -> bytearray:
        """The buffer: `keep`, then up to `size` bytes of the file from offset `at`
        (`length` in all: fewer where the file ends)."""
        got, size = len(keep), len(keep) + size
        if len(self._buf) < size:
            self._buf = bytearray(max(size, 2 * len(self._buf), 1 << 20))
        self._buf[:got] = keep
        view = memoryview(self._buf)
        os.lseek(fd, at, os.SEEK_SET)
        while got < size:
            n = os.readv(fd, [view[got:size]])
            if n == 0:
                break  # the file shrank while we read: take what is there
            got += n
        view.release()
        self.length = got
        return self._buf
