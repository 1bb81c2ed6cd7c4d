"""The data the whole product passes around: turns, episodes, status snapshots.

Times are epoch seconds (UTC) as floats everywhere in the core; conversion to
text happens at the edges (JSON output, widgets).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

Clock = Callable[[], float]

OUTCOMES = ("ok", "failed", "aborted", "incomplete")

# The vocabulary of the whole product: these names appear in JSON, tables and advice.
ERROR_CLASSES = (
    "capacity",
    "rate_limit",
    "usage_limit",
    "model_unavailable",
    "auth",
    "server_error",
    "stream_disconnected",
    "context_window",
    "other",
    "unrecorded",
)

SHAPES = ("rejected", "interrupted")


@dataclass(slots=True)
class Turn:
    """One user turn of one Codex session, with its outcome and, if it failed, why."""

    session_id: str
    turn_id: str
    file: str
    cli_version: str | None = None
    originator: str | None = None
    provider: str | None = None
    cwd: str | None = None
    model: str | None = None
    effort: str | None = None
    fast: bool | None = None  # True when service_tier == "priority"; None when unknown
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: int | None = None
    outcome: str = "incomplete"
    error_class: str | None = None
    codex_error_info: Any = None  # raw: a string or a one-key object, as Codex wrote it
    http_status: int | None = None
    message: str | None = None
    shape: str | None = None  # "rejected" | "interrupted" for failed turns
    # Beyond the JSON contract: facts the statistics and the advice read.
    tool_calls: int = 0  # before the failure; 0 for a turn that succeeded (not counted)
    tokens: int = 0  # tokens this turn consumed (delta of total_token_usage)
    context_used: int | None = None
    context_window: int | None = None
    turn_index: int = 0  # position of the turn in its session (0-based)
    live: bool = False  # an incomplete turn whose file is still being written
    rate_limit_resets_at: float | None = None  # from token_count.rate_limits, when given
    time_to_first_token_ms: int | None = None
    # The plan's windows as the turn's last token_count gave them (core/usage.py's reading:
    # a plain tuple), None when it gave no figure.
    usage: tuple | None = None

    @property
    def at(self) -> float:
        """The moment the turn is placed at on a timeline: its end, else its start."""
        return self.ended_at or self.started_at or 0.0

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"


TURN_JSON_KEYS = (
    "session_id",
    "turn_id",
    "file",
    "cli_version",
    "originator",
    "provider",
    "cwd",
    "model",
    "effort",
    "fast",
    "started_at",
    "ended_at",
    "duration_ms",
    "outcome",
    "error_class",
    "codex_error_info",
    "http_status",
    "message",
    "shape",
)


@dataclass(slots=True)
class Episode:
    """Consecutive failed turns with no success between them and no gap over 30 minutes."""

    id: str
    failures: list[Turn]
    ongoing: bool  # no successful turn has followed it yet

    @property
    def first(self) -> float:
        return self.failures[0].at

    @property
    def last(self) -> float:
        return self.failures[-1].at

    @property
    def classes(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for t in self.failures:
            counts[t.error_class or "other"] = counts.get(t.error_class or "other", 0) + 1
        return counts

    @property
    def models(self) -> list[str]:
        return _unique([t.model or "unknown" for t in self.failures])

    @property
    def sessions(self) -> list[str]:
        return _unique([t.session_id for t in self.failures])


def _unique(items) -> list:
    return list(dict.fromkeys(items))  # first-seen order


@dataclass(slots=True)
class FileHealth:
    """What the reader understood of one file."""

    path: str
    cli_version: str | None = None
    lines: int = 0
    malformed: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)
    oversized: int = 0
    unsupported: bool = False  # era A: no turns can be recovered
    skimmed: bool = False  # first read visited turn boundaries only: lines were not all checked
    error: str | None = None  # the file vanished, could not be read, ...


# --- status page -----------------------------------------------------------------

# Statuspage vocabulary; incident.io values are mapped onto it by the parser.
COMPONENT_STATUSES = (
    "operational",
    "degraded_performance",
    "partial_outage",
    "major_outage",
    "under_maintenance",
    "unknown",
)


@dataclass(slots=True)
class Component:
    id: str
    name: str
    status: str  # one of COMPONENT_STATUSES
    group: str | None = None  # the page's group name ("Codex", "ChatGPT"), when known
    raw_status: str | None = None  # the page's own word, kept when it mapped to "unknown"


@dataclass(slots=True)
class IncidentUpdate:
    at: float | None
    status: str | None
    body: str


@dataclass(slots=True)
class Incident:
    id: str
    name: str
    status: str  # investigating | identified | monitoring | resolved | ...
    impact: str | None
    started_at: float | None  # when the impact began (may precede the post)
    updated_at: float | None
    resolved_at: float | None
    codex: bool  # touches Codex, by component or by title
    url: str | None
    updates: list[IncidentUpdate] = field(default_factory=list)
    published_at: float | None = None  # when OpenAI posted it
    codex_match: str | None = None  # "component" | "title": a title match may over-include
    kind: str = "incident"  # "incident" | "maintenance"

    @property
    def ongoing(self) -> bool:
        return self.resolved_at is None and self.status not in ("resolved", "completed")


@dataclass(slots=True)
class Overall:
    indicator: str  # none | minor | major | critical | maintenance | unknown
    description: str


@dataclass(slots=True)
class StatusSnapshot:
    """What the status page said, or why we could not tell. Never 'all clear' by default."""

    ok: bool
    error: str | None
    source: str | None
    fetched_at: float | None
    stale: bool
    overall: Overall
    components: list[Component] = field(default_factory=list)
    incidents: list[Incident] = field(default_factory=list)
    last_attempt_at: float | None = None
    fallback: bool = False  # answered by a fallback endpoint (compat JSON or the feed)
    history_error: str | None = None  # the recent-incidents fetch failed; older history kept
    # The components answered but no incident source did: the incident list is unknown
    # (empty, not "none"), and this says why.
    incidents_error: str | None = None

    @property
    def codex_incidents_ongoing(self) -> list[Incident]:
        return [i for i in self.incidents if i.codex and i.ongoing]

    @classmethod
    def unknown(cls, error: str, at: float | None = None) -> "StatusSnapshot":
        return cls(
            ok=False,
            error=error,
            source=None,
            fetched_at=None,
            stale=True,
            overall=Overall("unknown", "unknown"),
            last_attempt_at=at,
        )
