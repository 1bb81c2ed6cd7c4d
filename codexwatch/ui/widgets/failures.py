"""Recent failures: a table of failed turns, and the details of the selected one."""

from __future__ import annotations

from datetime import tzinfo
from typing import Callable

from rich.text import Text
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Static

from codexwatch.core.models import Incident, Turn
from codexwatch.ui import fmt
from codexwatch.ui.widgets import clear_table, hanging, show_content

MAX_ROWS = 500


def turn_key(turn: Turn) -> str:
    return f"{turn.session_id}:{turn.turn_id}"


class _Placed(Text):
    """A row's first cell, numbered in the order rows were added: the table sorts by it."""

    def __init__(self, text: str, placed: int) -> None:
        super().__init__(text)
        self.placed = placed


class FailuresTable(DataTable):
    """Failed turns, newest first. Cells are Text objects: log text is never markup."""

    class Chosen(Message):
        def __init__(self, key: str | None) -> None:
            super().__init__()
            self.key = key

    DEFAULT_CSS = """
    /* Its header and three failures at least, whatever the space: the details below it
       (their first rows come first) are what a short pane cuts (80x24 left it no row). */
    FailuresTable { height: 1fr; min-height: 5; }
    """

    COLUMNS = ("time", "session", "model", "class", "shape", "ran", "message")
    # A narrow pane keeps whole words in the columns that decide what to do (when, which
    # model, what kind, whether work was lost); the latest message is on the line above
    # the tabs, and the session, duration and messages come back in a wider pane.
    COMPACT_COLUMNS = ("time", "model", "class", "shape")

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._keys: list[str] = []
        self._tz: tzinfo | None = None
        self._compact = False
        self._rows_added = 0
        self._add_columns()

    def _add_columns(self) -> None:
        for name in self.COMPACT_COLUMNS if self._compact else self.COLUMNS:
            self.add_column(name, key=name)

    def show(self, failures: list[Turn] | tuple[Turn, ...], tz: tzinfo | None, now: float, compact: bool = False) -> None:
        """Newest first. Rows change only when the set of failures (or the layout) changed:
        failures that arrived since are added on top, the oldest beyond MAX_ROWS leave, and
        every other row stays as it is (laying out a row measures each cell: a table of
        MAX_ROWS redrawn on every arrival kept the UI loop busy while Codex failed often).

        The selection stays on the failure it was on; on the newest one it moves to the
        new newest, so a failure that just happened is in view."""
        newest = list(failures[-MAX_ROWS:])[::-1]
        keys = [turn_key(t) for t in newest]
        if keys == self._keys and tz is self._tz and compact == self._compact:
            return
        row = self.cursor_row
        selected = self._keys[row] if self._keys and 0 < row < len(self._keys) else None
        arrived = self._arrived(keys) if tz is self._tz and compact == self._compact else None
        if arrived is None:
            self._tz = tz
            relayout, self._compact = compact != self._compact, compact
            clear_table(self, relayout, self._add_columns)
            self._rows_added = 0
            arrived = len(keys)
        else:
            for key in self._keys[len(keys) - arrived:]:
                self.remove_row(key)
        for i, (turn, key) in enumerate(zip(newest[:arrived], keys[:arrived])):
            self.add_row(*self._cells(turn, tz, now, compact, self._rows_added + arrived - i), key=key)
        self._rows_added += arrived
        if len(keys) > arrived > 0:  # the new rows went below the old: put them on top
            self.sort(self._columns()[0], key=lambda cell: -cell.placed)
        self._keys = keys
        if selected in keys:
            self.move_cursor(row=keys.index(selected), animate=False)
        elif keys:
            self.move_cursor(row=0, animate=False)
            self.scroll_to(y=0, animate=False)

    def _arrived(self, keys: list[str]) -> int | None:
        """How many rows of `keys` are new on top of the rows shown (the rest of which
        follow in order, the oldest perhaps gone); None when they are not."""
        if not self._keys:
            return None
        try:
            arrived = keys.index(self._keys[0])
        except ValueError:
            return None
        kept = len(keys) - arrived
        return arrived if keys[arrived:] == self._keys[:kept] else None

    def _columns(self) -> tuple[str, ...]:
        return self.COMPACT_COLUMNS if self._compact else self.COLUMNS

    @classmethod
    def _cells(cls, turn: Turn, tz: tzinfo | None, now: float, compact: bool = False, placed: int = 0) -> list[Text]:
        cells = {
            "time": _Placed(fmt.local_time(turn.at, tz, now=now), placed),
            "session": Text(fmt.short_id(turn.session_id)),
            "model": Text(fmt.one_line(turn.model or "?", 24)),
            "class": Text(fmt.class_cell(turn.error_class)),
            "shape": Text(turn.shape or "—"),
            "ran": Text(fmt.duration(turn.duration_ms), justify="right"),
            "message": Text(fmt.one_line(turn.message, 120), no_wrap=True, overflow="ellipsis"),
        }
        return [cells[name] for name in (cls.COMPACT_COLUMNS if compact else cls.COLUMNS)]

    @property
    def selected_key(self) -> str | None:
        if not self._keys or not (0 <= self.cursor_row < len(self._keys)):
            return None
        return self._keys[self.cursor_row]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.post_message(self.Chosen(event.row_key.value if event.row_key else None))


_LABEL = 12  # the width of the detail's labels


def turn_detail(turn: Turn | None, tz: tzinfo | None, now: float, incident: Incident | None,
                incident_note: str | None = None, width: int = 0) -> Content:
    """The selected failure's details. `width`: the pane's, for a long path to be broken
    where it fits (0: unknown)."""
    if turn is None:
        return Content.assemble(("Select a failure to see its details.", "$text-muted"))
    rows: list = []

    def row(label: str, value: str | None, style: str = "") -> None:
        rows.extend(hanging((f"{label:<{_LABEL}}", "$text-muted"), fmt.literal(value) if value else "—", width, style))

    row("failed", f"{fmt.local_time(turn.at, tz, now=now)} after {fmt.duration(turn.duration_ms)}  ·  {fmt.class_cell(turn.error_class)}  ·  {turn.shape or 'shape unknown'}", "bold")
    row("message", turn.message)
    # Whose side it is comes next: a short pane shows the first rows only.
    if incident is not None:
        row("incident", f"{incident.name} ({incident.status})", "bold $warning")
    else:
        row("incident", incident_note or "no status-page incident overlapped", "$text-muted")
    info = turn.codex_error_info
    if info is not None or turn.http_status:
        text = (info if isinstance(info, str) else _compact_json(info)) if info is not None else ""
        row("error info", f"{text}  ·  HTTP {turn.http_status}" if turn.http_status else text)
    row("model", " · ".join(x for x in (turn.model, turn.effort, _fast(turn.fast), turn.provider and f"provider {turn.provider}") if x))
    row("session", f"{turn.session_id}  ·  turn {turn.turn_index + 1}  ·  Codex {turn.cli_version or '?'} {turn.originator or ''}")
    work = f"  ·  {turn.tool_calls} tool call(s) before it failed: check git status there" if turn.tool_calls else ""
    row("cwd", (turn.cwd or "?") + work)
    # A path longer than the pane is shown whole, broken after slashes (row() puts each
    # line under the value)
    row("file", "\n".join(fmt.fold_path(turn.file, width - _LABEL)) if turn.file else None)
    return Content.assemble(*rows[:-1])  # no line after the last row: the pane ends there


def _fast(fast: bool | None) -> str | None:
    return {True: "Fast on", False: "Fast off"}.get(fast) if fast is not None else None


def _compact_json(value) -> str:
    try:
        import orjson

        return orjson.dumps(value).decode()
    except Exception:  # noqa: BLE001 - shown as text either way
        return repr(value)


class TurnDetail(Static):
    DEFAULT_CSS = """
    TurnDetail { height: auto; max-height: 11; border-top: solid $panel-lighten-2; padding: 0 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)

    def show(self, content: Content) -> None:
        show_content(self, content)


IncidentLookup = Callable[[Turn], "tuple[Incident | None, str | None]"]
