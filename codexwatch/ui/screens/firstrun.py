"""First run: no Codex home (or nothing in it). Say where we looked, how to point
elsewhere, and offer the demo."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from codexwatch.ui.messages import ReloadHistory


def firstrun_content(problem: str, home: Path) -> Content:
    return Content.assemble(
        ("Nothing to watch yet\n\n", "bold"),
        (problem + "\n\n", ""),
        ("Looked in: ", "$text-muted"),
        (str(home), "bold"),
        ("\n\nPoint codexwatch elsewhere:\n", ""),
        ("  codexwatch --codex-home DIR\n", "bold $accent"),
        ("  CODEX_HOME=DIR codexwatch\n", "bold $accent"),
        ("  codex_home = \"DIR\"  in ~/.config/codexwatch/config.toml\n\n", "bold $accent"),
        ("Or see it work on sample sessions and a sample status page, offline:\n", ""),
        ("  codexwatch --demo", "bold $accent"),
        ("   (press d here to restart in demo mode)\n\n", "$text-muted"),
        ("codexwatch keeps watching: once Codex writes its first session here, press esc.", "$text-muted"),
    )


class FirstRunScreen(Screen):
    BINDINGS = [
        Binding("d", "demo", "Demo"),
        Binding("escape", "close", "Dashboard"),
        Binding("q", "app.quit", "Quit"),
    ]
    DEFAULT_CSS = """
    FirstRunScreen { align: center middle; }
    FirstRunScreen > Vertical { width: 90%; max-width: 90; height: auto; border: round $warning; padding: 1 2; }
    """

    def __init__(self, problem: str, home: Path) -> None:
        super().__init__(id="firstrun")
        self.problem = problem
        self.home = home

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(firstrun_content(self.problem, self.home), markup=False)
        yield Footer()

    def action_demo(self) -> None:
        self.app.exit(result="demo")

    def action_close(self) -> None:
        self.app.pop_screen()
        self.app.post_message(ReloadHistory())
