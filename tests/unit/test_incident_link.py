"""link_incident: which Codex incident overlaps the user's failures, and who noticed first."""

from __future__ import annotations

import pytest

from codexwatch.core.incident_link import IncidentLink, incident_for_turn, link_incident
from codexwatch.core.models import Incident, Overall, StatusSnapshot, Turn

T0 = 1_795_176_000.0  # 2026-11-20T12:00Z
MIN = 60.0


def failure(at: float, n: int = 0) -> Turn:
    return Turn(session_id="s", turn_id=f"t{n}", file="f", started_at=at - 5, ended_at=at, outcome="failed")


def incident(iid: str, *, started=None, published=None, updated=None, resolved=None, codex=True,
             status=None) -> Incident:
    status = status or ("resolved" if resolved is not None else "investigating")
    return Incident(iid, f"incident {iid}", status, "minor", started, updated or published, resolved, codex,
                    None, published_at=published)


def snap(*incidents: Incident, ok: bool = True) -> StatusSnapshot:
    return StatusSnapshot(ok=ok, error=None, source="x", fetched_at=T0, stale=not ok,
                          overall=Overall("minor", "x"), incidents=list(incidents))


def test_ongoing_incident_posted_after_the_first_failure_gives_a_positive_lead():
    failures = [failure(T0 - 20 * MIN, 1), failure(T0 - 15 * MIN, 2), failure(T0 - 10 * MIN, 3)]
    inc = incident("a", started=T0 - 25 * MIN, published=T0 - 8 * MIN)
    link = link_incident(failures, snap(inc))
    assert link == IncidentLink(inc, True, pytest.approx(12.0))


def test_lead_is_negative_when_openai_posted_first_and_none_without_a_post_time():
    failures = [failure(T0)]
    assert link_incident(failures, snap(incident("a", published=T0 - 30 * MIN))).lead_minutes == pytest.approx(-30)
    no_post = incident("b", started=T0 - 5 * MIN)
    link = link_incident(failures, snap(no_post))
    assert link.incident is no_post and link.lead_minutes is None


def test_failure_order_does_not_matter():
    failures = [failure(T0 - 10 * MIN, 1), failure(T0 - 40 * MIN, 2)]
    link = link_incident(failures, snap(incident("a", published=T0 - 20 * MIN)))
    assert link.lead_minutes == pytest.approx(20)


def test_ongoing_is_preferred_over_a_nearer_resolved_one():
    failures = [failure(T0 - 30 * MIN)]
    resolved = incident("r", started=T0 - 31 * MIN, published=T0 - 30 * MIN, resolved=T0 - 20 * MIN)
    ongoing = incident("o", started=T0 - 5 * MIN, published=T0 - 4 * MIN)
    link = link_incident(failures, snap(resolved, ongoing))
    assert link.incident is ongoing and link.ongoing


def test_resolved_incident_overlapping_the_episode_is_linked_as_not_ongoing():
    failures = [failure(T0 - 3 * 3600)]
    inc = incident("r", started=T0 - 3.2 * 3600, published=T0 - 2.9 * 3600, resolved=T0 - 2 * 3600)
    link = link_incident(failures, snap(inc))
    assert link.incident is inc and not link.ongoing and link.lead_minutes == pytest.approx(6)


def test_margin_bounds_the_overlap():
    failures = [failure(T0 - 5 * 3600)]
    ended_long_before = incident("r", started=T0 - 8 * 3600, resolved=T0 - 6 * 3600)
    assert link_incident(failures, snap(ended_long_before)) is None
    assert link_incident(failures, snap(ended_long_before), margin_s=3601) is not None
    posted_long_after = incident("o", started=T0 - 60 * MIN, published=T0 - 60 * MIN)
    assert link_incident(failures, snap(posted_long_after)) is None
    within = incident("w", published=T0 - 5 * 3600 + 25 * MIN)
    assert link_incident(failures, snap(within)).incident is within


def test_nearest_start_wins_among_several_resolved():
    failures = [failure(T0 - 2 * 3600)]
    far = incident("far", started=T0 - 2.4 * 3600, resolved=T0 - 1.9 * 3600)
    near = incident("near", started=T0 - 2.05 * 3600, resolved=T0 - 1.5 * 3600)
    assert link_incident(failures, snap(far, near)).incident is near


def test_non_codex_incidents_are_ignored():
    failures = [failure(T0)]
    assert link_incident(failures, snap(incident("x", published=T0, codex=False))) is None


def test_ongoing_incident_without_times_links_but_resolved_without_times_does_not():
    failures = [failure(T0)]
    assert link_incident(failures, snap(incident("o"))).incident.id == "o"
    assert link_incident(failures, snap(incident("r", status="resolved"))) is None


def test_nothing_to_link():
    assert link_incident([], snap(incident("o", published=T0))) is None
    assert link_incident([failure(T0)], None) is None
    assert link_incident([failure(T0)], snap()) is None
    no_time = Turn(session_id="s", turn_id="t", file="f", outcome="failed")
    assert link_incident([no_time], snap(incident("o", published=T0))) is None


def test_a_stale_snapshot_still_links_what_it_last_knew():
    failures = [failure(T0)]
    assert link_incident(failures, snap(incident("o", published=T0), ok=False)) is not None


def test_one_turn_is_tied_to_its_incident_or_told_why_not():
    turn = failure(T0)
    inc = incident("a", started=T0 - 5 * MIN, published=T0 - 2 * MIN)
    assert incident_for_turn(turn, snap(inc)) == (inc, None)
    assert incident_for_turn(turn, snap(incident("b", started=T0 - 9 * 60 * MIN, resolved=T0 - 8 * 60 * MIN))) == (
        None, "no status-page incident overlapped")
    for unread in (None, snap(inc, ok=False)):
        found, why = incident_for_turn(turn, unread)
        assert found is None and "not read" in why  # never "no incident" when the page was not read
