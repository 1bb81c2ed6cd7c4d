"""Pure status parsers: own fixtures, the real third-party captures, and edge shapes."""

from __future__ import annotations

import copy
import random
from datetime import timezone
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from codexwatch.core import status as st
from codexwatch.core.models import Component, Incident, IncidentUpdate, Overall, StatusSnapshot
from codexwatch.core.times import iso_utc, parse_iso
from tests.conftest import FIXTURES, shared_or_skip

OWN = FIXTURES / "status"
NOW = parse_iso("2026-11-20T12:00:00Z")
CLI, API, WEB, VSC, DESK = (
    "01KMKFAMWKNQ84Z1766MV08ZDE", "01KMP3KP5MGE23B80K1EK4S8PV", "01JVCV8YSWZFRSM1G5CVP253SK",
    "01KMP3KP5M8X0EBTVW6KN327EE", "01KMKFAMWKQ81YWSE1Z18R6VHR",
)


def iso_s(ts):
    return iso_utc(ts, "seconds")


def load(name: str):
    return orjson.loads((OWN / name).read_bytes())


def real(name: str) -> Path:
    return shared_or_skip("statuspage", "real", name)


@pytest.fixture
def summary():
    return load("proxy_summary_codex_outage.json")


# --- vocabulary and times -----------------------------------------------------------


@pytest.mark.parametrize("raw, want", [
    ("operational", "operational"), ("degraded_performance", "degraded_performance"),
    ("partial_outage", "partial_outage"), ("major_outage", "major_outage"),
    ("full_outage", "major_outage"), ("under_maintenance", "under_maintenance"),
    ("FULL_OUTAGE", "major_outage"), ("sideways", "unknown"), ("", "unknown"), (None, "unknown"), (3, "unknown"),
])
def test_status_words_map_to_statuspage_vocabulary(raw, want):
    assert st.map_component_status(raw) == want


def test_unknown_outranks_operational_and_maintenance_so_it_never_hides():
    assert st.worst_status(["operational", "unknown"]) == "unknown"
    assert st.worst_status(["under_maintenance", "unknown"]) == "unknown"
    assert st.worst_status(["unknown", "degraded_performance"]) == "degraded_performance"
    assert st.overall_from_statuses([]) == Overall("none", "All Systems Operational")
    assert st.overall_from_statuses(["major_outage", "operational"]).indicator == "critical"


@pytest.mark.parametrize("text, want", [
    ("2026-08-21T19:48:34.66Z", "2026-08-21T19:48:34Z"),
    ("2026-01-30T11:21:05.2Z", "2026-01-30T11:21:05Z"),
    ("2026-07-09T19:25:56Z", "2026-07-09T19:25:56Z"),
    ("2026-07-09T21:25:56+02:00", "2026-07-09T19:25:56Z"),
    ("2026-07-09T19:25:56", "2026-07-09T19:25:56Z"),
])
def test_times_of_every_shape_seen_parse_to_utc(text, want):
    assert iso_s(parse_iso(text)) == want


@pytest.mark.parametrize("junk", [None, "", "yesterday", 12, "2026-13-01T00:00:00Z"])
def test_unusable_times_are_none(junk):
    assert parse_iso(junk) is None


@given(hs.floats(min_value=0, max_value=4e9, allow_nan=False))
@settings(max_examples=50)
def test_iso_round_trip_to_the_second(ts):
    back = parse_iso(iso_s(ts))
    assert back == int(back) and ts - 1 < back <= ts + 1e-6  # whole seconds, never later


def test_rich_text_is_flattened_by_paragraph():
    doc = {"type": "doc", "content": [
        {"type": "paragraph", "content": [{"type": "text", "text": "One "}, {"type": "text", "text": "two."}]},
        {"type": "paragraph", "content": [{"type": "text", "text": "Three."}]}]}
    assert st.flatten_rich_text(doc) == "One two.\nThree."
    assert st.flatten_rich_text(None) == ""


# --- native summary -----------------------------------------------------------------


def test_codex_components_come_from_the_group_with_their_status(summary):
    part = st.parse_proxy_summary(summary)
    by_id = {c.id: c for c in part.components}
    assert [c.name for c in part.components] == [
        "Codex Cloud", "Codex API", "CLI", "VS Code extension", "Codex in ChatGPT Desktop"]
    assert by_id[CLI].status == "major_outage"  # full_outage
    assert by_id[API].status == "partial_outage"
    assert by_id[WEB].status == "operational"  # absent from affected_components
    assert by_id[VSC].status == "unknown" and by_id[VSC].raw_status == "sideways"
    assert by_id[DESK].group == "ChatGPT" and by_id[CLI].group == "Codex"
    assert "01TESTHIDDENCODEXCOMPONENT" not in by_id  # hidden member skipped


def test_overall_banner_is_the_worst_status_on_the_whole_page(summary):
    assert st.parse_proxy_summary(summary).overall == Overall("critical", "Major System Outage")
    summary["summary"]["affected_components"] = [{"component_id": "x", "status": "degraded_performance"}]
    assert st.parse_proxy_summary(summary).overall.indicator == "minor"
    summary["summary"]["affected_components"] = []
    assert st.parse_proxy_summary(summary).overall.indicator == "none"


def test_ongoing_incident_fields(summary):
    part = st.parse_proxy_summary(summary)
    inc = next(i for i in part.incidents if i.id == "01TESTONGOING0000000000001")
    assert inc.codex and inc.codex_match == "component" and inc.ongoing
    assert inc.status == "identified"  # the update word "fixing" is not an incident status; kept raw
    assert inc.impact == "critical"  # worst impact: full outage
    assert iso_s(inc.started_at) == "2026-11-20T11:05:00Z"  # impact began before the post
    assert iso_s(inc.published_at) == "2026-11-20T11:20:00Z"
    assert iso_s(inc.updated_at) == "2026-11-20T11:50:00Z"
    assert inc.resolved_at is None
    assert inc.url == "https://status.openai.com/incidents/01TESTONGOING0000000000001"
    assert [u.status for u in inc.updates] == ["identified", "investigating"]  # newest first, "fixing" mapped
    assert inc.updates[0].body == "A fix is rolling out.\nRetries may still fail."
    assert inc.updates[1].body == "We are investigating failures of <b>Codex CLI</b> requests."


def test_title_match_and_non_codex_incidents(summary):
    by_id = {i.id: i for i in st.parse_proxy_summary(summary).incidents}
    search = by_id["01TESTONGOING0000000000002"]
    assert search.codex and search.codex_match == "title"
    sora = by_id["01TESTONGOING0000000000003"]
    assert not sora.codex and sora.codex_match is None and sora.updates == []


def test_maintenance_in_progress_is_ongoing_and_scheduled_is_left_out(summary):
    by_id = {i.id: i for i in st.parse_proxy_summary(summary).incidents}
    maint = by_id["01TESTMAINT00000000000001"]
    assert maint.kind == "maintenance" and maint.status == "in_progress" and maint.ongoing and maint.codex
    assert maint.impact == "maintenance"
    assert "01TESTMAINT00000000000002" not in by_id


def test_group_found_by_id_when_renamed_then_by_seed_ids(summary):
    codex = summary["summary"]["structure"]["items"][3]["group"]
    codex["name"] = "Developer tools"
    assert st.parse_proxy_summary(summary).components[0].name == "Codex Cloud"
    codex["id"] = "01SOMETHINGELSE"
    part = st.parse_proxy_summary(summary)  # seed ids, looked up in summary.components
    assert {c.id for c in part.components} == {WEB, API, CLI, VSC, DESK}
    assert next(c for c in part.components if c.id == CLI).status == "major_outage"


def test_group_name_match_ignores_case_and_spaces_and_skips_hidden_groups(summary):
    codex = summary["summary"]["structure"]["items"][3]["group"]
    codex["name"] = " CODEX "
    assert len(st.parse_proxy_summary(summary).components) == 5
    codex["hidden"] = True
    codex["id"] = "01SOMETHINGELSE"
    part = st.parse_proxy_summary(summary)
    assert next(c for c in part.components if c.id == WEB).name == "Codex Cloud"  # via seeds


def test_no_codex_components_at_all_is_a_parse_error(summary):
    summary["summary"]["structure"]["items"] = summary["summary"]["structure"]["items"][:2]
    summary["summary"]["components"] = [c for c in summary["summary"]["components"]
                                        if c["id"] not in st.CODEX_SEED_COMPONENTS]
    with pytest.raises(st.StatusParseError, match="no Codex components"):
        st.parse_proxy_summary(summary)


@pytest.mark.parametrize("breakage", [
    lambda s: s.pop("summary"),
    lambda s: s["summary"].pop("affected_components"),
    lambda s: s["summary"].__setitem__("affected_components", {"x": 1}),
    lambda s: s["summary"].pop("ongoing_incidents"),
    lambda s: s["summary"].__setitem__("ongoing_incidents", None),
    lambda s: s["summary"]["structure"].pop("items"),
    lambda s: s["summary"].pop("structure"),
    lambda s: s["summary"].pop("components"),
    lambda s: s["summary"]["ongoing_incidents"].append({"name": "no id"}),
    lambda s: s["summary"]["ongoing_incidents"].append("text"),
])
def test_reshaped_summary_is_an_error_never_all_operational(summary, breakage):
    breakage(summary)
    with pytest.raises(st.StatusParseError):
        st.parse_proxy_summary(summary)


def test_non_object_payloads_are_errors():
    for payload in ([], None, "x", 3, {}):
        with pytest.raises(st.StatusParseError):
            st.parse_proxy_summary(payload)


def test_truncated_json_is_an_error():
    body = (OWN / "proxy_summary_codex_outage.json").read_bytes()
    with pytest.raises(st.StatusParseError, match="invalid JSON"):
        st.loads_json(body[: len(body) // 2])
    with pytest.raises(st.StatusParseError):
        st.loads_json((OWN / "challenge.html").read_bytes())


# --- native history -----------------------------------------------------------------


@pytest.fixture
def history(summary):
    part = st.parse_proxy_summary(summary)
    return st.parse_proxy_incidents(load("proxy_incidents_history.json"), part.codex_ids)


def test_history_skips_malformed_items_and_derives_resolution(history):
    by_id = {i.id: i for i in history}
    assert len(history) == 7  # two malformed items dropped
    latency = by_id["01TESTRESOLVED000000000001"]
    assert iso_s(latency.resolved_at) == "2026-11-18T09:31:00Z"  # the resolving update
    assert iso_s(latency.started_at) == "2026-11-18T07:55:00Z"
    assert not latency.ongoing
    login = by_id["01TESTRESOLVED000000000002"]  # no resolving update: end of the impact window
    assert iso_s(login.resolved_at) == "2026-11-16T21:00:00Z"
    assert login.codex_match == "title"
    maint = by_id["01TESTMAINTDONE00000000001"]
    assert maint.status == "completed" and maint.kind == "maintenance" and not maint.ongoing


def test_select_keeps_ongoing_and_recent_codex_and_prefers_the_summary_copy(summary, history):
    part = st.parse_proxy_summary(summary)
    chosen = st.select_incidents(part.incidents, history, NOW)
    ids = [i.id for i in chosen]
    assert "01TESTRESOLVED000000000001" in ids and "01TESTRESOLVED000000000002" in ids
    assert "01TESTMAINTDONE00000000001" in ids
    assert "01TESTRESOLVED000000000003" not in ids  # older than 7 days
    assert "01TESTRESOLVED000000000004" not in ids  # not Codex
    assert "01TESTMAINTFUTURE00000001" not in ids  # scheduled, not happening
    assert "01TESTONGOING0000000000003" in ids  # ongoing non-Codex kept for context
    ongoing_cli = next(i for i in chosen if i.id == "01TESTONGOING0000000000001")
    assert ongoing_cli.status == "identified"  # the summary's copy, not the history's
    assert ids.count("01TESTONGOING0000000000001") == 1
    assert all(i.ongoing for i in chosen[:4]) and not any(i.ongoing for i in chosen[4:])


# --- compat layer and feed ------------------------------------------------------------


def test_compat_components_by_seed_ids_with_both_outage_words():
    components, overall = st.parse_compat_components(load("compat_components.json"))
    by_id = {c.id: c for c in components}
    assert set(by_id) == {WEB, API, CLI, VSC, DESK}
    assert by_id[API].status == by_id[CLI].status == "major_outage"
    assert by_id[WEB].status == "under_maintenance"
    assert by_id[VSC].status == "unknown" and by_id[VSC].raw_status == "wobbly"
    assert overall.indicator == "critical"


def test_compat_components_without_codex_is_an_error():
    with pytest.raises(st.StatusParseError):
        st.parse_compat_components({"components": [{"id": "x", "name": "Sora", "status": "operational"}]})
    with pytest.raises(st.StatusParseError):
        st.parse_compat_components({"components": "nope"})


def test_compat_incidents_match_by_title_only():
    by_id = {i.id: i for i in st.parse_compat_incidents(load("compat_incidents.json"))}
    codex = by_id["01TESTCOMPAT00000000000001"]
    assert codex.codex and codex.codex_match == "title" and codex.ongoing and codex.impact == "major"
    assert codex.updates[0].body == "A fix has been applied." and codex.updates[1].body == ""
    assert codex.url == "https://status.openai.com/incidents/01TESTCOMPAT00000000000001"
    post = by_id["01TESTCOMPAT00000000000002"]
    assert not post.ongoing and iso_s(post.resolved_at) == "2026-11-19T08:00:00Z"
    assert not by_id["01TESTCOMPAT00000000000003"].codex
    assert not by_id["01TESTCOMPAT00000000000004"].codex  # "Codecs" is not Codex


def test_atom_feed_entries_and_affected_components():
    incidents, named = st.parse_atom((OWN / "history.atom").read_bytes())
    assert [i.id for i in incidents] == ["01TESTATOM0000000000000001", "01TESTATOM0000000000000002"]
    first, second = incidents
    assert first.status == "identified" and first.ongoing and first.codex_match == "component"
    assert first.updates[0].body == "We found the cause.\nA fix is rolling out."
    assert first.impact == "critical"
    assert first.url == "https://status.openai.com/incidents/01TESTATOM0000000000000001"
    assert second.status == "resolved" and not second.ongoing and second.codex_match == "title"
    assert named == {"CLI": "major_outage", "Codex API": "degraded_performance", "Search": "partial_outage"}
    by_name = {c.name: c.status for c in st.components_from_feed(named)}
    assert by_name["CLI"] == "major_outage" and by_name["Codex Web"] == "unknown"  # not "operational"


@pytest.mark.parametrize("body", [b"", b"<feed", b"<html><body>hi</body></html>", b"{}"])
def test_broken_feeds_are_errors(body):
    with pytest.raises(st.StatusParseError):
        st.parse_atom(body)


# --- the real captures (../shared, skipped when absent) --------------------------------


def test_real_proxy_incidents_capture():
    incidents = st.parse_proxy_incidents(
        orjson.loads(real("openai_proxy-incidents_2026-07-to-08_trimmed.json").read_bytes()),
        set(st.CODEX_SEED_COMPONENTS) | {DESK})
    by_name = {i.name: i for i in incidents}
    auth = by_name["Elevated Codex API authentication errors"]
    assert auth.codex_match == "component" and not auth.ongoing
    assert iso_s(auth.resolved_at) == "2026-08-20T17:15:51Z"  # no resolving update: impact end
    access = by_name["Some users are unable to access Codex"]
    assert access.codex and access.impact == "minor"
    logout = by_name["Unexpected logouts for some ChatGPT web users"]
    assert not logout.codex
    assert iso_s(logout.started_at) == "2026-08-21T17:57:00Z"  # backdated impact
    assert iso_s(logout.published_at) == "2026-08-21T19:48:34Z"
    assert by_name["Elevated Errors for Sora API"].impact == "critical"  # full_outage


def test_real_pleo_capture_maintenance_vocabulary():
    incidents = st.parse_proxy_incidents(
        orjson.loads(real("pleo_incidentio_proxy-incidents_2026-01_trimmed.json").read_bytes()), set())
    maint = next(i for i in incidents if i.kind == "maintenance")
    assert maint.status == "completed" and not maint.ongoing and maint.impact == "maintenance"
    assert not any(i.codex for i in incidents)


def test_real_compat_components_capture_has_all_codex_components():
    components, overall = st.parse_compat_components(
        orjson.loads(real("openai_api-v2-components_2026-07_trimmed.json").read_bytes()))
    assert {c.name for c in components} == {"Codex Web", "Codex API", "CLI", "VS Code extension",
                                            "Codex in ChatGPT Desktop"}
    assert all(c.status == "operational" for c in components)
    assert overall.indicator == "none"


def test_real_summary_json_lacks_codex_components_so_it_is_only_a_banner():
    payload = orjson.loads(real("openai_api-v2-summary_2026-10-09_operational.json").read_bytes())
    assert st.parse_compat_summary_overall(payload) == Overall("none", "All Systems Operational")
    with pytest.raises(st.StatusParseError):  # the rotating subset omits the Codex group
        st.parse_compat_components(payload)


def test_real_atlassian_summary_banner():
    payload = orjson.loads(real("claude_atlassian_api-v2-summary_2026-10-09_console-degraded.json").read_bytes())
    assert st.parse_compat_summary_overall(payload).indicator == "minor"
    assert st.parse_compat_summary_overall({"status": {"indicator": "purple"}}).indicator == "unknown"


def test_real_atom_capture():
    incidents, named = st.parse_atom(real("openai_history-atom_2026-09-03_trimmed.xml").read_bytes())
    first = incidents[0]
    assert first.id == "01M1KWEDH417T2CF44YYHZDFCR" and first.codex_match == "title" and first.ongoing
    assert first.url == "https://status.openai.com/incidents/01M1KWEDH417T2CF44YYHZDFCR"
    assert named == {"Search": "degraded_performance"}
    assert incidents[1].status == "resolved" and not incidents[1].codex


# --- snapshot helpers -----------------------------------------------------------------


def _snapshot(**kw) -> StatusSnapshot:
    base = dict(ok=True, error=None, source="https://x/proxy/status.openai.com", fetched_at=NOW, stale=False,
                overall=Overall("none", "All Systems Operational"),
                components=[Component(CLI, "CLI", "operational", "Codex")], incidents=[])
    base.update(kw)
    return StatusSnapshot(**base)


def test_snapshot_to_json_contract():
    inc = Incident("i1", "Codex down", "investigating", "major", NOW - 600, NOW - 60, None, True, "u",
                   [IncidentUpdate(NOW - 60, "investigating", "Looking.")], published_at=NOW - 300)
    data = st.snapshot_to_json(_snapshot(incidents=[inc]))
    assert orjson.loads(orjson.dumps(data)) == data
    assert {"ok", "error", "source", "fetched_at", "stale", "overall", "components", "incidents"} <= set(data)
    assert data["fetched_at"] == "2026-11-20T12:00:00Z"
    assert data["overall"] == {"indicator": "none", "description": "All Systems Operational"}
    assert {"id", "name", "status"} <= set(data["components"][0])
    row = data["incidents"][0]
    assert {"id", "name", "status", "impact", "started_at", "updated_at", "resolved_at", "codex", "url",
            "updates"} <= set(row)
    assert row["resolved_at"] is None and row["started_at"] == "2026-11-20T11:50:00Z"
    assert row["updates"] == [{"at": "2026-11-20T11:59:00Z", "status": "investigating", "body": "Looking."}]


def test_failed_snapshot_keeps_last_good_marked_stale():
    good = _snapshot()
    failed = st.snapshot_failed(good, "HTTP 503", NOW + 120)
    assert not failed.ok and failed.stale and failed.error == "HTTP 503"
    assert failed.fetched_at == NOW and failed.last_attempt_at == NOW + 120
    assert failed.components == good.components
    none = st.snapshot_failed(None, "DNS lookup failed", NOW)
    assert not none.ok and none.overall.indicator == "unknown" and none.components == []


def test_describe_age():
    utc = timezone.utc
    assert st.describe_age(None, NOW) == "unknown (not checked yet)"
    assert st.describe_age(_snapshot(), NOW + 20, utc) == "updated just now"
    assert st.describe_age(_snapshot(), NOW + 190, utc) == "updated 3 min ago"
    failed = st.snapshot_failed(_snapshot(), "HTTP 503", NOW + 900)
    assert st.describe_age(failed, NOW + 900, utc) == "unknown since 12:00 (last answer 15 min ago, HTTP 503)"
    assert st.describe_age(_snapshot(), NOW + 1200, utc).startswith("unknown since 12:00")  # too old
    assert st.describe_age(StatusSnapshot.unknown("read timeout"), NOW) == "unknown (read timeout)"


def test_codex_in_trouble():
    assert not st.codex_in_trouble(_snapshot())
    assert st.codex_in_trouble(_snapshot(components=[Component(CLI, "CLI", "unknown")]))
    inc = Incident("i", "x", "investigating", None, None, None, None, True, None)
    assert st.codex_in_trouble(_snapshot(incidents=[inc]))
    not_codex = copy.copy(inc)
    not_codex.codex = False
    assert not st.codex_in_trouble(_snapshot(incidents=[not_codex]))
    assert not st.codex_in_trouble(StatusSnapshot.unknown("x"))


# --- schedule -----------------------------------------------------------------------


class FixedRng(random.Random):
    def __init__(self, value: float):
        super().__init__(0)
        self.value = value

    def uniform(self, a, b):
        return a + (b - a) * self.value


def test_schedule_intervals_and_backoff():
    sched = st.PollSchedule()
    mid = FixedRng(0.5)  # no jitter
    assert sched.next_delay(False, False, mid) == 120
    assert sched.next_delay(True, False, mid) == 60
    assert sched.next_delay(False, True, mid) == 60
    delays = []
    for _ in range(4):
        sched.record_failure()
        delays.append(sched.next_delay(False, False, mid))
    assert delays == [60, 120, 300, 300]
    sched.record_success()
    assert sched.next_delay(False, False, mid) == 120


def test_schedule_jitter_bounds_and_retry_after_floor():
    sched = st.PollSchedule()
    assert sched.next_delay(False, False, FixedRng(0.0)) == pytest.approx(108)
    assert sched.next_delay(False, False, FixedRng(1.0)) == pytest.approx(132)
    sched.record_failure(retry_after=900)
    assert sched.next_delay(False, False, FixedRng(0.0)) == 900
    sched.record_failure(retry_after=10**6)
    assert sched.next_delay(False, False, FixedRng(0.5)) == 3600  # capped
    assert st.PollSchedule(interval=1).next_delay(False, False, FixedRng(0.0)) == 15  # floor


def test_a_chatgpt_only_desktop_outage_is_not_a_codex_incident(summary):
    part = st.parse_proxy_summary(summary)
    assert DESK not in part.codex_ids
    desk = next(c for c in part.components if c.id == DESK)
    desk.status = "major_outage"
    for comp in part.components:
        if comp.id != DESK:
            comp.status = "operational"
    from codexwatch.core.models import Overall, StatusSnapshot

    snap = StatusSnapshot(ok=True, error=None, source="x", fetched_at=0.0, stale=False,
                          overall=Overall("minor", "x"), components=part.components, incidents=[])
    assert not st.codex_in_trouble(snap)
