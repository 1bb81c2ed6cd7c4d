"""The plan's usage, the context curve, the one rule for Codex components and 'incidents
unknown', as the view computes them and the widgets render them (no event loop)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timezone

from codexwatch.core.models import Component
from codexwatch.core.usage import read_limits
from codexwatch.ui.view import HeaderView, build_dashboard, meter, status_summary, verdict
from codexwatch.ui.widgets.header import header_content
from codexwatch.ui.widgets.status import status_content
from codexwatch.ui.widgets.usage import context_content, usage_content
from tests.unit._advice_builders import T0, turn

from .helpers import snapshot_ok

UTC = timezone.utc
NOW = T0 + 60


def reading(p, s, at=T0, reset5=T0 + 3600, resetwk=T0 + 3 * 86400):
    return read_limits({"primary": {"used_percent": p, "window_minutes": 300, "resets_at": reset5},
                        "secondary": {"used_percent": s, "window_minutes": 10080, "resets_at": resetwk},
                        "plan_type": "plus", "limit_id": "codex"}, at)


def test_header_meter_from_the_newest_reading_across_sessions():
    turns = [turn(T0 - 600, "ok", None, session="a", usage=reading(10.0, 50.0, at=T0 - 600)),
             turn(T0, "ok", None, session="b", usage=reading(34.0, 61.0)),
             turn(T0 - 300, "ok", None, session="c", usage=reading(20.0, 55.0, at=T0 - 300))]
    view = build_dashboard(turns, [], None, NOW, UTC, status_enabled=False)
    assert (view.header.meter, view.header.meter_level) == ("5h 34% · wk 61%", "ok")
    text = header_content(view.header, 120).plain
    assert "5h 34% · wk 61%" in text
    assert view.usage.session_id == "b" and [w.name for w in view.usage.windows] == ["5-hour window", "weekly window"]
    panel = usage_content(view.usage, NOW, UTC).plain
    assert "5-hour window" in panel and "34 %" in panel and "resets 21:00 (in 59 min)" in panel
    assert "weekly window" in panel and "61 %" in panel and "plan plus" in panel


def test_meter_levels_and_windows_that_have_reset():
    assert meter(reading(92.0, 40.0), NOW) == ("5h 92% · wk 40%", "warn")
    assert meter(reading(100.0, 40.0), NOW) == ("5h 100% · wk 40%", "bad")
    assert meter(reading(50.0, 40.0), T0 + 7200) == ("wk 40%", "ok")  # the 5-hour one reset since
    assert meter(None, NOW) == (None, "ok")


def test_no_reading_says_so_and_the_header_has_no_meter():
    view = build_dashboard([turn(T0, "ok", None)], [], None, NOW, UTC, status_enabled=False)
    assert view.header.meter is None and view.usage is None
    assert "not recorded" in usage_content(None, NOW, UTC).plain


def test_context_curve_and_threshold_in_words():
    turns = [turn(T0 - 9000 + i, "failed" if i < 1 else "ok", "capacity" if i < 1 else None,
                  session=f"a{i}", context_used=20, context_window=100) for i in range(30)]
    turns += [turn(T0 - 5000 + i, "failed" if i < 10 else "ok", "capacity" if i < 10 else None,
                   session=f"b{i}", context_used=80, context_window=100) for i in range(25)]
    view = build_dashboard(turns, [], None, NOW, UTC, status_enabled=False)
    text = context_content(view.context).plain
    assert "0–25 %" in text and "1 of 30 turns" in text and "10 of 25 turns" in text
    assert "Threshold: Your turns from 75 % of the context window up failed 12× as often" in text
    few = build_dashboard(turns[:5], [], None, NOW, UTC, status_enabled=False)
    assert "No threshold" in context_content(few.context).plain and "at least 20 turns" in context_content(few.context).plain


def test_the_view_s_advice_is_what_advise_finds_from_the_turns_alone():
    # The view hands the advice its fold's context threshold: the same advice, the
    # threshold's evidence included, as advise() tallying the turns itself.
    from codexwatch.core.advice import advise
    from codexwatch.core.stats import current_episode

    turns = [turn(T0 - 9000 + i, "failed" if i < 1 else "ok", "capacity" if i < 1 else None,
                  session=f"a{i}", context_used=20, context_window=100) for i in range(30)]
    turns += [turn(T0 - 5000 + i, "failed" if i < 10 else "ok", "capacity" if i < 10 else None,
                   session=f"b{i}", context_used=80, context_window=100) for i in range(25)]
    turns += [turn(NOW - 120 + i, "failed", "capacity", session="c", context_used=85, context_window=100)
              for i in range(3)]
    view = build_dashboard(turns, [], None, NOW, UTC, status_enabled=False)
    alone = advise(current_episode(turns, NOW), turns, None, NOW, UTC)
    assert view.advice is not None and view.advice.episode is not None
    assert any("75 %" in line for line in alone.evidence)
    assert view.advice == alone


def test_a_degraded_chatgpt_group_component_warns_neither_header_nor_verdict():
    snap = snapshot_ok(NOW)
    snap = replace(snap, components=list(snap.components) + [
        Component("desk", "Codex in ChatGPT Desktop", "degraded_performance", group="ChatGPT")])
    text, level, _ = status_summary(snap, NOW, True, UTC)
    assert (text, level) == ("Codex operational", "ok")
    assert verdict([], None, snap, NOW)[0] == "ok"
    codex = replace(snap, components=list(snap.components) + [
        Component("cli", "CLI", "degraded_performance", group="Codex")])
    assert status_summary(codex, NOW, True, UTC)[1] == "warn"
    assert verdict([], None, codex, NOW) == ("degraded", "a Codex component is degraded")


def test_incidents_unknown_in_header_and_status_tab():
    snap = replace(snapshot_ok(NOW), incidents=[], fallback=True,
                   incidents_error="proxy: HTTP 500; compat incidents: HTTP 502; feed: HTTP 404")
    text, level, _ = status_summary(snap, NOW, True, UTC)
    assert level == "unknown" and "incidents unknown" in text
    body = status_content(snap, NOW, UTC).plain
    assert "incidents unknown: proxy: HTTP 500" in body and "Ongoing incidents" not in body


def test_log_text_in_the_meter_is_shown_literally():
    odd = read_limits({"primary": {"used_percent": 5, "window_minutes": 300}, "secondary": None,
                       "rate_limit_reached_type": "[bold]x[/]"}, T0)
    view = build_dashboard([turn(T0, "ok", None, usage=odd)], [], None, NOW, UTC, status_enabled=False)
    assert "[bold]x[/]" in usage_content(view.usage, NOW, UTC).plain
    assert isinstance(view.header, HeaderView)


def test_the_dashboards_peak_hint_is_the_advices_own_with_or_without_older_turns():
    """The view hands the advice its hour-of-week grids when every turn is of the last 7
    days, so they are counted once; with older turns there, the advice counts its own.
    Either way the side advice is what advise() alone finds."""
    from datetime import datetime

    from codexwatch.core.advice import advise
    from codexwatch.core.stats import StatsFold, current_of

    monday_11 = datetime(2026, 11, 23, 11, 0, tzinfo=UTC).timestamp()
    peak = [turn(monday_11 + i * 600, session="p", index=i) for i in range(4)]
    evening = [turn(T0 - 3600 + i * 60, "ok", None, session="e", index=i) for i in range(10)]
    older = [turn(T0 - 9 * 86400 + i * 60, "ok", None, session="o", index=i) for i in range(8)]
    for turns in (peak + evening + [turn(T0)], older + peak + evening + [turn(T0)]):
        view = build_dashboard(turns, [], None, NOW, UTC, status_enabled=False)
        current = current_of(StatsFold(NOW, UTC).add(turns).episodes(), NOW)
        alone = advise(current, turns, None, NOW, UTC)
        assert any(s.startswith("Peak hours: 4 of your 4 turns") for s in view.advice.side)
        assert view.advice.side == alone.side


def test_a_plan_windows_line_fits_the_pane_the_dashboard_shows_it_in():
    # a reset more than a day away gives the longest line: "resets Thu 00:00 (in 31 h 23 min)"
    from codexwatch.ui.screens.dashboard import USAGE_WIDTH

    usage = reading(34.0, 61.0, resetwk=NOW + 31 * 3600 + 23 * 60)
    view = build_dashboard([turn(T0, "ok", None, session="b", usage=usage)], [], None, NOW, UTC,
                           status_enabled=False)
    for width in (80, USAGE_WIDTH - 1, USAGE_WIDTH, 120):
        lines = usage_content(view.usage, NOW, UTC, narrow=width < USAGE_WIDTH).plain.splitlines()
        assert "(in 31 h 23 min)" in lines[2]
        assert all(len(line) <= width - 2 for line in lines[1:]), width  # the panel's padding
