"""The benchmark history generator writes valid, self-consistent Codex homes."""

from __future__ import annotations

import calendar
import importlib.util
import json
import re
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "make_history.py"
NOW = calendar.timegm((2026, 11, 29, 12, 0, 0))
NAME = re.compile(r"rollout-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-([0-9a-f-]{36})\.jsonl")


def _load():
    spec = importlib.util.spec_from_file_location("make_history", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    out = tmp_path_factory.mktemp("history")
    manifest = _load().build(out, 2_000_000, days=10, seed=3, now=NOW)
    files = sorted(out.glob("sessions/*/*/*/rollout-*.jsonl"))
    return out, manifest, files


def _seconds(stamp: str) -> int:
    return calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))


def _lines(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_size_and_manifest(history):
    out, manifest, files = history
    assert manifest["files"] == len(files) > 3
    assert manifest["bytes"] == sum(f.stat().st_size for f in files) >= 2_000_000
    assert json.loads((out / "manifest.json").read_text())["turns"] == manifest["turns"]
    by_outcome = manifest["turns_by_outcome"]
    assert sum(by_outcome.values()) == manifest["turns"]
    assert sum(manifest["failed_by_class"].values()) == by_outcome.get("failed", 0)


def test_every_line_is_json_and_names_match_ids(history):
    _, _, files = history
    seen = set()
    for path in files:
        lines = _lines(path)  # raises on an invalid line
        meta = lines[0]["payload"]
        stamp, file_id = NAME.fullmatch(path.name).groups()
        assert meta["id"] == file_id and meta.get("session_id", file_id) == file_id
        start = time.localtime(_seconds(meta["timestamp"]))
        assert time.strftime("%Y-%m-%dT%H-%M-%S", start) == stamp
        assert path.parent.relative_to(path.parents[3]).as_posix() == time.strftime("%Y/%m/%d", start)
        for line in lines:
            thread = (line.get("payload") or {}).get("thread_id")
            assert thread in (None, file_id)
        assert file_id not in seen
        seen.add(file_id)


def test_turn_ids_unique_and_consistent(history):
    _, _, files = history
    seen = set()
    for path in files:
        open_turn = None
        for line in _lines(path):
            payload = line.get("payload") or {}
            if payload.get("type") == "task_started":
                assert payload["turn_id"] not in seen
                seen.add(payload["turn_id"])
                open_turn = payload["turn_id"]
            elif payload.get("type") in ("task_complete", "turn_context") and "turn_id" in payload:
                assert payload["turn_id"] == open_turn
    assert len(seen) > 3


def test_times_inside_window_and_in_order(history):
    _, manifest, files = history
    low, high = manifest["window"]["start"], manifest["window"]["end"]
    for path in files:
        stamps = [line["timestamp"] for line in _lines(path)]
        assert stamps == sorted(stamps)
        assert low <= _seconds(stamps[0]) and _seconds(stamps[-1]) <= high
        for line in _lines(path):
            payload = line.get("payload") or {}
            for key in ("started_at", "completed_at"):
                if isinstance(payload.get(key), int):
                    assert abs(payload[key] - _seconds(line["timestamp"])) <= 60


def test_same_seed_same_bytes(history, tmp_path):
    _, manifest, files = history
    again = _load().build(tmp_path, 2_000_000, days=10, seed=3, now=NOW)
    assert again["bytes"] == manifest["bytes"]
    first = files[0]
    copy = tmp_path / first.relative_to(first.parents[4])
    assert copy.read_bytes() == first.read_bytes()


def test_token_totals_grow_one_request_at_a_time(history):
    """Added tool calls are model requests: each writes a token count, whose totals go on
    from the last ones written and never share an instant with another, in any session
    (ccusage counts token events of one instant once)."""
    _, manifest, files = history
    assert manifest["token_lines_added"] > 0
    final, instants = 0, set()
    for path in files:
        totals, stamps = [], []
        for line in _lines(path):
            payload = line.get("payload") or {}
            if payload.get("type") == "token_count" and payload.get("info"):
                totals.append(payload["info"]["total_token_usage"]["total_tokens"])
                stamps.append(line["timestamp"])
        assert totals == sorted(totals)
        assert len(set(stamps)) == len(stamps) and instants.isdisjoint(stamps)
        instants.update(stamps)
        final += totals[-1] if totals else 0
    assert final == manifest["tokens"]["total_tokens"]


def test_tool_outputs_no_longer_than_codex_records(history):
    _, _, files = history
    gen = _load()
    for path in files:
        for line in _lines(path):
            payload = line.get("payload") or {}
            if payload.get("type") == "function_call_output":
                assert len(payload["output"]) <= 2 * gen.OUTPUT_SIZES[1]  # escaped twice at most


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("small")
    manifest = _load().build(out, 3_000_000, days=10, seed=4, now=NOW, shape="small")
    return out, manifest, sorted(out.glob("sessions/*/*/*/rollout-*.jsonl"))


def test_small_shape_many_short_sessions(small):
    """~31,700 sessions per GiB, ~1.7 turns and ~34 KB each, turns as recorded, files last
    written when their session ended."""
    _, manifest, files = small
    assert manifest["shape"] == "small" and manifest["files"] == len(files)
    per_gib = manifest["sessions"] * 2**30 / manifest["bytes"]
    assert 25_000 < per_gib < 40_000
    assert 1.3 < manifest["turns"] / manifest["sessions"] < 2.2
    assert manifest["tool_pairs_added"] == 0 and manifest["token_lines_added"] == 0
    for path in files:
        lines = _lines(path)
        assert lines[0]["type"] == "session_meta"
        assert int(path.stat().st_mtime) == _seconds(lines[-1]["timestamp"])
    # The large first line current releases write is there.
    assert any(len(f.read_text().split("\n", 1)[0]) > 15_000 for f in files)


def test_giant_shape_one_long_session(tmp_path):
    manifest = _load().build(tmp_path, 2_000_000, days=30, seed=5, now=NOW, shape="giant")
    files = sorted(tmp_path.glob("sessions/*/*/*/rollout-*.jsonl"))
    assert manifest["files"] == manifest["sessions"] == len(files) == 1
    lines = _lines(files[0])
    starts = [line["payload"]["turn_id"] for line in lines
              if (line.get("payload") or {}).get("type") == "task_started"]
    assert len(starts) == manifest["turns"] > 50 and len(set(starts)) == len(starts)
    stamps = [line["timestamp"] for line in lines]
    assert stamps == sorted(stamps)
    assert sum(1 for line in lines if line["type"] == "session_meta") == 1
    assert int(files[0].stat().st_mtime) == _seconds(stamps[-1])
    assert manifest["turns_by_version"] == {"0.171.0": manifest["turns"]}


def test_default_shape_unchanged_by_the_option(history, tmp_path):
    _, manifest, files = history
    again = _load().build(tmp_path, 2_000_000, days=10, seed=3, now=NOW, shape="default")
    assert again["bytes"] == manifest["bytes"] and again["turns"] == manifest["turns"]
