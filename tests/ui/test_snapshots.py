"""SVG snapshots: fixed size, fixed theme, fixed clock, no live sources, no blinking cursor.

Update after reviewing snapshot_report.html: `pytest tests/ui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from codexwatch.core.models import StatusSnapshot
from codexwatch.sources.history import load_history
from codexwatch.ui import messages as msg

from .helpers import NOW, REAL_CLI, CodexWatchApp, config, hanging_transport, snapshot_ok


def fixture_facts():
    """Turns from the real recordings, with file paths that do not depend on the checkout."""
    turns, health = [], []
    for name in ("exec-0.171.0", "tui-0.171.0"):
        history = load_history(REAL_CLI / name, None, NOW)
        for t in history.turns:
            t.file = "~/.codex/sessions/2026/11/29/" + Path(t.file).name
            turns.append(t)
        health += [replace(h, path=Path(h.path).name) for h in history.health()]
    turns.sort(key=lambda t: t.started_at or t.at)
    return turns, health


def make_app(tmp_path: Path) -> CodexWatchApp:
    return CodexWatchApp(config(tmp_path, load_history=False, status_enabled=True,
                                status_transport=hanging_transport()))


def with_usage(turns):
    """The recordings ran under an API-key login (no windows): the newest turn is given a
    reading in 0.171's shape, as a ChatGPT login records it."""
    from codexwatch.core.usage import read_limits

    newest = max(turns, key=lambda t: t.at)
    newest.usage = read_limits({
        "limit_id": "codex", "limit_name": None, "credits": None, "plan_type": "plus",
        "primary": {"used_percent": 34.0, "window_minutes": 300, "resets_at": NOW + 5760},
        "secondary": {"used_percent": 61.0, "window_minutes": 10080, "resets_at": NOW + 3 * 86400 + 3600},
        "individual_limit": None, "spend_control_reached": None, "rate_limit_reached_type": None,
    }, newest.at)
    return turns


def failing_again(turns):
    """The TUI session's last failure, again two minutes ago: an ongoing episode."""
    last = max((t for t in turns if t.failed and t.error_class == "capacity"), key=lambda t: t.at)
    return turns + [replace(last, turn_id=last.turn_id + "-again", started_at=NOW - 130, ended_at=NOW - 120)]


def feeder(incident: bool = True, keys: tuple[str, ...] = (), failing: bool = False, status=None,
           usage: bool = False):
    async def run_before(pilot) -> None:
        app = pilot.app
        turns, health = fixture_facts()
        if usage:
            turns = with_usage(turns)
        app.post_message(msg.HistoryLoaded(failing_again(turns) if failing else turns, health))
        app.post_message(msg.StatusUpdated(status or snapshot_ok(NOW, incident=incident)))
        await pilot.pause()
        await app.settled()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await app.settled()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", [(120, 36), (60, 15)], ids=["wide", "narrow"])
def test_dashboard(snap_compare, tmp_path, size):
    assert snap_compare(make_app(tmp_path), run_before=feeder(), terminal_size=size)


@pytest.mark.parametrize("tab", ["2", "3", "4"], ids=["models", "when", "status"])
def test_tabs(snap_compare, tmp_path, tab):
    assert snap_compare(make_app(tmp_path), run_before=feeder(keys=(tab,)), terminal_size=(120, 36))


def test_models_tab_with_the_plans_usage(snap_compare, tmp_path):
    assert snap_compare(make_app(tmp_path), run_before=feeder(keys=("2",), usage=True), terminal_size=(120, 36))


def test_help(snap_compare, tmp_path):
    assert snap_compare(make_app(tmp_path), run_before=feeder(keys=("question_mark",)), terminal_size=(100, 30))


def test_wizard(snap_compare, tmp_path):
    assert snap_compare(make_app(tmp_path), run_before=feeder(failing=True, keys=("w",)), terminal_size=(120, 36))


def test_report(snap_compare, tmp_path):
    # The latest episode has ended: it can still be reported.
    assert snap_compare(make_app(tmp_path), run_before=feeder(keys=("r",)), terminal_size=(120, 36))


def test_status_unknown(snap_compare, tmp_path):
    unknown = StatusSnapshot.unknown("ReadTimeout: the status page did not answer in 10 s", NOW - 300)
    assert snap_compare(make_app(tmp_path), run_before=feeder(keys=("4",), status=unknown), terminal_size=(120, 36))


def test_loading(snap_compare, tmp_path):
    async def run_before(pilot) -> None:
        pilot.app.post_message(msg.HistoryProgress(1200, 4732))
        await pilot.app.settled()
        await pilot.pause()

    app = CodexWatchApp(config(tmp_path, load_history=False))
    assert snap_compare(app, run_before=run_before, terminal_size=(100, 30))


def test_first_run(snap_compare, tmp_path):
    problem = "No Codex home at ~/.codex (looked there because CODEX_HOME is not set)."
    app = CodexWatchApp(config(Path("/home/dev/.codex"), load_history=False, home_problem=problem))
    assert snap_compare(app, terminal_size=(100, 30))


def runs_feeder():
    """Three recorded supervisors at NOW: one backing off, one killed mid-run, one that gave up."""
    runs = [
        {"pid": 4242, "started_at": NOW - 300, "heartbeat_at": NOW - 2, "live": True, "cwd": "~/src/shop-api",
         "ended_at": None, "tasks": [
             {"task": 1, "state": "ok", "attempt": 1, "model": "gpt-6-sol", "until": None},
             {"task": 2, "state": "backing_off", "attempt": 3, "model": "gpt-6-terra", "until": NOW + 95},
             {"task": 3, "state": "running", "attempt": 1, "model": "gpt-6-sol", "until": None},
             {"task": 4, "state": "queued", "attempt": 0, "model": None, "until": None}]},
        {"pid": 4100, "started_at": NOW - 3600, "heartbeat_at": NOW - 3000, "live": False,
         "cwd": "~/src/[red]docs[/red]", "ended_at": None, "tasks": [
             {"task": 1, "state": "backing_off", "attempt": 2, "model": "gpt-6-sol", "until": NOW - 2900}]},
        {"pid": 3900, "started_at": NOW - 7200, "heartbeat_at": NOW - 5400, "live": False, "cwd": "~/ci",
         "ended_at": NOW - 5400, "outcome": "failed", "tasks": [
             {"task": 1, "state": "gave_up", "attempt": 5, "model": "gpt-6-mini", "until": None}]},
    ]

    async def run_before(pilot) -> None:
        await feeder()(pilot)
        pilot.app.post_message(msg.RunsUpdated(runs))
        await pilot.pause()
        await pilot.press("5")
        await pilot.pause()

    return run_before


def test_runs_tab(snap_compare, tmp_path):
    assert snap_compare(make_app(tmp_path), run_before=runs_feeder(), terminal_size=(120, 36))
