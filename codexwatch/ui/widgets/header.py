"""The one-line header: verdict, status page and its age, running sessions, parser health."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from codexwatch.ui import fmt
from codexwatch.ui.view import HeaderView
from codexwatch.ui.widgets import show_content

VERDICT_STYLE = {
    "ok": "bold $success",
    "degraded": "bold $warning",
    "failing": "bold $error",
    "loading": "bold $text-muted",
    "unknown": "bold $warning",
}
STATUS_STYLE = {
    "ok": "$success",
    "warn": "$warning",
    "bad": "bold $error",
    "unknown": "$warning",
    "off": "$text-muted",
}
STATUS_GLYPH = {"ok": "●", "warn": "▲", "bad": "✖", "unknown": "?", "off": "○"}


def header_content(view: HeaderView, width: int) -> Content:
    """The header, dropping the least important parts until it fits `width`."""
    for level in range(6):
        content = _header(view, width, level)
        if content.cell_length <= width:
            return content
    return content


def _header(view: HeaderView, width: int, level: int) -> Content:
    parts: list = []
    glyph = fmt.VERDICT_GLYPHS.get(view.verdict, "?")
    parts.append((f" {glyph} {view.verdict.upper()} ", VERDICT_STYLE.get(view.verdict, "bold")))
    narrow = width < 90 or level >= 2
    if not narrow and level == 0:
        parts.append((fmt.one_line(view.verdict_reason, 60), "$text-muted"))
        parts.append("  │ ")
    else:
        parts.append("│ ")
    st = view.status_level
    status_text = view.status_text if level < 3 else fmt.one_line(view.status_text, 20)
    parts.append((f"{STATUS_GLYPH.get(st, '?')} {status_text}", STATUS_STYLE.get(st, "")))
    if view.status_age:
        parts.append((f" ({view.status_age})", "$text-muted"))
    if level < 5:
        parts.append(" │ ")
        parts.append(f"{view.running} running" if not narrow else f"▶{view.running}")
    if level >= 4:
        pass
    elif view.parser_share is None:
        parts.append(" │ ")
        parts.append(("parser —", "$text-muted"))
    else:
        parts.append(" │ ")
        share = view.parser_share
        style = "$success" if share >= 0.99 else ("$warning" if share >= 0.9 else "bold $error")
        label = "parser" if not narrow else "p"
        parts.append((f"{label} {share * 100:.0f}%", style))
        if view.parser_note and not narrow and level == 0:
            parts.append((f" {fmt.one_line(view.parser_note, 50)}", "$text-muted"))
    if not view.loading.finished:
        frac = view.loading.fraction
        text = f"loading {view.loading.done}/{view.loading.total}" if frac is not None else "loading…"
        parts.append((f" │ {text}", "$accent"))
    return Content.assemble(*parts)


class VerdictBar(Static):
    """Renders a HeaderView; knows nothing else."""

    DEFAULT_CSS = """
    VerdictBar { height: 1; background: $panel; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self._view: HeaderView | None = None

    def show(self, view: HeaderView) -> None:
        self._view = view
        show_content(self, header_content(view, self.size.width or 120))
        self.set_class(view.verdict == "failing", "-failing")

    def on_resize(self) -> None:
        if self._view is not None:
            show_content(self, header_content(self._view, self.size.width))
