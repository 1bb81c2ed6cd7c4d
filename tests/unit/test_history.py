"""History as the dashboard uses it: first read, then only what changed."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from codexwatch.sources.history import load_history
from tests.conftest import REAL_CLI, unread

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
    new = unread(history, NOW)
    assert len(new) == 8
    history.refresh(new, NOW)
    assert len(history.turns) == 8 and unread(history, NOW) == []


def test_a_first_read_without_stat_still_skims_only_quiet_files(tmp_path, monkeypatch):
    """With nothing indexed and no window, files are listed by name only; whether one is
    quiet enough to skim is decided from its own time when it is opened."""
    import os

    from codexwatch.sources import history as history_module

    shutil.copytree(REAL_CLI / "exec-0.171.0" / "sessions", tmp_path / "sessions")
    files = sorted(str(p) for p in (tmp_path / "sessions").rglob("*.jsonl"))
    old = NOW - 3 * 86400
    for path in files:
        os.utime(path, (old, old) if path != files[0] else (NOW, NOW))
    looked = []
    real = history_module.find_rollouts
    monkeypatch.setattr(history_module, "find_rollouts",
                        lambda *a, **k: looked.append(k.get("stat", True)) or real(*a, **k))
    history = load_history(tmp_path, None, NOW, use_cache=False)
    assert looked == [False]
    assert [history.readers[p].skimmed for p in files] == [False] + [True] * (len(files) - 1)
    windowed = load_history(tmp_path, 7 * 86400, NOW, use_cache=False)
    assert looked == [False, True] and len(windowed.turns) == len(history.turns)


def test_listing_by_name_finds_what_listing_with_stat_finds(tmp_path):
    from codexwatch.sources.history import find_rollouts

    shutil.copytree(REAL_CLI / "tui-0.171.0" / "sessions", tmp_path / "sessions")
    named = find_rollouts(tmp_path, stat=False)
    assert [f.path for f in named] == [f.path for f in find_rollouts(tmp_path)]
    assert {(f.size, f.mtime, f.identity) for f in named} == {(None, None, None)}


def test_the_listing_is_in_the_order_of_whole_paths_and_read_in_whole_folders(tmp_path):
    from codexwatch.sources.listing import find_rollouts, iter_rollouts, whole_folders as _whole_folders

    names = ["sessions/2026/01/x/a.jsonl", "sessions/2026/01/x.jsonl", "sessions/2026/01/x-y.jsonl",
             "sessions/2026/01/x/b/c.jsonl", "sessions/2026/1.jsonl", "archived_sessions/z.jsonl",
             "sessions/2026/01/x0.jsonl", "sessions/2025/12/31/r.jsonl", "sessions/2026/01/x/b.txt"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    expected = sorted(str(tmp_path / n) for n in names if n.endswith(".jsonl"))
    assert [f.path for f in iter_rollouts(tmp_path, stat=False)] == expected
    assert [f.path for f in find_rollouts(tmp_path)] == expected
    parts = list(_whole_folders(iter(find_rollouts(tmp_path)), 1))
    assert [f.path for part in parts for f in part] == expected
    # A part ends only where the folder changes (Codex's day folders come whole; the index
    # takes a folder's files in several saves where they are not next to each other).
    assert all(os.path.dirname(a[-1].path) != os.path.dirname(b[0].path) for a, b in zip(parts, parts[1:]))
    assert len(parts) == 7


def _home_with_a_fork(tmp_path):
    """Every real recording, Codex's log of one, and a fork: a later file that replays one
    session's turns."""
    home = tmp_path / "codex"
    for folder in REAL_CLI.iterdir():
        if (folder / "sessions").is_dir():
            shutil.copytree(folder / "sessions", home / "sessions", dirs_exist_ok=True)
    # Codex's log, which names causes the rollouts of tui-0.140.0 do not record.
    shutil.copy(REAL_CLI / "tui-0.140.0" / "logs_2.sqlite", home / "logs_2.sqlite")
    parent = sorted((home / "sessions").rglob("rollout-*.jsonl"))[0]
    fork = home / "sessions" / "2099" / "01" / "01" / "rollout-2099-01-01T00-00-00-fork.jsonl"
    fork.parent.mkdir(parents=True)
    shutil.copy(parent, fork)
    return home


@pytest.mark.parametrize("since", [None, 7 * 86400])
@pytest.mark.parametrize("cache", [False, True])
@pytest.mark.parametrize("spill", [False, True])
def test_statistics_folded_file_by_file_equal_those_of_the_whole_list(tmp_path, monkeypatch, since, cache, spill):
    from codexwatch.core import stats
    from codexwatch.core.stats import StatsFold, compute_stats
    from codexwatch.sources import history as history_module, parallel, seen
    from codexwatch.sources.spill import to_disk

    home = _home_with_a_fork(tmp_path)
    if spill:  # the turn ids seen move to disk after the first few, folded a file at a time,
        # and the files listed and read a folder at a time
        monkeypatch.setattr(seen, "SPILL_IDS", 5)
        monkeypatch.setattr(history_module, "_FOLD_TURNS", 1)
        monkeypatch.setattr(history_module, "_FOLD_FILES", 1)
        monkeypatch.setattr(stats, "SPILL_BYTES", 0)  # the finished turns, on disk at once
    # Helper processes and many small batches, so readers arrive out of order and must be
    # put back in path order.
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    whole = load_history(home, since, NOW, use_cache=False)
    expected = compute_stats(whole.turns, whole.health(), NOW,
                             unknown_error_infos=whole.unknown_error_infos())
    assert len({t.turn_id for t in whole.turns}) == len(whole.turns)
    for _ in range(2 if cache else 1):  # with the index: written, then read
        fold = StatsFold(NOW, spill=to_disk)
        folded = load_history(home, since, NOW, use_cache=cache, cache_dir=tmp_path / "cache",
                              parallel=True, fold=fold)
        assert fold.result() == expected
        assert folded.readers == {}  # nothing of the history is kept



def test_files_left_out_of_the_window_are_not_new_to_the_follower(tmp_path):
    # A session untouched for weeks in the newest date folder (one long thread, say): out
    # of the 7-day window, it must not be found "new" by the follower's scan and read whole
    # after the start; written again, it is read then.
    from codexwatch.sources.watcher import SessionFollower

    shutil.copytree(REAL_CLI / "exec-0.171.0" / "sessions", tmp_path / "sessions")
    files = sorted(str(p) for p in (tmp_path / "sessions").rglob("*.jsonl"))
    old = NOW - 30 * 86400
    os.utime(files[0], (old, old))
    history = load_history(tmp_path, 7 * 86400, NOW, use_cache=False)
    assert files[0] not in history.readers and files[0] in history.outside
    known = history.as_read()
    assert set(known) == set(files) and known[files[0]] == (os.path.getsize(files[0]), old)
    follower = SessionFollower(tmp_path, known=known, use_events=False, rotate=0)
    assert follower.scan_once() == []
    with open(files[0], "ab") as out:  # written again: in the window now
        out.write(b"\n")
    assert [path for path, _ in follower.scan_once()] == [files[0]]
    assert history.refresh([files[0]], NOW) == [files[0]]
    assert files[0] in history.readers and files[0] not in history.outside
