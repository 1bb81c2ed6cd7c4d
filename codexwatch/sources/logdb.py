"""Causes era C rollouts did not record, from the TUI's log database.

Codex 0.140's TUI writes `$CODEX_HOME/logs_2.sqlite`; its `codex_core::session::turn` rows
end with `Turn error: <message>` and name the turn in their span text. The database is opened
read-only and never locked for writing.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Iterable

_TURN_ID = re.compile(r'turn\.id="?([0-9A-Za-z-]{8,64})"?')
_MARK = "Turn error: "


def _connect(db: Path) -> sqlite3.Connection | None:
    uri = db.resolve().as_uri()
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(uri + query, uri=True, timeout=0.2)
            conn.execute("SELECT 1 FROM logs LIMIT 1")
            return conn
        except sqlite3.Error:
            continue
    return None


def turn_errors(home: Path, session_ids: Iterable[str]) -> dict[str, str]:
    """turn_id -> the error message the log database holds for it."""
    db = home / "logs_2.sqlite"
    ids = [s for s in set(session_ids) if s]
    if not ids or not db.is_file():
        return {}
    conn = _connect(db)
    if conn is None:
        return {}
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
