"""The dashboard: header, Now panel, and the Failures / Models / When / Status tabs."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, ProgressBar, Static, TabbedContent, TabPane

from codexwatch.core.incident_link import incident_for_turn
from codexwatch.ui.screens import ViewScreen
from codexwatch.ui.view import Loading, ViewUpdate
from codexwatch.ui.widgets import show_content
from codexwatch.ui.widgets.decision import COMPACT, FULL, SHORT, DecisionPanel, last_failure_content
from codexwatch.ui.widgets.failures import FailuresTable, TurnDetail, turn_detail, turn_key
from codexwatch.ui.widgets.header import VerdictBar
from codexwatch.ui.widgets.heatmap import Heatmap
from codexwatch.ui.widgets.models import ModelsTable
from codexwatch.ui.widgets.runs import RunsTable, backing_off_count
from codexwatch.ui.widgets.status import StatusPanel
from codexwatch.ui.widgets.usage import UsagePanel

COMPACT_WIDTH = 80
COMPACT_HEIGHT = 24
SHORT_HEIGHT = 34  # below it the advice is shortened: the failures and details keep rows
TINY_HEIGHT = 13
# A plan window's line with its full bar and "resets Thu 00:00 (in 31 h 25 min)" is 81
# columns: below this the bar is half as long, so the line does not wrap
USAGE_WIDTH = 90


class LoadingLine(Vertical):
    """Progress while the history loads; hidden once it is read."""

    DEFAULT_CSS = """
    LoadingLine { height: 1; layout: horizontal; }
    LoadingLine > Static { width: auto; padding: 0 1; color: $text-muted; }
    LoadingLine > ProgressBar { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Reading Codex history…", id="loading-label", markup=False)
        yield ProgressBar(total=None, show_eta=False, id="loading-bar")

    def show(self, loading: Loading) -> None:
        bar = self.query_one(ProgressBar)
        if loading.total:
            bar.update(total=loading.total, progress=loading.done)
        elif bar.total is not None:
            bar.update(total=None)  # read again (after the first-run screen): indeterminate
        show_content(
            self.query_one("#loading-label", Static),
            f"Reading Codex history: {loading.done}/{loading.total} files" if loading.total else "Reading Codex history…"
        )

    def finish(self) -> None:
        """Stop the bar: an indeterminate one animates 15 times a second, hidden or not."""
        bar = self.query_one(ProgressBar)
        if bar.percentage is None:
            bar.update(total=1, progress=1)


class DashboardScreen(ViewScreen):
    BINDINGS = [
        Binding("1", "tab('failures')", "Failures", key_display="1"),
        Binding("2", "tab('models')", "Models", key_display="2"),
        Binding("3", "tab('when')", "When", key_display="3"),
        Binding("4", "tab('status')", "Status", key_display="4"),
        # Not in the footer: a 60-column pane's footer keeps `w Triage` (help lists it).
        Binding("5", "tab('runs')", "Runs", key_display="5", show=False),
        # The arrows move through what the tab shows, whatever has the focus.
        *(Binding(key, f"move('{key}')", show=False) for key in ("up", "down", "pageup", "pagedown", "home", "end")),
    ]
    # key -> (a table's action, a scrolled panel's action)
    MOVES = {"up": ("cursor_up", "scroll_up"), "down": ("cursor_down", "scroll_down"),
             "pageup": ("page_up", "page_up"), "pagedown": ("page_down", "page_down"),
             "home": ("scroll_top", "scroll_home"), "end": ("scroll_bottom", "scroll_end")}
    TAB_BODY = {"failures": FailuresTable, "models": ModelsTable, "when": Heatmap, "status": StatusPanel,
                "runs": RunsTable}

    def __init__(self) -> None:
        super().__init__(id="dashboard")
        self._update: ViewUpdate | None = None

    def compose(self) -> ComposeResult:
        yield VerdictBar(id="header")
        yield LoadingLine(id="loading")
        yield DecisionPanel(id="now")
        yield Static("", markup=False, id="last-failure")
        with TabbedContent(initial="failures", id="tabs"):
            with TabPane("Failures", id="failures"):
                yield FailuresTable(id="failures-table")
                yield TurnDetail(id="turn-detail")
            with TabPane("Models", id="models"):
                yield UsagePanel(id="usage")
                yield ModelsTable(id="models-table")
            with TabPane("When", id="when"):
                yield Heatmap(id="heatmap")
            with TabPane("Status", id="status"):
                yield StatusPanel(id="status-panel")
            with TabPane("Runs", id="runs"):
                yield RunsTable(id="runs-table")
        yield Footer()

    # --- layout -----------------------------------------------------------------

    @property
    def compact(self) -> bool:
        return self.size.width < COMPACT_WIDTH or self.size.height < COMPACT_HEIGHT

    @property
    def density(self) -> str:
        """How much of the advice the Now panel shows, for the pane's size."""
        return COMPACT if self.compact else SHORT if self.size.height < SHORT_HEIGHT else FULL

    def on_resize(self) -> None:
        self._apply_layout()
        if self._update is not None:
            self.show(self._update)
            self._show_tab(clock_only=False, every_tab=True)  # each laid out for the new size

    def _apply_layout(self) -> None:
        self.set_class(self.compact, "-compact")
        self.set_class(self.size.height < TINY_HEIGHT, "-tiny")

    def on_mount(self) -> None:
        self._apply_layout()
        self.query_one(DecisionPanel).show(None, 0, None, self.density)
        self.query_one(TurnDetail).show(turn_detail(None, None, 0, None))
        # The failures take the keys first. The focus is not moved on a tab switch (that
        # re-made the footer's keys: 70 ms of a switch); the arrows are the screen's too.
        self.query_one(FailuresTable).focus(scroll_visible=False)

    # --- data -------------------------------------------------------------------

    def show(self, update: ViewUpdate) -> None:
        """Render what the App computed. Nothing here reads files or the network."""
        self.show_clock(update)
        loading, header = self.query_one(LoadingLine), update.view.header
        loading.display = not header.loading.finished
        if not header.loading.finished:
            loading.show(header.loading)
        else:
            loading.finish()
        self._show_tab(clock_only=False)

    def show_clock(self, update: ViewUpdate) -> None:
        """What moves with the clock (ages, countdowns): all a second's tick re-shows when
        nothing else changed, and the first part of `show`."""
        self._update = update
        view, now, tz = update.view, update.now, update.tz
        # `codexwatch run` supervisors backing off: in the header whatever the tab
        self.query_one(VerdictBar).show_runs(backing_off_count(update.runs, now))
        self.query_one(VerdictBar).show(view.header)
        self.query_one(DecisionPanel).show(view.now, now, tz, self.density)
        show_content(self.query_one("#last-failure", Static), last_failure_content(view.now, now, tz))
        self._show_tab(clock_only=True)

    def _show_tab(self, clock_only: bool, every_tab: bool = False) -> None:
        """The tab in view (`every_tab`: all of them): the others are shown when they come
        into view (an update to a hidden one would still lay the screen out again, several
        times a second while Codex fails often)."""
        if self._update is None:
            return
        view, now, tz = self._update.view, self._update.now, self._update.tz
        active = self.query_one(TabbedContent).active
        tabs = ("failures", "models", "when", "status", "runs") if every_tab else (active,)
        if "status" in tabs:
            self.query_one(StatusPanel).show(view.snapshot, now, tz, view.status_enabled)
        if "runs" in tabs:  # their countdowns move with the clock
            self.query_one(RunsTable).show(self._update.runs, now, tz)
        if "models" in tabs:  # the reset countdowns move with the clock
            self.query_one(UsagePanel).show(view.usage, now, tz, narrow=self.size.width < USAGE_WIDTH)
        if clock_only:
            return
        if "failures" in tabs:
            self.query_one(FailuresTable).show(view.failures, tz, now, self.compact)
            self._show_detail()
        if "models" in tabs:
            self.query_one(ModelsTable).show(view.models, narrow=self.size.width < COMPACT_WIDTH)
        if "when" in tabs:
            self.query_one(Heatmap).show(view.heatmap, view.context)

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        self._show_tab(clock_only=False)

    def _show_detail(self) -> None:
        if self._update is None:
            return
        view, now, tz = self._update.view, self._update.now, self._update.tz
        key = self.query_one(FailuresTable).selected_key
        turn = next((t for t in reversed(view.failures) if turn_key(t) == key), None)  # the newest first
        incident, note = incident_for_turn(turn, view.snapshot) if turn is not None else (None, None)
        detail = self.query_one(TurnDetail)
        width = detail.size.width - detail.styles.gutter.width  # its padding left and right
        detail.show(turn_detail(turn, tz, now, incident, note, width))

    @on(FailuresTable.Chosen)
    def _chosen(self, event: FailuresTable.Chosen) -> None:
        self._show_detail()

    def action_move(self, key: str) -> None:
        body = self.query_one(self.TAB_BODY[self.query_one(TabbedContent).active])
        table_action, panel_action = self.MOVES[key]
        getattr(body, f"action_{table_action if isinstance(body, DataTable) else panel_action}")()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
