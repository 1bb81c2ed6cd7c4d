"""The wizard's steps: order, states, what to type, and what the logs show."""

from __future__ import annotations

from codexwatch.core.advice import advise
from codexwatch.core.triage import error_info_counts, wizard_steps
from tests.unit._advice_builders import T0, UNKNOWN, UTC, episode, snapshot, turn

LADDER_KEYS = ["confirm_class", "status_page", "switch_model", "new_thread", "fast_off",
               "stop_and_report"]


def steps_for(ep, turns=None, snap=None):
    snap = snapshot() if snap is None else snap
    turns = turns if turns is not None else list(ep.failures)
    adv = advise(ep, turns, snap, T0 + 10, tz=UTC)
    return adv, {s.key: s for s in wizard_steps(adv, ep, snap, tz=UTC)}, wizard_steps(adv, ep, snap, tz=UTC)


def test_capacity_first_visit_switch_is_current():
    f = turn(T0, fast=True)
    adv, by_key, steps = steps_for(episode(f))
    assert [s.key for s in steps] == LADDER_KEYS
    assert by_key["confirm_class"].state == "done"
    assert by_key["confirm_class"].evidence == ["1 × server_overloaded"]
    assert "not the account" in by_key["confirm_class"].afterwards
    assert by_key["status_page"].state == "done"
    assert by_key["status_page"].afterwards == "No Codex incident (checked 20:00)."
    assert by_key["switch_model"].state == "current"
    assert "/model" in by_key["switch_model"].type_in_codex
    assert by_key["new_thread"].state == "open"
    assert by_key["fast_off"].state == "open" and by_key["fast_off"].type_in_codex == ["/fast"]
    assert [s.state for s in steps].count("current") == 1


def test_done_steps_say_what_the_logs_show():
    a = turn(T0 - 120)
    b = turn(T0 - 60, model="gpt-6-terra", index=1)
    _, by_key, _ = steps_for(episode(a, b))
    sw = by_key["switch_model"]
    assert sw.state == "done"
    assert sw.afterwards == "You switched from gpt-6-sol to gpt-6-terra at 19:58; still failing."
    assert by_key["new_thread"].state == "current"


def test_fast_off_is_skipped_when_fast_was_off_or_unknown():
    _, by_key, _ = steps_for(episode(turn(T0, fast=False)))
    assert by_key["fast_off"].state == "skipped" and by_key["fast_off"].afterwards == "Fast was off."
    _, by_key, _ = steps_for(episode(turn(T0)))
    assert "not recorded" in by_key["fast_off"].afterwards


def test_incident_makes_the_status_step_current():
    _, by_key, steps = steps_for(episode(turn(T0)), snap=snapshot(incident=True))
    assert by_key["status_page"].state == "current"
    assert "wait" in by_key["status_page"].afterwards
    assert by_key["switch_model"].state == "open"
    assert [s.state for s in steps].count("current") == 1


def test_unknown_status_is_open_never_done():
    _, by_key, _ = steps_for(episode(turn(T0)), snap=UNKNOWN)
    assert by_key["status_page"].state == "open"
    assert "status.openai.com" in by_key["status_page"].afterwards


def test_stop_and_report_current_at_the_end_of_the_ladder():
    a = turn(T0 - 300)
    b = turn(T0 - 200, model="gpt-6-terra", index=1)
    c = turn(T0 - 100, model="gpt-6-terra", session="s2")
    _, by_key, _ = steps_for(episode(a, b, c))
    assert by_key["switch_model"].state == "done" and by_key["new_thread"].state == "done"
    assert by_key["stop_and_report"].state == "current"
    assert by_key["stop_and_report"].type_in_codex == ["/feedback"]


def test_other_classes_get_their_own_current_step_and_skip_the_ladder():
    _, by_key, steps = steps_for(episode(turn(T0, cls="auth", http_status=401)))
    assert steps[2].key == "relogin" and steps[2].state == "current"
    assert "codex login" in steps[2].type_in_codex
    assert by_key["switch_model"].state == "skipped"
    assert by_key["new_thread"].state == "skipped"


def test_auth_during_an_incident_does_not_point_at_the_status_step():
    _, by_key, _ = steps_for(episode(turn(T0, cls="auth")), snap=snapshot(incident=True))
    assert by_key["relogin"].state == "current" and by_key["status_page"].state == "done"


def test_unrecorded_cause_is_not_confirmed():
    _, by_key, _ = steps_for(episode(turn(T0, cls="unrecorded", message=None)))
    assert by_key["confirm_class"].state == "open"
    assert by_key["confirm_class"].evidence == ["1 × not recorded"]


def test_no_episode_no_steps():
    adv = advise(None, [], snapshot(), T0, tz=UTC)
    assert wizard_steps(adv, None, snapshot()) == []


def test_error_info_counts_keep_raw_values_and_statuses():
    ep = episode(turn(T0 - 2), turn(T0 - 1, index=1),
                 turn(T0, cls="rate_limit", index=2, http_status=429))
    assert error_info_counts(ep) == [("server_overloaded", 2),
                                     ("response_too_many_failed_attempts 429", 1)]
