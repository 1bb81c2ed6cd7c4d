"""Failure rate by context size: bands, the list by tokens, the threshold and its minimum."""

from __future__ import annotations

from codexwatch.core import context as C
from codexwatch.core.stats import StatsFold, compute_stats
from tests.unit._advice_builders import T0, turn


def turns(n, used, window, failed=0, cls="capacity", start=0):
    return [turn(T0 + start + i, "failed" if i < failed else "ok", cls if i < failed else None,
                 session=f"s{start}-{i}", context_used=used, context_window=window) for i in range(n)]


def test_bands_by_share_and_by_tokens_when_the_window_is_unknown():
    assert [C.band_of(u, 100) for u in (0, 24, 25, 74, 75, 89, 90, 100, 130)] == [
        "p0", "p0", "p1", "p2", "p3", "p3", "p4", "p4", "p4"]
    assert [C.band_of(u, None) for u in (0, 31_999, 32_000, 150_000, 900_000)] == ["t0", "t0", "t1", "t3", "t4"]
    assert C.band_of(None, 100) == "unknown"
    assert [C.band_label(k) for k in ("p3", "t0", "t4")] == ["75–90 %", "0–32k tokens", "200k+ tokens"]


def test_stats_json_carries_the_bands_and_the_threshold():
    ts = turns(30, 10, 100, failed=1) + turns(25, 80, 100, failed=10, start=100)
    ts += turns(3, 50_000, None, failed=1, cls="context_window", start=200)
    ts += [turn(T0 + 300, "aborted", None, context_used=10, context_window=100)]
    out = compute_stats(ts, [], T0 + 1000)
    bands = {b["band"]: b for b in out["context"]["bands"]}
    assert (bands["0–25 %"]["turns"], bands["0–25 %"]["failures"]) == (30, 1)
    assert bands["75–90 %"] == {"band": "75–90 %", "from_percent": 75, "to_percent": 90, "turns": 25,
                                "failures": 10, "failure_rate": 0.4, "by_class": {"capacity": 10}}
    assert bands["90–100 %"]["failure_rate"] is None
    tokens = {b["band"]: b for b in out["context"]["by_tokens"]}
    assert tokens["32k–64k tokens"]["by_class"] == {"context_window": 1}
    assert out["context"]["min_turns"] == C.MIN_TURNS
    th = out["context_threshold"]
    assert (th["band"], th["turns"], th["failures"], th["turns_below"], th["failures_below"]) == (
        "75–90 %", 25, 10, 30, 1)
    assert th["ratio"] == 12.0 and th["min_turns"] == 20


def test_no_threshold_without_enough_turns_or_without_a_difference():
    assert C.threshold(*C.tally(turns(10, 10, 100, failed=1) + turns(10, 80, 100, failed=9, start=50))) is None
    assert C.threshold(*C.tally(turns(40, 10, 100, failed=4) + turns(40, 80, 100, failed=6, start=50))) is None
    assert compute_stats([], [], T0)["context_threshold"] is None


def test_the_fold_keeps_its_bands_through_export_and_restore():
    fold = StatsFold(T0 + 1000).add(turns(30, 10, 100, failed=1))
    fold.add(turns(25, 80, 100, failed=10, start=100))
    again = StatsFold(T0 + 1000).restore(fold.export_state())
    assert again.context() == fold.context() and again.context()["context_threshold"] is not None


def test_stats_text_shows_the_usage_the_bands_and_the_threshold():
    from codexwatch.commands.stats import render
    from codexwatch.core.usage import read_limits

    ts = turns(30, 10, 100, failed=1) + turns(25, 80, 100, failed=10, start=100)
    ts[-1].usage = read_limits({"primary": {"used_percent": 34.0, "window_minutes": 300, "resets_at": T0 + 3600},
                                "secondary": None}, T0)
    text = render(compute_stats(ts, [], T0 + 1000))
    assert "Plan usage as of " in text and "5h 34%" in text and "wk" not in text.split("Plan usage")[1].split("\n")[0]
    assert "75–90 %" in text and "Context threshold: from 75–90 % (10/25 failed, 1/30 below)" in text


def test_the_fold_and_the_advice_find_the_same_threshold():
    # The dashboard hands its fold's threshold to the advice rather than have it tallied
    # again from every turn: the two must agree, on what a log cause changes too.
    from codexwatch.core.advice_facts import context_threshold

    ts = turns(30, 10, 100, failed=1) + turns(25, 80, 100, failed=10, start=100)
    ts += turns(20, 95, 100, failed=12, cls="unrecorded", start=300)
    ts += [turn(T0 + 400, "aborted", None, context_used=90, context_window=100)]
    found = StatsFold(T0 + 1000).add(ts).context()["context_threshold"]
    assert found is not None and found == context_threshold(ts)
