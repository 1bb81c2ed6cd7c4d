"""The Runs tab's rows and the header's count, from recorded run states and a clock."""

from __future__ import annotations

from datetime import timezone

from codexwatch.sources.runs import RunStateFile, read_runs
from codexwatch.ui.widgets.runs import backing_off_count, run_rows

NOW = 1_800_000_000.0


def state(live=True, ended=None, **task):
    return {"pid": 1, "started_at": NOW - 60, "heartbeat_at": NOW - 1, "live": live, "ended_at": ended,
            "tasks": [dict({"task": 1, "state": "running", "attempt": 1, "model": "m", "until": None}, **task)]}


def test_states_and_countdown():
    rows = run_rows([state(state="backing_off", until=NOW + 65)], NOW, timezone.utc)
    assert rows[0].state.startswith("backing off until ") and rows[0].countdown == "1:05"
    assert backing_off_count([state(state="backing_off", until=NOW + 65)], NOW) == 1
    assert run_rows([state(state="gave_up")], NOW, None)[0].state == "gave up"


def test_a_killed_run_shows_as_ended_and_is_not_counted():
    dead = state(live=False, state="backing_off", until=NOW + 65)
    assert run_rows([dead], NOW, None)[0].state == "ended"
    assert backing_off_count([dead], NOW) == 0


def test_read_runs_liveness(tmp_path):
    f = RunStateFile(tmp_path, pid=999_999_999, started_at=NOW)
    f.write({"tasks": [], "ended_at": None})
    assert read_runs(tmp_path, alive=lambda pid: True)[0]["live"]
    assert not read_runs(tmp_path, alive=lambda pid: False)[0]["live"]  # the process is gone
    assert not read_runs(tmp_path, now=NOW + 10**9, alive=lambda pid: True)[0]["live"]  # no heartbeat
    f.write({"tasks": [], "ended_at": NOW})
    assert not read_runs(tmp_path, alive=lambda pid: True)[0]["live"]
    (tmp_path / "runs" / "run-garbage.json").write_text("{not json")
    assert len(read_runs(tmp_path)) == 1
