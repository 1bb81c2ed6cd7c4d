"""Every recorded scenario, read the way a user's Codex home would be."""

from __future__ import annotations

import shutil
import time

import pytest

from codexwatch.sources.history import load_history
from tests.conftest import REAL_CLI

NOW = time.time()


def turns_of(folder: str):
    return load_history(REAL_CLI / folder, None, NOW).turns


def summary(turns):
    return [(t.outcome, t.error_class, t.shape) for t in turns]


def test_era_d_exec_every_failure_is_classified_from_task_complete():
    turns = turns_of("exec-0.171.0")
    assert summary(turns) == [
        ("ok", None, None),  # healthy
        ("ok", None, None),  # healthy_tools
        ("failed", "capacity", "rejected"),  # overloaded_fast
        ("failed", "capacity", "rejected"),  # overloaded_stream
        ("failed", "capacity", "interrupted"),  # overloaded_midturn, after 3 tool calls
        ("failed", "rate_limit", "rejected"),
        ("failed", "usage_limit", "rejected"),
        ("failed", "stream_disconnected", "rejected"),
    ]
    midturn = turns[4]
    assert midturn.tool_calls == 3 and midturn.model == "gpt-6.1-sol"
    assert midturn.codex_error_info == "server_overloaded"
    assert turns[5].http_status == 429
    assert turns[5].codex_error_info == {"response_too_many_failed_attempts": {"http_status_code": 429}}


def test_era_d_tui_fast_mode_and_session_fields():
    turns = turns_of("tui-0.171.0")
    assert summary(turns) == [
        ("ok", None, None),
        ("failed", "capacity", "rejected"),
        ("failed", "capacity", "interrupted"),
        ("failed", "rate_limit", "rejected"),
        ("ok", None, None),
    ]
    first = turns[0]
    assert first.fast is True
    assert first.originator == "codex-tui" and first.cli_version == "0.171.0"
    assert first.provider == "mock" and first.cwd == "/home/dev/src/shop-api"
    assert len({t.session_id for t in turns}) == 1
    assert [t.turn_index for t in turns] == [0, 1, 2, 3, 4]


def test_era_c_tui_error_lines_give_the_cause():
    assert summary(turns_of("tui-0.120.0")) == [
        ("ok", None, None),
        ("failed", "capacity", "rejected"),
        ("failed", "capacity", "interrupted"),
        ("failed", "rate_limit", "rejected"),
        ("failed", "usage_limit", "rejected"),
        ("ok", None, None),
    ]


def test_era_c_exec_writes_no_cause_so_it_is_unrecorded():
    assert summary(turns_of("exec-0.120.0")) == [
        ("ok", None, None),
        ("failed", "unrecorded", "rejected"),
        ("failed", "unrecorded", "interrupted"),
    ]


def test_era_c_log_database_names_the_cause_the_rollout_left_out():
    turns = turns_of("tui-0.140.0")
    assert summary(turns) == [
        ("ok", None, None),
        ("failed", "capacity", "rejected"),
        ("failed", "capacity", "interrupted"),
        ("failed", "rate_limit", "rejected"),
        ("failed", "usage_limit", "rejected"),
        ("ok", None, None),
    ]
    assert turns[3].http_status == 429
    assert turns[1].message == "Selected model is at capacity. Please try a different model."


def test_era_c_without_log_database_stays_unrecorded(tmp_path):
    shutil.copytree(REAL_CLI / "tui-0.140.0" / "sessions", tmp_path / "sessions")
    turns = load_history(tmp_path, None, NOW).turns
    assert [t.error_class for t in turns if t.outcome == "failed"] == ["unrecorded"] * 4


def test_era_b_turns_start_at_user_messages():
    assert summary(turns_of("exec-0.80.0")) == [
        ("ok", None, None),
        ("failed", "unrecorded", "rejected"),
    ]


def test_era_a_is_counted_as_unsupported_not_guessed():
    history = load_history(REAL_CLI / "exec-0.20.0", None, NOW)
    assert history.turns == []
    [health] = history.health()
    assert health.unsupported and health.malformed == 0


@pytest.mark.parametrize("folder", ["exec-0.120.0", "exec-0.171.0", "tui-0.140.0", "tui-0.171.0"])
def test_every_line_of_the_recordings_is_understood(folder):
    for health in load_history(REAL_CLI / folder, None, NOW).health():
        assert health.malformed == 0 and health.unknown_types == {} and health.lines > 0


def test_the_log_database_is_opened_read_only(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(REAL_CLI / "tui-0.140.0", home)
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in home.iterdir() if p.is_file()}
    load_history(home, None, NOW)
    after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in home.iterdir() if p.is_file()}
    assert before == after
