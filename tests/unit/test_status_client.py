"""StatusClient through httpx.MockTransport: failures, fallbacks, back-off, validators, staleness."""

from __future__ import annotations

import gzip
import random
import socket
import ssl

import httpx
import pytest

from codexwatch import __version__
from codexwatch.core import status as st
from codexwatch.core.times import parse_iso
from codexwatch.sources.status_client import StatusClient, fetch_status_once, parse_retry_after
from tests.conftest import FIXTURES

OWN = FIXTURES / "status"
BASE = "https://status.test"
NOW = parse_iso("2026-11-20T12:00:00Z")
JSON = {"content-type": "application/json; charset=utf-8"}
SUMMARY = (OWN / "proxy_summary_codex_outage.json").read_bytes()
HISTORY = (OWN / "proxy_incidents_history.json").read_bytes()


class FakePage:
    """Routes by path; a route is a Response, an exception to raise, or a callable."""

    def __init__(self, **routes):
        self.routes = {
            st.PROXY_SUMMARY_PATH: httpx.Response(200, content=SUMMARY, headers=JSON),
            st.PROXY_INCIDENTS_PATH: httpx.Response(200, content=HISTORY, headers=JSON),
        }
        self.routes.update({_path(k): v for k, v in routes.items()})
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        route = self.routes.get(request.url.path, httpx.Response(404, text="not found"))
        if isinstance(route, Exception):
            raise route
        if callable(route) and not isinstance(route, httpx.Response):
            return route(request)
        return httpx.Response(route.status_code, headers=route.headers, content=route.content)

    @property
    def paths(self) -> list[str]:
        return [r.url.path for r in self.requests]


def _path(key: str) -> str:
    return {
        "summary": st.PROXY_SUMMARY_PATH, "history": st.PROXY_INCIDENTS_PATH,
        "components": st.COMPAT_COMPONENTS_PATH, "incidents": st.COMPAT_INCIDENTS_PATH, "atom": st.ATOM_PATH,
    }[key]


class Clock:
    def __init__(self, now: float = NOW):
        self.now = now

    def __call__(self) -> float:
        return self.now


class NoJitter(random.Random):
    def uniform(self, a, b):
        return (a + b) / 2


def client_for(page: FakePage, clock: Clock | None = None, **kw) -> StatusClient:
    return StatusClient(BASE, transport=httpx.MockTransport(page), clock=clock or Clock(),
                        rng=NoJitter(), **kw)


# --- the happy path -------------------------------------------------------------------


async def test_primary_answer_builds_the_snapshot():
    page = FakePage()
    async with client_for(page) as client:
        snap = await client.fetch()
    assert snap.ok and not snap.stale and not snap.fallback and snap.error is None
    assert snap.source == BASE + st.PROXY_SUMMARY_PATH
    assert snap.fetched_at == NOW
    assert {c.name: c.status for c in snap.components}["CLI"] == "major_outage"
    assert "01TESTRESOLVED000000000001" in {i.id for i in snap.incidents}  # history merged
    assert page.paths == [st.PROXY_SUMMARY_PATH, st.PROXY_INCIDENTS_PATH]


async def test_requests_carry_an_honest_user_agent_and_accept():
    page = FakePage()
    async with client_for(page) as client:
        await client.fetch()
    ua = page.requests[0].headers["user-agent"]
    assert ua.startswith(f"codexwatch/{__version__} ") and "+https://" in ua
    assert page.requests[0].headers["accept"] == "application/json"


async def test_history_is_fetched_every_ten_minutes_or_when_ongoing_set_changes():
    page, clock = FakePage(), Clock()
    async with client_for(page, clock) as client:
        await client.fetch()
        clock.now += 120
        await client.fetch()
        assert page.paths.count(st.PROXY_INCIDENTS_PATH) == 1
        clock.now += 600
        await client.fetch()
        assert page.paths.count(st.PROXY_INCIDENTS_PATH) == 2
        # An incident resolves: the set of ongoing ids changes, so history is asked at once.
        body = SUMMARY.replace(b'"01TESTONGOING0000000000003"', b'"01TESTONGOING0000000000009"')
        page.routes[st.PROXY_SUMMARY_PATH] = httpx.Response(200, content=body, headers=JSON)
        clock.now += 60
        await client.fetch()
        assert page.paths.count(st.PROXY_INCIDENTS_PATH) == 3


# --- every failure becomes a failed fetch with a short reason -----------------------------


def _gaierror_connect(request):
    try:
        raise socket.gaierror(-2, "Name or service not known")
    except socket.gaierror as exc:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request) from exc


def _tls_connect(request):
    try:
        raise ssl.SSLCertVerificationError(1, "certificate verify failed: unable to get local issuer")
    except ssl.SSLError as exc:
        raise httpx.ConnectError("handshake failed", request=request) from exc


def _dropped(request):
    raise httpx.RemoteProtocolError("peer closed connection without sending complete message body",
                                    request=request)


HTML = (OWN / "challenge.html").read_bytes()


@pytest.mark.parametrize("route, reason", [
    (httpx.ConnectTimeout("timed out"), "connect timeout"),
    (httpx.ReadTimeout("timed out"), "read timeout"),
    (_gaierror_connect, "DNS lookup failed"),
    (_tls_connect, "TLS error"),
    (httpx.ConnectError("Connection refused"), "connection failed"),
    (_dropped, "connection dropped mid-answer"),
    (httpx.Response(429, headers={"retry-after": "30"}), "HTTP 429 (rate limited)"),
])
async def test_network_errors_fail_without_asking_other_endpoints(route, reason):
    page = FakePage(summary=route)
    async with client_for(page) as client:
        snap = await client.fetch()
    assert not snap.ok and snap.error == reason
    assert snap.overall.indicator == "unknown" and snap.components == []  # never "operational"
    assert page.paths == [st.PROXY_SUMMARY_PATH]  # same host: fallbacks would fail too


@pytest.mark.parametrize("route, reason", [
    (httpx.Response(200, content=HTML, headers={"content-type": "text/html"}), "text/html instead of JSON"),
    (httpx.Response(200, content=SUMMARY[: len(SUMMARY) // 2], headers=JSON), "invalid JSON"),
    (httpx.Response(200, content=b'{"summary": {"components": []}}', headers=JSON), "unexpected shape"),
    (httpx.Response(200, content=b"{}", headers=JSON), "unexpected shape"),
    (httpx.Response(200, content=b"", headers=JSON), "invalid JSON"),
    (httpx.Response(200, content=SUMMARY), "no content type"),
    (httpx.Response(503), "HTTP 503"),
    (httpx.Response(404), "HTTP 404"),
])
async def test_bad_answers_try_the_fallbacks_then_fail_with_all_reasons(route, reason):
    page = FakePage(summary=route)
    async with client_for(page) as client:
        snap = await client.fetch()
    assert not snap.ok and snap.stale
    assert snap.error.startswith(f"proxy: {reason}")
    assert "compat: HTTP 404" in snap.error and "feed: HTTP 404" in snap.error
    assert page.paths == [st.PROXY_SUMMARY_PATH, st.COMPAT_COMPONENTS_PATH, st.ATOM_PATH]


async def test_body_over_the_cap_is_refused_even_without_content_length():
    async def chunks():
        yield SUMMARY
        yield SUMMARY

    def streamed(request):
        return httpx.Response(200, headers=JSON, content=chunks())  # no length header

    for route in (streamed, httpx.Response(200, content=SUMMARY, headers=JSON)):
        page = FakePage(summary=route)
        async with client_for(page, max_body=len(SUMMARY) - 1) as client:
            snap = await client.fetch()
        assert not snap.ok and snap.error.startswith("proxy: answer over")


async def test_cap_applies_to_the_decompressed_size():
    packed = gzip.compress(SUMMARY)
    page = FakePage(summary=lambda request: httpx.Response(
        200, content=packed, headers={**JSON, "content-encoding": "gzip"}))
    async with client_for(page, max_body=len(packed) + 10) as client:
        snap = await client.fetch()
    assert not snap.ok and "answer over" in snap.error


async def test_gzip_answers_under_the_cap_are_read():
    page = FakePage(summary=lambda request: httpx.Response(
        200, content=gzip.compress(SUMMARY), headers={**JSON, "content-encoding": "gzip"}))
    async with client_for(page) as client:
        assert (await client.fetch()).ok


async def test_redirect_to_another_host_is_refused():
    def redirect(request):
        if request.url.host == "status.test":
            return httpx.Response(302, headers={"location": "https://elsewhere.test/x"})
        return httpx.Response(200, content=SUMMARY, headers=JSON)

    page = FakePage(summary=redirect)
    async with client_for(page) as client:
        snap = await client.fetch()
    assert not snap.ok and "redirected to another host" in snap.error


# --- fallback chain -------------------------------------------------------------------


async def test_compat_fallback_when_proxy_fails():
    page = FakePage(
        summary=httpx.Response(500),
        components=httpx.Response(200, content=(OWN / "compat_components.json").read_bytes(), headers=JSON),
        incidents=httpx.Response(200, content=(OWN / "compat_incidents.json").read_bytes(), headers=JSON),
    )
    async with client_for(page) as client:
        snap = await client.fetch()
    assert snap.ok and snap.fallback and snap.source == BASE + st.COMPAT_COMPONENTS_PATH
    assert {c.name: c.status for c in snap.components}["Codex API"] == "major_outage"
    ids = {i.id for i in snap.incidents}
    assert "01TESTCOMPAT00000000000001" in ids and "01TESTCOMPAT00000000000002" in ids
    assert "01TESTCOMPAT00000000000004" not in ids  # resolved, not Codex


async def test_atom_fallback_when_proxy_and_compat_fail():
    page = FakePage(
        summary=httpx.Response(200, content=HTML, headers={"content-type": "text/html"}),
        components=httpx.Response(200, content=b'{"components": []}', headers=JSON),
        atom=httpx.Response(200, content=(OWN / "history.atom").read_bytes(),
                            headers={"content-type": "application/atom+xml"}),
    )
    async with client_for(page) as client:
        snap = await client.fetch()
    assert snap.ok and snap.fallback and snap.source == BASE + st.ATOM_PATH
    by_name = {c.name: c.status for c in snap.components}
    assert by_name["CLI"] == "major_outage" and by_name["Codex Web"] == "unknown"
    assert snap.overall.indicator == "critical"
    assert page.requests[-1].headers["accept"].startswith("application/atom+xml")
    assert st.codex_in_trouble(snap)


async def test_components_without_incidents_answer_with_the_incidents_unknown():
    """The incident.io endpoints fail, components.json answers, incidents.json and the feed do
    not: the components, no incident, and why the incidents are unknown (never "none")."""
    page = FakePage(
        summary=httpx.Response(500),
        components=httpx.Response(200, content=(OWN / "compat_components.json").read_bytes(), headers=JSON),
        incidents=httpx.Response(502),
    )
    async with client_for(page) as client:
        snap = await client.fetch()
    assert snap.ok and snap.fallback and snap.incidents == []
    assert snap.incidents_error == "proxy: HTTP 500; compat incidents: HTTP 502; feed: HTTP 404"
    assert {c.name: c.status for c in snap.components}["Codex API"] == "major_outage"
    assert st.snapshot_to_json(snap)["incidents_error"] == snap.incidents_error
    assert page.paths[-1] == st.ATOM_PATH  # the feed was asked for the incidents


async def test_components_with_the_feed_for_incidents():
    page = FakePage(
        summary=httpx.Response(500),
        components=httpx.Response(200, content=(OWN / "compat_components.json").read_bytes(), headers=JSON),
        incidents=httpx.Response(502),
        atom=httpx.Response(200, content=(OWN / "history.atom").read_bytes(),
                            headers={"content-type": "application/atom+xml"}),
    )
    async with client_for(page) as client:
        snap = await client.fetch()
    assert snap.ok and snap.incidents_error is None and snap.source == BASE + st.COMPAT_COMPONENTS_PATH
    assert snap.incidents and {c.name: c.status for c in snap.components}["Codex API"] == "major_outage"


async def test_history_failure_keeps_the_summary_and_says_so():
    page = FakePage(history=httpx.Response(503))
    async with client_for(page) as client:
        snap = await client.fetch()
    assert snap.ok and snap.history_error == "incident history: HTTP 503"
    assert page.paths[-1] == st.COMPAT_INCIDENTS_PATH  # tried the compat history too
    assert {i.id for i in snap.incidents} >= {"01TESTONGOING0000000000001"}


async def test_history_falls_back_to_compat_incidents():
    page = FakePage(history=httpx.Response(503),
                    incidents=httpx.Response(200, content=(OWN / "compat_incidents.json").read_bytes(),
                                             headers=JSON))
    async with client_for(page) as client:
        snap = await client.fetch()
    assert snap.ok and snap.history_error is None
    assert "01TESTCOMPAT00000000000002" in {i.id for i in snap.incidents}


async def test_history_kept_from_the_last_good_read_when_it_later_fails():
    page, clock = FakePage(), Clock()
    async with client_for(page, clock) as client:
        await client.fetch()
        page.routes[st.PROXY_INCIDENTS_PATH] = httpx.ReadTimeout("slow")
        clock.now += 700
        snap = await client.fetch()
    assert snap.ok and snap.history_error == "incident history: read timeout"
    assert "01TESTRESOLVED000000000001" in {i.id for i in snap.incidents}


# --- stale marking ------------------------------------------------------------------


async def test_failure_keeps_the_last_good_snapshot_marked_stale_then_recovers():
    page, clock = FakePage(), Clock()
    async with client_for(page, clock) as client:
        good = await client.fetch()
        page.routes[st.PROXY_SUMMARY_PATH] = httpx.ConnectTimeout("timed out")
        clock.now += 300
        failed = await client.fetch()
        assert not failed.ok and failed.stale and failed.error == "connect timeout"
        assert failed.fetched_at == NOW and failed.last_attempt_at == NOW + 300
        assert failed.components == good.components and failed.incidents == good.incidents
        assert client.last_good is good and client.last is failed
        assert st.describe_age(failed, clock.now).startswith("unknown since")
        page.routes[st.PROXY_SUMMARY_PATH] = httpx.Response(200, content=SUMMARY, headers=JSON)
        clock.now += 60
        again = await client.fetch()
    assert again.ok and not again.stale and again.fetched_at == NOW + 360


async def test_failure_with_no_previous_answer_is_unknown_not_operational():
    page = FakePage(summary=httpx.Response(503), components=httpx.Response(503), atom=httpx.Response(503))
    async with client_for(page) as client:
        snap = await client.fetch()
    assert not snap.ok and snap.fetched_at is None and snap.source is None
    assert snap.overall.indicator == "unknown" and snap.components == [] and snap.incidents == []
    assert snap.last_attempt_at == NOW


# --- back-off ----------------------------------------------------------------------


async def test_backoff_schedule_with_a_fake_clock():
    page, clock = FakePage(summary=httpx.Response(503), components=httpx.Response(503),
                           atom=httpx.Response(503)), Clock()
    async with client_for(page, clock) as client:
        assert client.next_delay(False, False) == 120
        delays = []
        for _ in range(4):
            await client.fetch()
            delays.append(client.next_delay(False, False))
            clock.now += delays[-1]
        assert delays == [60, 120, 300, 300]
        page.routes[st.PROXY_SUMMARY_PATH] = httpx.Response(200, content=SUMMARY, headers=JSON)
        snap = await client.fetch()
        assert snap.ok
        assert client.next_delay(st.codex_in_trouble(snap), False) == 60  # Codex is down: ask sooner
        assert client.next_delay(False, True) == 60  # the user's failures are rising
        assert client.next_delay(False, False) == 120


async def test_retry_after_is_honoured_as_a_floor():
    page = FakePage(summary=httpx.Response(429, headers={"retry-after": "240"}))
    async with client_for(page) as client:
        await client.fetch()
        assert client.next_delay(False, False) == 240


async def test_503_with_retry_after_waits_without_trying_fallbacks():
    page = FakePage(summary=httpx.Response(503, headers={"retry-after": "600"}))
    async with client_for(page) as client:
        snap = await client.fetch()
        assert client.next_delay(False, False) == 600
    assert snap.error == "HTTP 503" and page.paths == [st.PROXY_SUMMARY_PATH]


def test_retry_after_forms():
    assert parse_retry_after("120", NOW) == 120
    assert parse_retry_after("Fri, 20 Nov 2026 12:05:00 GMT", NOW) == 300
    assert parse_retry_after("soon", NOW) is None
    assert parse_retry_after(None, NOW) is None


async def test_jitter_spreads_the_interval():
    page = FakePage()
    client = StatusClient(BASE, transport=httpx.MockTransport(page), clock=Clock(), rng=random.Random(7))
    delays = {client.next_delay(False, False) for _ in range(50)}
    await client.aclose()
    assert len(delays) > 40 and min(delays) >= 108 and max(delays) <= 132


# --- conditional requests -------------------------------------------------------------


async def test_conditional_requests_reuse_the_cached_body_on_304():
    def summary(request):
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"etag": '"v1"'})
        return httpx.Response(200, content=SUMMARY, headers={**JSON, "etag": '"v1"'})

    def history(request):
        if request.headers.get("if-modified-since") == "Fri, 20 Nov 2026 11:00:00 GMT":
            return httpx.Response(304)
        return httpx.Response(200, content=HISTORY,
                              headers={**JSON, "last-modified": "Fri, 20 Nov 2026 11:00:00 GMT"})

    page, clock = FakePage(summary=summary, history=history), Clock()
    async with client_for(page, clock) as client:
        first = await client.fetch()
        clock.now += 700
        second = await client.fetch()
    assert "if-none-match" not in page.requests[0].headers
    assert page.requests[2].headers["if-none-match"] == '"v1"'
    assert page.requests[3].headers["if-modified-since"] == "Fri, 20 Nov 2026 11:00:00 GMT"
    assert second.ok and second.components == first.components
    assert {i.id for i in second.incidents} == {i.id for i in first.incidents}
    assert second.fetched_at == NOW + 700


async def test_no_validators_no_conditional_headers():
    page, clock = FakePage(), Clock()
    async with client_for(page, clock) as client:
        await client.fetch()
        await client.fetch()
    assert all("if-none-match" not in r.headers and "if-modified-since" not in r.headers
               for r in page.requests)


# --- construction and the one-shot wrapper ---------------------------------------------


@pytest.mark.parametrize("url", ["status.openai.com", "ftp://status.openai.com", "https://", ""])
def test_bad_base_urls_are_refused(url):
    with pytest.raises(ValueError):
        StatusClient(url)


def test_fetch_status_once_runs_its_own_loop():
    page = FakePage()
    snap = fetch_status_once(BASE + "/", transport=httpx.MockTransport(page), clock=Clock())
    assert snap.ok and snap.source == BASE + st.PROXY_SUMMARY_PATH
