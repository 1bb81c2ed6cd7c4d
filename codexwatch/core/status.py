"""Pure parsers for status.openai.com (incident.io), and the polling schedule.

Payload bytes or decoded objects go in, parts of a `StatusSnapshot` come out. Anything
that does not have the shape we read raises `StatusParseError`: a reshaped answer must
become a failed fetch, never "all operational" (see docs/status-page-api.md §6.2).
"""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone, tzinfo
from typing import Any, Iterable

import orjson

from codexwatch.core.models import (
    Component,
    Incident,
    IncidentUpdate,
    Overall,
    StatusSnapshot,
)
from codexwatch.core.times import iso_utc, parse_iso

DEFAULT_PAGE_URL = "https://status.openai.com"
PROXY_SUMMARY_PATH = "/proxy/status.openai.com"
PROXY_INCIDENTS_PATH = "/proxy/status.openai.com/incidents"
COMPAT_COMPONENTS_PATH = "/api/v2/components.json"
COMPAT_INCIDENTS_PATH = "/api/v2/incidents.json"
ATOM_PATH = "/history.atom"

CODEX_GROUP_ID = "01KMKF9EBTCD8BN9PG8DJZXRSQ"
# Seed ids, used only when the payload carries no Codex group (spec §5).
CODEX_SEED_COMPONENTS = {
    "01JVCV8YSWZFRSM1G5CVP253SK": "Codex Web",
    "01KMP3KP5MGE23B80K1EK4S8PV": "Codex API",
    "01KMKFAMWKNQ84Z1766MV08ZDE": "CLI",
    "01KMP3KP5M8X0EBTVW6KN327EE": "VS Code extension",
}
# Sits in the ChatGPT group since mid-2026 but is a Codex surface; shown with its group.
CODEX_DESKTOP_ID = "01KMKFAMWKQ81YWSE1Z18R6VHR"
# "Codex in ChatGPT Desktop" sits in the ChatGPT group: shown, but a ChatGPT-only problem
# must not read as a Codex one (aiwatch #1008).
CHATGPT_GROUP = "ChatGPT"


def counts_for_codex(component: Component) -> bool:
    """Whether a component's state and incidents speak for Codex itself."""
    return component.group != CHATGPT_GROUP


TROUBLE_STATUSES = ("degraded_performance", "partial_outage", "major_outage")


def codex_components_in_trouble(snapshot: StatusSnapshot | None) -> list[Component]:
    """The components that speak for Codex (`counts_for_codex`: not the ChatGPT group's
    "Codex in ChatGPT Desktop") in a degraded or outage state. The one rule the header's
    status line and the verdict both read."""
    if snapshot is None or not snapshot.ok:
        return []
    return [c for c in snapshot.components if counts_for_codex(c) and c.status in TROUBLE_STATUSES]

RECENT_WINDOW_S = 7 * 86400
STALE_AFTER_S = 600.0

CODEX_TITLE = re.compile(r"\bcodex\b", re.IGNORECASE)

# Both vocabularies onto Statuspage's; anything else becomes "unknown", never OK.
_COMPONENT_STATUS = {
    "operational": "operational",
    "degraded_performance": "degraded_performance",
    "partial_outage": "partial_outage",
    "major_outage": "major_outage",
    "full_outage": "major_outage",
    "under_maintenance": "under_maintenance",
}
# Severity order for "worst of"; unknown ranks above operational so it never hides.
_SEVERITY = {
    "operational": 0,
    "under_maintenance": 1,
    "unknown": 2,
    "degraded_performance": 3,
    "partial_outage": 4,
    "major_outage": 5,
}
_OVERALL = {
    "operational": ("none", "All Systems Operational"),
    "under_maintenance": ("maintenance", "Maintenance in progress"),
    "unknown": ("unknown", "Some components report an unrecognised status"),
    "degraded_performance": ("minor", "Partial System Degradation"),
    "partial_outage": ("major", "Partial System Outage"),
    "major_outage": ("critical", "Major System Outage"),
}
_IMPACT = {
    "degraded_performance": "minor",
    "partial_outage": "major",
    "major_outage": "critical",
    "under_maintenance": "maintenance",
}
_INCIDENT_STATUS = {
    "fixing": "identified",  # reported incident.io word (spec §4)
    "maintenance_scheduled": "scheduled",
    "maintenance_in_progress": "in_progress",
    "maintenance_complete": "completed",
}
_CLOSED = ("resolved", "postmortem", "completed")
# Atom summaries say "Degraded performance"; map the human words back.
_HUMAN_STATUS = {
    "operational": "operational",
    "degraded performance": "degraded_performance",
    "partial outage": "partial_outage",
    "full outage": "major_outage",
    "major outage": "major_outage",
    "under maintenance": "under_maintenance",
}


class StatusParseError(ValueError):
    """The payload is not what we read; the message is a short reason for the user."""


# --- small helpers -----------------------------------------------------------------


def map_component_status(raw: Any) -> str:
    """incident.io or Statuspage word -> Statuspage vocabulary, else "unknown"."""
    if not isinstance(raw, str):
        return "unknown"
    return _COMPONENT_STATUS.get(raw.strip().lower(), "unknown")


def worst_status(statuses: Iterable[str]) -> str:
    return max(statuses, key=lambda s: _SEVERITY.get(s, _SEVERITY["unknown"]), default="operational")


def overall_from_statuses(statuses: Iterable[str]) -> Overall:
    indicator, description = _OVERALL[worst_status(statuses)]
    return Overall(indicator, description)


def _iso(ts: float | None) -> str | None:
    return iso_utc(ts, "seconds")  # the status page's times are to the second


def loads_json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        raise StatusParseError("invalid JSON (truncated or not JSON)") from None


def _require(obj: Any, key: str, kind: type, where: str) -> Any:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind):
        raise StatusParseError(f"unexpected shape: {where}.{key} missing or not a {kind.__name__}")
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def flatten_rich_text(node: Any) -> str:
    """incident.io rich-text docs ({type: doc, content: [...]}) -> plain text, paragraphs by newline."""
    if isinstance(node, str):
        return node
    if not isinstance(node, dict):
        return ""
    if node.get("type") == "text":
        return _text(node.get("text"))
    parts = [flatten_rich_text(child) for child in node.get("content") or [] if child]
    joiner = "\n" if node.get("type") in ("doc", "bulletList", "orderedList") else ""
    return joiner.join(p for p in parts if p)


def incident_url(page_url: str, incident_id: str) -> str:
    return f"{page_url.rstrip('/')}/incidents/{incident_id}"


def is_codex_title(name: str) -> bool:
    return bool(CODEX_TITLE.search(name))


# --- native incident.io: /proxy/status.openai.com ------------------------------------


@dataclass(slots=True)
class SummaryPart:
    """What the page summary answers: Codex components, ongoing incidents, the banner."""

    components: list[Component]
    incidents: list[Incident]
    overall: Overall
    codex_ids: frozenset[str]
    page_url: str = DEFAULT_PAGE_URL


def _groups(structure: dict) -> list[dict]:
    items = _require(structure, "items", list, "summary.structure")
    return [item["group"] for item in items if isinstance(item, dict) and isinstance(item.get("group"), dict)]


def _group_members(group: dict) -> list[tuple[str, str]]:
    members = []
    for member in group.get("components") or []:
        if not isinstance(member, dict) or member.get("hidden") is True:
            continue
        cid = member.get("component_id") or member.get("id")
        if isinstance(cid, str):
            members.append((cid, _text(member.get("name"))))
    return members


def codex_components_from_structure(summary: dict) -> list[tuple[str, str, str]]:
    """(id, name, group) of the Codex components: by group name, then group id, then seed ids."""
    groups = [g for g in _groups(_require(summary, "structure", dict, "summary")) if g.get("hidden") is not True]
    chosen = [g for g in groups if _text(g.get("name")).strip().casefold() == "codex"]
    chosen = chosen or [g for g in groups if g.get("id") == CODEX_GROUP_ID]
    found = [(cid, name, _text(g.get("name")) or "Codex") for g in chosen for cid, name in _group_members(g)]
    names = {c.get("id"): _text(c.get("name")) for c in summary.get("components") or [] if isinstance(c, dict)}
    if not found:
        found = [(cid, names[cid] or seed, "Codex") for cid, seed in CODEX_SEED_COMPONENTS.items() if cid in names]
    if not found:
        raise StatusParseError("no Codex components on the page")
    group_of = {cid: _text(g.get("name")) for g in groups for cid, _ in _group_members(g)}
    known = {cid for cid, _, _ in found}
    if CODEX_DESKTOP_ID not in known and (CODEX_DESKTOP_ID in group_of or CODEX_DESKTOP_ID in names):
        name = names.get(CODEX_DESKTOP_ID) or "Codex in ChatGPT Desktop"
        found.append((CODEX_DESKTOP_ID, name, group_of.get(CODEX_DESKTOP_ID) or CHATGPT_GROUP))
    return found


def _component_ids(incident: dict) -> set[str]:
    ids: set[str] = set()
    lists = [incident.get("affected_components"), incident.get("component_impacts")]
    lists += [u.get("component_statuses") for u in incident.get("updates") or [] if isinstance(u, dict)]
    for items in lists:
        for item in items or []:
            if isinstance(item, dict):
                cid = item.get("component_id") or item.get("id")
                if isinstance(cid, str):
                    ids.add(cid)
    return ids


def _native_updates(incident: dict) -> list[IncidentUpdate]:
    updates = []
    for u in incident.get("updates") or []:
        if not isinstance(u, dict):
            continue
        body = _text(u.get("message_string")) or flatten_rich_text(u.get("message"))
        status = u.get("to_status")
        status = _INCIDENT_STATUS.get(status, status) if isinstance(status, str) else None
        updates.append(IncidentUpdate(parse_iso(u.get("published_at")), status, body))
    if not updates and incident.get("last_update_message"):  # compact widget-style fields
        updates.append(IncidentUpdate(parse_iso(incident.get("last_update_at")), None,
                                      flatten_rich_text(incident.get("last_update_message"))))
    # Newest first, as Statuspage orders them; the page does not guarantee an order.
    return sorted(updates, key=lambda u: u.at if u.at is not None else float("-inf"), reverse=True)


def _native_impact_statuses(incident: dict) -> list[str]:
    raw = [item.get("status") for key in ("affected_components", "component_impacts")
           for item in incident.get(key) or [] if isinstance(item, dict)]
    raw += [s.get("worst_component_status") for s in incident.get("status_summaries") or [] if isinstance(s, dict)]
    return [map_component_status(s) for s in raw if s]


def _native_times(incident: dict, updates: list[IncidentUpdate], status: str) -> tuple:
    published = parse_iso(incident.get("published_at"))
    windows = [w for key in ("component_impacts", "status_summaries")
               for w in incident.get(key) or [] if isinstance(w, dict)]
    starts = [t for t in (parse_iso(w.get("start_at")) for w in windows) if t is not None]
    started = min(starts + ([published] if published is not None else []), default=None)
    update_times = [u.at for u in updates if u.at is not None]
    updated = max(update_times + ([published] if published is not None else []), default=None)
    resolved = None
    if status in _CLOSED:
        closing = [u.at for u in updates if u.status in _CLOSED and u.at is not None]
        ends = [parse_iso(w.get("end_at")) for w in windows]
        resolved = max(closing, default=None) or max((e for e in ends if e is not None), default=None) or updated
    return started, updated, resolved, published


def parse_native_incident(incident: Any, codex_ids: Iterable[str], page_url: str = DEFAULT_PAGE_URL) -> Incident:
    if not isinstance(incident, dict) or not isinstance(incident.get("id"), str):
        raise StatusParseError("unexpected shape: an incident without an id")
    name = _text(incident.get("name"))
    raw_status = _text(incident.get("status")).lower() or "unknown"
    status = _INCIDENT_STATUS.get(raw_status, raw_status)
    updates = _native_updates(incident)
    started, updated, resolved, published = _native_times(incident, updates, status)
    by_component = bool(_component_ids(incident) & set(codex_ids))
    match = "component" if by_component else "title" if is_codex_title(name) else None
    kind = "maintenance" if incident.get("type") == "maintenance" or raw_status.startswith("maintenance") else "incident"
    statuses = _native_impact_statuses(incident)
    impact = _IMPACT.get(worst_status(statuses)) if statuses else None
    url = incident.get("url") if isinstance(incident.get("url"), str) else incident_url(page_url, incident["id"])
    return Incident(
        id=incident["id"], name=name, status=status, impact=impact, started_at=started,
        updated_at=updated, resolved_at=resolved, codex=match is not None, url=url,
        updates=updates, published_at=published, codex_match=match, kind=kind,
    )


def parse_proxy_summary(payload: Any) -> SummaryPart:
    """`GET /proxy/status.openai.com` (decoded) -> Codex components, ongoing incidents, banner."""
    summary = _require(payload, "summary", dict, "body")
    _require(summary, "components", list, "summary")
    affected = _require(summary, "affected_components", list, "summary")
    ongoing = _require(summary, "ongoing_incidents", list, "summary")
    page_url = _text(summary.get("public_url")) or DEFAULT_PAGE_URL
    raw_of = {a["component_id"]: a.get("status") for a in affected
              if isinstance(a, dict) and isinstance(a.get("component_id"), str)}
    components = []
    for cid, name, group in codex_components_from_structure(summary):
        raw = raw_of.get(cid, "operational")  # absent from affected_components means operational
        status = map_component_status(raw)
        components.append(Component(cid, name, status, group, raw if status == "unknown" else None))
    codex_ids = frozenset(c.id for c in components if counts_for_codex(c))
    incidents = [parse_native_incident(i, codex_ids, page_url) for i in ongoing]
    in_progress = [m for m in summary.get("scheduled_maintenances") or []
                   if isinstance(m, dict) and m.get("status") == "maintenance_in_progress"]
    incidents += [parse_native_incident(m, codex_ids, page_url) for m in in_progress]
    overall = overall_from_statuses(map_component_status(s) for s in raw_of.values())
    return SummaryPart(components, incidents, overall, codex_ids, page_url)


def parse_proxy_incidents(payload: Any, codex_ids: Iterable[str], page_url: str = DEFAULT_PAGE_URL) -> list[Incident]:
    """`GET /proxy/status.openai.com/incidents` (decoded) -> incidents; odd items are skipped."""
    items = _require(payload, "incidents", list, "body")
    return _each_incident(items, parse_native_incident, frozenset(codex_ids), page_url)


def _each_incident(items: list, parse, codex_ids: Iterable[str], page_url: str) -> list[Incident]:
    out = []
    for item in items:
        try:
            out.append(parse(item, codex_ids, page_url))
        except StatusParseError:
            continue  # history is secondary: one odd item must not hide the others
    return out


# --- Statuspage-compatible layer: /api/v2/*.json ------------------------------------


def parse_compat_components(payload: Any) -> tuple[list[Component], Overall]:
    """`/api/v2/components.json` -> Codex components by id (the layer has no groups), banner."""
    items = _require(payload, "components", list, "body")
    by_id = {c["id"]: c for c in items if isinstance(c, dict) and isinstance(c.get("id"), str)}
    wanted = list(CODEX_SEED_COMPONENTS) + [CODEX_DESKTOP_ID]
    wanted += [cid for cid, c in by_id.items() if c.get("group_id") == CODEX_GROUP_ID and cid not in wanted]
    components = []
    for cid in wanted:
        if cid not in by_id:
            continue
        raw = by_id[cid].get("status")
        status = map_component_status(raw)
        group = CHATGPT_GROUP if cid == CODEX_DESKTOP_ID else "Codex"
        name = _text(by_id[cid].get("name")) or CODEX_SEED_COMPONENTS.get(cid, cid)
        components.append(Component(cid, name, status, group, raw if status == "unknown" else None))
    if not any(c.group == "Codex" for c in components):
        # The desktop app alone (as in summary.json's rotating subset) says nothing about Codex.
        raise StatusParseError("no Codex components in components.json")
    overall = overall_from_statuses(map_component_status(c.get("status")) for c in by_id.values())
    return components, overall


def parse_compat_incident(incident: Any, codex_ids: Iterable[str], page_url: str = DEFAULT_PAGE_URL) -> Incident:
    if not isinstance(incident, dict) or not isinstance(incident.get("id"), str):
        raise StatusParseError("unexpected shape: an incident without an id")
    name = _text(incident.get("name"))
    status = _text(incident.get("status")).lower() or "unknown"
    updates = [
        IncidentUpdate(parse_iso(u.get("display_at") or u.get("created_at")),
                       u.get("status") if isinstance(u.get("status"), str) else None, _text(u.get("body")))
        for u in incident.get("incident_updates") or [] if isinstance(u, dict)
    ]
    updates.sort(key=lambda u: u.at if u.at is not None else float("-inf"), reverse=True)
    ids = {c.get("id") or c.get("code") for c in incident.get("components") or [] if isinstance(c, dict)}
    match = "component" if ids & set(codex_ids) else "title" if is_codex_title(name) else None
    created = parse_iso(incident.get("created_at"))
    updated = parse_iso(incident.get("updated_at"))
    resolved = parse_iso(incident.get("resolved_at"))
    if resolved is None and status in _CLOSED:
        resolved = updated or created
    impact = incident.get("impact") if isinstance(incident.get("impact"), str) else None
    url = incident.get("shortlink") if isinstance(incident.get("shortlink"), str) else None
    return Incident(
        id=incident["id"], name=name, status=status, impact=impact,
        started_at=parse_iso(incident.get("started_at")) or created, updated_at=updated,
        resolved_at=resolved, codex=match is not None, url=url or incident_url(page_url, incident["id"]),
        updates=updates, published_at=created, codex_match=match,
    )


def parse_compat_incidents(payload: Any, page_url: str = DEFAULT_PAGE_URL) -> list[Incident]:
    """`/api/v2/incidents.json` -> incidents; components are always empty there, so Codex = title."""
    items = _require(payload, "incidents", list, "body")
    return _each_incident(items, parse_compat_incident, set(CODEX_SEED_COMPONENTS), page_url)


def parse_compat_summary_overall(payload: Any) -> Overall:
    """The page-wide banner of `/api/v2/summary.json`. Never read Codex components from it."""
    status = _require(payload, "status", dict, "body")
    indicator = status.get("indicator")
    if indicator not in ("none", "minor", "major", "critical", "maintenance"):
        return Overall("unknown", _text(status.get("description")) or "unknown")
    return Overall(indicator, _text(status.get("description")) or indicator)


# --- Atom feed: /history.atom (last resort) -------------------------------------------

_ATOM = "{http://www.w3.org/2005/Atom}"
_STATUS_LINE = re.compile(r"Status:\s*([A-Za-z _-]+?)\s*<", re.IGNORECASE)
_AFFECTED = re.compile(r"<li>\s*([^<]+?)\s*\(([^)<]+)\)\s*</li>", re.IGNORECASE)
_TAGS = re.compile(r"<[^>]+>")


def _entry_text(entry: ET.Element, tag: str) -> str:
    node = entry.find(_ATOM + tag)
    return node.text or "" if node is not None else ""


def _feed_body(html: str) -> str:
    """The update text of a summary: drop the status line and the component list."""
    html = re.sub(r"<b>\s*Status:.*?</b>", "", html, flags=re.IGNORECASE | re.DOTALL)
    html = re.split(r"<b>\s*Affected components", html, flags=re.IGNORECASE)[0]
    text = _TAGS.sub(" ", html.replace("<br/>", "\n").replace("<br>", "\n"))
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def parse_atom(body: bytes, page_url: str = DEFAULT_PAGE_URL) -> tuple[list[Incident], dict[str, str]]:
    """history.atom -> incidents, and {component name: status} named by ongoing entries."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        raise StatusParseError("invalid XML feed") from None
    if root.tag != _ATOM + "feed":
        raise StatusParseError("unexpected shape: not an Atom feed")
    codex_names = {n.casefold() for n in CODEX_SEED_COMPONENTS.values()} | {"codex in chatgpt desktop"}
    incidents, named = [], {}
    for entry in root.findall(_ATOM + "entry"):
        link = entry.find(_ATOM + "link")
        ref = _entry_text(entry, "id") or (link.get("href", "") if link is not None else "")
        incident_id = ref.rstrip("/").rsplit("/", 1)[-1]  # also undoes the page's "//incidents"
        if not incident_id:
            continue
        html = _entry_text(entry, "summary") or _entry_text(entry, "content")
        status_match = _STATUS_LINE.search(html)
        status = status_match.group(1).strip().lower().replace(" ", "_") if status_match else "unknown"
        affected = {name.strip(): _HUMAN_STATUS.get(word.strip().lower(), "unknown") for name, word in _AFFECTED.findall(html)}
        name = _entry_text(entry, "title").strip()
        match = "component" if {n.casefold() for n in affected} & codex_names else "title" if is_codex_title(name) else None
        at = parse_iso(_entry_text(entry, "updated"))
        closed = status in _CLOSED
        if not closed:
            named.update(affected)
        incidents.append(Incident(
            id=incident_id, name=name, status=status,
            impact=_IMPACT.get(worst_status(affected.values())) if affected else None,
            started_at=None, updated_at=at, resolved_at=at if closed else None, codex=match is not None,
            url=incident_url(page_url, incident_id), updates=[IncidentUpdate(at, status, _feed_body(html))],
            published_at=None, codex_match=match,
        ))
    return incidents, named


def components_from_feed(named: dict[str, str]) -> list[Component]:
    """The feed names only affected components: the others are unknown, not operational."""
    by_name = {n.casefold(): s for n, s in named.items()}
    seeds = list(CODEX_SEED_COMPONENTS.items()) + [(CODEX_DESKTOP_ID, "Codex in ChatGPT Desktop")]
    return [
        Component(cid, name, by_name.get(name.casefold(), "unknown"), CHATGPT_GROUP if cid == CODEX_DESKTOP_ID else "Codex")
        for cid, name in seeds
    ]


# --- assembling a snapshot -----------------------------------------------------------


def select_incidents(ongoing: list[Incident], history: list[Incident], now: float,
                     window_s: float = RECENT_WINDOW_S) -> list[Incident]:
    """Every ongoing incident (Codex or not, for context) plus Codex ones closed within the window.

    The summary's view of what is ongoing wins over the history's copy of the same id.
    Scheduled, not yet started maintenance is left out: it is not happening.
    """
    chosen: dict[str, Incident] = {i.id: i for i in ongoing if i.status != "scheduled"}
    for inc in history:
        if inc.id in chosen or inc.status == "scheduled":
            continue
        if inc.ongoing or (inc.codex and inc.resolved_at is not None and now - inc.resolved_at <= window_s):
            chosen[inc.id] = inc
    return sorted(chosen.values(), key=lambda i: (not i.ongoing, -(i.updated_at or i.published_at or 0.0)))


def snapshot_ok(*, source: str, fetched_at: float, overall: Overall, components: list[Component],
                incidents: list[Incident], fallback: bool = False,
                history_error: str | None = None, incidents_error: str | None = None) -> StatusSnapshot:
    return StatusSnapshot(
        ok=True, error=None, source=source, fetched_at=fetched_at, stale=False, overall=overall,
        components=components, incidents=incidents, last_attempt_at=fetched_at,
        fallback=fallback, history_error=history_error, incidents_error=incidents_error,
    )


def snapshot_failed(last_good: StatusSnapshot | None, error: str, now: float) -> StatusSnapshot:
    """A failed fetch: the last good answer stays, marked stale, with the reason."""
    if last_good is None or last_good.fetched_at is None:
        return StatusSnapshot.unknown(error, at=now)
    return replace(last_good, ok=False, error=error, stale=True, last_attempt_at=now)


def codex_in_trouble(snapshot: StatusSnapshot | None) -> bool:
    """Anything Codex not operational (unknown included), or a Codex incident open."""
    if snapshot is None or not snapshot.ok:
        return False  # no answer is not evidence of trouble; the back-off rules that case
    if any(c.status != "operational" for c in snapshot.components if counts_for_codex(c)):
        return True
    return bool(snapshot.codex_incidents_ongoing)


def is_stale(snapshot: StatusSnapshot | None, now: float, max_age_s: float = STALE_AFTER_S) -> bool:
    if snapshot is None or snapshot.fetched_at is None:
        return True
    return snapshot.stale or now - snapshot.fetched_at > max_age_s


# --- text and JSON at the edge ----------------------------------------------------


def _ago(seconds: float) -> str:
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} d ago"


def clock_time(ts: float, tz: tzinfo | None = None) -> str:
    """HH:MM in tz (None: the machine's local zone)."""
    moment = datetime.fromtimestamp(ts, timezone.utc)
    return moment.astimezone(tz).strftime("%H:%M")


def describe_age(snapshot: StatusSnapshot | None, now: float, tz: tzinfo | None = None) -> str:
    """"updated 3 min ago", or "unknown since 09:12 (HTTP 503)" once the answers stopped."""
    if snapshot is None:
        return "unknown (not checked yet)"
    if snapshot.fetched_at is None:
        return f"unknown ({snapshot.error})" if snapshot.error else "unknown"
    age = max(0.0, now - snapshot.fetched_at)
    if snapshot.ok and not is_stale(snapshot, now):
        return "updated just now" if age < 60 else f"updated {_ago(age)}"
    reason = f", {snapshot.error}" if snapshot.error else ""
    return f"unknown since {clock_time(snapshot.fetched_at, tz)} (last answer {_ago(age)}{reason})"


def _incident_json(i: Incident) -> dict:
    return {
        "id": i.id, "name": i.name, "status": i.status, "impact": i.impact,
        "started_at": _iso(i.started_at), "updated_at": _iso(i.updated_at),
        "resolved_at": _iso(i.resolved_at), "published_at": _iso(i.published_at),
        "ongoing": i.ongoing, "codex": i.codex, "codex_match": i.codex_match, "kind": i.kind,
        "url": i.url,
        "updates": [{"at": _iso(u.at), "status": u.status, "body": u.body} for u in i.updates],
    }


def snapshot_to_json(snapshot: StatusSnapshot) -> dict:
    """The `status --json` object; times as ISO-8601 UTC ("...Z") or null."""
    return {
        "ok": snapshot.ok,
        "error": snapshot.error,
        "source": snapshot.source,
        "fetched_at": _iso(snapshot.fetched_at),
        "last_attempt_at": _iso(snapshot.last_attempt_at),
        "stale": snapshot.stale,
        "fallback": snapshot.fallback,
        "history_error": snapshot.history_error,
        "incidents_error": snapshot.incidents_error,
        "overall": {"indicator": snapshot.overall.indicator, "description": snapshot.overall.description},
        "components": [
            {"id": c.id, "name": c.name, "status": c.status, "group": c.group, "raw_status": c.raw_status}
            for c in snapshot.components
        ],
        "incidents": [_incident_json(i) for i in snapshot.incidents],
    }


# --- polling schedule ----------------------------------------------------------------


@dataclass(slots=True)
class PollSchedule:
    """When to ask next: 120 s quiet, 60 s in trouble, 60 -> 120 -> 300 s after failures.

    Jitter spreads many dashboards apart; Retry-After from a 429/503 is a floor.
    """

    interval: float = 120.0
    fast_interval: float = 60.0
    backoff: tuple[float, ...] = (60.0, 120.0, 300.0)
    jitter: float = 0.1
    min_interval: float = 15.0  # the page asks for restraint; never faster than this
    max_retry_after: float = 3600.0
    failures: int = 0
    retry_after: float | None = None
    _rng: random.Random = field(default_factory=random.Random, repr=False)

    def record_success(self) -> None:
        self.failures = 0
        self.retry_after = None

    def record_failure(self, retry_after: float | None = None) -> None:
        self.failures += 1
        self.retry_after = min(retry_after, self.max_retry_after) if retry_after else None

    def base_delay(self, codex_trouble: bool, user_failures_rising: bool) -> float:
        if self.failures:
            return self.backoff[min(self.failures, len(self.backoff)) - 1]
        if codex_trouble or user_failures_rising:
            return min(self.fast_interval, self.interval)
        return self.interval

    def next_delay(self, codex_trouble: bool = False, user_failures_rising: bool = False,
                   rng: random.Random | None = None) -> float:
        base = max(self.base_delay(codex_trouble, user_failures_rising), self.min_interval)
        delay = base * (1.0 + (rng or self._rng).uniform(-self.jitter, self.jitter))
        return max(delay, self.retry_after or 0.0, self.min_interval)
