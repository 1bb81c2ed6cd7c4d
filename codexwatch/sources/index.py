"""The index cache: what was already read of each rollout, so the next start reads only
what changed.

One SQLite file per Codex home in the user's cache directory (never inside the Codex home).
A row per rollout file holds its identity and the reader's state (offsets, counts, turns) as
marshal data. The index is only a cache: anything odd about it (another schema, another
engine, a corrupt file, a row that does not load) means it is rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib
import marshal
import sqlite3
from pathlib import Path
from typing import Iterable

import codexwatch
from codexwatch.core import classify, models, parse, turns
from codexwatch.sources import reader as reader_module
from codexwatch.sources.reader import RolloutReader

SCHEMA = 1


def engine_fingerprint() -> str:
    """Changes whenever the code that turns bytes into turns changes."""
    digest = hashlib.sha256(f"{codexwatch.__version__}/{SCHEMA}".encode())
    for module in (parse, turns, classify, models, reader_module):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:32]


def default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("codexwatch", appauthor=False))


def index_path(cache_dir: Path, home: Path) -> Path:
    key = hashlib.sha256(str(Path(home).resolve()).encode()).hexdigest()[:16]
    return cache_dir / f"index-{key}.sqlite"


class IndexCache:
    def __init__(self, path: Path, home: Path) -> None:
        resolved_home = Path(home).resolve()
        if path.resolve().is_relative_to(resolved_home):
            raise ValueError(f"the index must not live inside the Codex home ({resolved_home})")
        self.path = path
        self.problem: str | None = None  # why the index was rebuilt, for the health view
        self._conn: sqlite3.Connection | None = None

    # -- opening ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._conn = self._open_checked()
            except sqlite3.DatabaseError as exc:
                self.problem = f"index unreadable ({exc}); rebuilt"
                self._conn = self._recreate()
        return self._conn

    def _open_checked(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=2.0, isolation_level=None, check_same_thread=False)
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        row = conn.execute("SELECT value FROM meta WHERE key = 'engine'").fetchone()
        if row is None or row[0] != engine_fingerprint():
            if row is not None:
                self.problem = "index written by another version; rebuilt"
            conn.execute("DROP TABLE IF EXISTS files")
            self._create(conn)
        return conn

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, "
            "mtime REAL, state BLOB)"
        )
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('engine', ?)", (engine_fingerprint(),))

    def _recreate(self) -> sqlite3.Connection:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        conn = sqlite3.connect(self.path, timeout=2.0, isolation_level=None, check_same_thread=False)
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        self._create(conn)
        return conn

    # -- reading and writing ------------------------------------------------------------

    def load(self, wanted: set[str] | None = None) -> dict[str, RolloutReader]:
        """The readers the index holds (those of `wanted` paths only, if given); rows that do
        not load are left out."""
        try:
            rows = self._connect().execute("SELECT path, state FROM files").fetchall()
        except sqlite3.DatabaseError as exc:
            self.problem = f"index unreadable ({exc}); rebuilt"
            self.close()
            self._conn = self._recreate()
            return {}
        self.close()  # no connection is carried into the helper processes forked next
        out: dict[str, RolloutReader] = {}
        for path, blob in rows:
            if wanted is not None and path not in wanted:
                continue
            try:
                out[path] = RolloutReader.from_state(marshal.loads(blob))
            except Exception:  # noqa: BLE001 - a bad row only costs a re-read of that file
                self.problem = "some index rows did not load; those files were read again"
        return out

    def save(self, readers: Iterable[RolloutReader]) -> None:
        rows = [
            (r.path, r.offset, r.mtime, marshal.dumps(r.export_state()))
            for r in readers
            if r.error is None
        ]
        if not rows:
            return
        try:
            conn = self._connect()
            conn.execute("BEGIN")
            conn.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self.problem = f"index not saved: {exc}"  # a cache that cannot be written is no cache

    def paths(self) -> list[str]:
        try:
            return [row[0] for row in self._connect().execute("SELECT path FROM files")]
        except sqlite3.Error:
            return []

    def forget(self, paths: Iterable[str]) -> None:
        try:
            self._connect().executemany("DELETE FROM files WHERE path = ?", [(p,) for p in paths])
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
