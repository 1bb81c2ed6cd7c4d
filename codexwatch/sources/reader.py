"""Follow one rollout file as Codex appends to it, reading each byte once.

The reader remembers its byte offset and the file's identity. A last line without its
newline stays pending until the newline arrives. A file that shrank or was replaced is read
again from the start. Lines longer than the cap are recognised by their head and skipped
without ever being held whole in memory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from codexwatch.core import parse as P
from codexwatch.core.models import FileHealth, Turn
from codexwatch.core.turns import TurnAssembler

CHUNK = 8 << 20
MAX_LINE = 16 << 20  # a line this long is a tool output or an image, never a fact we need
IDLE_SECONDS = 600.0  # an open turn in a file untouched this long is not running any more


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

    def read_new(self) -> ReadResult:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            self.error = _describe(exc)
            return ReadResult(changed=False, restarted=False, error=self.error)
        try:
            return self._read_fd(fd)
        except OSError as exc:
            self.error = _describe(exc)
            return ReadResult(changed=False, restarted=False, error=self.error)
        finally:
            os.close(fd)

    def _read_fd(self, fd: int) -> ReadResult:
        st = os.fstat(fd)
        identity = (st.st_dev, st.st_ino)
        restarted = False
        if self.identity is not None and (identity != self.identity or st.st_size < self.offset):
            self._reset()
            restarted = True
        self.identity = identity
        self.mtime = st.st_mtime
        self.error = None
        if st.st_size == self.offset:
            return ReadResult(changed=restarted, restarted=restarted)
        lines_before = self.counts.lines
        os.lseek(fd, self.offset, os.SEEK_SET)
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            self.offset += len(chunk)
            self._consume(chunk)
        return ReadResult(changed=restarted or self.counts.lines != lines_before, restarted=restarted)

    def _consume(self, chunk: bytes) -> None:
        start = 0
        if self.skipping_head is not None:
            newline = chunk.find(b"\n")
            if newline < 0:
                return
            head = self.skipping_head
            self.skipping_head = None
            rec = P.parse_line(head, 0, len(head), self.counts, oversized=True)
            if rec is not None:
                self.assembler.feed([rec])
            start = newline + 1
        buf = self.pending + chunk[start:] if self.pending else chunk[start:] if start else chunk
        records, consumed = P.scan(buf, 0, self.counts, self.max_line)
        if records:
            self.assembler.feed(records)
        rest = len(buf) - consumed
        if rest > self.max_line:
            self.skipping_head = buf[consumed:consumed + P.HEADER_BYTES]
            self.pending = b""
        else:
            self.pending = buf[consumed:]

    def turns(self, now: float) -> list[Turn]:
        # A copied or restored file has a fresh mtime but old lines: trust the older clue.
        last_write = self.mtime
        if self.assembler.last_ts is not None:
            last_write = min(last_write, self.assembler.last_ts)
        return self.assembler.turns(idle=now - last_write > IDLE_SECONDS)

    def health(self) -> FileHealth:
        a = self.assembler
        return FileHealth(
            path=self.path,
            cli_version=a.cli_version,
            lines=self.counts.lines,
            malformed=self.counts.malformed,
            unknown_types=dict(self.counts.unknown_types),
            oversized=self.counts.oversized,
            unsupported=a.unsupported,
            error=self.error,
        )


def _describe(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "file vanished"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or type(exc).__name__
