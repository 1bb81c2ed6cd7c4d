"""The status client against a real HTTP server on 127.0.0.1 that misbehaves.

Slow answers, connection resets, a body that never ends, HTML with 200, a gigantic body: each
poll ends, within a bounded time, as a failed snapshot with a short reason; nothing raises,
nothing says "operational", and the last good answer stays, marked stale.
"""

from __future__ import annotations

import asyncio
import socket
import socketserver
import struct
import threading
import time

import httpx
import pytest

from codexwatch.core import status as st
from codexwatch.sources.status_client import StatusClient
from tests.conftest import FIXTURES

STATUS = FIXTURES / "status"
BODIES = {
    st.PROXY_SUMMARY_PATH: (STATUS / "proxy_summary_codex_outage.json").read_bytes(),
    st.PROXY_INCIDENTS_PATH: (STATUS / "proxy_incidents_history.json").read_bytes(),
    st.COMPAT_COMPONENTS_PATH: (STATUS / "compat_components.json").read_bytes(),
    st.COMPAT_INCIDENTS_PATH: (STATUS / "compat_incidents.json").read_bytes(),
    st.ATOM_PATH: (STATUS / "history.atom").read_bytes(),
}
HTML = (STATUS / "challenge.html").read_bytes()
READ_TIMEOUT = 0.3
DEADLINE = 0.8  # the client's bound on one whole request
BOUND = 20.0  # "no hang": far above what any fault below should take


class Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        server: FaultyServer = self.server  # type: ignore[assignment]
        sock: socket.socket = self.request
        sock.settimeout(5)
        request = b""
        try:
            while b"\r\n\r\n" not in request:
                chunk = sock.recv(4096)
                if not chunk:
                    return
                request += chunk
        except OSError:
            return
        path = request.split(b" ", 2)[1].decode()
        server.paths.append(path)
        try:
            getattr(self, "mode_" + server.mode)(server, sock, path)
        except OSError:
            pass  # the client gave up: that is the point

    @staticmethod
    def _send(sock, body: bytes, content_type: str = "application/json", status: str = "200 OK",
              length: int | None = None) -> None:
        head = (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body) if length is None else length}\r\nConnection: close\r\n\r\n")
        sock.sendall(head.encode() + body)

    def mode_good(self, server, sock, path):
        if path in BODIES:
            self._send(sock, BODIES[path], "application/atom+xml" if path == st.ATOM_PATH else "application/json")
        else:
            self._send(sock, b"not found", "text/plain", "404 Not Found")

    def mode_slow(self, server, sock, path):
        server.stop.wait(10 * READ_TIMEOUT)  # well past the read timeout
        self.mode_good(server, sock, path)

    def mode_reset(self, server, sock, path):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # RST instead of an answer

    def mode_reset_mid_body(self, server, sock, path):
        body = BODIES.get(path, b"{}")
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        sock.sendall(head.encode() + body[: len(body) // 3])
        self.mode_reset(server, sock, path)

    def mode_trickle(self, server, sock, path):
        # Headers, then a byte now and then, never the end: each read is quick, the body endless.
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[")
        while not server.stop.wait(READ_TIMEOUT / 5):
            sock.sendall(b" ")

    def mode_html(self, server, sock, path):
        self._send(sock, HTML, "text/html; charset=utf-8")

    def mode_html_as_json(self, server, sock, path):
        self._send(sock, HTML, "application/json")

    def mode_gigantic(self, server, sock, path):
        # No length announced: the cap must apply while reading.
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
        block = b" " * 65536
        for _ in range(64):  # 4 MiB, far over the test client's cap
            if server.stop.is_set():
                return
            sock.sendall(block)

    def mode_gigantic_declared(self, server, sock, path):
        self._send(sock, b"{}", length=50 << 30)

    def mode_garbage_status_line(self, server, sock, path):
        sock.sendall(b"SMTP ready\r\n\r\n")


class FaultyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = "good"
        self.paths: list[str] = []
        self.stop = threading.Event()


@pytest.fixture
def server():
    srv = FaultyServer()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield srv
    srv.stop.set()
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def client_for(server: FaultyServer, **kw) -> StatusClient:
    host, port = server.server_address
    kw.setdefault("max_body", 256 * 1024)
    return StatusClient(f"http://{host}:{port}", timeout=httpx.Timeout(READ_TIMEOUT, connect=READ_TIMEOUT),
                        deadline=DEADLINE, **kw)


FAULTS = ["slow", "reset", "reset_mid_body", "trickle", "html", "html_as_json", "gigantic",
          "gigantic_declared", "garbage_status_line"]


@pytest.mark.parametrize("mode", FAULTS)
async def test_fault_after_a_good_answer_keeps_it_stale(server, mode):
    async with client_for(server) as client:
        good = await asyncio.wait_for(client.fetch(), BOUND)
        assert good.ok and not good.stale
        server.mode = mode
        started = time.monotonic()
        snap = await asyncio.wait_for(client.fetch(), BOUND)
        assert time.monotonic() - started < BOUND
    assert not snap.ok and snap.stale
    assert snap.error and len(snap.error) <= 200 and "\n" not in snap.error
    # The last good answer is what is shown, marked stale; its facts are unchanged.
    assert snap.overall == good.overall and snap.fetched_at == good.fetched_at
    assert client.last_good is good


@pytest.mark.parametrize("mode", FAULTS)
async def test_fault_with_no_previous_answer_is_unknown(server, mode):
    server.mode = mode
    async with client_for(server) as client:
        snap = await asyncio.wait_for(client.fetch(), BOUND)
    assert not snap.ok and snap.stale and snap.fetched_at is None
    assert snap.overall.indicator == "unknown"
    assert snap.error and len(snap.error) <= 200


async def test_the_event_loop_keeps_running_during_a_stuck_fetch(server):
    """The UI shares the loop: while a fetch waits on an endless body, other tasks run."""
    server.mode = "trickle"
    ticks = 0

    async def heartbeat():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    beat = asyncio.create_task(heartbeat())
    try:
        async with client_for(server) as client:
            snap = await asyncio.wait_for(client.fetch(), BOUND)
    finally:
        beat.cancel()
    assert not snap.ok
    assert ticks > 5


async def test_recovers_when_the_server_does(server):
    async with client_for(server) as client:
        server.mode = "reset"
        failed = await asyncio.wait_for(client.fetch(), BOUND)
        server.mode = "good"
        good = await asyncio.wait_for(client.fetch(), BOUND)
    assert not failed.ok and good.ok and not good.stale and good.error is None


async def test_nothing_listening(unused_port):
    client = StatusClient(f"http://127.0.0.1:{unused_port}", timeout=httpx.Timeout(READ_TIMEOUT),
                          deadline=DEADLINE)
    async with client:
        snap = await asyncio.wait_for(client.fetch(), BOUND)
    assert not snap.ok and snap.overall.indicator == "unknown"
    assert snap.error == "connection failed"


@pytest.fixture
def unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
