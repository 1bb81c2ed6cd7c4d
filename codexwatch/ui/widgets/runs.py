"""Runs tab: the `codexwatch run` supervisors recorded in codexwatch's state directory, each
task's attempt, model, state and countdown; and the header's count of runs backing off.

The rows are computed here from the run states a worker read (`sources.runs.read_runs`) and
the clock; the table only renders them. Text from the state files is shown literally.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from codexwatch.ui import fmt
from codexwatch.ui.widgets import clear_table, show_content

RECENT_S = 24 * 3600  # ended runs shown for a day
_ENDED = {"ok": "ok", "gave_up": "gave up", "failed": "failed", "aborted": "aborted"}
_STYLE = {"ok": "green", "gave up": "bold red", "failed": "bold red", "aborted": "yellow",
          "ended": "dim", "backing off": "bold yellow"}
EMPTY = ("No `codexwatch run` recorded in the last day. `codexwatch run -- codex exec PROMPT` "
         "retries Codex through capacity errors and shows here while it works.")


@dataclass(frozen=True)
class RunRow:
    key: str
    run: str  # "05:01 pid 4242 ~/src/app" on a run's first row, "" on its other tasks
    task: str
    attempt: str
    model: str
    state: str  # running | backing off | retrying | queued | ok | gave up | failed | aborted | ended
    countdown: str  # backing off: "1:05 (until HH:MM:SS)"


def _backing_off(task: dict, now: float) -> bool:
    until = task.get("until")
    return task.get("state") == "backing_off" and isinstance(until, (int, float)) and until > now


def backing_off_count(runs: list[dict], now: float) -> int:
    """Live runs with a task waiting to retry."""
    return sum(1 for r in runs if r.get("live") and any(
        _backing_off(t, now) for t in r.get("tasks") or [] if isinstance(t, dict)))


def _state(run: dict, task: dict, now: float, tz: tzinfo | None) -> tuple[str, str]:
    state = task.get("state")
    if state in _ENDED:
        return _ENDED[state], ""
    if not run.get("live"):
        return "ended", ""  # killed, or its heartbeat stopped: not running any more
    if _backing_off(task, now):
        # The countdown first: a narrow pane (80 columns) cuts the table's last cells
        until = task["until"]
        return "backing off", f"{fmt.countdown(until - now)} (until {fmt.local_time(until, tz, now=now)})"
    if state == "backing_off":
        return "retrying", ""
    return ("queued" if state == "queued" else "running"), ""


def run_rows(runs: list[dict], now: float, tz: tzinfo | None) -> list[RunRow]:
    """Live runs first, then those that ended within a day, newest first."""
    rows: list[RunRow] = []
    shown = [r for r in runs if r.get("live") or now - (r.get("heartbeat_at") or 0) < RECENT_S]
    shown.sort(key=lambda r: (not r.get("live"), -(r.get("started_at") or 0)))
    for run in shown:
        started = run.get("started_at")
        label = " ".join(part for part in (
            fmt.local_time(started, tz, now=now) if isinstance(started, (int, float)) else "",
            f"pid {run.get('pid')}", fmt.one_line(str(run.get("cwd") or ""), 40)) if part)
        for i, task in enumerate(t for t in run.get("tasks") or [] if isinstance(t, dict)):
            state, countdown = _state(run, task, now, tz)
            rows.append(RunRow(
                key=f"{run.get('pid')}:{started}:{task.get('task')}",
                run=label if i == 0 else "",
                task=str(task.get("task", "?")),
                attempt=str(task.get("attempt") or "–"),
                model=fmt.one_line(str(task.get("model") or "(configured)"), 28),
                state=state, countdown=countdown))
    return rows


class RunsTable(Vertical):
    """Renders run rows; knows nothing else."""

    DEFAULT_CSS = """
    RunsTable { height: 1fr; }
    RunsTable > #runs-empty { color: $text-muted; padding: 1 1; }
    RunsTable > DataTable { height: 1fr; }
    """

    COLUMNS = ("run", "task", "attempt", "model", "state", "countdown")

    def compose(self) -> ComposeResult:
        yield Static(EMPTY, id="runs-empty", markup=False)
        yield DataTable(id="runs-data", cursor_type="row", zebra_stripes=True)

    # The dashboard's arrows and page keys (a panel's scroll actions) move the table's cursor.
    def action_scroll_up(self) -> None:
        self.query_one(DataTable).action_cursor_up()

    def action_scroll_down(self) -> None:
        self.query_one(DataTable).action_cursor_down()

    def action_page_up(self) -> None:
        self.query_one(DataTable).action_page_up()

    def action_page_down(self) -> None:
        self.query_one(DataTable).action_page_down()

    def action_scroll_home(self) -> None:
        self.query_one(DataTable).action_scroll_top()

    def action_scroll_end(self) -> None:
        self.query_one(DataTable).action_scroll_bottom()

    def on_mount(self) -> None:
        if getattr(self, "_shown", None) is None:
            self.show((), 0.0, None)

    def _add_columns(self) -> None:
        table = self.query_one(DataTable)
        for name in self.COLUMNS:
            table.add_column(name, key=name)

    def show(self, runs, now: float, tz: tzinfo | None) -> None:
        """`runs`: the recorded run states (dicts), shown at `now`."""
        rows = run_rows(list(runs), now, tz)
        if rows == getattr(self, "_shown", None):
            return  # the same rows: no repaint
        self._shown = rows
        table = self.query_one(DataTable)
        if not table.columns:
            self._add_columns()
        empty = self.query_one("#runs-empty", Static)
        empty.display = not rows
        table.display = bool(rows)
        show_content(empty, EMPTY)
        clear_table(table, False, self._add_columns)
        for row in rows:
            table.add_row(Text(row.run), Text(row.task), Text(row.attempt), Text(row.model),
                          Text(row.state, style=_STYLE.get(row.state, "")), Text(row.countdown), key=row.key)
