"""History as the dashboard uses it: first read, then only what changed."""

from __future__ import annotations

import shutil
import time

from codexwatch.sources.history import load_history
from tests.conftest import REAL_CLI

NOW = time.time()


def test_bytes_written_while_nobody_watched_are_found(tmp_path):
    shutil.copytree(REAL_CLI / "tui-0.171.0" / "sessions", tmp_path / "sessions")
    session = next((tmp_path / "sessions").rglob("*.jsonl"))
    lines = session.read_bytes().splitlines(keepends=True)
    session.write_bytes(b"".join(lines[:-1]))
    history = load_history(tmp_path, None, NOW, use_cache=False)
    assert history.grown_since_read() == []
    with open(session, "ab") as out:
        out.write(lines[-1])
    assert history.grown_since_read() == [str(session)]
    assert history.refresh(history.grown_since_read(), NOW) == [str(session)]
    assert history.turns[-1].outcome == "ok" and history.grown_since_read() == []


def test_new_files_are_discovered_and_read(tmp_path):
    (tmp_path / "sessions").mkdir()
    history = load_history(tmp_path, None, NOW, use_cache=False)
    assert history.turns == []
    shutil.copytree(REAL_CLI / "exec-0.171.0" / "sessions", tmp_path / "sessions", dirs_exist_ok=True)
    new = history.discover(NOW)
    assert len(new) == 8
    history.refresh(new, NOW)
    assert len(history.turns) == 8 and history.discover(NOW) == []
