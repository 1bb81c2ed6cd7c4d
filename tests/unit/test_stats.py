from datetime import datetime, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest

from codexwatch.core.models import FileHealth, Turn
from codexwatch.core.stats import (
    compute_stats, current_episode, episodes, hour_of_week, model_stats, parser_health,
)

T0 = 1_795_900_000.0  # Saturday 28 Nov 2026, 21:06 UTC


def turn(i, at, outcome="ok", cls=None, model="gpt-6-sol", session="s1", **kw):
    return Turn(session_id=session, turn_id=f"t{i}", file="f", model=model, started_at=at - 5,
                ended_at=at, duration_ms=5000, outcome=outcome, error_class=cls, **kw)


def test_episodes_split_on_success_and_on_long_gaps():
    turns = [
        turn(1, T0, "failed", "capacity"),
        turn(2, T0 + 60, "failed", "capacity"),
        turn(3, T0 + 120),
        turn(4, T0 + 200, "failed", "rate_limit"),
        turn(5, T0 + 200 + 31 * 60, "failed", "capacity", session="s2"),
        turn(6, T0 + 200 + 32 * 60, "aborted"),
    ]
    eps = episodes(turns)
    assert [[t.turn_id for t in e.failures] for e in eps] == [["t1", "t2"], ["t4"], ["t5"]]
    assert [e.ongoing for e in eps] == [False, False, True]
    assert eps[0].classes == {"capacity": 2}
    assert eps[-1].sessions == ["s2"]


def test_current_episode_only_when_ongoing_and_recent():
    turns = [turn(1, T0, "failed", "capacity")]
    assert current_episode(turns, T0 + 60).failures[0].turn_id == "t1"
    assert current_episode(turns, T0 + 3 * 3600) is None
    assert current_episode(turns + [turn(2, T0 + 30)], T0 + 60) is None


def test_model_stats_windows_and_lost_work():
    turns = [
        turn(1, T0 - 2 * 86400, "failed", "capacity", tokens=500),
        turn(2, T0 - 600),
        turn(3, T0 - 300, "failed", "capacity", tokens=100),
        turn(4, T0 - 200, model="gpt-6-luna"),
    ]
    stats = model_stats(turns, T0)
    sol = next(m for m in stats["models"] if m["model"] == "gpt-6-sol")
    assert sol["1h"] == {"turns": 2, "failures": 1, "failure_rate": 0.5, "by_class": {"capacity": 1},
                         "lost_minutes": 0.1, "lost_tokens": 100}
    assert sol["all"]["failures"] == 2 and sol["all"]["lost_tokens"] == 600
    assert sol["24h"]["turns"] == 2 and sol["7d"]["turns"] == 3
    assert len(stats["variants"]) == 2


def test_hour_of_week_in_the_given_zone():
    grid = hour_of_week([turn(1, T0, "failed", "capacity"), turn(2, T0 + 10)], timezone.utc)
    assert grid["turns"][5][21] == 2 and grid["failures"][5][21] == 1
    assert sum(map(sum, grid["turns"])) == 2
    assert grid["quietest"] == [[5, 21]]


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"])
def test_hour_of_week_across_clock_changes_and_half_hour_zones(zone):
    try:
        tz = ZoneInfo(zone)
    except ZoneInfoNotFoundError:
        pytest.skip("no time zone database on this machine")
    # Every 7 minutes for 400 days: two clock changes a year, quarters split every way.
    turns = [turn(i, 1_767_225_600.0 + i * 420, "failed" if i % 5 == 0 else "ok", "capacity")
             for i in range(400 * 24 * 60 // 7)]
    expected = [[0] * 24 for _ in range(7)]
    for t in turns:
        local = datetime.fromtimestamp(t.at, timezone.utc).astimezone(tz)
        expected[local.weekday()][local.hour] += 1
    assert hour_of_week(turns, tz)["turns"] == expected


def test_parser_health_share_understood_by_version():
    health = [
        FileHealth("a", "0.171.0", lines=100, malformed=1, unknown_types={"world_x": 1}),
        FileHealth("b", None, lines=6, unsupported=True),
    ]
    p = parser_health(health)
    assert p["lines"] == 106 and p["unknown_lines"] == 1 and p["unsupported_files"] == 1
    assert p["understood"] == round(1 - 2 / 106, 4)
    assert p["by_version"]["0.171.0"]["unknown_types"] == {"world_x": 1}


def test_compute_stats_is_json_ready():
    import orjson

    stats = compute_stats([turn(1, T0, "failed", "capacity")], [], T0 + 10, timezone.utc)
    assert stats["current_episode"] == stats["episodes"][0]["id"]
    orjson.dumps(stats)


# -- the fold: parts added one file at a time give the figures of the whole list ---------

import marshal  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

from codexwatch.core.stats import StatsFold  # noqa: E402


def _reference_episodes(files, gap=30 * 60):
    """The episodes as the statistics first defined them, over one list: all turns by start
    (stably), the finished ones then by time (stably), walked in that order."""
    turns = sorted((t for f in files for t in f), key=lambda t: t.started_at or t.at)
    finished = sorted((t for t in turns if t.outcome in ("ok", "failed")), key=lambda t: t.at)
    out, run, last = [], [], 0.0
    for t in finished:
        if t.outcome == "ok":
            if run:
                out.append(([x.turn_id for x in run], False))
                run = []
            continue
        if run and t.at - last > gap:
            out.append(([x.turn_id for x in run], False))
            run = []
        run.append(t)
        last = t.at
    if run:
        out.append(([x.turn_id for x in run], True))
    return out


# Few distinct times and starts, so that ties (between failures and successes, and
# between files) are common.
_turns = st.lists(
    st.tuples(st.sampled_from(["ok", "failed", "aborted"]), st.sampled_from([0, 60, 2000, 4000]),
              st.sampled_from([0, 1, 30]), st.sampled_from([None, "m1", "m2"])),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_turns, max_size=5))
def test_fold_file_by_file_equals_the_whole_list(files):
    n = 0
    built = []
    for f in files:
        part = []
        for outcome, at, lead, model in f:
            n += 1
            part.append(Turn(session_id="s", turn_id=f"t{n}", file=f"f{len(built)}", model=model,
                             started_at=T0 + at - lead, ended_at=T0 + at, outcome=outcome,
                             error_class="capacity" if outcome == "failed" else None))
        built.append(part)
    fold = StatsFold(T0 + 3000)
    for part in built:
        fold.add(part)
    got = [([t.turn_id for t in e.failures], e.ongoing) for e in fold.episodes()]
    assert got == _reference_episodes(built)
    whole = sorted((t for f in built for t in f), key=lambda t: t.started_at or t.at)
    assert fold.model_stats() == model_stats(whole, T0 + 3000)
    assert fold.hour_of_week() == hour_of_week(whole)

    # Stored part way and taken up again (as the index does), the fold ends the same.
    halfway = StatsFold(T0 + 3000)
    for part in built[:len(built) // 2]:
        halfway.add(part)
    resumed = StatsFold(T0 + 3000).restore(marshal.loads(marshal.dumps(halfway.export_state())))
    for part in built[len(built) // 2:]:
        resumed.add(part)
    assert resumed.result() == fold.result()
