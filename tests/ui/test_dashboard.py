"""Pilot tests of the dashboard with real recordings and fake sources."""

from __future__ import annotations

import os

import httpx
from rich.text import Text

from codexwatch.core.models import Turn
from codexwatch.ui import messages as msg
from codexwatch.ui.screens.dashboard import DashboardScreen
from codexwatch.ui.widgets.decision import DecisionPanel
from codexwatch.ui.widgets.failures import FailuresTable, TurnDetail
from codexwatch.ui.widgets.header import VerdictBar
from codexwatch.ui.widgets.models import ModelsTable

from .helpers import NOW, failing_home, history_shown, hanging_transport, CodexWatchApp, config, failed_turn_lines, make_home, snapshot_ok, tui_session, wait_until


def text_of(widget) -> str:
    return str(widget.render())


def pane_lines(widget) -> list[str]:
    """The lines a widget shows, its border and padding too (the details pane's top border
    is the first)."""
    from textual.geometry import Region

    return [strip.text for strip in widget.render_lines(Region(0, 0, *widget.outer_size))]


def labels(detail) -> list[str]:
    """The details pane's rows, each by its first word (its label)."""
    return [line.split()[0] for line in pane_lines(detail)[1:]]


def band_text(app) -> str:
    """The action band, once as shown and once without the letter spacing of the large type."""
    raw = str(app.screen.query_one("#band").render())
    return raw + " | " + raw.replace("   ", "_").replace(" ", "").replace("_", " ")


async def test_history_fills_the_table_header_and_now_panel(tmp_path):
    app = CodexWatchApp(config(make_home(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await history_shown(pilot)
        await pilot.pause()
        table = app.screen.query_one(FailuresTable)
        # exec 0.171.0: 6 failed runs; tui 0.171.0: 3 failed turns
        assert table.row_count == 9
        header = text_of(app.screen.query_one(VerdictBar))
        assert "DEGRADED" in header and "parser 100%" in header
        assert "NO FAILURES" in band_text(app)
        # the newest failure is selected and its details are shown
        detail = text_of(app.screen.query_one(TurnDetail))
        assert "session" in detail and "/home/dev/src/shop-api" in detail


def test_a_long_path_is_folded_after_slashes_into_lines_that_fit_and_give_it_back_whole():
    from codexwatch.ui.fmt import fold_path

    path = "/home/someone/.codex/sessions/2026/11/29/rollout-2026-11-29T08-42-06-01a22677-fa5d.jsonl"
    for width in (20, 33, 50, len(path) - 1):
        lines = fold_path(path, width)
        assert "".join(lines) == path and all(len(line) <= width for line in lines)
        assert all(line.endswith("/") for line in lines[:-1] if "/" in line[width // 2:])
    assert fold_path(path, 40) == ["/home/someone/.codex/sessions/2026/11/",
                                   "29/rollout-2026-11-29T08-42-06-01a22677-", "fa5d.jsonl"]
    assert fold_path("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]  # no slash: where full
    assert fold_path(path, 0) == [path] == fold_path(path, len(path))


def test_a_detail_longer_than_the_pane_wraps_under_its_value_not_under_its_label():
    from dataclasses import replace as with_

    from codexwatch.ui.widgets.failures import turn_detail
    from tests.unit._advice_builders import T0, UTC, turn

    message = "exceeded retry limit, last status: 429 Too Many Requests, request id: req_0123456789abcdef"
    failed = with_(turn(T0), message=message)
    lines = turn_detail(failed, UTC, T0, None, width=60).plain.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("message"))
    assert lines[at + 1].startswith(" " * 12) and lines[at + 1][12] != " "
    assert all(len(line) <= 60 for line in lines)
    assert " ".join(line[12:].strip() for line in lines[at:at + 3]).startswith(message)


async def test_the_detail_pane_shows_a_rollout_path_longer_than_the_pane_whole(tmp_path):
    app = CodexWatchApp(config(make_home(tmp_path)))
    async with app.run_test(size=(100, 34)) as pilot:
        assert await history_shown(pilot)
        await pilot.pause()
        detail = app.screen.query_one(TurnDetail)
        path = app.view.failures[-1].file
        assert len(path) > detail.size.width  # folded over lines, not cut at the pane's edge
        shown = "".join(line.strip() for line in pane_lines(detail))
        assert path in shown and "incident" in shown  # and the row after it still there


async def test_an_80x24_terminal_keeps_rows_of_the_failures_table_and_the_details_first_rows(tmp_path):
    app = CodexWatchApp(config(make_home(tmp_path)))
    async with app.run_test(size=(80, 24)) as pilot:
        assert await history_shown(pilot)
        await pilot.pause()
        table, detail = app.screen.query_one(FailuresTable), app.screen.query_one(TurnDetail)
        assert table.size.height >= 4  # its header and three failures at least
        assert labels(detail)[:3] == ["failed", "message", "incident"]  # whose side it is, before the rest


async def test_during_an_episode_an_80x24_terminal_shows_the_advice_the_failures_and_their_details(tmp_path):
    home, _, _ = failing_home(tmp_path)
    app = CodexWatchApp(config(home))
    async with app.run_test(size=(80, 24)) as pilot:
        assert await wait_until(pilot, lambda: app.view and app.view.episode is not None)
        await pilot.pause()
        panel = app.screen.query_one(DecisionPanel)
        assert panel.has_class("-short") and app.screen.query_one("#band").size.height == 1
        body = str(app.screen.query_one("#body").render())
        # the countdown says which rung of the ladder it is on; no side line repeats it
        assert "» Back off: wait 30 s after failure 1; next try" in body and "+ Back off" not in body
        assert body.count("▸ ") == 2 and body.count("+ ") == 1 and "[w] triage wizard" in body
        assert body.index("[w]") < body.index("+ ")  # the side advice last: a short pane cuts it first
        assert len(app.view.now.evidence) > 2  # the wizard shows the rest
        table, detail = app.screen.query_one(FailuresTable), app.screen.query_one(TurnDetail)
        assert table.size.height >= 4
        assert labels(detail)[:2] == ["failed", "message"]  # 80x24 left the details no row during an episode


async def test_a_line_appended_to_a_session_appears_and_changes_the_decision(tmp_path):
    home = make_home(tmp_path)
    session, session_id = tui_session(home)
    os.utime(session)  # Codex is writing it (the copy kept the fixture's old mtime)
    app = CodexWatchApp(config(home, follow=True, hot_interval=0.05))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await history_shown(pilot)
        assert app.view.now.action == "none"
        await pilot.pause()  # the screen shows the view published
        rows_before = app.screen.query_one(FailuresTable).row_count
        lines = failed_turn_lines("capacity", NOW - 30, session_id, model="gpt-6-sol")
        with open(session, "ab") as fh:  # through one open handle, as Codex writes
            for line in lines:
                fh.write(line)
                fh.flush()
        table = app.screen.query_one(FailuresTable)
        assert await wait_until(pilot, lambda: table.row_count == rows_before + 1)
        assert await wait_until(pilot, lambda: app.view.now.action != "none")
        newest = table.get_row_at(0)
        assert "capacity" in str(newest[3])
        # the newest was selected, so the selection moved on to the new newest
        assert await wait_until(pilot, lambda: table.cursor_row == 0 and "capacity" in text_of(app.screen.query_one(TurnDetail)))
        assert app.view.episode is not None and app.view.episode.ongoing
        # The screens get a view on the loop's next turn (the signal calls them later).
        assert await wait_until(pilot, lambda: "FAILING" in text_of(app.screen.query_one(VerdictBar)))
        assert "NO FAILURES" not in band_text(app)


async def test_status_page_failure_shows_unknown_since(tmp_path):
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    app = CodexWatchApp(
        config(make_home(tmp_path), status_enabled=True, status_url="https://status.openai.com",
               status_transport=httpx.MockTransport(refuse))
    )
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: app.snapshot is not None and app.view and app.view.now)
        await app.settled()
        await pilot.pause()
        header = text_of(app.screen.query_one(VerdictBar))
        assert "status page unknown" in header and "unknown since" in header
        await pilot.press("4")
        body = text_of(app.screen.query_one("#status-body"))
        assert "Status unknown since" in body
        assert "all clear" in body


async def test_text_from_logs_and_status_is_shown_literally(tmp_path):
    nasty = "[bold red]boom[/] \x1b[31mred\x1b[0m [link=http://x]y[/link]"
    turn = Turn(
        session_id="s-1", turn_id="t-1", file="/tmp/x.jsonl", model="[b]m[/b]", outcome="failed",
        error_class="capacity", message=nasty, started_at=NOW - 100, ended_at=NOW - 90, duration_ms=10_000,
        shape="rejected", cwd="/home/dev/[i]x[/i]",
    )
    app = CodexWatchApp(config(tmp_path, load_history=False, status_enabled=True, status_transport=hanging_transport()))
    async with app.run_test(size=(120, 40)) as pilot:
        app.post_message(msg.HistoryLoaded([turn], []))
        app.post_message(msg.StatusUpdated(snapshot_ok(incident=True)))
        assert await wait_until(pilot, lambda: app.screen.query_one(FailuresTable).row_count == 1)
        await app.settled()
        await pilot.pause()
        row = app.screen.query_one(FailuresTable).get_row_at(0)
        assert all(isinstance(cell, Text) for cell in row)
        assert "[bold red]boom[/]" in row[6].plain and "\x1b" not in row[6].plain
        assert row[2].plain == "[b]m[/b]"
        detail = text_of(app.screen.query_one(TurnDetail))
        assert "[bold red]boom[/]" in detail and "␛[31m" in detail and "/home/dev/[i]x[/i]" in detail
        last = text_of(app.screen.query_one(DecisionPanel).query_one("#body"))
        assert "[bold red]" not in last or "[bold red]boom[/]" in last
        await pilot.press("4")
        body = text_of(app.screen.query_one("#status-body"))
        assert "Codex [bold]responses[/]" in body and "[red]errors[/]" in body


async def test_narrow_pane_keeps_verdict_action_and_last_failure(tmp_path):
    app = CodexWatchApp(config(make_home(tmp_path)))
    async with app.run_test(size=(60, 15)) as pilot:
        assert await history_shown(pilot)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DashboardScreen) and screen.has_class("-compact")
        for selector in ("#header", "#band", "#last-failure"):
            widget = screen.query_one(selector)
            region = widget.region
            assert widget.display and region.height >= 1, selector
            assert region.y + region.height <= 15 - 1, selector  # above the footer
        assert "FAILING" in text_of(screen.query_one("#header")) or "DEGRADED" in text_of(screen.query_one("#header"))
        assert "NO FAILURES" in band_text(app)
        last = text_of(screen.query_one("#last-failure"))
        assert "Last failure" in last and " · gpt-6-sol · " in last  # separated, not run together
        # the failures table keeps whole words: fewer columns, all of them in view
        table = screen.query_one(FailuresTable)
        assert [str(c.label) for c in table.columns.values()] == ["time", "model", "class", "shape"]
        assert table.virtual_size.width <= table.scrollable_content_region.width
        # so does the models table: the model, 24 h, 7 d and the bar, nothing off the side
        await pilot.press("2")
        await pilot.pause()
        models = screen.query_one(ModelsTable)
        assert [str(c.label) for c in models.columns.values()] == ["model", "24h", "7d", "rate"]
        assert models.row_count >= 1
        assert models.virtual_size.width <= models.scrollable_content_region.width
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not screen.has_class("-compact")
        assert [str(c.label) for c in table.columns.values()][-1] == "message"
        assert [str(c.label) for c in models.columns.values()][-1] == "lost, 7 d"


async def test_help_and_command_palette(tmp_path):
    from textual.command import CommandPalette

    from codexwatch.ui.screens.help import HelpScreen

    app = CodexWatchApp(config(make_home(tmp_path)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert {"Triage wizard", "Copy the suggested Codex command", "Report", "Refresh status now"} <= set(titles)


async def test_new_episode_and_incident_ring_the_bell_and_notify(tmp_path):
    app = CodexWatchApp(config(tmp_path, load_history=False, bell=True, notify=True))
    bells, titles = [], []
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.bell = lambda: bells.append(1)
        shown = app.notify
        # Recorded as they are made: the app's own list drops them when they time out, which
        # a slow moment of a busy machine could let happen before the test looks.
        app.notify = lambda *args, **kwargs: titles.append(kwargs.get("title")) or shown(*args, **kwargs)
        ok = Turn(session_id="s", turn_id="t0", file="f", outcome="ok", started_at=NOW - 300, ended_at=NOW - 290)
        app.post_message(msg.HistoryLoaded([ok], []))
        app.post_message(msg.StatusUpdated(snapshot_ok()))
        await pilot.pause()
        assert bells == []
        bad = Turn(session_id="s", turn_id="t1", file="f", outcome="failed", error_class="capacity",
                   message="Selected model is at capacity.", started_at=NOW - 60, ended_at=NOW - 50, model="gpt-6-sol")
        app.post_message(msg.TurnsChanged([ok, bad]))
        assert await wait_until(pilot, lambda: len(bells) == 1)
        assert any("Codex turn failed" in (t or "") for t in titles)
        app.post_message(msg.StatusUpdated(snapshot_ok(incident=True)))
        assert await wait_until(pilot, lambda: len(bells) == 2)
        assert any("incident posted" in (t or "") for t in titles)
        app.post_message(msg.StatusUpdated(snapshot_ok()))
        assert await wait_until(pilot, lambda: len(bells) == 3)
        assert any("incident resolved" in (t or "") for t in titles)


async def test_bell_and_notifications_can_be_switched_off(tmp_path):
    app = CodexWatchApp(config(tmp_path, load_history=False, bell=False, notify=False))
    bells = []
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.bell = lambda: bells.append(1)
        app.post_message(msg.HistoryLoaded([], []))
        await pilot.pause()
        bad = Turn(session_id="s", turn_id="t1", file="f", outcome="failed", error_class="capacity",
                   started_at=NOW - 60, ended_at=NOW - 50)
        app.post_message(msg.TurnsChanged([bad]))
        await pilot.pause()
        await app.settled()
        assert bells == [] and not any("failed" in (n.title or "") for n in app._notifications)


async def test_a_history_that_cannot_be_read_is_not_shown_as_ok(tmp_path, monkeypatch):
    from codexwatch.sources import history

    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(history, "load_history", broken)
    app = CodexWatchApp(config(make_home(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        bar = app.screen.query_one(VerdictBar)
        assert await wait_until(pilot, lambda: app.loading.finished and "LOADING" not in text_of(bar))
        header = text_of(bar)
        assert "UNKNOWN" in header and " OK " not in header


def test_header_keeps_words_in_a_narrow_pane():
    from codexwatch.ui.view import HeaderView, Loading
    from codexwatch.ui.widgets.header import header_content

    incident = "Codex incident: Elevated error rates for Codex"
    healthy = HeaderView("degraded", "", incident, "bad", "42 s ago", 0, 1.0, "")
    assert header_content(healthy, 120).plain.endswith("│ 0 running │ parser 100%")
    narrow = header_content(healthy, 60).plain
    assert len(narrow) <= 60 and "DEGRADED" in narrow and "Codex incident: Elevated" in narrow
    assert "▶" not in narrow and "p 100%" not in narrow
    sick = HeaderView("degraded", "", incident, "bad", "42 s ago", 0, 0.93, "2 unknown types")
    assert header_content(sick, 60).plain.endswith("│ parser 93%")  # trouble shows, always
    loading = HeaderView("loading", "", "status unknown", "unknown", "", 0, None, "",
                         Loading(finished=False, done=10, total=400))
    assert "loading 10/400" in header_content(loading, 60).plain


async def test_a_tick_while_the_app_shuts_down_does_not_raise(tmp_path):
    # The refresh timer outlives the widgets: at exit Textual removes a screen's children
    # before it clears the screen stack, and a tick landing between the two found no
    # VerdictBar (seen in CI once). Tick exactly there.
    app = CodexWatchApp(config(tmp_path, load_history=False))
    ticked = []
    prune = app._prune

    async def prune_then_tick(*nodes, **kwargs):
        await prune(*nodes, **kwargs)
        app._dirty = True
        app._tick()
        ticked.append(1)

    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(msg.HistoryLoaded([], []))
        await pilot.pause()
        app._prune = prune_then_tick
    assert ticked and app.return_code in (None, 0)
