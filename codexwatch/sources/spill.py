"""Where a large history's statistics keep what grows with it: a database on disk.

A fold keeps each finished turn (a success's time, start and variant; a failure whole) and
every turn id seen, to count forks' replays once. For a history of tens of gigabytes that
outgrows any memory budget, so past a limit these move into SQLite's private temporary
database: a file in the system's temporary folder, deleted when closed, whose page cache
(and sorter) stay within a few megabytes. Small histories never get here.
"""

from __future__ import annotations

import marshal
import sqlite3
from array import array
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator

from codexwatch.core.stats import Finished, quarter_of
from codexwatch.core.turns import turn_to_row, turns_from_rows

CACHE_KIB = 2048  # a temporary database's page cache


def temporary_database(schema: str) -> sqlite3.Connection:
    """A new private temporary database with this schema; raises sqlite3.Error."""
    db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
    try:
        db.executescript(f"PRAGMA cache_size=-{CACHE_KIB}; PRAGMA journal_mode=OFF; "
                         f"PRAGMA synchronous=OFF; PRAGMA temp_store=FILE; {schema}")
    except sqlite3.Error:
        db.close()
        raise
    return db


def copy_database(db: sqlite3.Connection, path: Path, made: tuple) -> None:
    """A copy of `db` at `path` (replaced), page by page: memory stays small whatever its
    size. It is marked with `made`, to be taken up only with what it was stored with."""
    path.unlink(missing_ok=True)
    out = sqlite3.connect(path)
    try:
        db.backup(out)
        out.execute("CREATE TABLE made (now REAL, files INTEGER)")
        out.execute("INSERT INTO made VALUES (?, ?)", tuple(made))
        out.commit()
    finally:
        out.close()


def open_copy(path: Path, made: tuple) -> sqlite3.Connection:
    """A temporary database holding what copy_database stored at `path` with `made`;
    raises if there is none, or it was stored with something else."""
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if tuple(source.execute("SELECT now, files FROM made").fetchone()) != tuple(made):
            raise ValueError("a copy made with another fold")
        db = temporary_database("")
        source.backup(db)
    finally:
        source.close()
    db.execute("DROP TABLE made")
    return db


def to_disk(finished: Finished) -> Finished:
    """StatsFold's `spill`: the finished turns so far, moved to a database on disk, which
    takes the rest too; where there is none to be had, they stay where they are."""
    try:
        spilled = SpilledTurns()
        spilled.add(finished.ok_at, finished.ok_start, finished.ok_code, finished.failed)
    except (OSError, sqlite3.Error):
        return finished
    return spilled


_SCHEMA = """
CREATE TABLE ok (at REAL, start REAL, place INTEGER, code INTEGER, quarter INTEGER);
CREATE TABLE failed (seq INTEGER PRIMARY KEY, at REAL, start REAL, place REAL, quarter INTEGER,
                     row BLOB);
"""


class SpilledTurns:
    """core.stats.Finished, on disk: the same questions, answered by SQLite."""

    def __init__(self, db: sqlite3.Connection | None = None, count: int = 0) -> None:
        self.db = db if db is not None else temporary_database(_SCHEMA)
        self.count = count

    @classmethod
    def from_copy(cls, path: Path, made: tuple, count: int) -> "SpilledTurns":
        """The turns save_copy stored with `made`, `count` successes among them."""
        return cls(open_copy(path, made), count)

    def save_copy(self, path: Path, made: tuple) -> None:
        copy_database(self.db, path, made)

    @property
    def successes(self) -> int:
        return self.count

    @property
    def weight(self) -> int:
        return 0  # in memory: a few megabytes of cache, whatever it holds

    def add(self, ok_at: array, ok_start: array, ok_code: array, failed: list) -> None:
        first, self.count = self.count, self.count + len(ok_at)
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO ok VALUES (?, ?, ?, ?, ?)", (  # a row at a time: no copy
            (at, start, place, code, quarter_of(at))
            for at, start, place, code in zip(ok_at, ok_start, range(first, self.count), ok_code)))
        self.db.executemany("INSERT INTO failed (at, start, place, quarter, row) VALUES (?, ?, ?, ?, ?)", (
            (at, start, place, quarter_of(at), marshal.dumps(turn_to_row(t))) for at, start, place, t in failed))
        self.db.execute("COMMIT")

    def export(self) -> tuple[bytes, bytes, bytes, list]:
        ok_at, ok_start, ok_code = array("d"), array("d"), array("I")
        for at, start, code in self.db.execute("SELECT at, start, code FROM ok ORDER BY place"):
            ok_at.append(at)
            ok_start.append(start)
            ok_code.append(code)
        failed = [(at, start, place, marshal.loads(row)) for at, start, place, row in
                  self.db.execute("SELECT at, start, place, row FROM failed ORDER BY seq")]
        return ok_at.tobytes(), ok_start.tobytes(), ok_code.tobytes(), failed

    def failures(self) -> Iterator[tuple[float, float, float, object]]:
        return self._failures("ORDER BY seq")

    def failures_in_place(self) -> Iterator[tuple[float, float, float, object]]:
        return self._failures("ORDER BY at, start, place")

    def _failures(self, order: str) -> Iterator[tuple[float, float, float, object]]:
        for at, start, place, row in self.db.execute(f"SELECT at, start, place, row FROM failed {order}"):
            yield at, start, place, turns_from_rows([marshal.loads(row)])[0]

    def successes_per_variant(self, lows: dict[str, float | None], high: float) -> dict[str, Counter]:
        self._index()
        out = {}
        for name, low in lows.items():
            if low is None:
                rows = self.db.execute("SELECT code, count(*) FROM ok GROUP BY code")
            else:
                rows = self.db.execute("SELECT code, count(*) FROM ok WHERE at >= ? AND at <= ? GROUP BY code",
                                       (low, high))
            out[name] = Counter(dict(rows))
        return out

    def successes_per_quarter(self) -> Iterator[tuple[int, int]]:
        return self.db.execute("SELECT quarter, count(*) FROM ok GROUP BY quarter")

    def failures_per_quarter(self) -> Iterator[tuple[int, int]]:
        return self.db.execute("SELECT quarter, count(*) FROM failed GROUP BY quarter")

    def successes_between(self) -> Callable[[tuple, tuple | None], bool]:
        self._index()

        def between(lo: tuple, hi: tuple | None) -> bool:
            if hi is None:
                query, args = "SELECT EXISTS (SELECT 1 FROM ok WHERE (at, start, place) > (?, ?, ?))", lo
            else:
                query = ("SELECT EXISTS (SELECT 1 FROM ok WHERE (at, start, place) > (?, ?, ?) "
                         "AND (at, start, place) < (?, ?, ?))")
                args = (*lo, *hi)
            return bool(self.db.execute(query, args).fetchone()[0])

        return between

    def _index(self) -> None:
        """Made once the turns are in: cheaper than kept up while they come."""
        self.db.execute("CREATE INDEX IF NOT EXISTS ok_place ON ok (at, start, place)")
