"""Causes era C rollouts did not record, from the TUI's log database.

Codex 0.140's TUI writes `$CODEX_HOME/logs_2.sqlite`; its `codex_core::session::turn` rows
end with `Turn error: <message>` and name the turn in their span text. The database is read
from a private copy: nothing of Codex's is opened for writing, not even SQLite's index.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import sqlite3

_TURN_ID = re.compile(r'turn\.id="?([0-9A-Za-z-]{8,64})"?')
_MARK = "Turn error: "


COPY_LIMIT = 512 << 20


def _connect(db: Path, scratch: Path) -> sqlite3.Connection | None:
    """A connection that cannot touch Codex's files. Even a `mode=ro` connection writes to
    a WAL database's `-shm` index, so the database (and its WAL) is copied to a scratch
    folder and opened there; a database too large to copy is opened `immutable`, which
    reads the main file alone (rows still only in the WAL are then missed)."""
    import shutil
    import sqlite3

    wal = Path(str(db) + "-wal")
    try:
        size = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        if size <= COPY_LIMIT:
            shutil.copyfile(db, scratch / db.name)
            if wal.exists():
                shutil.copyfile(wal, scratch / wal.name)
            uri = (scratch / db.name).as_uri() + "?mode=ro"
        else:
            uri = db.resolve().as_uri() + "?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True, timeout=0.2)
        conn.execute("SELECT 1 FROM logs LIMIT 1")
        return conn
    except (OSError, sqlite3.Error):
        return None


def _database(home: Path) -> Path:
    return home / "logs_2.sqlite"


def present(home: Path) -> bool:
    """Whether the home has a log database (Codex 0.140's TUI and later keep one)."""
    return _database(home).is_file()


def turn_errors(home: Path, session_ids: Iterable[str]) -> dict[str, str]:
    """turn_id -> the error message the log database holds for it."""
    db = _database(home)
    ids = [s for s in set(session_ids) if s]
    if not ids or not db.is_file():
        return {}
    import tempfile  # only where there is a log database (Codex 0.140's TUI): a start's 6 ms

    with tempfile.TemporaryDirectory(prefix="codexwatch-logs-") as scratch:
        conn = _connect(db, Path(scratch))
        if conn is None:
            return {}
        return _query(conn, ids)


def _query(conn: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    import sqlite3

    found: dict[str, str] = {}
    try:
        for session_id in ids:
            rows = conn.execute(
                "SELECT feedback_log_body FROM logs WHERE thread_id = ? "
                "AND feedback_log_body LIKE '%Turn error: %' ORDER BY ts, ts_nanos",
                (session_id,),
            )
            for (body,) in rows:
                _take(body, found)
    except sqlite3.Error:
        pass  # a locked, half-written or unexpected database only costs us the extra causes
    finally:
        conn.close()
    return found


def _take(body: object, found: dict[str, str]) -> None:
    if not isinstance(body, str):
        return
    at = body.rfind(_MARK)
    if at < 0:
        return
    turn_ids = _TURN_ID.findall(body, 0, at)
    if turn_ids:
        found[turn_ids[-1]] = body[at + len(_MARK):].strip()
