"""The triage wizard: the steps of triage-rules.md one at a time, then the report.

The steps come from `codexwatch.core.triage.wizard_steps`, built with the view while the
wizard is open and so recomputed whenever the logs change: the wizard notices by itself
when the user switched model or opened a new thread. The screen only lays them out.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import ContentSwitcher, Footer, Static

from codexwatch.core.advice_wording import plural
from codexwatch.ui import fmt
from codexwatch.ui.screens import TriageScreen
from codexwatch.ui.screens.report import ReportPreview
from codexwatch.ui.view import ViewUpdate
from codexwatch.ui.widgets import hanging

STATE_MARK = {
    "done": ("✔", "done", "$success"),
    "current": ("➜", "do this now", "bold $warning"),
    "open": ("○", "not yet", "$text-muted"),
    "skipped": ("–", "does not apply", "$text-muted"),
}


STEPS_WIDTH = 44  # the step list's column: border and padding take 3, "▶ ○ 1. " 7
STEP_TITLE = STEPS_WIDTH - 10  # so a title stays on its line


def steps_content(steps, index: int, report_index: int) -> Content:
    parts: list = [("Steps\n", "bold underline")]
    for i, step in enumerate(steps):
        mark, _, style = STATE_MARK.get(step.state, ("?", step.state, ""))
        here = "▶ " if i == index else "  "
        parts.append((here, "bold"))
        parts.append((f"{mark} ", style))
        parts.append((f"{i + 1}. {fmt.one_line(step.title, STEP_TITLE)}\n", "bold" if i == index else ""))
    here = "▶ " if index == report_index else "  "
    parts.append((here, "bold"))
    parts.append((f"■ {report_index + 1}. Report\n", "bold" if index == report_index else ""))
    return Content.assemble(*parts)


def step_content(step, number: int, total: int, episode_note: str | None, width: int = 0) -> Content:
    """One step: evidence, what to type, what the logs show; a line wrapped at `width` (when
    known) continues under its text."""
    mark, label, style = STATE_MARK.get(step.state, ("?", step.state, ""))
    parts: list = [
        (f"Step {number} of {total}  ", "$text-muted"),
        (f"{mark} {label}\n", style),
        (fmt.one_line(step.title, 200) + "\n\n", "bold"),
    ]
    if episode_note:
        parts.append((episode_note + "\n\n", "bold $success"))
    parts.append(("Evidence\n", "bold underline"))
    if not step.evidence:
        parts.append(("  (nothing in the logs for this step)\n", "$text-muted"))
    for item in step.evidence:
        parts += hanging(("  ▸ ", "$text-muted"), fmt.one_line(item, 400), width)
    parts.append("\n")
    parts.append(("Type in Codex\n", "bold underline"))
    if not step.type_in_codex:
        parts.append(("  nothing to type for this step\n", "$text-muted"))
    for i, command in enumerate(step.type_in_codex):
        parts.append(("  ", ""))
        parts.append((fmt.one_line(command, 200), "bold $accent"))
        if i == 0:
            parts.append(("   (c copies it)", "$text-muted"))
        parts.append("\n")
    parts.append("\n")
    parts.append(("What the logs show\n", "bold underline"))
    parts += hanging(("  ", ""), fmt.one_line(step.afterwards or "nothing yet", 400), width)
    return Content.assemble(*parts)


class WizardScreen(TriageScreen):
    BINDINGS = [
        Binding("n,right", "next", "Next", key_display="n/→"),
        Binding("b,left", "back", "Back", key_display="b/←"),
        Binding("c", "copy", "Copy"),
        Binding("s", "save", "Save report"),
        Binding("escape", "app.pop_screen", "Dashboard"),
    ]
    DEFAULT_CSS = """
    WizardScreen #wizard-title { height: 1; background: $panel; padding: 0 1; }
    WizardScreen #wizard-body { height: 1fr; }
    WizardScreen #wizard-steps { width: 44; border-right: solid $panel-lighten-2; padding: 0 1; }
    WizardScreen #wizard-switcher { width: 1fr; }
    WizardScreen #step-scroll { padding: 0 1; scrollbar-gutter: stable; }  /* the step wrapped to one width */
    WizardScreen.-narrow #wizard-steps { display: none; }
    """

    index = reactive(0, bindings=True)

    def __init__(self) -> None:
        super().__init__(id="wizard")
        self.steps: list = []
        self._ended_note: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("", markup=False, id="wizard-title")
        with Horizontal(id="wizard-body"):
            yield Static("", markup=False, id="wizard-steps")
            with ContentSwitcher(initial="step-scroll", id="wizard-switcher"):
                with VerticalScroll(id="step-scroll"):
                    yield Static("", markup=False, id="step")
                yield ReportPreview(id="wizard-report")
        yield Footer()

    def on_mount(self) -> None:
        self.on_resize()

    def on_resize(self) -> None:
        self.set_class(self.size.width < 80, "-narrow")
        self.call_after_refresh(self._render_step)  # wrapped for the step's new width

    @property
    def report_index(self) -> int:
        return len(self.steps)

    # --- data -------------------------------------------------------------------

    def show(self, update: ViewUpdate) -> None:
        view, now, tz = update.view, update.now, update.tz
        episode = view.episode
        if episode is not None and view.wizard_steps:
            self.steps = list(view.wizard_steps)
            self._ended_note = None
        elif self.steps and episode is None:
            self._ended_note = "This episode is over: a turn succeeded since. Nothing more to do unless it fails again."
        title = self.query_one("#wizard-title", Static)
        ep = view.reportable
        if ep is not None:
            classes = ", ".join(f"{fmt.class_label(c)} ×{n}" for c, n in ep.classes.items())
            title.update(Content.assemble(
                ("Triage  ", "bold"),
                (f"{plural(len(ep.failures), 'failure')} since {fmt.local_time(ep.first, tz, now=now)}: {classes}", ""),
                ("  (ongoing)" if ep.ongoing else "  (ended)", "$text-muted"),
            ))
        self.index = min(self.index, self.report_index)
        self.refresh_bindings()  # next/back/save depend on the steps, not only on the index
        self._render_step()
        if ep is not None and view.report is not None:
            self.query_one(ReportPreview).show(view.report, ep.id)

    def _render_step(self) -> None:
        if not self.is_mounted:
            return
        self.query_one("#wizard-steps", Static).update(steps_content(self.steps, self.index, self.report_index))
        switcher = self.query_one(ContentSwitcher)
        if self.index >= self.report_index:
            switcher.current = "wizard-report"
            return
        switcher.current = "step-scroll"
        shown = self.query_one("#step", Static)
        shown.update(step_content(self.steps[self.index], self.index + 1, self.report_index + 1,
                                  self._ended_note, shown.size.width))

    def watch_index(self) -> None:
        self._render_step()

    # --- actions ------------------------------------------------------------------

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "back":
            return self.index > 0
        if action == "next":
            return self.index < self.report_index
        if action == "save":
            return self.index == self.report_index
        return True

    def action_next(self) -> None:
        if self.index < self.report_index:
            self.index += 1

    def action_back(self) -> None:
        if self.index > 0:
            self.index -= 1

    def action_copy(self) -> None:
        if self.index >= self.report_index:
            self.query_one(ReportPreview).copy()
            return
        commands = self.steps[self.index].type_in_codex if self.steps else []
        if not commands:
            self.notify("Nothing to type for this step.", timeout=3)
            return
        self.app.copy_to_clipboard(commands[0])
        self.notify(f"Copied: {commands[0]}", timeout=3, markup=False)

    def action_save(self) -> None:
        self.query_one(ReportPreview).save()
