"""The usage meter (`token_count.rate_limits`) in every shape a release wrote, read from real
recordings where they carry figures and from lines in each release's layout where they do
not (the real-cli recordings ran under an API-key login: every window is null)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import orjson
import pytest

from codexwatch.core import usage as U
from codexwatch.core.stats import StatsFold
from codexwatch.core.times import parse_iso as parse_ts
from codexwatch.core.turns import TurnAssembler
from codexwatch.core.parse import scan, LineCounts
from codexwatch.sources.history import load_history
from tests.conftest import REAL_CLI, shared_or_skip

NOW = time.time()
T = "2026-11-29T08:00:00.000Z"
T_S = parse_ts(T)
W5 = {"used_percent": 34.0, "window_minutes": 300, "resets_at": 1795946400}
WK = {"used_percent": 61.0, "window_minutes": 10080, "resets_at": 1796400000}

# rate_limits exactly as each release lays them out (rollout-eras.md, "The usage meter").
SHAPES = {
    "0.40": {"primary_used_percent": 34.0, "secondary_used_percent": 61.0,
             "primary_to_secondary_ratio_percent": 20.0, "primary_window_minutes": 300,
             "secondary_window_minutes": 10080},
    "0.59": {"primary": W5, "secondary": WK},
    "0.80": {"primary": W5, "secondary": WK,
             "credits": {"has_credits": True, "unlimited": False, "balance": "12.5"}, "plan_type": "plus"},
    "0.120": {"limit_id": "codex", "limit_name": None, "primary": W5, "secondary": WK,
              "credits": None, "plan_type": None},
    "0.140": {"limit_id": "codex", "limit_name": None, "primary": W5, "secondary": WK, "credits": None,
              "individual_limit": None, "plan_type": "pro", "rate_limit_reached_type": None},
    "0.171": {"limit_id": "codex", "limit_name": None, "primary": W5, "secondary": WK, "credits": None,
              "individual_limit": None, "spend_control_reached": None, "plan_type": None,
              "rate_limit_reached_type": "rate_limit_reached"},
}


@pytest.mark.parametrize("version", sorted(SHAPES))
def test_every_release_shape_reads_both_windows(version):
    reading = U.read_limits(SHAPES[version], T_S)
    assert reading[U.PRIMARY][:2] == (34.0, 300)
    assert reading[U.SECONDARY][:2] == (61.0, 10080)
    resets = (reading[U.PRIMARY][2], reading[U.SECONDARY][2])
    assert resets == ((None, None) if version == "0.40" else (1795946400.0, 1796400000.0))
    assert U.compact(reading) == "5h 34% · wk 61%"
    out = U.usage_json(reading, "s1")
    assert out["primary"] == {"used_percent": 34.0, "window_minutes": 300,
                              "resets_at": None if version == "0.40" else "2026-11-29T10:00:00.000Z"}
    assert out["as_of"] == "2026-11-29T08:00:00.000Z" and out["session_id"] == "s1"
    assert out["limit_id"] == ("codex" if version in ("0.120", "0.140", "0.171") else None)
    assert out["reached"] == ("rate_limit_reached" if version == "0.171" else None)
    assert out["credits"] == ({"has_credits": True, "unlimited": False, "balance": "12.5"}
                              if version == "0.80" else None)


def test_null_windows_are_unknown_never_zero():
    api_key = {"limit_id": "codex", "limit_name": None, "primary": None, "secondary": None,
               "credits": None, "plan_type": None}
    assert U.read_limits(api_key, T_S) is None
    one = U.read_limits({"primary": None, "secondary": WK}, T_S)
    assert one[U.PRIMARY] is None and U.compact(one) == "wk 61%"
    assert U.usage_json(one, "s")["primary"] is None


def test_a_reset_in_seconds_is_placed_from_the_lines_own_time():
    reading = U.read_limits({"primary": {"used_percent": 5, "window_minutes": 300, "resets_in_seconds": 600},
                             "secondary": None}, T_S)
    assert reading[U.PRIMARY][2] == T_S + 600
    flat = U.read_limits({"primary_used_percent": 5, "primary_window_minutes": 300,
                          "primary_resets_in_seconds": 60}, T_S)
    assert flat[U.PRIMARY][2] == T_S + 60


@pytest.mark.parametrize("strange", [
    None, 0, "x", [], {}, {"primary": "full"}, {"primary": {"used_percent": "34"}},
    {"primary": {"used_percent": True}}, {"primary": {"used_percent": float("nan")}},
    {"primary": {"used_percent": 5, "resets_at": "soon", "window_minutes": -3}},
    {"credits": "lots"}, {"primary_used_percent": None},
])
def test_strange_rate_limits_change_nothing_and_never_raise(strange):
    reading = U.read_limits(strange, T_S)
    assert reading is None or U.usage_json(reading, "s") is not None


def _line(ts, payload):
    return orjson.dumps({"timestamp": ts, "type": "event_msg", "payload": payload})


def _token_count(ts, limits, total=1000, last=800, window=258400):
    info = {"total_token_usage": {"total_tokens": total}, "last_token_usage": {"total_tokens": last},
            "model_context_window": window}
    return _line(ts, {"type": "token_count", "info": info, "rate_limits": limits})


def _era_b_file(path: Path, version: str, turns: list[list[bytes]]) -> None:
    """An era B rollout (0.40-0.80: no turn boundaries) of the given turns' lines."""
    lines = [orjson.dumps({"timestamp": "2026-11-29T07:59:00.000Z", "type": "session_meta",
                           "payload": {"id": f"sess-{version}", "cli_version": version, "cwd": "/w",
                                       "originator": "codex_exec", "model_provider": "openai"}})]
    for body in turns:
        lines += body
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")


def _prompt(ts):
    return _line(ts, {"type": "user_message", "message": "do it"})


def _answer(ts):
    return _line(ts, {"type": "agent_message", "message": "Done."})


def _tool(ts):
    return orjson.dumps({"timestamp": ts, "type": "response_item",
                         "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"}})


def _tool_out(ts):
    return orjson.dumps({"timestamp": ts, "type": "response_item",
                         "payload": {"type": "function_call_output", "call_id": "c", "output": "ok"}})


@pytest.mark.parametrize("version", ["0.40.0", "0.59.0", "0.80.0"])
def test_era_b_turns_carry_the_meter_of_their_release(tmp_path, version):
    shape = SHAPES[version.rsplit(".", 1)[0]]
    path = tmp_path / "sessions/2026/11/29/rollout-2026-11-29T07-59-00-x.jsonl"
    _era_b_file(path, version, [
        [_prompt("2026-11-29T08:00:00.000Z"), _token_count("2026-11-29T08:00:01.000Z", shape),
         _answer("2026-11-29T08:00:02.000Z")],
    ])
    turns = load_history(tmp_path, None, NOW).turns
    assert [t.outcome for t in turns] == ["ok"]
    assert U.usage_json(turns[0].usage, turns[0].session_id)["as_of"] == "2026-11-29T08:00:01.000Z"
    assert U.compact(turns[0].usage) == "5h 34% · wk 61%"


def test_era_b_a_turn_that_ran_tools_and_never_answered_failed(tmp_path):
    """0.40-0.80 write the prompt, the calls and their outputs, and nothing more when the model
    fails mid-turn: followed by the next prompt, or in a file gone quiet, it failed."""
    path = tmp_path / "sessions/2026/11/29/rollout-2026-11-29T07-59-00-x.jsonl"
    body = [_prompt("2026-11-29T08:00:00.000Z"), _tool("2026-11-29T08:00:05.000Z"),
            _tool_out("2026-11-29T08:00:06.000Z"), _tool("2026-11-29T08:00:10.000Z"),
            _tool_out("2026-11-29T08:00:11.000Z")]
    then = [_prompt("2026-11-29T08:05:00.000Z"), _answer("2026-11-29T08:05:02.000Z")]
    _era_b_file(path, "0.80.0", [body, then])
    turns = load_history(tmp_path, None, NOW).turns
    assert [(t.outcome, t.error_class, t.shape, t.tool_calls) for t in turns] == [
        ("failed", "unrecorded", "interrupted", 2), ("ok", None, None, 0)]
    _era_b_file(path, "0.80.0", [body])  # the last turn of a file gone quiet
    turns = load_history(tmp_path, None, NOW).turns
    assert [(t.outcome, t.error_class, t.shape) for t in turns] == [("failed", "unrecorded", "interrupted")]


def test_era_b_a_turn_still_being_written_is_not_failed():
    a = TurnAssembler("f")
    lines = [orjson.dumps({"timestamp": "2026-11-29T07:59:00.000Z", "type": "session_meta",
                           "payload": {"id": "s", "cli_version": "0.80.0"}}),
             _prompt("2026-11-29T08:00:00.000Z"), _tool("2026-11-29T08:00:05.000Z"),
             _tool_out("2026-11-29T08:00:06.000Z")]
    buf = b"\n".join(lines) + b"\n"
    records, _ = scan(buf, 0, LineCounts(), 1 << 20)
    a.feed(records)
    assert [(t.outcome, t.live) for t in a.turns(idle=False)] == [("incomplete", True)]
    assert [(t.outcome, t.shape) for t in a.turns(idle=True)] == [("failed", "interrupted")]


def _with_limits(source: Path, dest: Path, match: bytes, limits: dict) -> None:
    """A copy of a real-cli home's rollouts (not its log database) whose token_count lines
    after `match` carry `limits`."""
    for f in source.glob("sessions/**/*.jsonl"):
        out, seen = [], False
        for line in f.read_bytes().splitlines():
            seen = seen or match in line
            obj = json.loads(line)
            if seen and obj["payload"].get("type") == "token_count":
                obj["payload"]["rate_limits"] = limits
                line = json.dumps(obj, separators=(",", ":")).encode()
            out.append(line)
        target = dest / f.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"\n".join(out) + b"\n")


@pytest.mark.parametrize("folder", ["tui-0.140.0"])
def test_an_unnamed_usage_limit_is_read_from_the_failed_turns_window_at_100(tmp_path, folder):
    """0.59-0.140 record no cause for a usage limit; the failed turn's own token_count shows
    the window used up. Without those figures (or the log database) it stays unrecorded."""
    full = dict(SHAPES["0.140"], primary={"used_percent": 100.0, "window_minutes": 300,
                                          "resets_at": 1795950000})
    _with_limits(REAL_CLI / folder, tmp_path, b"prompt 5: usage_limit", full)
    turns = load_history(tmp_path, None, NOW).turns
    five = turns[4]
    assert (five.outcome, five.error_class, five.shape) == ("failed", "usage_limit", "rejected")
    assert five.rate_limit_resets_at == 1795950000.0
    assert turns[5].outcome == "ok"
    plain = tmp_path / "plain"
    _with_limits(REAL_CLI / folder, plain, b"no such line", {})
    assert load_history(plain, None, NOW).turns[4].error_class == "unrecorded"


@pytest.mark.parametrize("folder", sorted(p.name for p in REAL_CLI.iterdir() if p.is_dir()))
def test_api_key_recordings_have_no_meter(folder):
    """Every real-cli recording ran under an API-key login: windows null, so no usage."""
    turns = load_history(REAL_CLI / folder, None, NOW).turns
    assert all(t.usage is None for t in turns)
    assert StatsFold(NOW).add(turns).result_before()["usage"] is None


def _newest_by_hand(folder: Path) -> tuple[str, dict]:
    """The newest token_count with a window, by event time, read with json, nothing else."""
    best = None
    for f in folder.glob("*.jsonl"):
        for line in f.read_text().splitlines():
            obj = json.loads(line)
            p = obj.get("payload") or {}
            limits = p.get("rate_limits") if p.get("type") == "token_count" else None
            if limits and (limits.get("primary") or limits.get("secondary")):
                if best is None or obj["timestamp"] > best[0]:
                    best = (obj["timestamp"], limits)
    return best


def test_real_0_104_sessions_give_the_newest_figures_across_sessions(tmp_path):
    real = shared_or_skip("rollouts", "real")
    day = tmp_path / "sessions/2026/02/23"
    day.mkdir(parents=True)
    for f in real.glob("*.jsonl"):
        shutil.copy(f, day / f.name)
    turns = load_history(tmp_path, None, NOW).turns
    fold = StatsFold(NOW).add(turns)
    out = fold.result_before()["usage"]
    stamp, limits = _newest_by_hand(real)
    assert out["as_of"] == stamp
    assert out["primary"]["used_percent"] == limits["primary"]["used_percent"] == 25.0
    assert out["secondary"]["used_percent"] == limits["secondary"]["used_percent"] == 20.0
    assert out["primary"]["resets_at"] == "2026-02-24T13:16:59.000Z"
    assert out["limit_id"] == "codex" and out["plan_type"] is None and out["reached"] is None
    assert out["credits"] == {"has_credits": False, "unlimited": False, "balance": None}
    # The fold keeps it through export and restore.
    again = StatsFold(NOW).restore(fold.export_state())
    assert again.result_before()["usage"] == out
    assert again.result_before()["context"] == fold.result_before()["context"]
