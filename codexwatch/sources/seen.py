"""The turn ids already counted, in bounded memory.

Forks and sub-agent files replay their parent's turns, so every turn id counted has to be
remembered to count each turn once: the one thing a first read keeps for every turn. Kept
in a set they cost some 140 bytes each, 22 MB for an 8 GiB history; so past `limit` they
move into a temporary database on disk (sources/spill.py). Small histories never get there.
"""

from __future__ import annotations

import sqlite3
import sys
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import Iterable, Iterator

import orjson

from codexwatch.core.models import Turn
from codexwatch.sources.spill import copy_database, open_copy, temporary_database

SPILL_IDS = 32_768  # ids kept in memory before they move to disk: ~4 MB
_SEEN_AMONG = "SELECT ids.id FROM json_each(?) AS given JOIN ids ON ids.id = given.value"


class TurnIds:
    """A set of turn ids that stays small in memory: `new(ids)` says which are not seen
    yet and remembers them."""

    def __init__(self, ids: Iterable[str] = (), limit: int | None = None) -> None:
        self.limit = SPILL_IDS if limit is None else limit
        self.memory: set[str] = set()
        self.db: sqlite3.Connection | None = None
        self.spilled = 0
        self.add_all(ids)

    def __len__(self) -> int:
        return len(self.memory) + self.spilled

    def __iter__(self) -> Iterator[str]:
        yield from self.memory
        if self.db is not None:
            for (turn_id,) in self.db.execute("SELECT id FROM ids"):
                yield turn_id

    def add_all(self, ids: Iterable[str]) -> None:
        """Remember ids known to be new (or not caring whether they are)."""
        self.memory.update(ids)
        if len(self.memory) > self.limit:
            try:
                self._spill()
            except (OSError, sqlite3.Error):  # no temporary folder to write in: all in memory
                self.limit = sys.maxsize

    def new(self, ids: list[str]) -> list[bool] | None:
        """Which of `ids` are new (not seen before, nor earlier in `ids`), remembered now:
        a flag for each; None when all are (as for nearly every part: the cheap case)."""
        unique = set(ids)
        seen = self._seen_among(unique)
        if not seen and len(unique) == len(ids):
            self.add_all(unique)
            return None
        self.add_all(unique - seen)
        keep = []
        for turn_id in ids:
            keep.append(turn_id not in seen)
            seen.add(turn_id)
        return keep

    def _seen_among(self, ids: set[str]) -> set[str]:
        seen = ids & self.memory
        if self.db is not None and ids:
            # One statement for any number of ids (an IN list of ?s would be a statement,
            # cached, for every length).
            rows = self.db.execute(_SEEN_AMONG, (orjson.dumps(list(ids - seen)).decode(),))
            seen.update(row[0] for row in rows)
        return seen

    def _spill(self) -> None:
        if self.db is None:
            self.db = temporary_database("CREATE TABLE ids (id TEXT PRIMARY KEY) WITHOUT ROWID;")
        before = self.db.total_changes
        try:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR IGNORE INTO ids VALUES (?)", ((i,) for i in self.memory))
            self.db.execute("COMMIT")
        except sqlite3.Error:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        self.spilled += self.db.total_changes - before
        self.memory = set()

    @classmethod
    def from_copy(cls, path: Path, made: tuple, count: int) -> "TurnIds":
        """The `count` ids save_copy stored with `made`."""
        ids = cls()
        ids.db, ids.spilled = open_copy(path, made), count
        return ids

    def save_copy(self, path: Path, made: tuple) -> None:
        """All the ids (those in memory moved to disk first) copied to `path`."""
        if self.memory or self.db is None:
            self._spill()
        copy_database(self.db, path, made)

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


def fresh(turns: list[Turn], seen: TurnIds, cutoff: float | None) -> list[Turn]:
    """The turns not `seen` before, within the window. Forks and sub-agent files replay
    their parent's turns: the first file (in path order) to have a turn id keeps it."""
    keep = seen.new(list(map(_TURN_ID, turns)))
    if keep is not None:
        turns = list(compress(turns, keep))
    if cutoff is not None:
        turns = [t for t in turns if t.at >= cutoff or t.live]
    return turns


_TURN_ID = attrgetter("turn_id")
