"""When tab: the failure rate by context fill and the user's threshold (when the thread is full),
then an hour-of-week heatmap of failures and of turns, the quietest hours marked.

Density is drawn with shade characters, so it reads without colour too."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from codexwatch.core.times import WEEKDAYS
from codexwatch.ui.view import ContextView, HeatmapView
from codexwatch.ui.widgets import show_content
from codexwatch.ui.widgets.usage import ContextCurve

SHADES = (" ·", "░░", "▒▒", "▓▓", "██")


def _shade(value: int, top: int) -> str:
    if value <= 0 or top <= 0:
        return SHADES[0]
    level = 1 + min(3, int((value / top) * 3.999))
    return SHADES[level]


def grid_content(title: str, grid: tuple[tuple[int, ...], ...], style: str, quiet=frozenset()) -> list:
    top = max((max(row) for row in grid), default=0)
    parts: list = [(title + "\n", "bold"), ("     ", "")]
    for h in range(24):
        parts.append((f"{h:<2d}" if h % 3 == 0 else "  ", "$text-muted"))
    parts.append("\n")
    for d, row in enumerate(grid):
        parts.append((f"{WEEKDAYS[d]}  ", "$text-muted"))
        for h, v in enumerate(row):
            if (d, h) in quiet:
                parts.append(("◇◇" if v == 0 else "◇" + _shade(v, top)[1], "bold $success"))
            else:
                parts.append((_shade(v, top), style if v else "$text-muted"))
        parts.append((f"  {sum(row)}\n", "$text-muted"))
    parts.append((f"     max {top} per hour\n", "$text-muted"))
    return parts


def heatmap_content(view: HeatmapView | None) -> Content:
    if view is None:
        return Content.assemble(("No turns in the loaded history yet.", "$text-muted"))
    parts: list = []
    parts += grid_content(f"Failures by hour of week ({view.tz_name})", view.failures, "$error")
    parts.append("\n")
    parts += grid_content("Turns by hour of week", view.turns, "$primary", view.quiet)
    parts.append("\n")
    parts.append(("Legend: ", "bold"))
    parts.append(" · none  ░ few  ▒ some  ▓ many  █ most   ")
    parts.append(("◇", "bold $success"))
    parts.append(" quietest hours you worked in (fewest failures per turn): good for long runs")
    return Content.assemble(*parts)


class Heatmap(VerticalScroll):
    DEFAULT_CSS = """
    Heatmap { padding: 0 1; }
    """

    def compose(self):
        yield ContextCurve(id="context-curve")
        yield Static("", markup=False, id="heatmap-body")

    def show(self, view: HeatmapView | None, context: ContextView | None = None) -> None:
        show_content(self.query_one("#heatmap-body", Static), heatmap_content(view))
        self.query_one(ContextCurve).show(context)
