"""Help: key bindings and what the symbols mean."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from codexwatch.ui import fmt

KEYS = (
    ("1 2 3 4 5", "Failures, Models, When, Status, Runs tabs"),
    ("↑ ↓ / Enter", "move in a table; the selected failure's details show below it"),
    ("w", "triage wizard for the current failure episode"),
    ("c", "copy the Codex command the advice suggests (/model, /new, codex -m …)"),
    ("r", "report of the episode: preview, copy, save"),
    ("s", "ask the status page now"),
    ("ctrl+p", "command palette: every action, themes (codexwatch-cb-* are colour-blind safe)"),
    ("? / F1", "this help"),
    ("q / ctrl+q", "quit"),
    ("", ""),
    ("In the wizard", ""),
    ("n / →", "next step"),
    ("b / ←", "previous step"),
    ("c", "copy what to type in Codex for this step"),
    ("esc", "back to the dashboard"),
)


def help_content() -> Content:
    parts: list = [("codexwatch: why Codex stopped, whose side it is, what to do next\n\n", "bold")]
    for key, text in KEYS:
        if key and not text:
            parts.append((f"{key}\n", "bold underline"))
            continue
        parts.append((f"  {key:<12}", "bold $accent"))
        parts.append(f"{text}\n")
    parts.append(("\nVerdict  ", "bold"))
    parts.append(f"{fmt.VERDICT_GLYPHS['ok']} OK   {fmt.VERDICT_GLYPHS['degraded']} DEGRADED (incident, or failures in the last hour)   "
                 f"{fmt.VERDICT_GLYPHS['failing']} FAILING (failed turns in a row, no success since)\n")
    parts.append(("Classes  ", "bold"))
    parts.append("   ".join(f"{fmt.CLASS_GLYPHS[c]} {fmt.CLASS_LABELS[c]}" for c in fmt.CLASS_LABELS))
    parts.append("\n")
    parts.append(("Shape    ", "bold"))
    parts.append("rejected: failed before doing anything · interrupted: failed after tool calls (check git status)\n")
    parts.append(("Parser   ", "bold"))
    parts.append("share of log lines understood; unknown line types by Codex version show a format change the day it ships\n")
    parts.append(("Status   ", "bold"))
    parts.append("“unknown” means the page could not be read: never taken as all clear\n")
    parts.append(("\nCodex's files are only ever read, never written. Press esc to close.", "$text-muted"))
    return Content.assemble(*parts)


class HelpScreen(ModalScreen):
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close", show=False),
        Binding("f1", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 110; height: 90%; border: round $primary; background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(help_content(), markup=False)
        from textual.widgets import Footer

        yield Footer()
