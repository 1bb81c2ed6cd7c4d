"""Report preview: the exact redacted text, copied (OSC 52) or saved only after it is seen."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Footer, Static, TextArea

from codexwatch.core.advice_wording import plural
from codexwatch.ui.screens import TriageScreen
from codexwatch.ui.view import ViewUpdate


def save_report(text: str, episode_id: str, folder: Path | None = None, suffix: str = "md") -> Path:
    """Write the report into the current folder (never into the Codex home)."""
    folder = folder or Path.cwd()
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in episode_id)[:60]
    path = folder / f"codexwatch-report-{safe}.{suffix}"
    path.write_text(text, encoding="utf-8")
    return path


class ReportPreview(Vertical):
    """The report as it will be copied: read-only text, never interpreted."""

    DEFAULT_CSS = """
    ReportPreview { height: 1fr; }
    ReportPreview > #report-note { height: auto; padding: 0 1; color: $text-muted; }
    ReportPreview > TextArea { height: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.report = None
        self.episode_id = ""
        self.as_json = False

    def compose(self) -> ComposeResult:
        yield Static(
            Content.assemble(
                ("Redacted: no prompts, code, tool output, keys or e-mail addresses; your home folder is ~.\n", ""),
                ("c", "bold $accent"), (" copy  ", ""), ("s", "bold $accent"), (" save  ", ""),
                ("j", "bold $accent"), (" Markdown/JSON   ", ""),
                ("Send it with /feedback in Codex, or as an issue on github.com/openai/codex.", ""),
            ),
            id="report-note",
        )
        area = TextArea("", read_only=True, show_line_numbers=False, soft_wrap=True, id="report-text")
        area.cursor_blink = False
        yield area

    @property
    def text(self) -> str:
        if self.report is None:
            return ""
        return self.report.to_json() if self.as_json else self.report.markdown

    def show(self, report, episode_id: str) -> None:
        changed = report is None or self.report is None or report.markdown != self.report.markdown
        self.report, self.episode_id = report, episode_id
        if changed:
            self.query_one(TextArea).load_text(self.text)

    def toggle_json(self) -> None:
        self.as_json = not self.as_json
        self.query_one(TextArea).load_text(self.text)

    def copy(self) -> None:
        if not self.text:
            return
        self.app.copy_to_clipboard(self.text)
        self.app.notify(f"Report copied ({len(self.text)} characters) through OSC 52.", timeout=3)

    def save(self) -> None:
        if not self.text:
            return
        try:
            path = save_report(self.text, self.episode_id, suffix="json" if self.as_json else "md")
        except OSError as exc:
            self.app.notify(f"Could not save: {exc}", severity="error", markup=False)
            return
        self.app.notify(f"Saved to {path}", title="Report", timeout=6, markup=False)


class ReportScreen(TriageScreen):
    BINDINGS = [
        Binding("c", "copy", "Copy"),
        Binding("s", "save", "Save"),
        Binding("j", "json", "Markdown/JSON"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self) -> None:
        super().__init__(id="report")

    def compose(self) -> ComposeResult:
        yield Static("", markup=False, id="report-title")
        yield ReportPreview(id="report-preview")
        yield Footer()

    def show(self, update: ViewUpdate) -> None:
        report, episode = update.view.report, update.view.reportable
        title = self.query_one("#report-title", Static)
        if episode is None:
            title.update(Content.assemble((" No failure episode to report.", "bold")))
            return
        if report is None:
            title.update(Content.assemble((" Writing the report…", "bold")))
            return
        state = "ongoing" if episode.ongoing else "ended"
        title.update(Content.assemble((f" Report of episode {episode.id} ({state}, {plural(len(episode.failures), 'failure')})", "bold")))
        self.query_one(ReportPreview).show(report, episode.id)

    def action_copy(self) -> None:
        self.query_one(ReportPreview).copy()

    def action_save(self) -> None:
        self.query_one(ReportPreview).save()

    def action_json(self) -> None:
        self.query_one(ReportPreview).toggle_json()
