"""The live follower and the demo home, without the UI."""

from __future__ import annotations

import asyncio
import os
import time

import orjson

from codexwatch.core.turns import TurnAssembler
from codexwatch.core.parse import LineCounts, scan
from codexwatch.demo import Demo, Step, fresh_ids, load_recording, recording_ids, retime, with_fill
from codexwatch.sources.history import load_history
from tests.conftest import unread
from codexwatch.sources.watcher import SessionFollower

from .helpers import failed_turn_lines, make_home, tui_session


async def _next_batch(follower, stop, timeout=10.0):
    gen = follower.changes(stop)
    try:
        return await asyncio.wait_for(gen.__anext__(), timeout)
    finally:
        stop.set()
        await gen.aclose()


async def test_follower_sees_an_append_through_an_open_handle_by_polling_alone(tmp_path):
    home = make_home(tmp_path)
    session, sid = tui_session(home)
    os.utime(session)  # Codex is writing it: it counts as hot (the copy kept the fixture's mtime)
    known = [str(p) for p in home.rglob("*.jsonl")]  # else the first listing reports them as new
    follower = SessionFollower(home, known=known, hot_interval=0.02, use_events=False, scan_interval=3600)
    stop = asyncio.Event()

    async def write_later():
        await asyncio.sleep(0.1)
        with open(session, "ab") as fh:
            fh.write(failed_turn_lines("capacity", time.time(), sid)[0])
            fh.flush()

    writer = asyncio.create_task(write_later())
    batch = await _next_batch(follower, stop)
    await writer
    assert str(session) in batch


async def test_follower_finds_a_new_file_in_a_new_date_folder(tmp_path):
    home = make_home(tmp_path)
    follower = SessionFollower(home, known=[str(p) for p in home.rglob("*.jsonl")], hot_interval=0.02)
    stop = asyncio.Event()
    new = home / "sessions" / "2026" / "11" / "30" / "rollout-2026-11-30T00-00-01-x.jsonl"

    async def create_later():
        await asyncio.sleep(0.2)
        new.parent.mkdir(parents=True)
        new.write_bytes(b'{"type":"session_meta"}\n')

    creator = asyncio.create_task(create_later())
    batch = await _next_batch(follower, stop)
    await creator
    assert str(new) in batch


def test_retime_moves_times_and_replaces_ids_only():
    lines = load_recording("capacity")
    ids = fresh_ids(lines, __import__("random").Random(1))
    moved = retime(lines, 2_000_000_000.0, ids, {"gpt-6-sol": "gpt-6-terra"})
    assert len(moved) == len(lines)
    old_session, old_turns = recording_ids(lines)
    new_session, new_turns = recording_ids(moved)
    assert new_session == ids[old_session] and new_turns == [ids[t] for t in old_turns]
    first = orjson.loads(moved[0])
    assert first["timestamp"].startswith("2033-05-18T03:33:20")
    complete = [orjson.loads(line) for line in moved if b"task_complete" in line][0]["payload"]
    assert complete["error"]["codex_error_info"] == "server_overloaded"
    assert abs(complete["started_at"] - 2_000_000_000) < 60
    assert b"gpt-6-terra" in b"".join(moved) and b'"model":"gpt-6-sol"' not in b"".join(moved)


def _turns_of(lines: list[bytes]):
    buf = b"".join(lines)
    assembler = TurnAssembler("x")
    assembler.feed(scan(buf, 0, LineCounts(), 1 << 24)[0])
    return assembler.turns(idle=True)


def test_demo_threads_are_given_an_illustrative_context_fill_and_nothing_else_changes():
    lines = load_recording("healthy_tools")
    filled = with_fill(lines, 0.6)
    before, after = _turns_of(lines), _turns_of(filled)
    assert [t.context_window for t in after] == [t.context_window for t in before]
    assert all(abs(t.context_used / t.context_window - 0.6) < 0.001 for t in after)
    assert [t.tokens for t in after] > [t.tokens for t in before]  # the thread's tokens, as long
    assert [(t.outcome, t.started_at, t.ended_at, t.tool_calls, t.model) for t in after] == \
        [(t.outcome, t.started_at, t.ended_at, t.tool_calls, t.model) for t in before]
    assert [a for a, b in zip(filled, lines) if a != b] == [a for a in filled if b'"token_count"' in a
                                                          and b'"info":{' in a]
    assert with_fill(lines, 0.0001) == lines  # never below what the recording used


def test_demo_home_has_a_week_of_real_turns_and_a_live_replay(tmp_path):
    now = time.time()
    with Demo(clock=lambda: now, script=(Step(0, "capacity", "gpt-6-sol"),), pace=0.0) as demo:
        history = load_history(demo.home, 8 * 86400, now)
        turns = history.turns
        assert len({t.session_id for t in turns}) > 20
        assert any(t.failed and t.error_class == "capacity" for t in turns)
        assert {t.model for t in turns} >= {"gpt-6-sol", "gpt-6-terra", "gpt-6-luna"}
        assert all(now - 8 * 86400 <= t.at <= now + 60 for t in turns)
        fills = {int(4 * t.context_used / t.context_window) for t in turns if t.context_used and t.context_window}
        assert len(fills) >= 3  # the context curve has a shape, not one bar
        before = sum(t.failed for t in turns)
        asyncio.run(demo.replay(loop=False))
        history.refresh(unread(history, now) + list(history.readers), now)
        assert sum(t.failed for t in history.turns) == before + 1
        home = demo.home
    assert not home.exists()
