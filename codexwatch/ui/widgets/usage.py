"""The plan's usage (Models tab) and the failure rate by context fill (When tab): each
renders what the view computed, nothing more. Text from the logs is shown literally."""

from __future__ import annotations

from datetime import datetime, tzinfo

from textual.content import Content
from textual.widgets import Static

from codexwatch.ui import fmt
from codexwatch.ui.view import ContextView, UsageView
from codexwatch.ui.widgets import show_content

BAR_WIDTH = 20
NEAR_FULL, FULL = 90.0, 100.0


def _in(seconds: float) -> str:
    minutes = int(max(0.0, seconds) // 60)
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h {minutes % 60} min"
    return f"{minutes // 1440} d {minutes % 1440 // 60} h"


def _at(ts: float, now: float, tz: tzinfo | None) -> str:
    """14:02 today, `Wed 09:50` another day."""
    dt = datetime.fromtimestamp(ts, tz) if tz else datetime.fromtimestamp(ts).astimezone()
    today = datetime.fromtimestamp(now, dt.tzinfo).date()
    return dt.strftime("%H:%M" if dt.date() == today else "%a %H:%M")


def _track(fraction: float, width: int, style: str) -> list:
    """A bar filled to `fraction`, the rest of its width a faint track."""
    filled = fmt.bar(fraction, width).rstrip()
    return [(filled, style), ("░" * (width - len(filled)), "$text-muted")]


def usage_content(view: UsageView | None, now: float, tz: tzinfo | None, narrow: bool = False) -> Content:
    if view is None:
        return Content.assemble(
            ("Plan usage: ", "bold"),
            ("not recorded. Codex writes its 5-hour and weekly windows under a ChatGPT login; "
             "an API-key login has none.", "$text-muted"))
    parts: list = [("Plan usage", "bold")]
    when = []
    if view.as_of is not None:
        when.append(f"as of {_at(view.as_of, now, tz)}, {fmt.age(now - view.as_of)} ago")
    if view.plan_type:
        when.append(f"plan {fmt.one_line(view.plan_type, 24)}")
    if view.session_id and not narrow:
        when.append(f"session {fmt.short_id(view.session_id)}")
    if when:
        parts.append((f"  ({' · '.join(when)})", "$text-muted"))
    if not view.windows:
        parts.append(("\n  no window recorded, only credits", "$text-muted"))
    name_width = max(len(w.name) for w in view.windows) if view.windows else 0
    for w in view.windows:
        used = w.used_percent
        style = "bold $error" if used >= FULL else ("bold $warning" if used >= NEAR_FULL else "$primary")
        pct = f"{used:.0f}" if float(used).is_integer() else f"{used:.1f}"
        parts.append(f"\n  {w.name.ljust(name_width)}  ")
        parts += _track(min(used, FULL) / FULL, 10 if narrow else BAR_WIDTH, style)
        parts.append((f" {pct:>4} %", style))
        if w.resets_at is None:
            parts.append(("   reset time not recorded", "$text-muted"))
        elif w.resets_at > now:
            parts.append(f"   resets {_at(w.resets_at, now, tz)} (in {_in(w.resets_at - now)})")
        else:
            parts.append((f"   reset at {_at(w.resets_at, now, tz)}: this figure is older",
                          "$text-muted"))
    if view.reached:
        parts.append(("\n  limit reached: ", "bold $error"))
        parts.append(fmt.one_line(view.reached, 60))
    return Content.assemble(*parts)


def context_content(view: ContextView | None) -> Content:
    from codexwatch.core.advice_wording import plural  # as the view's advice: after the first paint

    if view is None:
        return Content.assemble(("Failures by context fill: ", "bold"),
                                ("no turn with a recorded context yet.", "$text-muted"))
    parts: list = [("Failure rate by context fill (share of the model's window when the turn began)\n",
                    "bold")]
    top = max((b.rate or 0.0 for b in view.bands + view.by_tokens), default=0.0) or 1.0
    width = max(len(b.label) for b in view.bands + view.by_tokens)
    for heading, bands in (("", view.bands), ("window unknown, by tokens:\n", view.by_tokens)):
        if not bands:
            continue
        if heading:
            parts.append((f"  {heading}", "$text-muted"))
        for b in bands:
            mark = (view.threshold_percent is not None and b.label.endswith("%")
                    and int(b.label.split("–")[0]) >= view.threshold_percent)
            style = "$error" if mark else "$primary"
            parts.append(f"  {b.label.rjust(width)}  ")
            parts += _track((b.rate or 0.0) / top, BAR_WIDTH, style)
            if b.turns:
                parts.append(f" {fmt.percent(b.rate):>4}  {b.failures} of {plural(b.turns, 'turn')}\n")
            else:
                parts.append(("    —  no turns\n", "$text-muted"))
    parts.append(view.threshold)
    if view.unknown:
        parts.append((f"\n  ({view.unknown} turns with no context figure are not counted)", "$text-muted"))
    return Content.assemble(*parts)


class UsagePanel(Static):
    DEFAULT_CSS = """
    UsagePanel { height: auto; padding: 0 1; margin-bottom: 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)

    def show(self, view: UsageView | None, now: float, tz: tzinfo | None, narrow: bool = False) -> None:
        show_content(self, usage_content(view, now, tz, narrow))


class ContextCurve(Static):
    DEFAULT_CSS = """
    ContextCurve { height: auto; margin-bottom: 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)

    def show(self, view: ContextView | None) -> None:
        show_content(self, context_content(view))
