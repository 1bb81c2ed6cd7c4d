"""The Textual app: owns the facts (turns, file health, status snapshot), runs the
app-lifetime workers (history load, live follower, status poll, view builds), and
publishes computed views to the screens (`view_changed`, a Textual signal).

Workers only post messages; the `on_*` handlers here own every state change. The view is
built in a worker thread, never on the UI loop: a fold over every turn of a long window
takes hundreds of milliseconds, and key presses must not wait for it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from pathlib import Path
from typing import Any, Iterable

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.signal import Signal
from textual.timer import Timer

from codexwatch.core.models import Clock, FileHealth, StatusSnapshot, Turn
from codexwatch.core.status import DEFAULT_PAGE_URL
from codexwatch.sources.catalogue import CatalogueCache
from codexwatch.ui import messages as msg
from codexwatch.ui.screens import TriageScreen
from codexwatch.ui.themes import THEMES
from codexwatch.ui.view import DashboardView, Loading, ViewUpdate, build_dashboard

REFRESH_S = 0.2  # at most 5 view builds a second, whatever the log volume
# Countdowns and ages move once a second: the app's only regular wake-up (a build that has
# to wait for the builder's rest sets a timer of its own; an idle app wakes as little as it
# can: every wake-up is CPU).
CLOCK_TICK_S = 1.0
# Recomputing everything (statistics and advice over every turn) is for when something
# changed; with nothing new, only the advice's wording ages, and in minutes unless the user
# is in an episode.
REBUILD_IDLE_S = 60.0
REBUILD_EPISODE_S = 10.0
# ... and such rebuilds, of a large history (a third of a second over every turn of 31,000
# sessions), take at most this share of a core: an idle dashboard stays idle. (0.5 % let
# the 7-day view of 31,000 sessions, 40 ms a build, rebuild every 10 s during an episode:
# a third of the idle dashboard's CPU; at 0.25 % that home idled at 1.12-1.17 % of a core
# during an episode, at 0.1 % 0.90-0.95 %: it rebuilds every 25-40 s.) What moves by the
# second (a countdown, the age of the last failure) moves with the clock tick, without a
# rebuild; anything new read rebuilds at once.
AGING_SHARE = 0.001
RUNS_POLL_S = 1.0  # `codexwatch run`'s state directory: a handful of small files


@dataclass
class AppConfig:
    """Everything the app needs from outside; every live source can be switched off."""

    codex_home: Path
    since_seconds: float | None = 7 * 86400
    status_url: str | None = None
    status_enabled: bool = True
    status_interval: float = 120.0
    status_transport: Any = None  # an httpx transport (tests, demo); None: the network
    clock: Clock = time.time
    tz: tzinfo | None = None
    bell: bool = True
    notify: bool = True
    theme: str = "textual-dark"
    use_cache: bool = True
    cache_dir: Path | None = None
    load_history: bool = True
    follow: bool = True
    clock_tick: bool = True  # False freezes ages and countdowns (snapshots)
    hot_interval: float | None = None  # the live size check's tick; None: the follower's own
    demo: Any = None  # a codexwatch.demo.Demo that replays failures into the home
    home_problem: str | None = None  # set by the command when there is nothing to read
    runs_state_dir: Path | None = None  # where `codexwatch run` records runs; None: not watched
    crew: Any = None  # sources.parallel.Crew forked before the app's threads, for the first read
    listing: Any = None  # sources.parallel.Listing of the home, forked before the app started
    extra: dict = field(default_factory=dict)


def _close(*helpers) -> None:
    """End the helper processes forked for the first read (a Crew, a Listing), if any."""
    for helper in helpers:
        if helper is not None:
            helper.close()


class CodexWatchApp(App):
    CSS_PATH = "codexwatch.tcss"
    TITLE = "codexwatch"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("w", "wizard", "Triage", id="wizard"),
        Binding("c", "copy_command", "Copy cmd", id="copy"),
        Binding("r", "report", "Report", id="report"),
        Binding("s", "refresh_status", "Status now", show=False, id="refresh_status"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
        Binding("f1", "help", "Help", show=False),
        Binding("q", "quit", "Quit", id="quit"),
    ]

    def __init__(self, config: AppConfig) -> None:
        super().__init__()
        self.config = config
        self.clock = config.clock
        self.tz = config.tz
        self.status_enabled = config.status_enabled and bool(config.status_url or config.status_transport)
        self.bell_on = config.bell
        self.notify_on = config.notify
        # facts
        self.turns: list[Turn] = []
        self.health: list[FileHealth] = []
        self.snapshot: StatusSnapshot | None = None
        self.loading = Loading(finished=not config.load_history)
        self.home_problem = config.home_problem
        self.follower_note: str | None = None
        self.runs: list[dict] = []  # `codexwatch run` supervisors (the Runs tab)
        self._catalogue = CatalogueCache()  # Codex's own model list, read when it changes
        # derived
        self.view: DashboardView | None = None
        self.view_changed: Signal[ViewUpdate] = Signal(self, "view_changed")
        self.last_update: ViewUpdate | None = None  # the last published, for a screen mounted later
        self._dirty = True
        self._building = False  # a build is in flight: at most one
        self._next_build = 0.0  # monotonic: no build starts before
        self._urgent = False  # the loaded history's first view: built without the rest
        self._build_timer: Timer | None = None  # a build waiting for the builder's rest
        self._last_build = 0.0
        self._build_seconds = 0.0  # how long the last build took
        self._last_show = 0.0
        self._known_episode: str | None = None
        self._episode_baseline = False
        self._known_incidents: set[str] | None = None
        self._history = None
        self._follow_pending = False  # the history is loaded: follow it once its view is painted
        self._stop = threading.Event()
        self._astop: asyncio.Event | None = None
        self._status_wake: asyncio.Event | None = None

    # --- lifecycle --------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        from codexwatch.ui.screens.dashboard import DashboardScreen

        return DashboardScreen()

    def on_mount(self) -> None:
        for theme in THEMES:
            self.register_theme(theme)
        try:
            self.theme = self.config.theme
        except Exception:  # noqa: BLE001 - an unknown theme name falls back
            self.theme = "textual-dark"
            self.notify(f"Unknown theme {self.config.theme!r}; using textual-dark.", severity="warning")
        self._astop = asyncio.Event()
        self._status_wake = asyncio.Event()
        self.set_interval(CLOCK_TICK_S, self._tick)
        self._start_build()  # the first view (loading, or empty) at once, not at the first tick
        if self.home_problem:
            from codexwatch.ui.screens.firstrun import FirstRunScreen

            self.push_screen(FirstRunScreen(self.home_problem, self.config.codex_home))
        elif self.config.load_history:
            self._load(*self._take_helpers())
        if self.status_enabled:
            self._poll_status()
        if self.config.demo is not None:
            self._replay_demo()
        if self.config.runs_state_dir is not None:
            self._watch_runs()
        self._request_view()

    def on_unmount(self) -> None:
        _close(*self._take_helpers())  # never handed to a read
        self._stop.set()
        if self._astop is not None:
            self._astop.set()

    # --- workers (post messages; never touch widgets) -----------------------------------

    def _take_helpers(self) -> tuple:
        """The helpers forked for the first read (`AppConfig.crew`) and the listing made
        for it (`AppConfig.listing`), once: a later read (`reload_history`) is read by this
        process alone."""
        crew, listing = self.config.crew, self.config.listing
        self.config.crew = self.config.listing = None
        return crew, listing

    @work(thread=True, exclusive=True, group="history", exit_on_error=False, description="Reading history")
    def _load(self, crew=None, listing=None) -> None:
        from codexwatch.sources.history import home_problem, load_history

        problem = home_problem(self.config.codex_home)
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if done == total or now - last[0] > 0.1:
                last[0] = now
                self.post_message(msg.HistoryProgress(done, total))

        try:
            history = load_history(
                self.config.codex_home, self.config.since_seconds, self.clock(),
                use_cache=self.config.use_cache, progress=progress, cache_dir=self.config.cache_dir,
                parallel=True, crew=crew, listing=listing,
            )
        except Exception as exc:  # noqa: BLE001 - shown, never crash the dashboard
            self.post_message(msg.HistoryFailed(f"{type(exc).__name__}: {exc}"))
            return
        finally:
            _close(crew, listing)  # they end: used, or nothing to read
        self._history = history
        self.post_message(msg.HistoryLoaded(list(history.turns), history.health(), problem))

    def reload_history(self) -> None:
        """Read the history again (after the first-run screen, once Codex wrote something)."""
        self.home_problem = None
        self.loading = Loading(finished=False)
        self._request_view()
        self._load(*self._take_helpers())

    @work(exclusive=True, group="follow", exit_on_error=False, description="Following sessions")
    async def _follow(self) -> None:
        from codexwatch.sources.watcher import SessionFollower

        history = self._history
        assert history is not None
        def changed_turns() -> msg.TurnsChanged:
            turns = list(history.turns)
            return msg.TurnsChanged(turns, history.health(), tuple(t for t in turns if t.failed))

        missed = await asyncio.to_thread(history.grown_since_read)
        if missed and await asyncio.to_thread(history.refresh, missed, self.clock()):
            self.post_message(await asyncio.to_thread(changed_turns))
        # What was read (size, mtime): the follower stats nothing to start. Its clock is the
        # real one, that of the files' mtimes.
        known = await asyncio.to_thread(history.as_read)
        follower = await asyncio.to_thread(  # it looks at every known file: off the loop
            SessionFollower, history.home, known=known, hot_interval=self.config.hot_interval)
        async for paths in follower.changes(self._astop):
            if follower.note and follower.note != self.follower_note:
                self.post_message(msg.FollowerProblem(follower.note))
            now = self.clock()
            if await asyncio.to_thread(history.refresh, sorted(paths), now):
                self.post_message(await asyncio.to_thread(changed_turns))

    @work(exclusive=True, group="status", exit_on_error=False, description="Polling the status page")
    async def _poll_status(self) -> None:
        from codexwatch.sources.status_client import StatusClient

        kwargs = {"clock": self.clock, "interval": self.config.status_interval}
        if self.config.status_transport is not None:
            kwargs["transport"] = self.config.status_transport
        client = StatusClient(self.config.status_url or DEFAULT_PAGE_URL, **kwargs)
        try:
            while True:
                snapshot = await client.fetch()
                self.post_message(msg.StatusUpdated(snapshot))
                episode = self.view.episode if self.view else None
                delay = client.next_delay(
                    codex_trouble=bool(snapshot.ok and snapshot.codex_incidents_ongoing),
                    user_failures_rising=bool(episode is not None and episode.ongoing),
                )
                assert self._status_wake is not None
                self._status_wake.clear()
                try:
                    await asyncio.wait_for(self._status_wake.wait(), timeout=delay)
                except asyncio.TimeoutError:
                    pass
        finally:
            await client.aclose()

    @work(thread=True, exclusive=True, group="runs", exit_on_error=False, description="Watching runs")
    def _watch_runs(self) -> None:
        from codexwatch.sources.runs import read_runs

        last = None
        while not self._stop.is_set():
            runs = read_runs(self.config.runs_state_dir, self.clock())
            key = [(r.get("pid"), r.get("started_at"), r.get("live"), r.get("updated_at"), r.get("ended_at"))
                   for r in runs]
            if key != last:
                last = key
                self.post_message(msg.RunsUpdated(runs))
            self._stop.wait(RUNS_POLL_S)

    @work(exclusive=True, group="demo", exit_on_error=False, description="Replaying demo failures")
    async def _replay_demo(self) -> None:
        await self.config.demo.replay(self._astop)

    @work(thread=True, group="view", exit_on_error=False, description="Building the view")
    def _build_view(self, now: float, triage: bool) -> None:
        # The facts are read once, here: the handlers replace them whole, never in place.
        turns, health, snapshot, loading = self.turns, self.health, self.snapshot, self.loading
        started = time.monotonic()
        try:
            catalogue = self._catalogue.get(self.config.codex_home)
            view = build_dashboard(turns, health, snapshot, now, self.tz, loading=loading,
                                   status_enabled=self.status_enabled, triage=triage,
                                   catalogue=catalogue)
        except Exception as exc:  # noqa: BLE001 - shown; the last view stays
            self.post_message(msg.ViewFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(msg.ViewBuilt(view, now, time.monotonic() - started))

    # --- state changes -----------------------------------------------------------------

    @on(msg.HistoryProgress)
    def _progress(self, message: msg.HistoryProgress) -> None:
        self.loading = Loading(message.done, message.total, finished=False)
        self._request_view()  # at the builder's pace: progress comes many times a second

    @on(msg.HistoryLoaded)
    def _loaded(self, message: msg.HistoryLoaded) -> None:
        self.turns = message.turns
        self.health = message.health
        self.loading = Loading(self.loading.total, self.loading.total, finished=True)
        self._urgent = True  # the first paint waits for this view: the builder's rest does not
        if message.home_problem and not self.home_problem:
            self.home_problem = message.home_problem
            from codexwatch.ui.screens.firstrun import FirstRunScreen

            self.push_screen(FirstRunScreen(message.home_problem, self.config.codex_home))
        self._request_view()
        # Following starts once the loaded view is painted: setting up the file watch and
        # the follower's look at every file would otherwise delay that first paint.
        self._follow_pending = (self.config.follow and self._history is not None
                                and message.home_problem is None)

    @on(msg.HistoryFailed)
    def _failed(self, message: msg.HistoryFailed) -> None:
        self.loading = Loading(finished=True, error=message.error)
        self.notify(message.error, title="Could not read the Codex history", severity="error", markup=False)
        self._request_view()

    @on(msg.TurnsChanged)
    def _turns_changed(self, message: msg.TurnsChanged) -> None:
        self.turns = message.turns
        if message.health:
            self.health = message.health
        if message.failures is not None and self.view is not None and message.failures != self.view.failures:
            # A new failure is in the table at once; the rest (verdict, advice, figures)
            # follows when the worker has folded every turn again.
            self.view = replace(self.view, failures=message.failures)
            self._publish(rebuilt=True)
        self._request_view()

    @on(msg.ViewBuilt)
    def _view_built(self, message: msg.ViewBuilt) -> None:
        self._building = False
        # A builder busy a third of the time at most: the UI loop shares the interpreter.
        self._next_build = time.monotonic() + max(REFRESH_S, 2 * message.seconds)
        self._build_seconds = message.seconds
        self.view = message.view
        self._last_build = time.monotonic()
        self._announce_episode()
        self._publish(rebuilt=True)
        if message.view.header.loading.finished:
            self._start_following()
        self._start_build()  # what changed meanwhile: now if urgent, else after the rest

    def _start_following(self) -> None:
        """Follow the loaded history, once its view is painted (or could not be built)."""
        if self._follow_pending:
            self._follow_pending = False
            self.call_after_refresh(self._follow)

    @on(msg.ViewFailed)
    def _view_failed(self, message: msg.ViewFailed) -> None:
        self._start_following()
        self._building = False
        self._next_build = time.monotonic() + REFRESH_S
        self.notify(message.error, title="Could not build the view", severity="error", markup=False)
        self._start_build()  # what changed meanwhile, after the rest, as after a build

    @on(msg.ReloadHistory)
    def _reload(self) -> None:
        self.reload_history()

    @on(msg.FollowerProblem)
    def _follower_problem(self, message: msg.FollowerProblem) -> None:
        self.follower_note = message.text
        self.notify(message.text, title="Live follow", severity="warning", markup=False)

    @on(msg.RunsUpdated)
    def _runs(self, message: msg.RunsUpdated) -> None:
        self.runs = message.runs
        self._publish(rebuilt=False)  # shown with the clock, as the countdowns are

    @on(msg.StatusUpdated)
    def _status(self, message: msg.StatusUpdated) -> None:
        self.snapshot = message.snapshot
        self._announce_incidents(message.snapshot)
        self._request_view()

    # --- refresh -----------------------------------------------------------------------

    def _tick(self) -> None:
        """Every CLOCK_TICK_S: build the view if the advice's wording has aged (or a build
        waits), else move the clock of the view shown."""
        if not self.is_running:
            return  # shutting down: the screens' widgets go before the refresh timer does
        # Half a tick of slack: a build ends a little after the tick that started it, and
        # "every second" must not become every other one.
        now, slack = time.monotonic(), CLOCK_TICK_S / 2
        if self.config.clock_tick and now - self._last_build >= self._rebuild_every() - slack:
            self._dirty = True
        if self._dirty:
            self._start_build()
        elif self.config.clock_tick and now - self._last_show >= slack:
            self._publish(rebuilt=False)

    def _request_view(self) -> None:
        """Build the view from the newest facts: now, or when the build in flight ends (its
        facts are older: the newest win), or when the builder has rested."""
        self._dirty = True
        self._start_build()

    def _start_build(self) -> None:
        if not self._dirty or self._building or not self.is_running:
            return  # nothing new, or ViewBuilt starts it
        resting = self._next_build - time.monotonic()
        if resting > 0 and not self._urgent:
            if self._build_timer is None:  # one is enough: it builds the newest facts
                self._build_timer = self.set_timer(resting, self._rested)
            return
        self._dirty = False
        self._urgent = False
        self._building = True
        self._build_view(self.clock(), any(isinstance(s, TriageScreen) for s in self.screen_stack))

    def _rested(self) -> None:
        self._build_timer = None
        self._start_build()

    def _publish(self, rebuilt: bool) -> None:
        if self.view is None:
            return
        self._last_show = time.monotonic()
        self.last_update = ViewUpdate(self.view, self.clock(), self.tz, rebuilt, tuple(self.runs))
        self.view_changed.publish(self.last_update)

    def _rebuild_every(self) -> float:
        """How often the view is rebuilt with nothing new, for the advice's wording to age."""
        # A back-off's countdown needs none: the Now panel counts it down from the view's
        # time at each clock tick (rebuilding every second for it took a few % of a core
        # for a minute and a half after each failure, more on a large history).
        now = self.view.now if self.view is not None else None
        every = REBUILD_EPISODE_S if now is not None and now.wizard_available else REBUILD_IDLE_S
        return max(every, self._build_seconds / AGING_SHARE)

    async def settled(self) -> DashboardView | None:
        """The view of the facts as they are now, once built (tests, snapshots)."""
        self._request_view()
        while self._dirty or self._building:
            await asyncio.sleep(0.01)
            if self._dirty and not self._building:
                self._next_build = 0.0
                self._start_build()
        return self.view

    # --- telling the user when they look elsewhere ------------------------------------

    def _alert(self, text: str, title: str, severity: str = "warning") -> None:
        if self.bell_on:
            self.bell()
        if self.notify_on:
            self.notify(text, title=title, severity=severity, timeout=8, markup=False)

    def _announce_episode(self) -> None:
        """Bell and notify when a new failure episode starts (not for the one found at start)."""
        if not self.loading.finished:
            return
        episode = self.view.episode if self.view else None
        current = episode.id if episode is not None and episode.ongoing else None
        if not self._episode_baseline:
            self._episode_baseline = True
        elif current and current != self._known_episode:
            from codexwatch.ui import fmt

            last = episode.failures[-1]
            self._alert(
                f"{fmt.class_label(last.error_class)} on {last.model or '?'}: {fmt.one_line(last.message, 120)}",
                "Codex turn failed",
                "error",
            )
        self._known_episode = current

    def _announce_incidents(self, snapshot: StatusSnapshot) -> None:
        if not snapshot.ok:
            return
        ongoing = {i.id: i for i in snapshot.codex_incidents_ongoing}
        if self._known_incidents is None:
            self._known_incidents = set(ongoing)
            return
        for iid in ongoing.keys() - self._known_incidents:
            self._alert(ongoing[iid].name, "Codex incident posted", "warning")
        for iid in self._known_incidents - ongoing.keys():
            name = next((i.name for i in snapshot.incidents if i.id == iid), "the Codex incident")
            self._alert(name, "Codex incident resolved", "information")
        self._known_incidents = set(ongoing)

    # --- actions ----------------------------------------------------------------------

    def action_help(self) -> None:
        from codexwatch.ui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_refresh_status(self) -> None:
        if not self.status_enabled:
            self.notify("The status page is switched off.", severity="warning")
            return
        if self._status_wake is not None:
            self._status_wake.set()
        self.notify("Asking the status page now…", timeout=2)

    def suggested_command(self) -> str | None:
        advice = self.view.advice if self.view else None
        commands = list(getattr(advice, "commands", None) or [])
        return commands[0] if commands else None

    def action_copy_command(self) -> None:
        command = self.suggested_command()
        if not command:
            self.notify("Nothing to copy: the advice suggests no Codex command right now.", timeout=3)
            return
        self.copy_to_clipboard(command)
        self.notify(f"Copied: {command}", title="Clipboard (OSC 52)", timeout=3, markup=False)

    def action_wizard(self) -> None:
        from codexwatch.ui.screens.wizard import WizardScreen

        if self.view is None or self.view.episode is None:
            self.notify(f"No failure episode to triage: {self._why_no_episode()}.", timeout=4)
            return
        if not isinstance(self.screen, WizardScreen):
            self.push_screen(WizardScreen())
            self._request_view()  # with the wizard's steps

    def action_report(self) -> None:
        from codexwatch.ui.screens.report import ReportScreen

        # An episode that has ended can still be reported: the latest one is offered.
        if self.view is None or self.view.reportable is None:
            self.notify(f"No failure episode to report: {self._why_no_episode()}.", timeout=4)
            return
        self.push_screen(ReportScreen())
        self._request_view()  # with the report

    def _why_no_episode(self) -> str:
        if self.view is None or not self.loading.finished:
            return "the history is still being read"
        if self.view.failures:
            return "the latest turns succeeded"
        return "nothing has failed in the loaded history"

    def action_toggle_bell(self) -> None:
        self.bell_on = not self.bell_on
        self.notify(f"Bell {'on' if self.bell_on else 'off'}", timeout=2)

    def action_toggle_notify(self) -> None:
        self.notify_on = not self.notify_on
        self.notify(f"Notifications {'on' if self.notify_on else 'off'}", timeout=2)

    def action_tab(self, tab: str) -> None:
        from codexwatch.ui.screens.dashboard import DashboardScreen

        while not isinstance(self.screen, DashboardScreen) and len(self.screen_stack) > 1:
            self.pop_screen()
        if isinstance(self.screen, DashboardScreen):
            self.screen.action_tab(tab)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("Triage wizard", "Walk the triage steps for the current failure episode", self.action_wizard)
        yield SystemCommand("Copy the suggested Codex command", "Copy /model, /new or codex -m … to the clipboard", self.action_copy_command)
        yield SystemCommand("Report", "Preview, copy or save a redacted report of the episode", self.action_report)
        yield SystemCommand("Show recent failures", "Failures tab", lambda: self.action_tab("failures"))
        yield SystemCommand("Show models", "Failure rate per model, effort and Fast", lambda: self.action_tab("models"))
        yield SystemCommand("Show when", "Hour-of-week heatmap of failures and turns", lambda: self.action_tab("when"))
        yield SystemCommand("Show status page", "Codex components and incidents", lambda: self.action_tab("status"))
        yield SystemCommand("Show runs", "codexwatch run supervisors: tasks, attempts, back-off", lambda: self.action_tab("runs"))
        yield SystemCommand("Refresh status now", "Ask the status page at once", self.action_refresh_status)
        yield SystemCommand(f"Bell: turn {'off' if self.bell_on else 'on'}", "Terminal bell on new failures and incidents", self.action_toggle_bell)
        yield SystemCommand(
            f"Notifications: turn {'off' if self.notify_on else 'on'}", "Pop-up notifications on new failures and incidents", self.action_toggle_notify
        )
        yield SystemCommand("Help", "Key bindings and what the symbols mean", self.action_help)
        yield from super().get_system_commands(screen)
