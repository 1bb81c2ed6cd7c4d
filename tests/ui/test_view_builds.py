"""The view is built off the UI loop, one build at a time, from the newest facts."""

from __future__ import annotations

import threading
import time

import pytest

from codexwatch.core.models import Turn
from codexwatch.ui import app as app_module
from codexwatch.ui import messages as msg
from codexwatch.ui.widgets.failures import FailuresTable

from .helpers import NOW, CodexWatchApp, config, wait_until


def failed(n: int) -> Turn:
    return Turn(session_id="s", turn_id=f"t{n}", file="f", outcome="failed", error_class="capacity",
                started_at=NOW - 600 + n, ended_at=NOW - 599 + n, shape="rejected", message=f"boom {n}")


class SlowBuilds:
    """build_dashboard, slowed down, recording where and on what it ran."""

    def __init__(self, monkeypatch, seconds: float) -> None:
        self.seconds, self.calls, self.in_flight, self.most, self.done = seconds, [], 0, 0, 0
        self.lock = threading.Lock()
        self.real = app_module.build_dashboard
        monkeypatch.setattr(app_module, "build_dashboard", self)

    def __call__(self, turns, *args, **kwargs):
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            self.calls.append((threading.current_thread() is threading.main_thread(), len(turns)))
            time.sleep(self.seconds)
            return self.real(turns, *args, **kwargs)
        finally:
            with self.lock:
                self.in_flight -= 1
                self.done += 1


async def test_builds_run_in_a_worker_one_at_a_time_and_the_newest_facts_win(tmp_path, monkeypatch):
    builds = SlowBuilds(monkeypatch, 0.3)
    app = CodexWatchApp(config(tmp_path, load_history=False))
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(msg.HistoryLoaded([], []))
        for n in range(1, 8):  # a burst, faster than a build
            app.post_message(msg.TurnsChanged([failed(i) for i in range(n)]))
            await pilot.pause(0.02)
        view = await app.settled()
        assert len(view.failures) == 7  # the last facts posted, built
        assert builds.most == 1
        assert not any(on_main for on_main, _ in builds.calls)
        assert len(builds.calls) < 8  # coalesced: not one build per change
        settled = len(builds.calls)
        await pilot.pause(1.5)  # nothing changes: nothing is built (a request once re-armed itself)
        assert len(builds.calls) == settled


async def test_a_new_failure_is_in_the_table_before_the_build_ends(tmp_path, monkeypatch):
    app = CodexWatchApp(config(tmp_path, load_history=False))
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(msg.HistoryLoaded([failed(0)], []))
        await app.settled()
        await pilot.pause()
        builds = SlowBuilds(monkeypatch, 5.0)  # every build from here on outlasts the check
        turns = [failed(0), failed(1)]
        app.post_message(msg.TurnsChanged(turns, [], tuple(turns)))
        table = app.screen.query_one(FailuresTable)
        assert await wait_until(pilot, lambda: table.row_count == 2, timeout=3.0)
        assert builds.done == 0  # no build with it has ended


async def test_a_build_that_raises_is_shown_and_the_last_view_stays(tmp_path, monkeypatch):
    app = CodexWatchApp(config(tmp_path, load_history=False, notify=True))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.post_message(msg.HistoryLoaded([failed(0)], []))
        before = await app.settled()

        def broken(*args, **kwargs):
            raise ValueError("[bold]no[/] view")

        monkeypatch.setattr(app_module, "build_dashboard", broken)
        app.post_message(msg.TurnsChanged([failed(0), failed(1)]))
        assert await wait_until(pilot, lambda: any("view" in (n.title or "") for n in app._notifications))
        assert app.view is before and not app._building
        assert any("[bold]no[/] view" in n.message for n in app._notifications)


async def test_the_arrows_move_through_the_failures_after_a_tab_switch(tmp_path):
    app = CodexWatchApp(config(tmp_path, load_history=False))
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(msg.HistoryLoaded([failed(n) for n in range(5)], []))
        await app.settled()
        await pilot.pause()
        table = app.screen.query_one(FailuresTable)
        assert table.cursor_row == 0
        await pilot.press("2", "1", "down", "down")  # the focus left the table with its tab
        assert table.cursor_row == 2
        await pilot.press("up", "end")
        assert table.cursor_row == 4


async def test_the_loaded_history_is_built_at_once_later_changes_after_the_rest(tmp_path, monkeypatch):
    # The builder rests after each build (here a minute): the first paint waits for the
    # loaded history's view, so that one is built at once; what changes later waits.
    monkeypatch.setattr(app_module, "REFRESH_S", 60.0)
    app = CodexWatchApp(config(tmp_path, load_history=False))
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(pilot, lambda: app.view is not None)  # the first view, built
        assert app._next_build > time.monotonic() + 30  # resting
        app.post_message(msg.HistoryLoaded([failed(0)], []))
        assert await wait_until(pilot, lambda: len(app.view.failures) == 1)
        app.post_message(msg.TurnsChanged([failed(0), failed(1)]))
        await pilot.pause(0.5)
        assert len(app.view.failures) == 1 and app._dirty  # built when the rest ends


async def test_following_starts_once_the_loaded_history_s_view_is_built(tmp_path, monkeypatch):
    # Setting up the file watch and the follower's look at every file must not delay the
    # loaded dashboard's first paint: they wait for its view. What is appended meanwhile is
    # still found (the follower looks for files grown since the read).
    from .helpers import failed_turn_lines, make_home, tui_session

    builds = SlowBuilds(monkeypatch, 0.3)
    home = make_home(tmp_path)
    session, session_id = tui_session(home)
    app = CodexWatchApp(config(home, follow=True, hot_interval=0.05))
    started: list[int] = []
    real_follow = CodexWatchApp._follow

    def follow(self):
        started.append(builds.done)
        return real_follow(self)

    monkeypatch.setattr(CodexWatchApp, "_follow", follow)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(pilot, lambda: app.loading.finished)
        with open(session, "ab") as fh:  # before any follower could see it
            fh.write(b"".join(failed_turn_lines("capacity", NOW - 30, session_id, model="gpt-6-sol")))
        assert await wait_until(pilot, lambda: bool(started))
        assert app.view is not None and app.view.header.loading.finished
        assert started == [builds.done] and builds.done >= 1
        assert await wait_until(pilot, lambda: app.view.now is not None and app.view.now.action != "none")


def test_rebuilds_for_the_advice_to_age_take_a_bounded_share_of_a_core(tmp_path):
    # With nothing new, the view is rebuilt only for the advice's wording to age: every
    # 10 s in an episode, every minute else; a build over a large history (a third of a
    # second) would make that a few percent of a core, so the interval grows with it.
    from types import SimpleNamespace

    app = CodexWatchApp(config(tmp_path, load_history=False))
    episode = SimpleNamespace(now=SimpleNamespace(wizard_available=True, backoff_until=None))
    quiet = SimpleNamespace(now=None)
    for view, seconds, every in ((episode, 0.005, app_module.REBUILD_EPISODE_S),
                                 (episode, 0.3, 0.3 / app_module.AGING_SHARE),
                                 (quiet, 0.05, app_module.REBUILD_IDLE_S),
                                 (quiet, 0.6, 0.6 / app_module.AGING_SHARE)):
        app.view, app._build_seconds = view, seconds
        assert app._rebuild_every() == pytest.approx(every)
        assert app._build_seconds / app._rebuild_every() <= app_module.AGING_SHARE + 1e-9
    # A back-off counting down is shown to the second by the clock tick, not by rebuilds
    # (test_now_panel): it does not make them any more frequent.
    app.view = SimpleNamespace(now=SimpleNamespace(wizard_available=True, backoff_until=NOW + 30))
    for seconds, every in ((0.005, app_module.REBUILD_EPISODE_S), (0.3, 0.3 / app_module.AGING_SHARE)):
        app._build_seconds = seconds
        assert app._rebuild_every() == pytest.approx(every)


async def test_each_published_view_is_shown_once_by_each_screen(tmp_path, monkeypatch):
    # Textual runs a screen's on_mount for every class that defines one: a subclass that
    # also called the base's subscribed twice, and showed every view and every clock tick
    # twice (twice the work on each failure that arrives, and twice the idle cost).
    from codexwatch.ui.screens.dashboard import DashboardScreen
    from codexwatch.ui.screens.wizard import WizardScreen

    shown: list[str] = []
    for cls in (DashboardScreen, WizardScreen):
        real_show, real_clock = cls.show, cls.show_clock
        monkeypatch.setattr(cls, "show", lambda self, u, real=real_show: shown.append(type(self).__name__) or real(self, u))
        monkeypatch.setattr(cls, "show_clock", lambda self, u, real=real_clock: shown.append("clock") or real(self, u))
    app = CodexWatchApp(config(tmp_path, load_history=False))
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(msg.HistoryLoaded([failed(1)], []))
        await app.settled()
        await pilot.pause()
        shown.clear()
        app._publish(rebuilt=True)
        await pilot.pause()
        assert shown.count("DashboardScreen") == 1
        shown.clear()
        app._publish(rebuilt=False)
        await pilot.pause()
        assert shown == ["clock"]
        app.push_screen(WizardScreen())
        await pilot.pause()
        shown.clear()
        app._publish(rebuilt=True)
        await pilot.pause()
        assert shown.count("WizardScreen") == 1 and shown.count("DashboardScreen") == 1
