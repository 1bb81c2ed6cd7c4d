"""File-system faults under a followed Codex home: nothing raises, health says what happened,
turns from the readable files stay intact.

The live follower hands `History.refresh(paths, now)` the files its watcher saw change or
appear; these tests hand it the files a look at the home finds (`unread`). Running as root makes chmod 000 ineffective, so there unreadability is
simulated by putting a directory or a broken symlink where the file was.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from codexwatch.core.stats import compute_stats
from codexwatch.sources.history import History, find_rollouts
from codexwatch.sources.reader import RolloutReader
from tests.conftest import REAL_CLI, unread

NOW = time.time() + 3600
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
TUI_171 = next((REAL_CLI / "tui-0.171.0").rglob("rollout-*.jsonl"))
TUI_140 = next((REAL_CLI / "tui-0.140.0").rglob("rollout-*.jsonl"))
EXEC_171 = sorted((REAL_CLI / "exec-0.171.0").rglob("rollout-*.jsonl"))


def fingerprint(turns):
    return sorted((t.turn_id, t.outcome, t.error_class, t.model, t.fast, t.duration_ms) for t in turns)


def turns_of(path: Path):
    reader = RolloutReader(str(path))
    reader.read_new()
    return reader.turns(NOW)


def make_home(tmp_path: Path, sources=(TUI_171, TUI_140, EXEC_171[0])) -> tuple[Path, list[Path]]:
    home = tmp_path / "codex"
    day = home / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True)
    copies = []
    for src in sources:
        dst = day / src.name
        dst.write_bytes(src.read_bytes())
        copies.append(dst)
    return home, copies


def loaded(home: Path) -> History:
    history = History(home=home)
    history.load(NOW)
    return history


def health_of(history: History, path: Path):
    return next(h for h in history.health() if h.path == str(path))


def usable(history: History) -> None:
    """What the dashboard computes on every refresh still works."""
    compute_stats(history.turns, history.health(), NOW, unknown_error_infos=history.unknown_error_infos())


def test_file_deleted_while_followed(tmp_path):
    home, (victim, *others) = make_home(tmp_path)
    history = loaded(home)
    before = fingerprint(history.turns)
    victim.unlink()
    assert history.refresh([str(victim)], NOW) == []
    assert health_of(history, victim).error == "file vanished"
    # What was read from it is kept; the other files are untouched.
    assert fingerprint(history.turns) == before
    assert all(health_of(history, p).error is None for p in others)
    assert str(victim) not in unread(history, NOW)
    usable(history)


def test_file_truncated_while_followed_is_read_again(tmp_path):
    home, (victim, *others) = make_home(tmp_path)
    history = loaded(home)
    data = TUI_171.read_bytes()
    cut = data.rfind(b"\n", 0, len(data) // 2) + 1
    with open(victim, "r+b") as f:
        f.truncate(cut)
    assert history.refresh([str(victim)], NOW) == [str(victim)]
    (tmp_path / "half.jsonl").write_bytes(data[:cut])
    expected = {t.turn_id for t in turns_of(tmp_path / "half.jsonl")}
    assert {t.turn_id for t in history.turns if t.file == str(victim)} == expected
    with open(victim, "ab") as f:  # Codex goes on writing
        f.write(data[cut:])
    history.refresh([str(victim)], NOW)
    assert fingerprint(t for t in history.turns if t.file == str(victim)) == fingerprint(turns_of(TUI_171))
    assert health_of(history, victim).error is None
    usable(history)


def test_file_replaced_while_followed(tmp_path):
    home, (victim, *others) = make_home(tmp_path)
    history = loaded(home)
    other_turns = fingerprint(t for t in history.turns if t.file != str(victim))
    new = tmp_path / "new.jsonl"
    new.write_bytes(EXEC_171[3].read_bytes())
    os.replace(new, victim)
    assert history.refresh([str(victim)], NOW) == [str(victim)]
    mine = [t for t in history.turns if t.file == str(victim)]
    assert fingerprint(mine) == fingerprint(turns_of(EXEC_171[3]))
    assert fingerprint(t for t in history.turns if t.file != str(victim)) == other_turns
    usable(history)


@pytest.mark.skipif(AS_ROOT, reason="chmod does not stop root from reading")
def test_file_made_unreadable_while_followed(tmp_path):
    home, (victim, *others) = make_home(tmp_path)
    history = loaded(home)
    before = fingerprint(history.turns)
    victim.chmod(0)
    try:
        history.refresh([str(victim)], NOW)
        assert health_of(history, victim).error == "permission denied"
        assert fingerprint(history.turns) == before
        usable(history)
    finally:
        victim.chmod(0o644)
    history.refresh([str(victim)], NOW)
    assert health_of(history, victim).error is None


@pytest.mark.parametrize("replacement", ["directory", "broken symlink", "fifo"])
def test_file_replaced_by_something_unreadable(tmp_path, replacement):
    home, (victim, *others) = make_home(tmp_path)
    history = loaded(home)
    others_before = fingerprint(t for t in history.turns if t.file != str(victim))
    victim.unlink()
    if replacement == "directory":
        victim.mkdir()
    elif replacement == "broken symlink":
        victim.symlink_to(tmp_path / "nowhere.jsonl")
    else:
        os.mkfifo(victim)  # opening it read-only must not block the refresh
    history.refresh([str(victim)], NOW)
    error = health_of(history, victim).error
    if replacement == "fifo":
        assert error is None or error
    else:
        assert error, "health must say the file could not be read"
    assert fingerprint(t for t in history.turns if t.file != str(victim)) == others_before
    unread(history, NOW)
    usable(history)
    # Put back: read again from the start.
    if victim.is_dir() and not victim.is_symlink():
        victim.rmdir()
    else:
        victim.unlink()
    victim.write_bytes(TUI_171.read_bytes())
    history.refresh([str(victim)], NOW)
    assert health_of(history, victim).error is None
    assert fingerprint(t for t in history.turns if t.file == str(victim)) == fingerprint(turns_of(TUI_171))


def test_sessions_folder_created_after_start(tmp_path):
    home = tmp_path / "codex"
    home.mkdir()
    history = History(home=home)
    assert history.home_problem is not None
    history.load(NOW)
    assert history.turns == [] and unread(history, NOW) == []
    day = home / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True)
    (day / TUI_171.name).write_bytes(TUI_171.read_bytes())
    assert history.home_problem is None
    new = unread(history, NOW)
    assert new == [str(day / TUI_171.name)]
    assert history.refresh(new, NOW) == new
    assert fingerprint(history.turns) == fingerprint(turns_of(TUI_171))


def test_home_itself_missing_then_created(tmp_path):
    home = tmp_path / "not-yet"
    history = History(home=home)
    assert "No Codex home" in history.home_problem
    assert unread(history, NOW) == []
    home.mkdir()
    assert "no sessions/ folder" in history.home_problem


def test_sessions_folder_removed_and_recreated(tmp_path):
    home, copies = make_home(tmp_path)
    history = loaded(home)
    before = fingerprint(history.turns)
    shutil.rmtree(home / "sessions")
    assert history.home_problem is not None
    assert unread(history, NOW) == []
    assert history.refresh([str(p) for p in copies], NOW) == []
    assert {h.error for h in history.health()} == {"file vanished"}
    assert fingerprint(history.turns) == before  # what was read stays on screen
    usable(history)
    # Codex re-creates the folder and the same files (e.g. restored from a backup).
    make_home(tmp_path)
    assert history.home_problem is None
    # (The files may get their old inode numbers back: then they are seen as unchanged.)
    history.refresh([str(p) for p in copies], NOW)
    assert {h.error for h in history.health()} == {None}
    assert fingerprint(history.turns) == before
    extra = home / "sessions" / "2026" / "11" / "30" / EXEC_171[2].name
    extra.parent.mkdir()
    extra.write_bytes(EXEC_171[2].read_bytes())
    assert unread(history, NOW) == [str(extra)]
    assert history.refresh([str(extra)], NOW) == [str(extra)]
    assert len(history.turns) == len(before) + len(turns_of(EXEC_171[2]))


def _tiny_rollout(n: int) -> bytes:
    sid = f"00000000-0000-7000-8000-{n:012d}"
    return (
        b'{"timestamp":"2026-11-29T08:35:07.000Z","type":"session_meta","payload":{"id":"%s",'
        b'"cli_version":"0.120.0","originator":"codex_exec"}}\n'
        b'{"timestamp":"2026-11-29T08:35:08.000Z","type":"event_msg","payload":{"type":"task_started",'
        b'"turn_id":"turn-%d"}}\n'
        b'{"timestamp":"2026-11-29T08:35:09.000Z","type":"event_msg","payload":{"type":"task_complete",'
        b'"turn_id":"turn-%d","last_agent_message":%s}}\n'
    ) % (sid.encode(), n, n, b'"done"' if n % 3 else b"null")


def test_thousands_of_files_appearing_at_once(tmp_path):
    home, _ = make_home(tmp_path, sources=(EXEC_171[0],))
    history = loaded(home)
    known = len(history.turns)
    burst = home / "sessions" / "2026" / "11" / "30"
    burst.mkdir(parents=True)
    count = 3000
    for n in range(count):
        (burst / f"rollout-2026-11-30T00-00-00-{n:05d}.jsonl").write_bytes(_tiny_rollout(n))
    new = unread(history, NOW)
    assert len(new) == count
    assert len(history.refresh(new, NOW)) == count
    assert unread(history, NOW) == []
    assert len(history.turns) == known + count
    assert sum(t.outcome == "failed" for t in history.turns if t.file.startswith(str(burst))) == count // 3
    health = history.health()
    assert len(health) == count + 1 and all(h.error is None and h.malformed == 0 for h in health)
    usable(history)


def test_symlinked_date_folder_and_a_symlink_loop(tmp_path):
    home, copies = make_home(tmp_path)
    outside = tmp_path / "elsewhere" / "30"
    outside.mkdir(parents=True)
    (outside / EXEC_171[1].name).write_bytes(EXEC_171[1].read_bytes())
    month = home / "sessions" / "2026" / "11"
    (month / "30").symlink_to(outside, target_is_directory=True)
    (home / "sessions" / "2026" / "loop").symlink_to(home / "sessions", target_is_directory=True)
    (month / "self").symlink_to(month, target_is_directory=True)
    (month / "29" / "rollout-dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    (month / "31").symlink_to(tmp_path / "no-such-folder", target_is_directory=True)
    found = find_rollouts(home)
    real = {os.path.realpath(f.path) for f in found}
    assert len(found) == len(real) == len(copies) + 1  # each file once, the loop walked once
    history = loaded(home)
    assert len(history.readers) == len(copies) + 1
    assert unread(history, NOW) == []
    ids = [t.turn_id for t in history.turns]
    assert len(ids) == len(set(ids))
    assert all(h.error is None for h in history.health())
    usable(history)


def test_file_deleted_between_listing_and_reading(tmp_path):
    home, copies = make_home(tmp_path)
    history = History(home=home)
    new = unread(history, NOW)
    copies[0].unlink()
    history.refresh(new, NOW)
    assert health_of(history, copies[0]).error == "file vanished"
    assert fingerprint(history.turns) == fingerprint([t for p in copies[1:] for t in turns_of(p)])
    usable(history)
