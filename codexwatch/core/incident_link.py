"""Tie what the user felt locally to what the status page said.

Given the failed turns of an episode and a status snapshot: is there a Codex incident
that overlaps the failures in time, and did the user feel it before OpenAI posted it?
"""

from __future__ import annotations

from dataclasses import dataclass

from codexwatch.core.models import Incident, StatusSnapshot, Turn


@dataclass(slots=True)
class IncidentLink:
    incident: Incident
    ongoing: bool
    # Minutes from the user's first failure to the incident's post; positive means the
    # user felt it first. None when the page gives no post time.
    lead_minutes: float | None


def _window(incident: Incident) -> tuple[float | None, float | None]:
    """(start, end) of the incident; an ongoing incident runs until now and beyond.

    The start is the earliest time known: impacts are often backdated before the post.
    """
    times = [t for t in (incident.started_at, incident.published_at, incident.updated_at) if t is not None]
    start = min(times, default=None)
    end = float("inf") if incident.ongoing else (incident.resolved_at or incident.updated_at or start)
    return start, end


def _overlaps(incident: Incident, first: float, last: float, margin_s: float) -> bool:
    start, end = _window(incident)
    if start is None or end is None:
        return incident.ongoing  # no times at all: only "happening now" is safe to claim
    return start <= last + margin_s and end >= first - margin_s


def _distance(incident: Incident, first: float) -> float:
    start, _ = _window(incident)
    return abs((start if start is not None else first) - first)


def link_incident(
    failures: list[Turn], snapshot: StatusSnapshot | None, margin_s: float = 1800
) -> IncidentLink | None:
    """The Codex incident that overlaps the failures (±margin), ongoing ones first.

    Among several candidates of the same kind, the one that began nearest the first
    failure wins. Incidents that only mention Codex in the title count too; the
    incident's `codex_match` tells the caller how sure that is.
    """
    times = [t.at for t in failures if t.at]
    if not times or snapshot is None:
        return None
    first, last = min(times), max(times)
    candidates = [i for i in snapshot.incidents if i.codex and _overlaps(i, first, last, margin_s)]
    if not candidates:
        return None
    best = min(candidates, key=lambda i: (not i.ongoing, _distance(i, first)))
    lead = (best.published_at - first) / 60.0 if best.published_at is not None else None
    return IncidentLink(best, best.ongoing, lead)


def incident_for_turn(turn: Turn, snapshot: StatusSnapshot | None) -> tuple[Incident | None, str | None]:
    """The Codex incident that overlapped one failed turn, else why none is named."""
    if snapshot is None or not snapshot.ok:
        return None, "status page not read: cannot say whether an incident overlapped"
    link = link_incident([turn], snapshot)
    if link is not None:
        return link.incident, None
    return None, "no status-page incident overlapped"
