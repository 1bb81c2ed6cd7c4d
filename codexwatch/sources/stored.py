"""A fold of the statistics stored beside the index, and taken up again.

`stats` stores its fold as it stood after the longest run of files, from the oldest, whose
turns can no longer change and which its window left nothing out of: the next run that finds
those files unchanged, at a later clock, takes the fold up and reads only the rest. The
files it covers are compared by count and a BLAKE2 digest of their paths, sizes, mtimes and
identities. What a fold put on disk (its finished turns, its ids) is copied beside the index
a page at a time, marked with the fold's `made`, and put in place only once written.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
from itertools import chain, islice
from pathlib import Path
from typing import Iterator

from codexwatch.core.stats import StatsFold
from codexwatch.sources.index import IndexCache
from codexwatch.sources.listing import RolloutFile
from codexwatch.sources.seen import TurnIds
from codexwatch.sources.spill import SpilledTurns

LATEST = float("inf")  # the oldest time of a fold that covers nothing yet


class Window:
    """A fold's window (`cutoff`: None for all) over the files listed in path order, and
    the first file it left out: a fold that left nothing out up to a file, nor any turn,
    is what `all` folds up to there."""

    def __init__(self, cutoff: float | None) -> None:
        self.cutoff = cutoff
        self.first_out: str | None = None

    def within(self, files: Iterator[RolloutFile]) -> Iterator[RolloutFile]:
        cutoff = self.cutoff
        for f in files:
            if f.mtime >= cutoff:
                yield f
            elif self.first_out is None:
                self.first_out = f.path

    def whole_before(self, path: str) -> bool:
        """No file before `path` was left out (files are listed ahead of their reading)."""
        return self.first_out is None or self.first_out > path

    def holds(self, at: float) -> bool:
        return self.cutoff is None or at >= self.cutoff


def snapshot(fold: StatsFold, seen: TurnIds, covered: "Covered", now: float,
              index: IndexCache, oldest: float) -> tuple[dict[str, bytes], dict[str, Path]] | None:
    """The fold as it stands, the files it covers and the turn ids seen so far, stored at
    once (the fold goes on changing) -> (the parts for the index, the files written beside
    it, under their new names). The ids are a part of their own, only needed when there are
    files beyond those covered; `made` ties the parts together.

    What went to disk (the finished turns, the ids) is copied to files beside the index, a
    page at a time: stored in the index, it would come back into memory whole. None when
    they cannot be written."""
    made = (now, len(covered))
    written: dict[str, Path] = {}
    ids: dict = {"made": made}
    try:
        if fold.spilled is not None:
            written["turns"] = _new(spilled_path(index, "turns"))
            fold.spilled.save_copy(written["turns"], made)
        if seen.db is not None:
            written["ids"] = _new(spilled_path(index, "ids"))
            seen.save_copy(written["ids"], made)
            ids["spilled"] = len(seen)
        else:
            ids["ids"] = list(seen)
    except (OSError, sqlite3.Error):  # a full or unwritable cache: no fold stored, no harm
        for path in written.values():
            path.unlink(missing_ok=True)
        return None
    return {
        "stats": marshal.dumps({"fold": fold.export_state(), "made": made, "files": covered.key(),
                                "oldest": float(oldest)}),
        "seen": marshal.dumps(ids),
        "oldest": marshal.dumps(float(oldest)),
    }, written


def save_snapshot(index: IndexCache, snapshot: tuple[dict[str, bytes], dict[str, Path]]) -> None:
    parts, written = snapshot
    try:
        for what in ("turns", "ids"):  # this fold's files in place; an older fold's gone
            if what in written:
                os.replace(written[what], spilled_path(index, what))
            else:
                spilled_path(index, what).unlink(missing_ok=True)
    except OSError:
        return  # without its files the stored fold could not be taken up: none is stored
    index.save_snapshot(parts)


def spilled_path(index: IndexCache, what: str) -> Path:
    return Path(f"{index.path}.fold-{what}")


def _new(path: Path) -> Path:
    """Where a file is written before it replaces `path` (this process's own name)."""
    return Path(f"{path}.{os.getpid()}.new")


class Covered:
    """The files a fold covers, with the size, mtime and identity each had: counted, and
    taken into a digest, to compare and store (holding them would cost some 200 bytes a
    file)."""

    def __init__(self) -> None:
        self.count = 0
        self.digest = None  # made with the first file: a start's 3 ms (hashlib) otherwise

    def add(self, path: str, size: int, mtime: float, identity: tuple[int, int] | None) -> None:
        if self.digest is None:
            import hashlib

            self.digest = hashlib.blake2b(digest_size=20)
        self.count += 1
        dev, ino = identity or (-1, -1)
        self.digest.update(b"%s\0%d\0%r\0%d\0%d\n" % (
            path.encode("utf-8", "surrogateescape"), size, mtime, dev, ino))

    def __len__(self) -> int:
        return self.count

    def key(self) -> tuple:
        return self.count, self.digest.digest() if self.digest is not None else b""


def stored_fold(fold: StatsFold, stored: dict, files: Iterator[RolloutFile], now: float,
                 index: IndexCache) -> tuple[Iterator[RolloutFile], "Covered", TurnIds, float] | None:
    """Take a stored fold up in `fold` (a new one) if the files it covers are the first
    of `files`, unchanged, and it was made no later than `now` (a file idle then is idle
    now) -> (the files after those, those, the turn ids seen, the oldest time among
    them), else None."""
    try:
        made, count = stored["made"], stored["made"][1]
        oldest = stored["oldest"]
        if not made[0] <= now:
            return None
        covered = Covered()
        for f in islice(files, count):
            covered.add(f.path, f.size, f.mtime, f.identity)
        if covered.key() != tuple(stored["files"]):
            return None
        seen = TurnIds()
        following = next(files, None)
        if following is not None:  # files to come, whose turns may repeat those seen
            ids = index.snapshot("seen")
            if ids["made"] != made:
                return None
            if "spilled" in ids:
                seen = TurnIds.from_copy(spilled_path(index, "ids"), made, ids["spilled"])
            else:
                seen.add_all(ids["ids"])
        fold.restore(stored["fold"], lambda successes: SpilledTurns.from_copy(
            spilled_path(index, "turns"), made, successes))
        return chain([following] if following is not None else [], files), covered, seen, oldest
    except Exception:  # noqa: BLE001 - a bad snapshot: the files are read
        return None
