"""The Now panel: the advice engine's action in large type, its evidence, side advice,
the back-off countdown, and the keys to copy the suggested command or open the wizard."""

from __future__ import annotations

from datetime import tzinfo

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from codexwatch.ui import fmt
from codexwatch.ui.view import NowView
from codexwatch.ui.widgets import hanging, show_content

# Severity of an action decides the band's colour; the words carry the meaning.
CALM = ("none",)
STOP = ("stop", "report", "relogin")


def severity(action: str) -> str:
    a = action.lower()
    if any(a.startswith(x) for x in CALM):
        return "calm"
    if any(x in a for x in STOP):
        return "stop"
    if "wait" in a or "back" in a or "slow" in a:
        return "wait"
    return "act"


ACTION_GLYPH = {"calm": "✔", "wait": "‖", "act": "➜", "stop": "■"}


ACTION_WORDS = {
    "none": "NO FAILURES",  # about the user's turns only: never "all clear" for OpenAI
    "wait": "WAIT",
    "switch_model": "SWITCH MODEL",
    "new_thread": "NEW THREAD",
    "fast_off": "FAST OFF",
    "stop_and_report": "STOP AND REPORT",
    "slow_down": "SLOW DOWN",
    "wait_for_reset": "WAIT FOR RESET",
    "relogin": "LOG IN AGAIN",
    "pick_available_model": "PICK ANOTHER MODEL",
    "check_network": "CHECK NETWORK",
    "compact": "COMPACT",
    "upgrade_codex": "UPGRADE CODEX",
}


def action_words(view: NowView) -> str:
    """The action as a few capital words: 'SWITCH MODEL'."""
    return ACTION_WORDS.get(view.action, view.action.replace("_", " ").upper())


# How much of the advice the panel shows: all it has room for in a tall pane; in a short
# one (80x24) two lines of evidence and one of side advice, so the failures and the
# details of the one selected still have rows; in a compact pane (narrow, or shorter
# still) the action and the first line of evidence.
FULL, SHORT, COMPACT = "full", "short", "compact"
_EVIDENCE = {FULL: 4, SHORT: 2, COMPACT: 1}  # the wizard shows all of it
_SIDE = {FULL: 2, SHORT: 1, COMPACT: 0}
_COMMANDS = {FULL: 3, SHORT: 3, COMPACT: 1}
_MAX_ROWS = {FULL: 15, SHORT: 11, COMPACT: 5}  # its max-height (DEFAULT_CSS; compact: the dashboard's tcss)
_BAND_ROWS = {FULL: 3, SHORT: 1, COMPACT: 1}
_FRAME = {FULL: 2, SHORT: 2, COMPACT: 0}  # its border's rows, top and bottom


def band_content(view: NowView, density: str) -> Content:
    sev = severity(view.action)
    words = action_words(view)
    compact = density == COMPACT
    spaced = words if compact else " ".join(words)
    parts: list = [(f" {ACTION_GLYPH[sev]} {spaced} ", "bold")]
    if compact:
        parts.append((" " + fmt.one_line(view.title, 200), ""))
    return Content.assemble(*parts)


def fitted(view: NowView, now: float, density: str, width: int) -> tuple[list, list]:
    """The lines of evidence and of side advice the body shows at `width`: as many as
    `density` allows that fit, each whole, in the panel's height, and each wrapped under its
    own text, not under its bullet. A pane cuts the panel at its bottom, and the keys and
    the countdown must stay (the first line of evidence too)."""
    head, evidence, tail, side = _blocks(view, now, density)
    if width <= 0:  # not laid out yet
        return evidence, side
    evidence, side = [hanging(b[0], b[1], width) for b in evidence], [hanging(b[0], b[1], width) for b in side]
    room = _MAX_ROWS[density] - _FRAME[density] - _BAND_ROWS[density] - _rows(head + tail, width)
    room -= _rows(evidence[:1], width)
    more = _fitting(evidence[1:], width, room)
    return evidence[:1] + more, _fitting(side, width, room - _rows(more, width))


def body_content(view: NowView, now: float, tz: tzinfo | None, density: str,
                 shown: tuple[list, list] | None = None) -> Content:
    """The title, evidence, back-off countdown, keys and side advice: as many as `density`
    allows, or the evidence and side advice `shown` (fitted())."""
    head, evidence, tail, side = _blocks(view, now, density)
    if shown is not None:
        evidence, side = shown
    blocks = head + evidence + tail + side  # side advice last: the least urgent
    return Content.assemble(*(part for block in blocks for part in block)).rstrip("\n")


def _blocks(view: NowView, now: float, density: str) -> tuple[list, list, list, list]:
    """The body's parts, each a list of lines: (title, evidence, countdown and keys, side).
    A line of evidence or side advice is [its bullet, its text, a newline]."""
    compact = density == COMPACT
    head = [] if compact else [_title(view)]
    evidence = [[("▸ " if not compact else "", "$text-muted"), fmt.one_line(item, 300), "\n"]
                for item in view.evidence[: _EVIDENCE[density]]]
    tail = [block for block in (_countdown(view, now), _keys(view, density)) if block]
    side = [[("+ ", "bold $accent"), fmt.one_line(item, 300), "\n"] for item in view.side[: _SIDE[density]]]
    return head, evidence, tail, side


def _rows(blocks: list[list], width: int) -> int:
    return sum(len(Content.assemble(*block).rstrip("\n").wrap(width)) for block in blocks)


def _fitting(blocks: list[list], width: int, room: int) -> list[list]:
    """The first blocks that fit in `room` rows together."""
    kept = []
    for block in blocks:
        room -= _rows([block], width)
        if room < 0:
            break
        kept.append(block)
    return kept


def _title(view: NowView) -> list:
    block: list = [(fmt.one_line(view.title, 300), "bold")]
    if view.confidence and view.confidence not in ("high",):
        block.append((f"  ({view.confidence} confidence)", "$text-muted italic"))
    return block + ["\n"]


def _countdown(view: NowView, now: float) -> list:
    if view.backoff_until is None:
        return []
    left = view.backoff_until - now
    label = view.backoff_label or "next try"
    if left > 0:
        return [(f"» {label} in ", "$warning"), (fmt.countdown(left), "bold $warning"), "\n"]
    return [(f"» {label}: now\n", "bold $success")]


def _keys(view: NowView, density: str) -> list:
    keys: list = []
    if view.commands:
        keys.append(("In Codex: ", "$text-muted"))
        for i, cmd in enumerate(view.commands[: _COMMANDS[density]]):
            if i:
                keys.append(("  or  ", "$text-muted"))
            keys.append((fmt.one_line(cmd, 80), "bold $accent"))
        keys.append(("   [c]", "bold $accent"))
        keys.append((" copy", "$text-muted"))
    if view.wizard_available:
        keys.append(("   [w]" if keys else "[w]", "bold $accent"))
        keys.append((" triage wizard", "$text-muted"))
    return keys + ["\n"] if keys else []


def last_failure_content(view: NowView | None, now: float, tz: tzinfo | None) -> Content:
    turn = view.last_failure if view else None
    if turn is None:
        return Content.assemble(("Last failure: none in the loaded history", "$text-muted"))
    sep = (" · ", "$text-muted")  # a visible separator: runs of spaces collapse in some renderers
    return Content.assemble(
        ("Last failure ", "$text-muted"),
        (f"{fmt.age(now - turn.at)} ago", "bold"),
        sep,
        (fmt.class_cell(turn.error_class), "bold"),
        sep,
        (fmt.one_line(turn.model or "?", 24), ""),
        sep,
        (fmt.one_line(turn.message, 200) or "no message recorded", "$text-muted"),
    )


class DecisionPanel(Vertical):
    """Renders a NowView. Severity is shown by a glyph and words as well as colour."""

    DEFAULT_CSS = """
    DecisionPanel { height: auto; max-height: 15; border: round $primary; border-title-style: bold; padding: 0 1; }
    DecisionPanel #band { height: 3; content-align: left middle; text-style: bold; width: 100%; }
    DecisionPanel #band.-calm { background: $success-muted; color: $text; }
    DecisionPanel #band.-wait { background: $warning-muted; color: $text; }
    DecisionPanel #band.-act { background: $primary-muted; color: $text; }
    DecisionPanel #band.-stop { background: $error-muted; color: $text; }
    DecisionPanel #body { height: auto; }
    DecisionPanel.-short { max-height: 11; }
    DecisionPanel.-short #band { height: 1; }
    DecisionPanel.-compact { border: none; padding: 0; max-height: 6; }
    DecisionPanel.-compact #band { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Now"
        self._fitted_to: tuple | None = None  # (view, density, width) that _shown fits
        self._shown: tuple[list, list] | None = None

    def compose(self) -> ComposeResult:
        yield Static("", markup=False, id="band")
        yield Static("", markup=False, id="body")

    def show(self, view: NowView | None, now: float, tz: tzinfo | None, density: str = FULL) -> None:
        self.set_class(density == SHORT, "-short")
        self.set_class(density == COMPACT, "-compact")
        band = self.query_one("#band", Static)
        body = self.query_one("#body", Static)
        if view is None:
            show_content(band, Content.assemble((" … READING YOUR CODEX HISTORY", "bold")))
            band.set_classes("-calm")
            show_content(body, Content.assemble(("The advice appears as soon as the history is read.", "$text-muted")))
            return
        if set(band.classes) != {f"-{severity(view.action)}"}:  # restyling repaints
            band.set_classes(f"-{severity(view.action)}")
        show_content(band, band_content(view, density))
        # What fits is worked out again for a new view or size only: a second's tick (the
        # countdown) changes neither, and wrapping the lines takes 0.4 ms.
        if self._fitted_to != (view, density, body.size.width):
            self._fitted_to = (view, density, body.size.width)
            self._shown = fitted(view, now, density, body.size.width)
        show_content(body, body_content(view, now, tz, density, self._shown))
