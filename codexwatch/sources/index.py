"""The index cache: what was already read of each rollout, so the next start reads only
what changed.

One SQLite file per Codex home in the user's cache directory (never inside the Codex home).
A row per folder of rollouts (Codex makes one per day) holds the states of its files' readers
(offsets, counts, turns): a blob of blobs, one per file (RolloutReader.state_blob: a file read
by a helper process arrives as one, and is stored as it came); a few hundred rows load several
times faster than a row per file. Beside it, a small blob says what each file was when read
(offset, mtime, identity): a start looks at all of those first, to know what to read again,
and then takes the states a folder at a time, so a history need not be held whole. Saving a
file rewrites its folder's row. The index is only a cache: anything odd about it (another
schema, another engine, a corrupt file, a row that does not load) means it is rebuilt, never
trusted.
"""

from __future__ import annotations

import functools
import marshal
import os
import sqlite3
import sys
import zlib
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

import codexwatch
from codexwatch.core import classify, context, models, parse, stats, turns, usage
from codexwatch.sources import reader as reader_module
from codexwatch.sources.reader import RolloutReader

SCHEMA = 4
BUSY_WAIT_S = 2.0  # how long to wait for another process that holds the index locked


@functools.cache
def engine_fingerprint() -> str:
    """Changes whenever the code that turns bytes into turns changes."""
    # A checksum, not a cryptographic hash: it only has to change with the code, and zlib
    # is loaded already where hashlib would cost a start 3 ms.
    data = f"{codexwatch.__version__}/{SCHEMA}".encode()
    for module in (parse, turns, classify, models, reader_module, stats, usage, context):
        data += Path(module.__file__).read_bytes()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def default_cache_dir() -> Path:
    if sys.platform.startswith("linux"):  # platformdirs' answer, without a start's 3 ms of importing it
        base = os.environ.get("XDG_CACHE_HOME", "").strip()
        return Path(base or os.path.expanduser("~/.cache")) / "codexwatch"
    import platformdirs

    return Path(platformdirs.user_cache_dir("codexwatch", appauthor=False))


def index_path(cache_dir: Path, home: Path) -> Path:
    home_bytes = str(Path(home).resolve()).encode()
    key = f"{zlib.crc32(home_bytes):08x}{zlib.adler32(home_bytes):08x}"
    return cache_dir / f"index-{key}.sqlite"


class IndexCache:
    def __init__(self, path: Path, home: Path) -> None:
        resolved_home = Path(home).resolve()
        if path.resolve().is_relative_to(resolved_home):
            raise ValueError(f"the index must not live inside the Codex home ({resolved_home})")
        self.path = path
        self.problem: str | None = None  # why the index was rebuilt, for the health view
        self._conn: sqlite3.Connection | None = None
        self._writing = False  # inside writing(): saves join one transaction
        self.off = False  # another process held the database locked: left alone this run

    # -- opening ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._conn = self._open_checked()
            except sqlite3.DatabaseError as exc:
                if self._busy(exc):
                    raise
                self.problem = f"index unreadable ({exc}); rebuilt"
                self._conn = self._recreate()
        return self._conn

    def _busy(self, exc: Exception) -> bool:
        """Whether `exc` says another process holds the database locked (a dashboard saving,
        another command's first read): then it is not broken, and must not be rebuilt under
        that process; it is left alone for the rest of this run, which reads the files."""
        text = str(exc).lower()
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
            self.off = True
            self.problem = "index busy (another codexwatch was writing it): not used this time"
            self.close()
        return self.off

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_WAIT_S, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA page_size = 16384")  # rows are blobs of ~100 KB: fewer pages to chain
        # A cache: a write torn by a crash shows as a database or row that does not load,
        # and is rebuilt. Waiting for the disk on every commit would buy nothing.
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA mmap_size = 268435456")  # large rows read several times faster mapped
        return conn

    def _open_checked(self) -> sqlite3.Connection:
        conn = self._open()
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        row = conn.execute("SELECT value FROM meta WHERE key = 'engine'").fetchone()
        if row is None or row[0] != engine_fingerprint():
            if row is not None:
                self.problem = "index written by another version; rebuilt"
            conn.execute("DROP TABLE IF EXISTS files")  # schema 1: a row per file
            conn.execute("DROP TABLE IF EXISTS packs")
            conn.execute("DROP TABLE IF EXISTS snapshot")
            self._create(conn)
        return conn

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS packs (folder TEXT PRIMARY KEY, files BLOB, states BLOB)")
        conn.execute("CREATE TABLE IF NOT EXISTS snapshot (key TEXT PRIMARY KEY, blob BLOB)")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('engine', ?)", (engine_fingerprint(),))

    def _recreate(self) -> sqlite3.Connection:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        conn = self._open()
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        self._create(conn)
        return conn

    # -- reading and writing ------------------------------------------------------------

    def catalog(self, folders: Iterable[str] | None = None) -> dict[str, tuple]:
        """What each file the index holds (in these folders, if given) was when read:
        path -> (offset, mtime, identity). Rows that do not load are left out (their files
        are read again)."""
        out: dict[str, tuple] = {}
        if self.off:
            return out
        query, args = "SELECT files FROM packs", ()
        if folders is not None:
            args = tuple(folders)
            query += f" WHERE folder IN ({', '.join('?' * len(args))})"
        try:
            for (blob,) in self._connect().execute(query, args):
                try:
                    files = marshal.loads(blob)
                    if not isinstance(files, dict) or set(map(len, files.values())) - {3}:
                        raise ValueError("not a folder's files")
                    out.update(files)
                except Exception:  # noqa: BLE001 - a bad row only costs a re-read of its files
                    self.problem = "some index rows did not load; those files were read again"
        except sqlite3.DatabaseError as exc:
            out.clear()
            if self._busy(exc):
                return out
            self.problem = f"index unreadable ({exc}); rebuilt"
            self.close()
            self._conn = self._recreate()
        if not self._writing:
            self.close()  # no connection is carried into the helper processes forked next
        return out

    def folder(self, folder: str) -> dict[str, bytes]:
        """The reader states of one folder's files, by path ({} if the row does not load):
        each becomes a reader through RolloutReader.from_blob."""
        if self.off:
            return {}
        try:
            row = self._connect().execute("SELECT states FROM packs WHERE folder = ?", (folder,)).fetchone()
            states = marshal.loads(row[0]) if row is not None else {}
            if not isinstance(states, dict):
                raise ValueError("not a folder's states")
            return states
        except Exception as exc:  # noqa: BLE001 - a bad row only costs a re-read of its files
            if not self._busy(exc):
                self.problem = "some index rows did not load; those files were read again"
            return {}

    def snapshot(self, key: str) -> object:
        """One part of what History.fold last stored (marshal-able values), or None."""
        if self.off:
            return None
        try:
            row = self._connect().execute("SELECT blob FROM snapshot WHERE key = ?", (key,)).fetchone()
            value = marshal.loads(row[0]) if row is not None else None
        except Exception as exc:  # noqa: BLE001 - a bad snapshot is only a slower start
            self._busy(exc)
            value = None
        if not self._writing:
            self.close()
        return value

    def save_snapshot(self, parts: dict[str, bytes]) -> None:
        """Store the parts of what History.fold made (marshal blobs), all or none."""
        self._write(lambda conn: conn.executemany("INSERT OR REPLACE INTO snapshot VALUES (?, ?)",
                                                  parts.items()))

    @contextmanager
    def writing(self) -> Iterator[None]:
        """One connection and one transaction for every save inside: a first read saves
        its folders one at a time, as it finishes them."""
        try:
            if not self.off:
                self._connect().execute("BEGIN")
        except sqlite3.Error as exc:
            if not self._busy(exc):
                self.problem = f"index not saved: {exc}"
        self._writing = True
        try:
            yield
        finally:
            self._writing = False
            try:
                if self._conn is not None and self._conn.in_transaction:
                    self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if not self._busy(exc):
                    self.problem = f"index not saved: {exc}"
            self.close()

    def save(self, readers: Iterable[RolloutReader]) -> None:
        by_folder: dict[str, list[RolloutReader]] = {}
        for r in readers:
            if r.error is None:
                by_folder.setdefault(os.path.dirname(r.path), []).append(r)
        self._update(by_folder, {})

    def forget(self, paths: Iterable[str]) -> None:
        by_folder: dict[str, set[str]] = {}
        for path in paths:
            by_folder.setdefault(os.path.dirname(path), set()).add(path)
        self._update({}, by_folder)

    def _update(self, changed: dict[str, list[RolloutReader]], gone: dict[str, set[str]]) -> None:
        """Rewrite the rows of the folders concerned: states replaced or added, paths dropped.
        States are exported folder by folder: a whole history's at once would double its
        memory."""
        folders = set(changed) | set(gone)
        if not folders:
            return

        def rewrite(conn: sqlite3.Connection) -> None:
            for folder in folders:
                files, states = self._pack(conn, folder)
                for r in changed.get(folder, ()):
                    states[r.path] = r.state_blob()
                    files[r.path] = (r.offset, r.mtime, r.identity)
                for path in gone.get(folder, ()):
                    states.pop(path, None)
                    files.pop(path, None)
                conn.execute("INSERT OR REPLACE INTO packs VALUES (?, ?, ?)",
                             (folder, marshal.dumps(files), marshal.dumps(states)))

        self._write(rewrite)

    def _write(self, work: Callable[[sqlite3.Connection], object]) -> None:
        """Do `work` in a transaction (writing()'s, or one of its own). A cache that cannot
        be written is no cache: a failure is noted, not raised."""
        if self.off:
            return
        try:
            with self._transaction() as conn:
                work(conn)
        except sqlite3.Error as exc:
            if not self._busy(exc):
                self.problem = f"index not saved: {exc}"
        if not self._writing:
            self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection, in a transaction: writing()'s, or one of its own."""
        conn = self._connect()
        if self._writing:
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @staticmethod
    def _pack(conn: sqlite3.Connection, folder: str) -> tuple[dict, dict]:
        """A folder's row as it stands: (files, states), each by path."""
        row = conn.execute("SELECT files, states FROM packs WHERE folder = ?", (folder,)).fetchone()
        try:
            files, states = map(marshal.loads, row) if row is not None else ({}, {})
        except (EOFError, ValueError, TypeError):
            return {}, {}  # a row that does not load is replaced
        if not (isinstance(files, dict) and isinstance(states, dict) and files.keys() == states.keys()):
            return {}, {}
        return files, states

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class FolderRows:
    """The index's rows, a folder at a time: a row is taken when its folder's first file is
    wanted, and let go (with the folder's changed files saved) once its last one is done."""

    def __init__(self, index: "IndexCache | None", paths: list[str]) -> None:
        self.index = index
        names: dict[str, str] = {}  # one string per folder, not one per file
        self.of = [names.setdefault(d, d) for d in map(os.path.dirname, paths)]
        self.left = Counter(self.of)
        self.states: dict[str, dict] = {}
        self.changed: dict[str, list[RolloutReader]] = {}

    def reader(self, path: str, folder: str) -> RolloutReader | None:
        """The reader the index holds for `path`, None if its row did not load."""
        if self.index is None:
            return None
        if folder not in self.states:
            self.states[folder] = self.index.folder(folder)
        state = self.states[folder].pop(path, None)
        try:
            return RolloutReader.from_blob(state) if state is not None else None
        except Exception:  # noqa: BLE001 - a bad state only costs a re-read of its file
            self.index.problem = "some index rows did not load; those files were read again"
            return None

    def done(self, folder: str, reader: RolloutReader, changed: bool) -> None:
        if changed and self.index is not None:
            self.changed.setdefault(folder, []).append(reader)
        self.left[folder] -= 1
        if not self.left[folder]:
            self.states.pop(folder, None)
            if folder in self.changed:
                self.index.save(self.changed.pop(folder))
