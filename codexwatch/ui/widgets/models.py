"""Models tab: per model (and effort × Fast) turns, failures and failure rate for 1 h / 24 h / 7 d,
a bar of the 7-day rate, a sparkline of failures over the week, and the work lost to failures."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from codexwatch.ui import fmt
from codexwatch.ui.view import ModelRow
from codexwatch.ui.widgets import clear_table

WINDOWS = ("1h", "24h", "7d")


class ModelsTable(DataTable):
    """Wide: every window, the bar, the sparkline and the lost work. Narrow (a tmux pane of
    60 columns): the model, 24 h and 7 d, and the bar, so nothing runs off the side."""

    DEFAULT_CSS = """
    ModelsTable { height: 1fr; }
    """
    COLUMNS = ("label", "n1h", "n24h", "n7d", "bar", "spark", "lost")
    NARROW_COLUMNS = ("label", "n24h", "n7d", "bar")
    HEADERS = {
        "label": "model · effort · Fast", "n1h": "1h failed", "n24h": "24h failed",
        "n7d": "7d failed", "bar": "7d rate", "spark": "failures, 7 days", "lost": "lost, 7 d",
    }
    NARROW_HEADERS = {"label": "model", "n24h": "24h", "n7d": "7d", "bar": "rate"}

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._rows: tuple[ModelRow, ...] | None = None
        self._narrow = False
        self._add_columns()

    def _add_columns(self) -> None:
        headers = self.NARROW_HEADERS if self._narrow else self.HEADERS
        for key in self.NARROW_COLUMNS if self._narrow else self.COLUMNS:
            self.add_column(headers[key], key=key)

    def show(self, rows: tuple[ModelRow, ...], narrow: bool = False) -> None:
        if rows == self._rows and narrow == self._narrow:
            return
        self._rows = rows
        relayout, self._narrow = narrow != self._narrow, narrow
        clear_table(self, relayout, self._add_columns)
        columns = self.NARROW_COLUMNS if narrow else self.COLUMNS
        for i, row in enumerate(rows):
            cells = self._cells(row, narrow)
            self.add_row(*(cells[key] for key in columns), key=f"{i}:{row.label}")

    @staticmethod
    def _cells(row: ModelRow, narrow: bool) -> dict[str, Text]:
        width = 25 if narrow else 40
        cells = {"label": Text(("└ " if row.indent else "") + fmt.one_line(row.label, width),
                               style="bold" if row.indent == 0 else "")}
        for w in WINDOWS:
            n, f = row.turns.get(w, 0), row.failures.get(w, 0)
            rate = row.rates.get(w)
            cells[f"n{w}"] = Text(f"{f}/{n} {fmt.percent(rate) if n else ''}".rstrip(), justify="right")
        cells["bar"] = Text(fmt.bar(row.rates.get("7d"), 6 if narrow else 8))  # the number is in "7d"
        cells["spark"] = Text(row.spark)
        minutes = f"{row.lost_minutes:.0f}" if row.lost_minutes >= 0.5 else "<1"
        lost = f"{minutes} min {fmt.tokens(row.lost_tokens)} tok" if row.lost_minutes or row.lost_tokens else "—"
        cells["lost"] = Text(lost, justify="right")
        return cells
