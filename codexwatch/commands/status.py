"""`codexwatch status`: what status.openai.com says about Codex, right now.

Exit 0 when the page (or a fallback) answered, 1 when it could not be read or the
status page is turned off.
"""

from __future__ import annotations

import re
import sys
import time
from datetime import datetime, timezone, tzinfo

import orjson

from codexwatch.config import ConfigError
from codexwatch.core.models import Incident, StatusSnapshot
from codexwatch.core.status import describe_age, snapshot_to_json
from codexwatch.sources import status_client

# Page text goes to a terminal: escape sequences and other controls must not reach it.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def run(args, settings) -> int:
    if not settings.status_enabled:
        print("codexwatch: the status page is turned off (--no-status or status_enabled = false)",
              file=sys.stderr)
        return 1
    try:
        snapshot = status_client.fetch_status_once(settings.status_url)
    except ValueError as exc:  # a base URL that is not http(s)://host
        raise ConfigError(str(exc)) from None
    if getattr(args, "json", False):
        sys.stdout.write(orjson.dumps(snapshot_to_json(snapshot), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_text(snapshot, time.time()))
        if not snapshot.ok:
            print(f"codexwatch: could not read the status page: {snapshot.error}", file=sys.stderr)
    return 0 if snapshot.ok else 1


def _clean(text: str) -> str:
    return _CONTROL.sub("", text).strip()


def _when(ts: float | None, now: float, tz: tzinfo | None) -> str:
    if ts is None:
        return "?"
    moment = datetime.fromtimestamp(ts, timezone.utc).astimezone(tz)
    today = datetime.fromtimestamp(now, timezone.utc).astimezone(tz).date()
    return moment.strftime("%H:%M") if moment.date() == today else moment.strftime("%d %b %H:%M")


def _status_word(status: str, raw: str | None = None) -> str:
    if status == "unknown":
        return f"unknown ({_clean(raw)})" if raw else "unknown"
    return status.replace("_", " ")


def _incident_lines(inc: Incident, now: float, tz: tzinfo | None, latest_only: bool) -> list[str]:
    mentions = " (mentions Codex)" if inc.codex_match == "title" else ""
    impact = f", impact {inc.impact}" if inc.impact else ""
    lines = [f"  {_clean(inc.name)}{mentions}: {inc.status.replace('_', ' ')}{impact}"]
    times = [f"began {_when(inc.started_at, now, tz)}"]
    if inc.published_at is not None:
        times.append(f"posted {_when(inc.published_at, now, tz)}")
    times.append(f"resolved {_when(inc.resolved_at, now, tz)}" if inc.resolved_at is not None
                 else f"updated {_when(inc.updated_at, now, tz)}")
    lines.append("    " + ", ".join(times))
    for update in inc.updates[:1] if latest_only else inc.updates:
        body = (_clean(update.body) or "(no text)").replace("\n", "\n      ")
        lines.append(f"    {_when(update.at, now, tz)} {update.status or ''}: {body}".replace(" :", ":"))
    if inc.url:
        lines.append(f"    {_clean(inc.url)}")
    return lines


def render_text(snapshot: StatusSnapshot, now: float, tz: tzinfo | None = None) -> str:
    """The human-readable report; `tz` None means the machine's local time."""
    out = []
    if not snapshot.ok:
        out.append(f"Status page: could not read it ({snapshot.error}).")
        if snapshot.fetched_at is None:
            out.append("Codex status: unknown. This is not the same as operational.")
            return "\n".join(out) + "\n"
        out.append("Showing the last answer, which may be out of date:")
    out.append(f"As of {_when(snapshot.fetched_at, now, tz)}: {describe_age(snapshot, now, tz)}")
    out.append(f"OpenAI overall: {_clean(snapshot.overall.description)}")
    source = f"Source: {snapshot.source}" + (" (fallback: less detail than the page itself)" if snapshot.fallback else "")
    out += [source, "", "Codex components:"]
    for c in snapshot.components:
        group = f"  ({c.group} group)" if c.group and c.group != "Codex" else ""
        out.append(f"  {_clean(c.name):<28} {_status_word(c.status, c.raw_status)}{group}")
    ongoing = [i for i in snapshot.incidents if i.codex and i.ongoing]
    recent = [i for i in snapshot.incidents if i.codex and not i.ongoing]
    if snapshot.incidents_error:  # the components answered, no incident source did
        out += ["", f"Codex incidents: unknown ({_clean(snapshot.incidents_error)}); not the same as none."]
        return "\n".join(out) + "\n"
    out += ["", "Ongoing Codex incidents:" if ongoing else "Ongoing Codex incidents: none"]
    for inc in ongoing:
        out += _incident_lines(inc, now, tz, latest_only=True)
    others = [i for i in snapshot.incidents if not i.codex and i.ongoing]
    if others:
        out += ["", "Other ongoing incidents: " + "; ".join(_clean(i.name) for i in others)]
    out += ["", "Resolved Codex incidents, last 7 days:" if recent else "Resolved Codex incidents, last 7 days: none"]
    for inc in recent:
        out += _incident_lines(inc, now, tz, latest_only=True)
    if snapshot.history_error:
        out += ["", f"(Incident history not refreshed: {snapshot.history_error})"]
    return "\n".join(out) + "\n"
