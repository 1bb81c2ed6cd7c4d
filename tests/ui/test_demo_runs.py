"""The demo's simulated `codexwatch run` supervisors: what they record is read back by
`sources.runs` the way the Runs tab reads it, and their state directory goes with the demo."""

from __future__ import annotations

import argparse
import asyncio
import os

from codexwatch.config import Settings
from codexwatch.demo import DEMO_RUNS, Demo, Step
from codexwatch.sources.runs import default_state_dir, read_runs, runs_dir
from codexwatch.ui.widgets.runs import backing_off_count, run_rows


def _play(demo: Demo, play) -> list[list[dict]]:
    """Play one run at once (pace 0), reading the state directory back after each state."""
    seen: list[list[dict]] = []

    async def main() -> None:
        await demo.play_run(play, asyncio.Event(), after_write=lambda state: seen.append(read_runs(demo.state_dir)))

    asyncio.run(main())
    return seen


def test_the_tasks_job_backs_off_walks_down_and_ends_ok():
    with Demo(pace=0.0, script=()) as demo:
        seen = _play(demo, DEMO_RUNS[0])
        assert all(len(runs) == 1 for runs in seen)
        first, last = seen[0][0], seen[-1][0]
        assert first["pid"] == os.getpid() and first["live"]  # the demo's own process: alive
        assert [t["state"] for t in first["tasks"]] == ["running", "queued", "queued"]

        backing = [runs[0] for runs in seen if runs[0]["tasks"][0]["state"] == "backing_off"]
        assert backing, "task 1 never backed off"
        run = backing[0]
        task = run["tasks"][0]
        assert run["live"] and task["error_class"] == "capacity" and task["model"] == "gpt-6-sol"
        now = run["updated_at"]
        assert task["until"] > now
        rows = run_rows([run], now, None)
        assert rows[0].state == "backing off" and rows[0].countdown.split()[0] not in ("", "0:00")
        assert backing_off_count([run], now) == 1

        assert not last["live"] and last["ended_at"] is not None and last["outcome"] == "ok"
        assert [t["state"] for t in last["tasks"]] == ["ok", "ok", "ok"]
        assert (last["tasks"][0]["attempt"], last["tasks"][0]["model"]) == (2, "gpt-6-terra")
        assert [r.state for r in run_rows([last], last["updated_at"], None)] == ["ok", "ok", "ok"]
        assert backing_off_count([last], last["updated_at"]) == 0


def test_the_usage_limit_run_gives_up():
    with Demo(pace=0.0, script=()) as demo:
        seen = _play(demo, DEMO_RUNS[1])
        last = seen[-1][0]
        assert seen[0][0]["live"] and seen[0][0]["tasks"][0]["state"] == "running"
        assert not last["live"] and last["outcome"] == "failed"
        assert last["tasks"][0]["error_class"] == "usage_limit"
        assert [r.state for r in run_rows([last], last["updated_at"], None)] == ["gave up"]


def test_the_replay_plays_the_runs_in_the_demos_own_state_dir_and_cleanup_removes_it():
    with Demo(pace=0.0, script=(Step(0, "healthy", "gpt-6-sol"),)) as demo:
        state_dir, home, tmp = demo.state_dir, demo.home, demo._tmp
        assert state_dir is not None and home is not None and tmp is not None
        assert state_dir.is_relative_to(tmp) and not state_dir.is_relative_to(home)
        assert state_dir != default_state_dir()
        assert demo.app_config(Settings(bell=False, notify=False)).runs_state_dir == state_dir

        asyncio.run(demo.replay(loop=False))
        runs = read_runs(state_dir)
        assert sorted(r["outcome"] for r in runs) == ["failed", "ok"]
        assert not any(r["live"] for r in runs)
        assert not list(home.rglob("run-*.json"))  # nothing of codexwatch's in the Codex home

        demo.clear_runs()
        assert read_runs(state_dir) == []
        demo.stage_runs(27.0)  # as the screenshots stage them
        staged = read_runs(state_dir)
        by_cwd = {r["cwd"]: r for r in staged}
        assert by_cwd["~/src/shop-api"]["live"] and by_cwd["~/src/docs"]["outcome"] == "failed"
        assert backing_off_count(staged, demo.clock()) == 1
    assert not state_dir.exists() and not os.path.exists(tmp)


def test_the_demo_command_removes_its_state_dir_when_the_dashboard_ends(monkeypatch):
    """`codexwatch --demo`: the state directory the app was given is gone once it returns."""
    from codexwatch.commands import dashboard
    from codexwatch.ui.app import CodexWatchApp

    given = []

    def run(self):
        given.append(self.config.runs_state_dir)
        assert runs_dir(self.config.runs_state_dir).is_dir()
        return None

    monkeypatch.setattr(CodexWatchApp, "run", run)
    assert dashboard.run(argparse.Namespace(demo=True), Settings(bell=False, notify=False)) == 0
    assert given and given[0] is not None and not given[0].exists()


async def test_the_runs_tab_shows_the_demos_runs():
    from textual.widgets import DataTable

    from codexwatch.ui.app import CodexWatchApp

    from .helpers import wait_until

    with Demo(pace=0.0, script=()) as demo:
        app = CodexWatchApp(demo.app_config(Settings(bell=False, notify=False), follow=False,
                                            status_enabled=False))
        async with app.run_test(size=(120, 36)) as pilot:
            assert await wait_until(pilot, lambda: app.view is not None)
            await pilot.press("5")
            table = app.screen.query_one("#runs-data", DataTable)
            assert await wait_until(pilot, lambda: table.row_count == 4)
            states = [str(table.get_row_at(i)[4]) for i in range(4)]
            assert sorted(states) == ["gave up", "ok", "ok", "ok"]


def test_a_run_still_playing_after_cleanup_does_not_make_the_folder_again():
    """A forced exit cleans up from another thread while the replay may still be writing."""
    demo = Demo(pace=0.0, script=())
    demo.prepare()
    tmp = demo._tmp
    demo.cleanup()
    asyncio.run(demo.play_run(DEMO_RUNS[0], asyncio.Event()))
    assert tmp is not None and not os.path.exists(tmp)
