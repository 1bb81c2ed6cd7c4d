"""Every rule of triage-rules.md: one hand-built episode that triggers it, one that must not."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.unit._advice_builders import T0, UNKNOWN, UTC, episode, snapshot, turn
from codexwatch.core.advice import (
    ACTION_EXIT_CODES,
    ACTIONS,
    BACKOFF_LADDER_S,
    advise,
    candidates,
    model_tier,
    tried_steps,
)
from codexwatch.core.advice_wording import backoff_rule

OK = snapshot()
NOW = T0 + 10


def run(ep, turns=None, snap=OK, now=NOW):
    turns = sorted(turns if turns is not None else ep.failures, key=lambda t: t.started_at)
    return advise(ep, turns, snap, now, tz=UTC)


def switched_and_new_thread(fast=None):
    """Capacity on gpt-6-sol, then gpt-6-terra, then a brand-new thread: all failing."""
    a = turn(T0 - 300, fast=fast)
    b = turn(T0 - 200, model="gpt-6-terra", index=1, fast=fast)
    c = turn(T0 - 100, model="gpt-6-terra", session="s2", fast=fast)
    return episode(a, b, c)


def with_history(*failures, extra=()):
    """Failures plus a healthy history on other models (outside the episode)."""
    history = [turn(T0 - 86400 + i * 60, "ok", model="gpt-6-terra", index=i, session="h1")
               for i in range(5)]
    return [*history, *extra, *failures]


# --- exit codes and tiers ----------------------------------------------------------------


def test_exit_codes_are_fixed_and_distinct():
    assert ACTION_EXIT_CODES["none"] == 0
    others = [ACTION_EXIT_CODES[a] for a in ACTIONS if a != "none"]
    assert others == list(range(11, 11 + len(others)))
    assert ACTION_EXIT_CODES["wait"] == 11 and ACTION_EXIT_CODES["upgrade_codex"] == 22


@pytest.mark.parametrize("name, tier", [
    ("gpt-6-sol", "heavy"), ("gpt-5.5-pro", "heavy"), ("gpt-6-codex-max", "heavy"),
    ("gpt-6-terra", "middle"), ("gpt-4.1", "middle"), (None, "middle"), ("", "middle"),
    ("gpt-5.4-mini", "light"), ("gpt-6-luna", "light"), ("gpt-6-sol-light", "light"),
    ("gpt-6-nano", "light"), ("codex-spark", "light"),
])
def test_model_tier(name, tier):
    assert model_tier(name) == tier


# --- none ---------------------------------------------------------------------------------


def test_no_episode_means_none():
    adv = run(None, [turn(T0, "ok")])
    assert adv.action == "none" and adv.exit_code == 0
    assert adv.status == "ok"


def test_ended_episode_means_none_but_ongoing_does_not():
    failed = turn(T0 - 60)
    assert run(episode(failed, ongoing=False), [failed, turn(T0, "ok")]).action == "none"
    assert run(episode(failed)).action != "none"


# --- capacity ladder ---------------------------------------------------------------------


def test_incident_means_wait():
    adv = run(episode(turn(T0)), snap=snapshot(incident=True))
    assert adv.action == "wait" and adv.status == "incident"
    assert any("Degraded performance in Codex" in e for e in adv.evidence)


def test_no_incident_does_not_mean_wait():
    assert run(episode(turn(T0))).action == "switch_model"


def test_incident_does_not_override_auth():
    ep = episode(turn(T0, cls="auth", http_status=401))
    assert run(ep, snap=snapshot(incident=True)).action == "relogin"


def test_switch_model_with_candidates_and_commands():
    f = turn(T0)
    adv = run(episode(f), with_history(f))
    assert adv.action == "switch_model"
    assert [c.model for c in adv.candidates] == ["gpt-6-terra"]
    assert adv.candidates[0].success_rate == 1.0 and adv.candidates[0].turns == 5
    assert "codex -m gpt-6-terra" in adv.commands and "/model" in adv.commands
    assert "You have not switched model yet." in adv.evidence


def test_switch_model_not_again_once_switched():
    a, b = turn(T0 - 100), turn(T0, model="gpt-6-terra", index=1)
    adv = run(episode(a, b))
    assert adv.action != "switch_model"
    assert "switch_model" in adv.tried


def test_switch_model_without_history_is_medium_confidence():
    adv = run(episode(turn(T0)))
    assert adv.action == "switch_model" and adv.candidates == []
    assert adv.confidence == "medium" and adv.commands == ["/model"]


def test_candidates_one_tier_down_first_then_same_then_lightest():
    f = turn(T0)  # gpt-6-sol, heavy
    hist = []
    for i, (model, ok, failed) in enumerate([("gpt-6-terra", 8, 2), ("gpt-6-luna", 10, 0),
                                             ("gpt-6-pro", 5, 0), ("gpt-6-dead", 0, 4)]):
        hist += [turn(T0 - 7200 + i * 600 + k, "ok", model=model, session=f"h{i}") for k in range(ok)]
        hist += [turn(T0 - 7200 + i * 600 + 100 + k, model=model, session=f"h{i}") for k in range(failed)]
    got = candidates(episode(f), hist + [f], NOW)
    assert [c.model for c in got] == ["gpt-6-terra", "gpt-6-pro", "gpt-6-luna"]
    assert got[0].success_rate == pytest.approx(0.8) and got[0].turns == 10


def test_candidates_ignore_history_older_than_7_days():
    f = turn(T0)
    old = turn(T0 - 8 * 86400, "ok", model="gpt-6-terra", session="old")
    assert candidates(episode(f), [old, f], NOW) == []


def test_light_candidate_comes_with_the_small_fixes_caveat():
    f = turn(T0)
    light = [turn(T0 - 3600 + i, "ok", model="gpt-6-luna", session="h") for i in range(3)]
    adv = run(episode(f), light + [f])
    assert any("small fixes, not refactors" in e for e in adv.evidence)
    adv2 = run(episode(f), with_history(f))
    assert not any("small fixes" in e for e in adv2.evidence)


def test_new_thread_after_switch_did_not_help():
    a, b = turn(T0 - 100), turn(T0, model="gpt-6-terra", index=1)
    adv = run(episode(a, b))
    assert adv.action == "new_thread" and "/new" in adv.commands
    assert any("switched from gpt-6-sol to gpt-6-terra" in e and "still failing" in e
               for e in adv.evidence)


def test_new_thread_first_when_the_thread_is_long():
    f = turn(T0, index=55)
    assert run(episode(f)).action == "new_thread"
    g = turn(T0, index=3, context_used=90_000, context_window=100_000)
    adv = run(episode(g))
    assert adv.action == "new_thread"
    assert any("90% of its context window" in e for e in adv.evidence)


def test_short_thread_does_not_get_new_thread_first():
    f = turn(T0, index=3, context_used=10_000, context_window=100_000)
    assert run(episode(f)).action == "switch_model"


def test_fast_off_when_fast_was_on_is_low_confidence():
    adv = run(switched_and_new_thread(fast=True))
    assert adv.action == "fast_off" and adv.confidence == "low"
    assert "fast_off" in adv.open_steps


def test_fast_off_not_when_fast_was_off_or_unknown():
    assert run(switched_and_new_thread(fast=False)).action != "fast_off"
    assert run(switched_and_new_thread(fast=None)).action != "fast_off"


def test_stop_and_report_when_everything_was_tried_and_no_incident():
    adv = run(switched_and_new_thread())
    assert adv.action == "stop_and_report"
    assert set(adv.tried) == {"switch_model", "new_thread"}
    assert adv.open_steps == ["stop_and_report"]


def test_no_stop_and_report_while_the_status_page_is_unknown():
    adv = run(switched_and_new_thread(), snap=UNKNOWN)
    assert adv.action == "wait" and adv.status == "unknown"
    assert any("not treated as all clear" in e for e in adv.evidence)


def test_no_stop_and_report_during_an_incident_or_with_mixed_classes():
    assert run(switched_and_new_thread(), snap=snapshot(incident=True)).action == "wait"
    ep = switched_and_new_thread()
    ep.failures.insert(0, turn(T0 - 400, cls="stream_disconnected"))
    assert run(ep).action == "wait"


def test_stop_and_report_needs_fast_off_tried_when_fast_was_on():
    a = turn(T0 - 300, fast=True)
    b = turn(T0 - 200, model="gpt-6-terra", index=1, fast=True)
    c = turn(T0 - 100, model="gpt-6-terra", session="s2", fast=False)
    adv = run(episode(a, b, c))
    assert adv.action == "stop_and_report"
    assert set(adv.tried) == {"switch_model", "new_thread", "fast_off"}


# --- other classes -----------------------------------------------------------------------


@pytest.mark.parametrize("cls, action, command", [
    ("rate_limit", "slow_down", None),
    ("usage_limit", "wait_for_reset", "/usage"),
    ("model_unavailable", "pick_available_model", "/model"),
    ("auth", "relogin", "codex login"),
    ("server_error", "wait", None),
    ("stream_disconnected", "check_network", None),
    ("context_window", "compact", "/compact"),
    ("unrecorded", "upgrade_codex", None),
    ("other", "wait", None),
])
def test_class_rules(cls, action, command):
    adv = run(episode(turn(T0, cls=cls)))
    assert adv.action == action and adv.error_class == cls
    if command:
        assert command in adv.commands
    # and a capacity episode never lands on that class's action
    if action not in ("wait",):
        assert run(episode(turn(T0))).action != action


def test_latest_failure_decides_the_class():
    ep = episode(turn(T0 - 100), turn(T0, cls="rate_limit", index=1))
    adv = run(ep)
    assert adv.action == "slow_down"
    assert any("capacity 1, rate_limit 1; the latest rate_limit" in e for e in adv.evidence)


def test_usage_limit_shows_the_reset_time():
    adv = run(episode(turn(T0, cls="usage_limit", rate_limit_resets_at=T0 + 7200)))
    assert any("resets at 22:00 (in 119 min)" in e for e in adv.evidence)
    adv2 = run(episode(turn(T0, cls="usage_limit")))
    assert any("`/status` shows it" in e for e in adv2.evidence)


def test_model_unavailable_offers_models_that_worked():
    f = turn(T0, cls="model_unavailable", model="gpt-9")
    adv = run(episode(f), with_history(f))
    assert [c.model for c in adv.candidates] == ["gpt-6-terra"]


def test_remote_compact_capacity_means_upgrade():
    f = turn(T0, message="Error running remote compact task: Selected model is at capacity")
    assert run(episode(f)).action == "upgrade_codex"
    assert run(episode(turn(T0))).action != "upgrade_codex"


def test_other_class_shows_the_raw_value_with_low_confidence():
    adv = run(episode(turn(T0, cls="other", message="sandbox said no")))
    assert adv.confidence == "low"
    assert any("sandbox_error" in e and "sandbox said no" in e for e in adv.evidence)


# --- tried detection ---------------------------------------------------------------------


def test_new_thread_detected_only_for_a_session_started_after_the_first_failure():
    parallel = turn(T0 - 3600, "ok", session="p")  # was already running
    a = turn(T0 - 100)
    b = turn(T0, session="p", index=1)
    assert "new_thread" not in {s.key for s in tried_steps(episode(a, b), [parallel, a, b])}
    c = turn(T0, session="fresh")
    assert "new_thread" in {s.key for s in tried_steps(episode(a, c), [a, c])}


def test_fast_off_detected_only_when_a_later_turn_ran_without_fast():
    a, b = turn(T0 - 100, fast=True), turn(T0, fast=True, index=1)
    assert tried_steps(episode(a, b), [a, b]) == []
    c = turn(T0, fast=False, index=1)
    steps = tried_steps(episode(a, c), [a, c])
    assert [s.key for s in steps] == ["fast_off"] and steps[0].result == "still failing"


def test_a_switch_that_ended_the_episode_is_reported_as_having_worked():
    a = turn(T0 - 100)
    ok = turn(T0, "ok", model="gpt-6-terra", index=1)
    steps = tried_steps(episode(a, ongoing=False), [a, ok])
    assert [(s.key, s.result) for s in steps] == [("switch_model", "the next turn succeeded")]


# --- side advice -------------------------------------------------------------------------


def test_backoff_ladder_follows_the_failure_count():
    one = run(episode(turn(T0)))
    assert one.backoff.step == 1 and one.backoff.next_retry_at == T0 + 30
    assert any("next try at 20:00:30 (in 20 s)" in s for s in one.side)
    three = run(episode(turn(T0 - 200), turn(T0 - 100, index=1), turn(T0, index=2)))
    assert three.backoff.step == 3 and three.backoff.wait_s == BACKOFF_LADDER_S[2]


def test_beside_a_live_countdown_the_side_advice_leaves_out_only_the_back_off_line():
    for adv in (run(episode(turn(T0))), run(episode(turn(T0)), now=T0 + 60)):
        assert adv.side[0].startswith("Back off:")
        assert adv.side_beside_countdown == adv.side[1:]
    three = run(episode(turn(T0 - 200), turn(T0 - 100, index=1), turn(T0, index=2)))
    assert backoff_rule(three.backoff, three.episode) == "wait 10 min after failure 3"
    quiet = run(None, [turn(T0, "ok")])
    assert quiet.backoff is None and quiet.side_beside_countdown == quiet.side


def test_backoff_wait_over_says_try_now():
    adv = run(episode(turn(T0)), now=T0 + 60)
    assert any("the 30 s wait is over" in s for s in adv.side)


def test_past_30_minutes_means_stop_retrying():
    adv = run(episode(turn(T0 - 2400), turn(T0, index=1)))
    assert adv.backoff is None
    assert any("wide outage" in s for s in adv.side)


def test_no_backoff_for_classes_retrying_cannot_fix():
    for cls in ("auth", "usage_limit", "context_window", "model_unavailable"):
        adv = run(episode(turn(T0, cls=cls)))
        assert adv.backoff is None and not any("Back off" in s for s in adv.side)


def test_interrupted_after_work_points_at_git_status_in_the_directory():
    f = turn(T0, shape="interrupted", tool_calls=3, duration=900)
    adv = run(episode(f))
    line = next(s for s in adv.side if "git status --short" in s)
    assert "~/src/app" in line and "3 tool calls" in line and "/home/dev" not in line
    assert not any("git status" in s for s in run(episode(turn(T0))).side)


def test_peak_hint_from_the_users_own_hours():
    monday_11 = datetime(2026, 11, 23, 11, 0, tzinfo=UTC).timestamp()
    peak = [turn(monday_11 + i * 600, session="p", index=i) for i in range(4)]
    evening = [turn(T0 - 3600 + i * 60, "ok", session="e", index=i) for i in range(10)]
    f = turn(T0)
    adv = run(episode(f), peak + evening + [f])
    assert any(s.startswith("Peak hours: 4 of your 4 turns") for s in adv.side)


def test_no_peak_hint_when_failures_are_off_peak():
    night = [turn(T0 - 7200 + i * 60, index=i, session="n") for i in range(6)]
    f = turn(T0)
    assert not any("Peak hours" in s for s in run(episode(f), night + [f]).side)


def test_no_peak_hint_when_peak_and_off_peak_fail_alike():
    monday_11 = datetime(2026, 11, 23, 11, 0, tzinfo=UTC).timestamp()
    peak = [turn(monday_11 + i * 600, "failed" if i < 3 else "ok", session="p") for i in range(6)]
    off = [turn(T0 - 7200 + i * 60, "failed" if i < 2 else "ok", session="o") for i in range(4)]
    f = turn(T0)
    assert not any("Peak hours" in s for s in run(episode(f), peak + off + [f]).side)


def test_many_sessions_at_once():
    others = [turn(T0 - 200, "ok", session=f"p{i}", duration=400) for i in range(3)]
    f = turn(T0)
    adv = run(episode(f), others + [f])
    assert any("4 sessions were running" in s for s in adv.side)
    assert not any("sessions were running" in s for s in run(episode(f)).side)


def test_relay_provider_warning():
    adv = run(episode(turn(T0, provider="mock")))
    assert any("Provider mock is a custom provider or relay" in s for s in adv.side)
    assert not any("relay" in s for s in run(episode(turn(T0))).side)


def test_what_does_not_help_for_capacity_only():
    assert any(s.startswith("Does not help") for s in run(episode(turn(T0))).side)
    assert not any("Does not help" in s for s in run(episode(turn(T0, cls="usage_limit"))).side)


def test_status_unknown_lowers_confidence_for_capacity():
    adv = run(episode(turn(T0)), with_history(turn(T0)), snap=UNKNOWN)
    assert adv.action == "switch_model" and adv.confidence == "medium"
    assert "Status page: unknown (not checked: --no-status); not treated as all clear." in adv.evidence


def test_evidence_names_count_class_model_and_span():
    ep = episode(turn(T0 - 720), turn(T0 - 360, index=1), turn(T0, index=2))
    adv = run(ep)
    assert adv.evidence[0] == "3 capacity failures on gpt-6-sol in 12 min (19:48–20:00)."
    assert adv.evidence[1] == "Status page: no ongoing Codex incident."
    assert run(episode(turn(T0))).evidence[0] == "1 capacity failure on gpt-6-sol at 20:00."


def test_incident_evidence_names_the_users_lead():
    snap = snapshot(incident=True)
    snap.incidents[0].published_at = T0 + 600  # posted 10 min after the failure
    adv = run(episode(turn(T0)), snap=snap)
    assert any("began 10 min before OpenAI posted it" in e for e in adv.evidence)
    adv2 = run(episode(turn(T0)), snap=snapshot(incident=True))  # no post time: no claim
    assert not any("before OpenAI posted" in e for e in adv2.evidence)


def test_short_spans_show_seconds():
    adv = run(episode(turn(T0 - 22), turn(T0, index=1)))
    assert adv.evidence[0] == "2 capacity failures on gpt-6-sol in 22 s (19:59:38–20:00:00)."


def test_fast_off_evidence_shows_the_users_rates_with_and_without_fast():
    hist = [turn(T0 - 7200 + i * 60, "ok" if i % 2 else "failed", fast=False, session="h", index=i)
            for i in range(4)]
    ep = switched_and_new_thread(fast=True)
    adv = run(ep, hist + ep.failures)
    assert "Last 7 days: with Fast 3 of 3 turns failed; without Fast 2 of 4." in adv.evidence
    adv2 = run(switched_and_new_thread(fast=True))
    assert any("no turns without Fast to compare" in e for e in adv2.evidence)


def test_reviewer_capacity_is_capacity_with_a_note():
    f = turn(T0, message="Reviewer model is at capacity")
    adv = run(episode(f))
    assert adv.action == "switch_model"
    assert any("auto-review step" in e for e in adv.evidence)
    assert not any("auto-review" in e for e in run(episode(turn(T0))).evidence)


def test_peak_hint_names_the_quietest_off_peak_hours():
    monday_11 = datetime(2026, 11, 23, 11, 0, tzinfo=UTC).timestamp()
    peak = [turn(monday_11 + i * 600, session="p", index=i) for i in range(4)]
    evening = [turn(T0 - 3600 + i * 60, "ok", session="e", index=i) for i in range(10)]
    f = turn(T0)
    line = next(s for s in run(episode(f), peak + evening + [f]).side if s.startswith("Peak"))
    assert "Your quietest hours: Wed 19:00" in line


def test_quiet_but_an_incident_is_ongoing_says_so():
    adv = advise(None, [], snapshot(incident=True), T0)
    assert adv.action == "none"
    assert any("Codex incident" in e for e in adv.evidence)
    assert not any("no ongoing Codex incident" in e for e in adv.evidence)
