"""The retry policy of `codexwatch run`, with a fake clock and a seeded random generator."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from codexwatch.core import supervise as S
from codexwatch.core.models import Turn

T0 = 1_800_000_000.0
UTC = timezone.utc
POLICY = S.Policy(models=("gpt-6-sol", "gpt-6-terra", "gpt-6-mini"))


def attempts(*specs) -> list[S.Attempt]:
    """(class, shape, session, resumed) per attempt, all failed."""
    out = []
    for n, (cls, shape, sid, resumed) in enumerate(specs, 1):
        out.append(S.Attempt(n, None, T0, resumed=resumed, session_id=sid, outcome="failed",
                             error_class=cls, shape=shape))
    return out


def step(cls, history=None, shape="rejected", sid="th-1", policy=POLICY, incident=False,
         now=T0 + 10, first=T0, model="gpt-6-sol", seed=1, resets_at=None) -> S.Step:
    history = history if history is not None else attempts((cls, shape, sid, False))
    failure = S.Failure(cls, now, None, shape, sid, "msg", resets_at)
    return S.decide(failure, history, policy, incident, first, now, random.Random(seed), model)


def test_capacity_backs_off_with_jitter_and_walks_down_the_models():
    s = step("capacity")
    assert s.retry and s.action == "switch_model" and s.model == "gpt-6-terra"
    assert 24 <= s.wait_s <= 36  # 30 s ± 20 %
    assert s.resume is None  # rejected: run again
    s2 = step("capacity", attempts(("capacity", "rejected", "a", False), ("capacity", "rejected", "b", False)),
              model="gpt-6-terra")
    assert s2.model == "gpt-6-mini" and 96 <= s2.wait_s <= 144  # 2 min ± 20 %
    s3 = step("capacity", attempts(*[("capacity", "rejected", "x", False)] * 3), model="gpt-6-mini")
    assert s3.action == "wait" and s3.model == "gpt-6-mini"  # the end of the list: only wait
    assert s3.exit_code == 11


def test_capacity_during_an_incident_waits_on_the_same_model():
    s = step("capacity", incident=True)
    assert s.retry and s.action == "wait" and s.model == "gpt-6-sol"


def test_jitter_is_reproducible_and_spread():
    waits = {round(step("capacity", seed=k).wait_s, 3) for k in range(20)}
    assert len(waits) > 10 and min(waits) >= 24 and max(waits) <= 36
    assert step("capacity", seed=7).wait_s == step("capacity", seed=7).wait_s


def test_ladder_rungs_follow_the_failures_and_stay_on_the_last():
    policy = S.Policy(backoff=(1.0, 2.0), jitter=0.0)
    waits = [step("server_error", attempts(*[("server_error", "rejected", "x", False)] * n),
                  policy=policy).wait_s for n in (1, 2, 3, 4)]
    assert waits == [1.0, 2.0, 2.0, 2.0]


def test_server_error_backs_off_without_switching():
    s = step("server_error")
    assert s.action == "wait" and s.model == "gpt-6-sol" and 24 <= s.wait_s <= 36


def test_stream_disconnected_retries_quickly_on_the_same_model():
    waits = []
    for n in (1, 2, 3, 4):
        s = step("stream_disconnected", attempts(*[("stream_disconnected", "rejected", "x", False)] * n))
        assert s.model == "gpt-6-sol" and s.action == "check_network"
        waits.append(s.wait_s)
    assert waits == [5.0, 15.0, 30.0, 30.0]


def test_stream_retries_do_not_climb_the_capacity_ladder():
    h = attempts(("stream_disconnected", "rejected", "a", False), ("stream_disconnected", "rejected", "b", False),
                 ("capacity", "rejected", "c", False))
    s = step("capacity", h, policy=S.Policy(jitter=0.0, models=POLICY.models))
    assert s.wait_s == 30.0  # the first capacity failure: the first rung


def test_rate_limit_backs_off_and_asks_for_one_job_at_a_time():
    s = step("rate_limit")
    assert s.action == "slow_down" and s.model == "gpt-6-sol" and s.serial_s == pytest.approx(2 * s.wait_s)


@pytest.mark.parametrize("cls,action,code", [
    ("auth", "relogin", 18), ("context_window", "compact", 21), ("usage_limit", "wait_for_reset", 17)])
def test_stops_at_once(cls, action, code):
    s = step(cls)
    assert not s.retry and s.action == action and s.exit_code == code


def test_model_unavailable_takes_the_next_model_then_stops():
    s = step("model_unavailable")
    assert s.retry and s.model == "gpt-6-terra" and s.wait_s == 0
    s = step("model_unavailable", model="gpt-6-mini")
    assert not s.retry and s.exit_code == 19
    s = step("model_unavailable", policy=S.Policy())
    assert not s.retry and s.exit_code == 19


def test_usage_limit_waits_for_a_known_reset_within_the_limit():
    policy = S.Policy(wait_for_reset=3600.0)
    s = step("usage_limit", policy=policy, resets_at=T0 + 10 + 1800)
    assert s.retry and s.action == "wait_for_reset" and 1800 <= s.wait_s <= 1800 + 2 * S.RESET_MARGIN_S
    assert not step("usage_limit", policy=policy, resets_at=T0 + 10 + 7200).retry  # too far
    assert not step("usage_limit", policy=policy, resets_at=None).retry  # not known
    # a wait for a reset is the user's choice: --give-up-after does not cut it
    late = step("usage_limit", policy=S.Policy(wait_for_reset=3600.0, give_up_after=60.0),
                resets_at=T0 + 10 + 1800)
    assert late.retry and late.wait_s >= 1800


def test_interrupted_turn_is_resumed_and_stays_resumed():
    s = step("capacity", shape="interrupted", sid="th-9")
    assert s.resume == "th-9"
    # the resumed attempt is rejected: the thread still holds the work, resume it again
    h = attempts(("capacity", "interrupted", "th-9", False), ("capacity", "rejected", "th-9", True))
    assert step("capacity", h, shape="rejected", sid="th-9").resume == "th-9"
    # a rejected fresh run is run again
    assert step("capacity", attempts(("capacity", "rejected", "th-1", False))).resume is None


def test_gives_up_after_the_limit_with_the_situations_code():
    s = step("capacity", now=T0 + 1800, first=T0)
    assert not s.retry and s.action == "stop_and_report" and s.exit_code == 15
    s = step("capacity", now=T0 + 1800, first=T0, incident=True)
    assert not s.retry and s.action == "wait" and s.exit_code == 11


def test_the_last_wait_is_cut_to_end_at_the_limit():
    h = attempts(*[("capacity", "rejected", "x", False)] * 4)  # the 30 min rung
    s = step("capacity", h, now=T0 + 1500, first=T0, model="gpt-6-mini")
    assert s.retry and s.wait_s == pytest.approx(300)


def test_next_model():
    models = ("a", "b")
    assert S.next_model(models, "a") == "b"
    assert S.next_model(models, "b") is None
    assert S.next_model(models, None) == "a"
    assert S.next_model((), "a") is None


def turn(outcome, cls=None, shape=None, **kw) -> Turn:
    return Turn(session_id="th", turn_id="t", file="f", outcome=outcome, error_class=cls, shape=shape, **kw)


def test_judge_reads_the_rollout_first():
    out = S.judge(1, "th", turn("failed", "capacity", "interrupted", message="Selected model is at capacity."),
                  "Selected model is at capacity.", False, T0)
    assert out.kind == "failed" and out.failure.error_class == "capacity" and out.failure.shape == "interrupted"
    assert S.judge(1, "th", turn("ok"), None, False, T0).kind == "ok"


def test_judge_classifies_the_printed_message_when_the_rollout_has_no_cause():
    out = S.judge(1, "th", turn("failed", "unrecorded", "rejected"),
                  "exceeded retry limit, last status: 429 Too Many Requests", False, T0)
    assert out.failure.error_class == "rate_limit" and out.failure.http_status == 429


def test_judge_without_a_rollout():
    # --ephemeral with --json: the printed message, the work seen on stdout
    out = S.judge(1, "th", None, "stream disconnected before completion: closed", True, T0)
    assert out.failure.error_class == "stream_disconnected" and out.failure.shape == "interrupted"
    # no thread, no failed turn: codex's own error (bad flag, config): passed through
    assert S.judge(2, None, None, None, False, T0) == S.Outcome("error", exit_status=2)
    assert S.judge(1, "th", None, None, False, T0).kind == "error"
    assert S.judge(0, "th", None, None, False, T0).kind == "ok"


def test_judge_a_success_is_a_completed_turn_not_the_exit_status():
    out = S.judge(0, "th", turn("failed", "usage_limit", "rejected", message="You've hit your usage limit."),
                  None, False, T0)
    assert out.kind == "failed" and out.failure.error_class == "usage_limit"


@pytest.mark.parametrize("message,expected", [
    ("You’ve hit your usage limit. … or try again at 5:42 AM.", datetime(2026, 12, 1, 5, 42, tzinfo=UTC)),
    ("You've hit your usage limit. try again at 4:35 AM.", datetime(2026, 12, 2, 4, 35, tzinfo=UTC)),  # tomorrow
    ("You've hit your usage limit. try again at 4:13 PM", datetime(2026, 12, 1, 16, 13, tzinfo=UTC)),
    ("… or try again at Dec 2nd, 2026 4:13 AM.", datetime(2026, 12, 2, 4, 13, tzinfo=UTC)),
    ("You've hit your usage limit. Try again later.", None),
])
def test_reset_from_message(message, expected):
    now = datetime(2026, 12, 1, 4, 45, tzinfo=UTC).timestamp()
    got = S.reset_from_message(message, now, UTC)
    assert got == (expected.timestamp() if expected else None)


def test_summary_and_overall():
    ok = S.TaskRecord(1, [S.Attempt(1, "m", T0, outcome="ok", ended_at=T0 + 1)], "ok", 0)
    bad = S.TaskRecord(2, [S.Attempt(1, "m", T0, outcome="failed", ended_at=T0 + 1, error_class="auth",
                                     action="relogin")], "failed", 18)
    assert S.overall([ok]) == ("ok", 0)
    assert S.overall([ok, bad]) == ("failed", 18)
    assert S.overall([ok, bad], 143) == ("aborted", 143)
    data = S.summary_json([ok, bad], "failed", 18)
    a = data["tasks"][1]["attempts"][0]
    assert set(a) == {"n", "model", "session_id", "started_at", "ended_at", "outcome", "error_class",
                      "http_status", "shape", "action", "wait_s", "resumed"}
    assert a["started_at"].endswith("Z") and a["wait_s"] == 0
