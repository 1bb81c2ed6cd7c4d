"""`codexwatch status`: output, JSON contract and exit codes; a MockTransport or a loopback server."""

from __future__ import annotations

import http.server
import threading
import time
from datetime import timezone

import httpx
import orjson
import pytest

from codexwatch import cli
from codexwatch.commands.status import render_text
from codexwatch.core import status as st
from codexwatch.core.times import parse_iso
from codexwatch.sources import status_client
from codexwatch.sources.demo_status import ANCHOR, demo_payloads, shift_times
from tests.conftest import FIXTURES

OWN = FIXTURES / "status"
JSON = {"content-type": "application/json"}


@pytest.fixture
def page(monkeypatch):
    """Routes the command's one-shot fetch through a MockTransport; records the URL it was given."""
    state = {"routes": {}, "urls": []}

    def handler(request):
        body = state["routes"].get(request.url.path)
        if body is None:
            return httpx.Response(404)
        if isinstance(body, httpx.Response):
            return body
        return httpx.Response(200, content=body, headers=JSON)

    real = status_client.fetch_status_once

    def fake(url, transport=None, clock=time.time):
        state["urls"].append(url)
        return real(url, transport=httpx.MockTransport(handler), clock=clock)

    monkeypatch.setattr(status_client, "fetch_status_once", fake)
    return state


def demo_routes(now: float) -> dict:
    return dict(demo_payloads(now))


def test_json_output_contract_and_exit_0(page, capsys):
    page["routes"] = demo_routes(time.time())
    assert cli.main(["status", "--json", "--status-url", "https://status.test"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert page["urls"] == ["https://status.test"]
    assert data["ok"] is True and data["error"] is None and data["stale"] is False
    assert data["source"] == "https://status.test/proxy/status.openai.com"
    assert data["fetched_at"].endswith("Z")
    assert data["overall"] == {"indicator": "minor", "description": "Partial System Degradation"}
    assert {c["name"]: c["status"] for c in data["components"]}["CLI"] == "degraded_performance"
    assert all(set(c) >= {"id", "name", "status"} for c in data["components"])
    names = [i["name"] for i in data["incidents"]]
    assert names[0] == "Elevated error rates for Codex"
    assert "Increased latency for Codex API" in names and "Some users unable to sign in to Codex" in names
    assert "Codex Web tasks failing to start" not in names  # 11 days old
    ongoing = data["incidents"][0]
    assert ongoing["codex"] is True and ongoing["resolved_at"] is None and ongoing["status"] == "identified"
    assert ongoing["updates"][0]["status"] == "identified" and ongoing["updates"][0]["at"].endswith("Z")


def test_failure_exits_1_with_reason_in_json(page, capsys):
    page["routes"] = {st.PROXY_SUMMARY_PATH: httpx.Response(503)}
    assert cli.main(["status", "--json", "--status-url", "https://status.test"]) == 1
    data = orjson.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["stale"] is True and data["fetched_at"] is None
    assert data["error"].startswith("proxy: HTTP 503")
    assert data["overall"]["indicator"] == "unknown" and data["components"] == []


def test_html_answer_is_a_failure_not_operational(page, capsys):
    page["routes"] = {st.PROXY_SUMMARY_PATH: httpx.Response(
        200, content=(OWN / "challenge.html").read_bytes(), headers={"content-type": "text/html"})}
    assert cli.main(["status", "--status-url", "https://status.test"]) == 1
    captured = capsys.readouterr()
    assert "operational" not in captured.out.replace("not the same as operational", "")
    assert "Codex status: unknown" in captured.out
    assert "text/html instead of JSON" in captured.err


def test_human_output(page, capsys):
    page["routes"] = demo_routes(time.time())
    assert cli.main(["status", "--status-url", "https://status.test"]) == 0
    out = capsys.readouterr().out
    assert "As of " in out and "updated just now" in out
    assert "Source: https://status.test/proxy/status.openai.com" in out
    assert "CLI" in out and "degraded performance" in out
    assert "Elevated error rates for Codex: identified, impact minor" in out
    assert "Resolved Codex incidents, last 7 days:" in out


def test_url_from_environment_and_status_disabled(page, capsys, monkeypatch):
    page["routes"] = demo_routes(time.time())
    monkeypatch.setenv("CODEXWATCH_STATUS_URL", "https://from-env.test")
    assert cli.main(["status", "--json"]) == 0
    assert page["urls"] == ["https://from-env.test"]
    capsys.readouterr()
    assert cli.main(["status", "--no-status"]) == 1
    assert "turned off" in capsys.readouterr().err
    assert page["urls"] == ["https://from-env.test"]  # no request when turned off


def test_bad_status_url_is_a_config_error(capsys):
    assert cli.main(["status", "--status-url", "ftp://nope"]) == 2
    assert "status URL" in capsys.readouterr().err


def test_render_text_on_fallback_and_unknown_words():
    comps = st.parse_compat_components(orjson.loads((OWN / "compat_components.json").read_bytes()))[0]
    now = parse_iso("2026-11-20T12:00:00Z")
    incidents = st.parse_compat_incidents(orjson.loads((OWN / "compat_incidents.json").read_bytes()))
    snap = st.snapshot_ok(source="https://x/api/v2/components.json", fetched_at=now,
                          overall=st.overall_from_statuses(c.status for c in comps), components=comps,
                          incidents=st.select_incidents([i for i in incidents if i.ongoing], incidents, now),
                          fallback=True)
    out = render_text(snap, now, timezone.utc)
    assert "(fallback" in out
    assert "unknown (wobbly)" in out
    assert "Elevated Codex error rate (mentions Codex): monitoring, impact major" in out
    assert "11:50 monitoring: A fix has been applied." in out
    assert "11:20 investigating" not in out  # only the latest update in the human view
    incidents[0].updates.reverse()  # now the latest has an empty body, as the compat layer sends
    assert "11:20 investigating: (no text)" in render_text(snap, now, timezone.utc)
    assert "Other ongoing incidents: ChatGPT voice unavailable" in out


def test_render_text_strips_terminal_controls():
    inc = st.parse_native_incident({"id": "x", "name": "Codex \x1b[31mred\x1b[0m", "status": "investigating",
                                    "updates": [{"message_string": "line one\nline\x07 two",
                                                 "published_at": "2026-11-20T11:00:00Z"}]}, set())
    snap = st.snapshot_ok(source="s", fetched_at=0.0, overall=st.overall_from_statuses([]), components=[],
                          incidents=[inc])
    out = render_text(snap, 0.0, timezone.utc)
    assert "\x1b" not in out and "\x07" not in out
    assert "Codex [31mred[0m" in out and "line one\n      line two" in out


# --- end to end over a loopback HTTP server, serving the bundled demo page -----------------


@pytest.fixture
def loopback_demo():
    bodies = demo_payloads(time.time())

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            body = bodies.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json" if body else "text/plain")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_status_command_against_a_loopback_server(loopback_demo, capsys):
    assert cli.main(["status", "--json", "--status-url", loopback_demo]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert data["ok"] and data["source"] == loopback_demo + st.PROXY_SUMMARY_PATH
    assert data["incidents"][0]["name"] == "Elevated error rates for Codex"


def test_loopback_server_down_exits_1(capsys):
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    assert cli.main(["status", "--json", "--status-url", f"http://127.0.0.1:{port}"]) == 1
    data = orjson.loads(capsys.readouterr().out)
    assert data["error"] == "connection failed"


# --- the demo payloads --------------------------------------------------------------------


def test_demo_payload_times_are_shifted_to_now():
    now = ANCHOR + 86400 * 3.5
    bodies = demo_payloads(now)
    assert set(bodies) == {st.PROXY_SUMMARY_PATH, st.PROXY_INCIDENTS_PATH}
    part = st.parse_proxy_summary(orjson.loads(bodies[st.PROXY_SUMMARY_PATH]))
    (ongoing,) = part.incidents
    assert ongoing.published_at == pytest.approx(now - 13 * 60)  # posted 08:47 for an anchor of 09:00
    assert ongoing.started_at == pytest.approx(now - 22 * 60)
    history = st.parse_proxy_incidents(orjson.loads(bodies[st.PROXY_INCIDENTS_PATH]), part.codex_ids)
    recent = [i for i in st.select_incidents(part.incidents, history, now) if not i.ongoing]
    assert len(recent) == 2 and all(now - i.resolved_at < 4 * 86400 for i in recent)


def test_shift_times_leaves_other_strings_alone():
    payload = {"a": ["2026-11-29T08:00:00Z", "2026-11-29T08:00:00.5Z"], "b": "Codex", "c": None, "d": 3,
               "e": "2026-11-29"}
    moved = shift_times(payload, 3600)
    assert moved == {"a": ["2026-11-29T09:00:00.000Z", "2026-11-29T09:00:00.500Z"], "b": "Codex", "c": None,
                     "d": 3, "e": "2026-11-29"}


def test_components_without_incidents_exit_0_and_say_incidents_unknown(page, capsys):
    page["routes"][st.COMPAT_COMPONENTS_PATH] = (OWN / "compat_components.json").read_bytes()
    page["routes"][st.COMPAT_INCIDENTS_PATH] = httpx.Response(503)
    assert cli.main(["status", "--json", "--status-url", "https://status.test"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["incidents"] == []
    assert "compat incidents: HTTP 503" in data["incidents_error"]
    assert cli.main(["status", "--status-url", "https://status.test"]) == 0
    text = capsys.readouterr().out
    assert "Codex incidents: unknown (" in text and "not the same as none" in text
    assert "Ongoing Codex incidents: none" not in text
