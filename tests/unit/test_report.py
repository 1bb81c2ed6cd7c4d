"""The report: every field of triage-rules.md, and nothing a user would not want pasted.

The canary test plants secrets in every place of a real 0.171 rollout where Codex could put
them (prompts, assistant text, tool calls and output, cwd and paths, the error message, the
provider name), reads the file through the real engine, and asserts none reaches the report.
"""

from __future__ import annotations

import shutil
from datetime import timedelta, timezone

import orjson
import pytest

from codexwatch.core.models import Incident
from codexwatch.core.report import build_report, offset_text, shape_text
from codexwatch.core.stats import episodes
from codexwatch.sources.history import load_history
from tests.conftest import REAL_CLI
from tests.unit._advice_builders import T0, UNKNOWN, UTC, episode, snapshot, turn

SK = "sk-proj-CANARYkey0123456789abcdef"
PROMPT = "please refactor the zebracanary billing module"
EMAIL = "canary.person@example.org"
BEARER = "Bearer canaryBearerTok987654"
QUERY_TOKEN = "canaryQueryTok123"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.canarySigPart"
HOME_USER = "canaryuser"

# What must never appear in a report, whatever the field.
FORBIDDEN = ["CANARYkey0123456789abcdef", "zebracanary", EMAIL, "canaryBearerTok987654",
             QUERY_TOKEN, "canarySigPart", HOME_USER, "/home/"]
PLANT = f"{PROMPT} {SK} {EMAIL} {BEARER} {JWT} /home/{HOME_USER}/notes.txt"

# Real 0.171 text -> the same text with canaries planted (JSON-safe: no quotes, no backslashes).
SUBSTITUTIONS = {
    "/home/dev": f"/home/{HOME_USER}",  # cwd, workspace roots, skill paths
    "prompt 2: overloaded503": f"prompt 2: overloaded503 {PLANT}",  # user prompt
    "prompt 1: ok": f"prompt 1: ok {PLANT}",
    '"Done."': f'"Done. {PLANT}"',  # assistant text
    "unsupported call: shell": f"unsupported call: shell {PLANT}",  # tool output
    "sleep 3; ls": f"sleep 3; cat {PLANT}",  # tool call arguments
    "Please try a different model.": (  # the error message, as a relay could rewrite it
        f"Please try a different model. relay said {PLANT} "
        f"https://relay.example/v1/responses?token={QUERY_TOKEN}&x=1"),
    "429 Too Many Requests": f"429 Too Many Requests for {EMAIL} key {SK}",
    '"mock"': f'"relay-{EMAIL}"',  # provider name
}


@pytest.fixture
def planted_home(tmp_path):
    home = tmp_path / "codex-home"
    shutil.copytree(REAL_CLI / "tui-0.171.0" / "sessions", home / "sessions")
    for path in (home / "sessions").rglob("*.jsonl"):
        text = path.read_text(encoding="utf-8")
        for old, new in SUBSTITUTIONS.items():
            assert old in text, f"fixture changed: {old!r} not found"
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    return home


def _assert_clean(text: str):
    for canary in FORBIDDEN:
        assert canary not in text, f"{canary!r} leaked into the report"


def test_canaries_planted_in_a_real_rollout_never_reach_the_report(planted_home):
    turns = load_history(planted_home, None, T0 + 86400 * 30, use_cache=False).turns
    assert any(PROMPT in (t.message or "") for t in turns), "the planted message was not read"
    assert any(HOME_USER in (t.cwd or "") for t in turns)
    ep = episodes(turns)[-1]
    report = build_report(ep, turns, snapshot(), T0 + 86400 * 30, UTC)
    _assert_clean(report.markdown)
    _assert_clean(report.to_json())
    # the failure is still described: the redacted message and the provider survive
    assert "Selected model is at capacity" in report.markdown
    assert "| Provider | [email] (custom provider or relay) |" in report.markdown


def test_the_users_home_is_written_as_tilde_even_outside_home_dirs():
    f = turn(T0, model="/srv/people/ann/models/local.gguf")  # a local model served by path
    report = build_report(episode(f), [f], snapshot(), T0, UTC, home="/srv/people/ann")
    assert "/srv/people/ann" not in report.markdown + report.to_json()
    assert "~/models/local.gguf" in report.markdown


def test_unknown_message_text_is_left_out_and_known_text_is_cut_at_its_end():
    f = turn(T0, message=f"upstream relay failure: {PROMPT}")
    g = turn(T0 + 1, index=1, message=f"Selected model is at capacity. Please try a different "
                                      f"model. {PROMPT}")
    data = orjson.loads(build_report(episode(f, g), [f, g], snapshot(), T0, UTC).to_json())
    assert data["messages"] == [
        {"text": "(not a message Codex writes: left out)", "left_out_chars": 70, "count": 1},
        {"text": "Selected model is at capacity. Please try a different model.",
         "left_out_chars": 47, "count": 1}]


def test_status_reason_phrase_is_kept_but_not_the_words_after_it():
    f = turn(T0, cls="rate_limit",
             message="exceeded retry limit, last status: 429 Too Many Requests for my prompt")
    md = build_report(episode(f), [f], snapshot(), T0, UTC).markdown
    assert "`exceeded retry limit, last status: 429 Too Many Requests` × 1 (14 more" in md


def test_hand_built_secrets_in_every_turn_field_are_redacted():
    f = turn(T0, session=f"s-{SK}", model=f"gpt-{EMAIL}", effort=SK, message=PLANT,
             cli_version=f"0.171.0 {EMAIL}", originator=BEARER, provider=f"relay {SK}",
             codex_error_info={"weird": {"detail": PLANT}}, cwd=f"/home/{HOME_USER}/p",
             file=f"/home/{HOME_USER}/.codex/sessions/x.jsonl")
    snap = snapshot(incident=True)
    snap.incidents[0].name = f"Outage reported by {EMAIL}"
    snap.incidents[0].url = f"https://status.example/i?token={QUERY_TOKEN}"
    report = build_report(episode(f), [f], snap, T0, UTC)
    _assert_clean(report.markdown)
    _assert_clean(report.to_json())


def test_cwd_and_file_paths_are_not_in_the_report_at_all():
    f = turn(T0, cwd="/opt/secret-project-name", file="/opt/secret-project-name/r.jsonl")
    report = build_report(episode(f), [f], snapshot(), T0, UTC)
    assert "secret-project-name" not in report.markdown + report.to_json()


def test_report_has_every_field_of_the_rules():
    a = turn(T0 - 1500, fast=True, effort="high", duration=4, index=3)
    b = turn(T0 - 300, model="gpt-6-terra", fast=True, effort="high", index=4,
             shape="interrupted", tool_calls=3, duration=840)
    c = turn(T0, cls="rate_limit", session="s2", fast=False, http_status=429,
             message="exceeded retry limit, last status: 429 Too Many Requests")
    snap = snapshot(incident=True)
    snap.incidents[0].published_at = T0 - 300
    tz = timezone(timedelta(hours=8))
    report = build_report(episode(a, b, c), [a, b, c], snap, T0 + 60, tz)
    md, data = report.markdown, orjson.loads(report.to_json())

    assert data["codex_versions"] == ["0.171.0"] and data["surfaces"] == ["codex-tui"]
    assert data["login_route"] is None and "(fill in" in md
    assert data["providers"] == ["openai"]
    assert data["models"] == ["gpt-6-sol", "gpt-6-terra"] and data["efforts"] == ["high"]
    assert data["fast"] == [True, False]
    assert data["episode"]["first"] == "2026-11-25 19:35:00 UTC (local 03:35:00 UTC+08:00)"
    assert data["sessions"] == ["s1", "s2"]
    assert data["codex_error_info"] == [
        {"value": "server_overloaded", "count": 2},
        {"value": "response_too_many_failed_attempts 429", "count": 1}]
    assert data["shapes"] == {"rejected": 2, "interrupted": 1}
    assert "interrupted after 14 min of work (3 tool calls)" in md
    tried = {t["step"]: t for t in data["tried"]}
    assert tried["switch_model"]["detail"] == "switched from gpt-6-sol to gpt-6-terra"
    assert tried["switch_model"]["result"] == "still failing"
    assert tried["new_thread"]["tried"] and tried["fast_off"]["tried"]
    assert data["status"]["state"] == "incident"
    assert data["status"]["incidents"][0]["name"] == "Degraded performance in Codex"
    assert data["status"]["lead_minutes"] == 20.0
    assert "began 20 min before it was posted" in md
    assert any("/feedback" in s for s in data["send_to"])
    assert "github.com/openai/codex/issues" in md
    for heading in ("### codex_error_info", "### Shape", "### What I tried",
                    "### Status page at the time", "### Where to send this"):
        assert heading in md


def test_unknown_status_is_said_not_hidden():
    f = turn(T0)
    report = build_report(episode(f), [f], UNKNOWN, T0, UTC)
    assert "Could not read status.openai.com (not checked: --no-status)" in report.markdown
    assert orjson.loads(report.to_json())["status"]["state"] == "unknown"


def test_log_text_cannot_break_the_markdown_table():
    f = turn(T0, model="gpt|6\nsol")
    md = build_report(episode(f), [f], snapshot(), T0, UTC).markdown
    assert "gpt\\|6 sol" in md


def test_long_episodes_are_capped_in_the_table_not_in_the_counts():
    fs = [turn(T0 - 60 * (70 - i), index=i) for i in range(70)]
    report = build_report(episode(*fs), fs, snapshot(), T0, UTC)
    assert "… and 20 more failures" in report.markdown
    assert orjson.loads(report.to_json())["codex_error_info"][0]["count"] == 70


def test_shape_text_and_offset():
    assert shape_text(turn(T0, duration=0.02)) == "rejected within 1 s"
    assert offset_text(T0, timezone(timedelta(hours=-3, minutes=-30))) == "UTC-03:30"
    assert offset_text(T0, UTC) == "UTC+00:00"


def test_ended_episode_says_when_a_turn_succeeded():
    f = turn(T0 - 60)
    ok = turn(T0, "ok", index=1)
    report = build_report(episode(f, ongoing=False), [f, ok], snapshot(), T0, UTC)
    assert "then a turn succeeded at 2026-11-25 20:00:00 UTC" in report.markdown


def test_resolved_incident_overlapping_the_failures_is_listed():
    f = turn(T0)
    snap = snapshot()
    snap.incidents.append(Incident(id="old", name="Elevated errors", status="resolved",
                                   impact="minor", started_at=T0 - 900, updated_at=T0 + 300,
                                   resolved_at=T0 + 300, codex=True, url=None))
    md = build_report(episode(f), [f], snap, T0 + 600, UTC).markdown
    assert "Elevated errors: resolved, since 2026-11-25 19:45:00 UTC, resolved 2026-11-25 20:05:00 UTC" in md


def test_the_heading_counts_in_words_that_agree_with_the_number():
    one, two = turn(T0), turn(T0 + 60, index=1)
    assert build_report(episode(one), [one], snapshot(), T0, UTC).markdown.startswith(
        "## Codex: 1 failed turn on ")
    assert build_report(episode(one, two), [one, two], snapshot(), T0, UTC).markdown.startswith(
        "## Codex: 2 failed turns on ")
