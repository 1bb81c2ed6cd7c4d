"""Models tab: per model (and effort × Fast) turns, failures and failure rate for 1 h / 24 h / 7 d,
a bar of the 7-day rate, a sparkline of failures over the week, and the work lost to failures."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from codexwatch.ui import fmt
from codexwatch.ui.view import ModelRow

WINDOWS = ("1h", "24h", "7d")


class ModelsTable(DataTable):
    DEFAULT_CSS = """
    ModelsTable { height: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._rows: tuple[ModelRow, ...] | None = None
        self._add_columns()

    def _add_columns(self) -> None:
        self.add_column("model · effort · Fast", key="label")
        for w in WINDOWS:
            self.add_column(f"{w} failed", key=f"n{w}")
        self.add_column("7d rate", key="bar")
        self.add_column("failures, 7 days", key="spark")
        self.add_column("lost, 7 d", key="lost")

    def show(self, rows: tuple[ModelRow, ...]) -> None:
        if rows == self._rows:
            return
        self._rows = rows
        self.clear()
        for i, row in enumerate(rows):
            label = Text(("└ " if row.indent else "") + fmt.one_line(row.label, 40), style="bold" if row.indent == 0 else "")
            cells: list = [label]
            for w in WINDOWS:
                n, f = row.turns.get(w, 0), row.failures.get(w, 0)
                rate = row.rates.get(w)
                cells.append(Text(f"{f}/{n} {fmt.percent(rate) if n else ''}".rstrip(), justify="right"))
            cells.append(Text(fmt.bar(row.rates.get("7d"), 8)))  # the number is in "7d failed"
            cells.append(Text(row.spark))
            minutes = f"{row.lost_minutes:.0f}" if row.lost_minutes >= 0.5 else "<1"
            lost = f"{minutes} min {fmt.tokens(row.lost_tokens)} tok" if row.lost_minutes or row.lost_tokens else "—"
            cells.append(Text(lost, justify="right"))
            self.add_row(*cells, key=f"{i}:{row.label}")
