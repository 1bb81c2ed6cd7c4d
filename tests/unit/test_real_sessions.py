"""Sanitised real sessions (Codex Desktop 0.104) and other tools' fixtures, read in place
from ../shared; skipped where it is not beside the repository."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from codexwatch.core.stats import compute_stats
from codexwatch.sources.history import History, load_history
from tests.conftest import REAL_CLI, shared_or_skip

NOW = time.time()


def read(paths) -> History:
    history = History(home=Path("/nonexistent"))
    history.refresh([str(p) for p in paths], now=NOW)
    return history


def test_desktop_sessions_turns_and_abandoned_ones():
    folder = shared_or_skip("rollouts", "real")
    history = read(sorted(folder.glob("*.jsonl")))
    outcomes = Counter(t.outcome for t in history.turns)
    assert outcomes == {"ok": 45, "incomplete": 3}  # 45 task_complete; one abandoned + resumed
    assert {t.model for t in history.turns} == {"gpt-5.3-codex"}
    assert all(h.malformed == 0 and not h.unknown_types for h in history.health())
    abandoned = next(t for t in history.turns if t.turn_id.startswith("019c8a7f-8437"))
    assert abandoned.outcome == "incomplete" and not abandoned.live and abandoned.tool_calls >= 1


def test_fork_families_invent_no_turns_and_do_not_crash():
    folder = shared_or_skip("rollouts", "thirdparty")
    history = read(sorted(folder.rglob("*.jsonl")))
    codexbar = [t for t in history.turns if "codexbar" in t.file]
    assert codexbar == []  # those files hold no turn boundaries
    compute_stats(history.turns, history.health(), NOW)


def test_a_fork_that_replays_its_parent_counts_each_turn_once(tmp_path):
    parent = next((REAL_CLI / "tui-0.171.0").rglob("rollout-*.jsonl"))
    day = tmp_path / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True)
    (day / parent.name).write_bytes(parent.read_bytes())
    lines = parent.read_bytes().splitlines(keepends=True)
    child_meta = lines[0].replace(b"01a22677-fa5d-7172-925b-dcb719d2880b", b"01a22690-0000-7000-8000-00000000c41d")
    new_turn = [line.replace(b"01a22678-c857-7f12-ac0d-6cd14f041d69", b"01a22690-0000-7000-8000-0000000t0001")
                for line in lines[46:]]  # the parent's last turn, as the child's own new turn
    (day / "rollout-2026-11-29T09-00-00-01a22690-0000-7000-8000-00000000c41d.jsonl").write_bytes(
        child_meta + b"".join(lines) + b"".join(new_turn)
    )
    history = load_history(tmp_path, None, NOW, use_cache=False)
    ids = [t.turn_id for t in history.turns]
    assert len(ids) == len(set(ids)) == 6
    assert Counter(t.session_id[:8] for t in history.turns) == {"01a22677": 5, "01a22690": 1}
