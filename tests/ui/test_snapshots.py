"""SVG snapshots: fixed size, fixed theme, fixed clock, no live sources, no blinking cursor.

Update after reviewing snapshot_report.html: `pytest tests/ui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

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


def feeder(incident: bool = True, keys: tuple[str, ...] = ()):
    async def run_before(pilot) -> None:
        app = pilot.app
        turns, health = fixture_facts()
        # the TUI session's last turn failed again: an ongoing capacity episode
        app.post_message(msg.HistoryLoaded(turns, health))
        app.post_message(msg.StatusUpdated(snapshot_ok(NOW, incident=incident)))
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


def test_help(snap_compare, tmp_path):
    assert snap_compare(make_app(tmp_path), run_before=feeder(keys=("question_mark",)), terminal_size=(100, 30))
