"""Status tab: Codex components, ongoing and recent incidents with their updates."""

from __future__ import annotations

from datetime import tzinfo

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from codexwatch.core.models import StatusSnapshot
from codexwatch.ui import fmt
from codexwatch.ui.widgets import show_content

COMPONENT_MARK = {
    "operational": ("● operational", "$success"),
    "degraded_performance": ("▲ degraded", "$warning"),
    "partial_outage": ("◆ partial outage", "bold $error"),
    "major_outage": ("✖ major outage", "bold $error"),
    "under_maintenance": ("◌ maintenance", "$accent"),
    "unknown": ("? unknown", "$text-muted"),
}


def status_content(snapshot: StatusSnapshot | None, now: float, tz: tzinfo | None, enabled: bool = True) -> Content:
    if not enabled:
        return Content.assemble(("The status page is switched off (--no-status).", "$text-muted"))
    if snapshot is None:
        return Content.assemble(("Reading the status page…", "$text-muted"))
    lines: list = []
    if not snapshot.ok or snapshot.fetched_at is None:
        since = snapshot.last_attempt_at
        lines.append((f"? Status unknown since {fmt.local_time(since, tz, now=now)}" if since else "? Status unknown", "bold $warning"))
        lines.append("\n")
        lines.append(("Could not read the status page: ", "$text-muted"))
        lines.append(fmt.one_line(snapshot.error, 300))
        lines.append("\n")
        lines.append(("Unknown is not “all clear”: treat OpenAI's side as unconfirmed.", "$text-muted"))
        if snapshot.fetched_at is None:
            return Content.assemble(*lines)
        lines.append("\n\n")
        lines.append((f"Last good read {fmt.age(now - snapshot.fetched_at)} ago:\n", "$text-muted"))
    else:
        source = f" from {snapshot.source}" if snapshot.source else ""
        stale = " — stale" if snapshot.stale else ""
        lines.append((f"Read {fmt.age(now - snapshot.fetched_at)} ago{source}{stale}\n", "$text-muted"))
    lines.append(("Overall: ", "bold"))
    lines.append(fmt.one_line(snapshot.overall.description, 100))
    lines.append("\n\n")
    lines.append(("Codex components\n", "bold underline"))
    if not snapshot.components:
        lines.append(("  (the page listed none)\n", "$text-muted"))
    width = max((len(c.name) for c in snapshot.components), default=10)
    for comp in snapshot.components:
        mark, style = COMPONENT_MARK.get(comp.status, (f"? {comp.status}", "$text-muted"))
        lines.append(f"  {fmt.one_line(comp.name, 60).ljust(min(width, 60))}  ")
        lines.append((mark, style))
        lines.append("\n")
    if snapshot.incidents_error:  # the components answered, no incident source did
        lines.append("\n")
        lines.append(("Incidents\n", "bold underline"))
        lines.append(("  ? incidents unknown: ", "bold $warning"))
        lines.append(fmt.one_line(snapshot.incidents_error, 300))
        lines.append(("\n  Unknown is not “none”: an incident may be open.\n", "$text-muted"))
        return Content.assemble(*lines)
    ongoing = [i for i in snapshot.incidents if i.ongoing]
    recent = [i for i in snapshot.incidents if not i.ongoing]
    lines.append("\n")
    lines.append(("Ongoing incidents\n", "bold underline"))
    if not ongoing:
        lines.append(("  none\n", "$text-muted"))
    for inc in ongoing:
        lines.extend(_incident(inc, now, tz, ongoing=True))
    lines.append("\n")
    lines.append(("Recent incidents\n", "bold underline"))
    if not recent:
        lines.append(("  none listed\n", "$text-muted"))
    for inc in recent[:8]:
        lines.extend(_incident(inc, now, tz, ongoing=False))
    return Content.assemble(*lines)


def _incident(inc, now: float, tz: tzinfo | None, ongoing: bool) -> list:
    out: list = []
    tag = "CODEX " if inc.codex else ""
    style = "bold $error" if ongoing and inc.codex else ("bold $warning" if ongoing else "bold")
    out.append((f"  {'◆' if inc.codex else '◇'} {tag}", style))
    out.append((fmt.one_line(inc.name, 120), style))
    out.append("\n")
    meta = f"    {inc.status}"
    if inc.impact:
        meta += f" · impact {inc.impact}"
    if inc.started_at:
        meta += f" · began {fmt.local_time(inc.started_at, tz, now=now)}"
    if inc.published_at and inc.started_at and inc.published_at - inc.started_at > 60:
        meta += f" · posted {fmt.local_time(inc.published_at, tz, now=now)}"
    if inc.resolved_at:
        meta += f" · resolved {fmt.local_time(inc.resolved_at, tz, now=now)}"
    out.append((meta + "\n", "$text-muted"))
    updates = inc.updates if ongoing else inc.updates[:1]
    for upd in updates[:6]:
        when = fmt.local_time(upd.at, tz, now=now) if upd.at else ""
        out.append((f"    {when} {upd.status or ''}: ", "$text-muted"))
        out.append(fmt.one_line(upd.body, 400))
        out.append("\n")
    if inc.url:
        out.append((f"    {fmt.one_line(inc.url, 200)}\n", "$text-muted italic"))
    return out


class StatusPanel(VerticalScroll):
    DEFAULT_CSS = """
    StatusPanel { padding: 0 1; }
    StatusPanel > Static { width: 100%; }
    """

    def compose(self):
        yield Static("", markup=False, id="status-body")

    def show(self, snapshot: StatusSnapshot | None, now: float, tz: tzinfo | None, enabled: bool = True) -> None:
        show_content(self.query_one("#status-body", Static), status_content(snapshot, now, tz, enabled))
