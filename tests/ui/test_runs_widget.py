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
    assert rows[0].state == "backing off" and rows[0].countdown.startswith("1:05 (until ")
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


async def test_the_dashboard_follows_the_state_directory(tmp_path):
    """A supervisor's state file appears, backs off, then its process is gone: the Runs tab
    and the header follow the files (the runs worker, RunsUpdated, the view's clock)."""
    import os
    import time

    from textual.widgets import DataTable

    from codexwatch.ui.widgets.header import VerdictBar

    from .helpers import CodexWatchApp, config, make_home, wait_until

    app = CodexWatchApp(config(make_home(tmp_path), clock=time.time, runs_state_dir=tmp_path / "state"))
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_until(pilot, lambda: app.view is not None)
        await pilot.press("5")
        f = RunStateFile(tmp_path / "state", pid=os.getpid(), started_at=time.time())
        f.write({"tasks": [{"task": 1, "state": "backing_off", "attempt": 2, "model": "gpt-6-terra",
                            "until": time.time() + 300}], "ended_at": None})
        table = app.screen.query_one("#runs-data", DataTable)

        def cells() -> str:
            return " ".join(str(c) for r in range(table.row_count) for c in table.get_row_at(r))

        assert await wait_until(pilot, lambda: "backing off" in cells() and "(until " in cells())
        assert await wait_until(pilot, lambda: "1 run backing off" in str(app.screen.query_one(VerdictBar).render()))
        f.write({"tasks": [{"task": 1, "state": "ok", "attempt": 2, "model": "gpt-6-terra", "until": None}],
                 "ended_at": time.time()})
        assert await wait_until(pilot, lambda: " ok " in f" {cells()} ")
        assert await wait_until(pilot, lambda: "backing off" not in str(app.screen.query_one(VerdictBar).render()))


async def test_the_arrows_move_through_the_runs(tmp_path):
    from textual.widgets import DataTable

    from codexwatch.ui import messages as msg

    from .helpers import CodexWatchApp, config, make_home, wait_until

    app = CodexWatchApp(config(make_home(tmp_path)))
    runs = [dict(state(state="ok"), tasks=[{"task": k, "state": "ok", "attempt": 1, "model": "m"} for k in (1, 2, 3)])]
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_until(pilot, lambda: app.view is not None)
        app.post_message(msg.RunsUpdated(runs))
        await pilot.press("5")
        table = app.screen.query_one("#runs-data", DataTable)
        assert await wait_until(pilot, lambda: table.row_count == 3)
        await pilot.press("down", "down")
        assert table.cursor_row == 2
        await pilot.press("up")
        assert table.cursor_row == 1


def test_the_header_shows_the_count_of_runs_backing_off_before_the_optional_parts():
    from codexwatch.ui.view import HeaderView
    from codexwatch.ui.widgets.header import header_content

    view = HeaderView("degraded", "3 capacity failures", "Codex incident: Elevated errors on Codex responses",
                      "bad", "42 s ago", 2, 1.0, "")
    for width in (80, 120):  # the status text is shortened to make room for it
        text = header_content(view, width, backing_off=2).plain
        assert "2 runs backing off" in text and len(text) <= width
    # a 60-column pane: the status page comes first, and a part is dropped, not abbreviated
    assert len(header_content(view, 60, backing_off=2).plain) <= 60
    assert "backing off" not in header_content(view, 120).plain
