"""Hand-built turns and episodes for the advice, triage and report tests."""

from __future__ import annotations

from datetime import datetime, timezone

from codexwatch.core.models import Component, Episode, Incident, Overall, StatusSnapshot, Turn

UTC = timezone.utc
# Wednesday 2026-11-25 20:00 UTC: outside weekday working hours, so no peak hint by accident.
T0 = datetime(2026, 11, 25, 20, 0, tzinfo=UTC).timestamp()

_INFO = {
    "capacity": "server_overloaded",
    "rate_limit": {"response_too_many_failed_attempts": {"http_status_code": 429}},
    "usage_limit": "usage_limit_exceeded",
    "model_unavailable": "model_not_found",
    "auth": {"http_connection_failed": {"http_status_code": 401}},
    "server_error": "internal_server_error",
    "stream_disconnected": "other",
    "context_window": "context_window_exceeded",
    "other": "sandbox_error",
    "unrecorded": None,
}


def turn(at: float, outcome: str = "failed", cls: str | None = "capacity", *, session: str = "s1",
         model: str = "gpt-6-sol", index: int = 0, duration: float = 5.0, **kw) -> Turn:
    failed = outcome == "failed"
    fields = dict(
        session_id=session, turn_id=f"{session}-t{index}-{int(at)}", file=f"/x/{session}.jsonl",
        cli_version="0.171.0", originator="codex-tui", provider="openai",
        cwd="/home/dev/src/app", model=model, fast=None, started_at=at - duration, ended_at=at,
        duration_ms=int(duration * 1000), outcome=outcome,
        error_class=cls if failed else None,
        codex_error_info=_INFO.get(cls) if failed else None,
        message="Selected model is at capacity. Please try a different model." if failed else None,
        shape="rejected" if failed else None, turn_index=index,
    )
    fields.update(kw)
    return Turn(**fields)


def episode(*failures: Turn, ongoing: bool = True, id: str = "ep-1") -> Episode:
    return Episode(id=id, failures=list(failures), ongoing=ongoing)


def snapshot(incident: bool = False, at: float = T0) -> StatusSnapshot:
    incidents = []
    if incident:
        incidents.append(Incident(
            id="inc1", name="Degraded performance in Codex", status="investigating",
            impact="minor", started_at=at - 1200, updated_at=at - 600, resolved_at=None,
            codex=True, url="https://status.openai.com/incidents/inc1"))
    return StatusSnapshot(ok=True, error=None, source="test", fetched_at=at, stale=False,
                          overall=Overall("minor" if incident else "none", "x"),
                          components=[Component("c1", "Codex", "operational")],
                          incidents=incidents)


UNKNOWN = StatusSnapshot.unknown("not checked: --no-status")
