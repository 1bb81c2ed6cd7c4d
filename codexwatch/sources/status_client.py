"""The status page client: one polite poller for status.openai.com (or any base URL).

Every way a fetch can go wrong ends as a `StatusSnapshot` with `ok=False`, a short
reason and the last good answer marked stale; nothing here reports "operational"
from a failed or empty answer. Parsing lives in `codexwatch.core.status`.
"""

from __future__ import annotations

import asyncio
import random
import socket
import ssl
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from codexwatch import __version__
from codexwatch.core import status as st
from codexwatch.core.models import Clock, Incident, Overall, StatusSnapshot

USER_AGENT = f"codexwatch/{__version__} (+https://github.com/codexwatch)"
DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
# The timeouts above bound each read; a server that trickles a byte now and then would pass
# them forever. This bounds one whole request.
DEFAULT_DEADLINE = 30.0
MAX_BODY = 4 * 1024 * 1024  # the whole incident history is well under 1 MiB today
HISTORY_INTERVAL = 600.0  # the history endpoint is big and changes slowly

_JSON_ACCEPT = "application/json"
_FEED_ACCEPT = "application/atom+xml, application/xml;q=0.9"


class FetchError(Exception):
    """A failed request, with a reason short enough for a status line.

    `fallback_ok` is False when the host itself is unreachable or asked us to slow
    down: asking its other endpoints would only add load and fail the same way.
    """

    def __init__(self, reason: str, *, fallback_ok: bool = True, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.fallback_ok = fallback_ok
        self.retry_after = retry_after


@dataclass(slots=True)
class _Validators:
    etag: str | None
    last_modified: str | None
    body: bytes


def _chain(exc: BaseException):
    seen = 0
    while exc is not None and seen < 10:
        yield exc
        exc = exc.__cause__ or exc.__context__
        seen += 1


def describe_transport_error(exc: httpx.HTTPError) -> str:
    """httpx exception -> "DNS lookup failed", "TLS error", "read timeout", ..."""
    causes = list(_chain(exc))
    text = " ".join(str(c) for c in causes).lower()
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timeout"
    if isinstance(exc, httpx.TimeoutException):
        return "read timeout"
    if any(isinstance(c, socket.gaierror) for c in causes) or "name or service not known" in text \
            or "name resolution" in text or "nodename nor servname" in text or "getaddrinfo" in text:
        return "DNS lookup failed"
    if any(isinstance(c, ssl.SSLError) for c in causes) or "ssl" in text or "certificate" in text:
        return "TLS error"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return "not an http(s) URL"
    if isinstance(exc, httpx.ConnectError):
        return "connection failed"
    if isinstance(exc, httpx.DecodingError):
        return "undecodable answer (content encoding)"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return "connection dropped mid-answer"
    return f"network error ({type(exc).__name__})"


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Retry-After as seconds from now: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError, IndexError):
        return None


def _content_type_ok(content_type: str, want: str) -> bool:
    content_type = content_type.lower()
    return "json" in content_type if want == "json" else "xml" in content_type


class StatusClient:
    """Asks the page, falls back when it must, and remembers the last good answer.

    One `httpx.AsyncClient` (one connection pool) for the client's lifetime; call
    `aclose()` or use `async with`.
    """

    def __init__(
        self,
        base_url: str = st.DEFAULT_PAGE_URL,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock = time.time,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_body: int = MAX_BODY,
        rng: random.Random | None = None,
        interval: float = 120.0,
        history_interval: float = HISTORY_INTERVAL,
        deadline: float | None = DEFAULT_DEADLINE,
    ):
        url = httpx.URL(base_url.strip().rstrip("/"))
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"status URL must look like https://host, got {base_url!r}")
        self.base_url = str(url).rstrip("/")
        self._host = url.host
        self.clock = clock
        self.max_body = max_body
        self.deadline = deadline
        self.rng = rng or random.Random()
        self.schedule = st.PollSchedule(interval=interval)
        self.history_interval = history_interval
        self.last_good: StatusSnapshot | None = None
        self.last: StatusSnapshot | None = None
        self._validators: dict[str, _Validators] = {}
        self._history: list[Incident] = []
        self._history_at: float | None = None
        self._history_ongoing: frozenset[str] = frozenset()
        self._history_error: str | None = None
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            transport=transport,
            timeout=timeout,
            headers={"User-Agent": USER_AGENT},
            follow_redirects=True,
            limits=httpx.Limits(max_connections=2, max_keepalive_connections=2),
        )

    async def __aenter__(self) -> "StatusClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def url(self, path: str) -> str:
        return self.base_url + path

    # --- the poll ------------------------------------------------------------------

    async def fetch(self) -> StatusSnapshot:
        """One poll: the primary source, else the fallback chain, else the stale last answer."""
        now = self.clock()
        try:
            snapshot = await self._from_proxy(now)
        except FetchError as primary:
            snapshot, reasons = None, [f"proxy: {primary.reason}"]
            if primary.fallback_ok:
                snapshot = await self._from_fallbacks(now, reasons)
            if snapshot is None:
                error = primary.reason if len(reasons) == 1 else "; ".join(reasons)
                return self._failed(error, now, primary.retry_after)
        self.schedule.record_success()
        self.last_good = self.last = snapshot
        return snapshot

    def next_delay(self, codex_trouble: bool = False, user_failures_rising: bool = False) -> float:
        """Seconds until the next poll (interval, fast interval or back-off, with jitter)."""
        return self.schedule.next_delay(codex_trouble, user_failures_rising, self.rng)

    def _failed(self, error: str, now: float, retry_after: float | None) -> StatusSnapshot:
        self.schedule.record_failure(retry_after)
        self.last = st.snapshot_failed(self.last_good, error, now)
        return self.last

    async def _from_proxy(self, now: float) -> StatusSnapshot:
        part = _parse(st.parse_proxy_summary, _json(await self._get(st.PROXY_SUMMARY_PATH)))
        history = await self._recent_history(part, now)
        return st.snapshot_ok(
            source=self.url(st.PROXY_SUMMARY_PATH), fetched_at=self.clock(), overall=part.overall,
            components=part.components, incidents=st.select_incidents(part.incidents, history, now),
            history_error=self._history_error,
        )

    async def _recent_history(self, part: st.SummaryPart, now: float) -> list[Incident]:
        """The history endpoint, every 10 min or as soon as the set of ongoing incidents changes."""
        ongoing = frozenset(i.id for i in part.incidents)
        due = self._history_at is None or now - self._history_at >= self.history_interval
        if not due and ongoing == self._history_ongoing:
            return self._history
        self._history_at, self._history_ongoing = now, ongoing
        try:
            self._history = await self._history_from_proxy(part)
            self._history_error = None
        except FetchError as exc:
            # Keep what we had; retried after history_interval, not on every poll.
            self._history_error = f"incident history: {exc.reason}"
        return self._history

    async def _history_from_proxy(self, part: st.SummaryPart) -> list[Incident]:
        try:
            body = await self._get(st.PROXY_INCIDENTS_PATH)
            return _parse(st.parse_proxy_incidents, _json(body), part.codex_ids, part.page_url)
        except FetchError as exc:
            if not exc.fallback_ok:
                raise
            try:
                return await self._compat_incidents(part.page_url)
            except FetchError:
                raise exc from None  # the primary's reason is the one worth showing

    async def _compat_incidents(self, page_url: str) -> list[Incident]:
        body = await self._get(st.COMPAT_INCIDENTS_PATH)
        return _parse(st.parse_compat_incidents, _json(body), page_url)

    async def _from_fallbacks(self, now: float, reasons: list[str]) -> StatusSnapshot | None:
        """Statuspage-compatible JSON, then the Atom feed; None when both fail. Components
        that answer without any incident source: a snapshot of the components, its
        incidents unknown (`incidents_error`)."""
        page_url = st.DEFAULT_PAGE_URL
        found = None  # (components, overall) from the compatible JSON
        try:
            body = await self._get(st.COMPAT_COMPONENTS_PATH)
            found = _parse(st.parse_compat_components, _json(body))
            incidents = await self._compat_incidents(page_url)
            return self._fallback_snapshot(st.COMPAT_COMPONENTS_PATH, now, *found, incidents)
        except FetchError as exc:
            reasons.append(f"compat: {exc.reason}" if found is None else f"compat incidents: {exc.reason}")
            if not exc.fallback_ok:
                return self._components_only(now, found, reasons) if found is not None else None
        try:
            body = await self._get(st.ATOM_PATH, want="xml")
            incidents, named = _parse(st.parse_atom, body, page_url)
        except FetchError as exc:
            reasons.append(f"feed: {exc.reason}")
            return self._components_only(now, found, reasons) if found is not None else None
        if found is not None:  # the components from the JSON, the incidents from the feed
            return self._fallback_snapshot(st.COMPAT_COMPONENTS_PATH, now, *found, incidents)
        overall = st.overall_from_statuses(named.values()) if named else Overall(
            "unknown", "Component status unavailable (incident feed only)")
        return self._fallback_snapshot(st.ATOM_PATH, now, st.components_from_feed(named), overall, incidents)

    def _components_only(self, now, found, reasons: list[str]) -> StatusSnapshot:
        components, overall = found
        return self._fallback_snapshot(st.COMPAT_COMPONENTS_PATH, now, components, overall, [],
                                       incidents_error="; ".join(reasons))

    def _fallback_snapshot(self, path, now, components, overall, incidents,
                           incidents_error: str | None = None) -> StatusSnapshot:
        ongoing = [i for i in incidents if i.ongoing]
        return st.snapshot_ok(
            source=self.url(path), fetched_at=self.clock(), overall=overall, components=components,
            incidents=st.select_incidents(ongoing, incidents, now), fallback=True,
            incidents_error=incidents_error,
        )

    # --- one request -------------------------------------------------------------

    async def _get(self, path: str, want: str = "json") -> bytes:
        """GET with validators, limits and checks; the body, or FetchError."""
        try:  # wait_for, not asyncio.timeout: that one is 3.11's, and 3.10 is supported
            return await asyncio.wait_for(self._request(path, want), self.deadline)
        except asyncio.TimeoutError:  # TimeoutError itself from 3.11 on
            raise FetchError(f"no whole answer within {self.deadline:g} s", fallback_ok=False) from None

    async def _request(self, path: str, want: str) -> bytes:
        cached = self._validators.get(path)
        headers = {"Accept": _JSON_ACCEPT if want == "json" else _FEED_ACCEPT}
        if cached and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
        try:
            async with self._http.stream("GET", path, headers=headers) as response:
                if response.status_code == 304 and cached is not None:
                    return cached.body
                self._check(response, want)
                body = await self._read_capped(response)
        except httpx.HTTPError as exc:
            raise FetchError(describe_transport_error(exc), fallback_ok=False) from None
        etag, modified = response.headers.get("etag"), response.headers.get("last-modified")
        if etag or modified:
            self._validators[path] = _Validators(etag, modified, body)
        return body

    def _check(self, response: httpx.Response, want: str) -> None:
        if response.url.host != self._host:
            raise FetchError(f"redirected to another host ({response.url.host})")
        code = response.status_code
        if code == 429:
            retry = parse_retry_after(response.headers.get("retry-after"), self.clock())
            raise FetchError("HTTP 429 (rate limited)", fallback_ok=False, retry_after=retry)
        if code != 200:
            retry = parse_retry_after(response.headers.get("retry-after"), self.clock()) if code >= 500 else None
            # A 5xx with Retry-After asks us to wait: the other endpoints are not asked either.
            raise FetchError(f"HTTP {code}", retry_after=retry, fallback_ok=retry is None)
        content_type = response.headers.get("content-type", "")
        if not _content_type_ok(content_type, want):
            shown = content_type.split(";")[0].strip() or "no content type"
            raise FetchError(f"{shown} instead of {'JSON' if want == 'json' else 'a feed'} (HTTP 200)")
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            raise FetchError(f"answer over {self.max_body // 1024} KiB")

    async def _read_capped(self, response: httpx.Response) -> bytes:
        chunks, size = [], 0
        async for chunk in response.aiter_bytes():  # decoded size: a gzip bomb is capped too
            size += len(chunk)
            if size > self.max_body:
                raise FetchError(f"answer over {self.max_body // 1024} KiB")
            chunks.append(chunk)
        return b"".join(chunks)


def _parse(parser, *args):
    """Run a core parser; a parse failure is a fetch failure worth a fallback."""
    try:
        return parser(*args)
    except st.StatusParseError as exc:
        raise FetchError(str(exc)) from None


def _json(body: bytes) -> Any:
    return _parse(st.loads_json, body)


def fetch_status_once(
    url: str = st.DEFAULT_PAGE_URL,
    transport: httpx.AsyncBaseTransport | None = None,
    clock: Clock = time.time,
) -> StatusSnapshot:
    """One fetch for one-shot commands (`status`, `advise`, `report`); not for a running loop."""

    async def once() -> StatusSnapshot:
        async with StatusClient(url, transport=transport, clock=clock) as client:
            return await client.fetch()

    return asyncio.run(once())
