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
METER_STYLE = {"ok": "", "warn": "bold $warning", "bad": "bold $error"}
STATUS_GLYPH = {"ok": "●", "warn": "▲", "bad": "✖", "unknown": "?", "off": "○"}


def header_content(view: HeaderView, width: int, backing_off: int = 0) -> Content:
    """The header in `width` cells. The verdict and the status page always show; loading
    progress, the count of `codexwatch run` supervisors backing off and a parser share below
    99 % too, the status text shortened to make room if it must be; then, while they fit
    whole, a healthy parser share, the plan's usage meter, running sessions, the verdict's
    reason, the parser's note. Words stay words: a narrow pane drops a part rather than
    abbreviating it."""
    verdict = [(f" {fmt.VERDICT_GLYPHS.get(view.verdict, '?')} {view.verdict.upper()} ",
                VERDICT_STYLE.get(view.verdict, "bold"))]
    optional = _optional_parts(view, backing_off)
    parser_matters = view.parser_share is not None and view.parser_share < 0.99
    chosen = {name for name, _ in optional
              if name in ("loading", "runs") or (name == "parser" and parser_matters)}
    while True:
        content = _assemble(view, verdict, optional, chosen, None)
        if content.cell_length <= width:
            break
        spare = len(view.status_text) - (content.cell_length - width)
        if spare >= 16 or not chosen:  # shortened, the status still says what it is
            return _assemble(view, verdict, optional, chosen, max(8, spare))
        chosen.discard(next(n for n in ("parser", "loading", "runs") if n in chosen))
    for name, _ in optional:
        if name not in chosen and _assemble(view, verdict, optional, chosen | {name}, None).cell_length <= width:
            chosen.add(name)
    return _assemble(view, verdict, optional, chosen, None)


def _optional_parts(view: HeaderView, backing_off: int = 0) -> list[tuple[str, list]]:
    parts: list[tuple[str, list]] = []
    if not view.loading.finished:
        done = f"loading {view.loading.done}/{view.loading.total}" if view.loading.fraction is not None else "loading…"
        parts.append(("loading", [(f" │ {done}", "$accent")]))
    if view.meter:  # the plan's windows: first of the rest, where a glance finds them
        parts.append(("meter", [" │ ", (view.meter, METER_STYLE.get(view.meter_level, ""))]))
    if view.parser_share is None:
        parts.append(("parser", [" │ ", ("parser —", "$text-muted")]))
    else:
        share = view.parser_share
        style = "$success" if share >= 0.99 else ("$warning" if share >= 0.9 else "bold $error")
        parts.append(("parser", [" │ ", (f"parser {share * 100:.0f}%", style)]))
    parts.append(("running", [" │ ", f"{view.running} running"]))
    if backing_off:  # `codexwatch run` supervisors waiting to retry (the Runs tab)
        parts.append(("runs", [" │ ", (f"{backing_off} run{'s' if backing_off > 1 else ''} backing off", "$warning")]))
    if view.verdict_reason:
        parts.append(("reason", [(fmt.one_line(view.verdict_reason, 60), "$text-muted"), "  "]))
    if view.parser_note and view.parser_share is not None:
        parts.append(("note", [(f" {fmt.one_line(view.parser_note, 50)}", "$text-muted")]))
    return parts


def _assemble(view: HeaderView, verdict: list, optional: list, chosen: set[str],
              status_width: int | None) -> Content:
    named = dict(optional)
    st = view.status_level
    text = view.status_text if status_width is None else fmt.one_line(view.status_text, status_width)
    parts: list = list(verdict)
    if "reason" in chosen:
        parts += named["reason"]
    parts += ["│ ", (f"{STATUS_GLYPH.get(st, '?')} {text}", STATUS_STYLE.get(st, ""))]
    if view.status_age:
        parts.append((f" ({view.status_age})", "$text-muted"))
    for name in ("meter", "running", "runs", "parser", "note", "loading"):
        if name in chosen:
            parts += named[name]
    return Content.assemble(*parts)


class VerdictBar(Static):
    """Renders a HeaderView; knows nothing else."""

    DEFAULT_CSS = """
    VerdictBar { height: 1; background: $panel; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self._view: HeaderView | None = None
        self._backing_off = 0

    def show(self, view: HeaderView) -> None:
        self._view = view
        show_content(self, header_content(view, self.size.width or 120, self._backing_off))
        self.set_class(view.verdict == "failing", "-failing")

    def show_runs(self, backing_off: int) -> None:
        """How many `codexwatch run` supervisors are backing off."""
        if backing_off != self._backing_off:
            self._backing_off = backing_off
            if self._view is not None:
                self.show(self._view)

    def on_resize(self) -> None:
        if self._view is not None:
            show_content(self, header_content(self._view, self.size.width, self._backing_off))
