"""A loopback stand-in for the Responses API that real `codex exec` binaries talk to.

Each prompt carries a marker `task:NAME`; the server answers the requests of that task with
the behaviours scripted for NAME, one per request (the last one repeats). A resumed thread's
request carries the original prompt too, so it continues the same script. What each request
asked for (task, model, whether it carried a tool output) is kept in `requests`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_MARKER = re.compile(r"task:([A-Za-z0-9_-]+)")


def _sse(events: list[dict]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _usage() -> dict:
    return {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 2,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 12}


class MockResponses:
    def __init__(self) -> None:
        self.scripts: dict[str, list[str]] = {}
        self.served: dict[str, int] = {}
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.reset_in_s = 3600  # a usage limit's reset, from the moment it is answered
        self.pages: dict[str, bytes] = {}  # path -> body for GET (a status page)
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.handle_error = lambda request, address: None  # a client gone mid-answer
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "MockResponses":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def script(self, name: str, *behaviours: str) -> None:
        with self.lock:
            self.scripts[name] = list(behaviours)
            self.served[name] = 0

    def for_task(self, name: str) -> list[dict]:
        return [r for r in self.requests if r["task"] == name]

    def _next(self, body: dict) -> tuple[str | None, str]:
        text = json.dumps(body.get("input", []))
        names = _MARKER.findall(text)
        name = names[0] if names else None
        with self.lock:
            script = self.scripts.get(name or "", ["ok"])
            n = self.served.get(name or "", 0)
            self.served[name or ""] = n + 1
            behaviour = script[min(n, len(script) - 1)]
            self.requests.append({
                "task": name, "model": body.get("model"), "behaviour": behaviour,
                "tool_output": '"function_call_output"' in text,
                "continue": "continue where you stopped" in text.lower(), "at": time.time(),
                "input": text,
            })
        return name, behaviour

    def _handler(self):
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json",
                      headers: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                if path in mock.pages:  # a status page served beside the API
                    self._send(200, mock.pages[path])
                elif path.startswith("/v1/"):  # the models list some releases ask for
                    self._send(200, b'{"models": [], "data": []}')
                else:
                    self._send(404, b"{}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                _, behaviour = mock._next(body)
                getattr(self, "_" + behaviour)()

            def _ok(self) -> None:
                self._send(200, _sse([
                    {"type": "response.created", "response": {"id": "resp_ok"}},
                    {"type": "response.output_item.done", "item": {
                        "type": "message", "role": "assistant", "id": "msg_ok",
                        "content": [{"type": "output_text", "text": "Done."}]}},
                    {"type": "response.completed", "response": {"id": "resp_ok", "usage": _usage()}},
                ]), "text/event-stream")

            def _tool(self) -> None:  # a harmless tool call: the turn did work
                args = json.dumps({"plan": [{"step": "look around", "status": "in_progress"}]})
                self._send(200, _sse([
                    {"type": "response.created", "response": {"id": "resp_tool"}},
                    {"type": "response.output_item.done", "item": {
                        "type": "function_call", "id": "fc_1", "call_id": f"call_{time.time_ns()}",
                        "name": "update_plan", "arguments": args}},
                    {"type": "response.completed", "response": {"id": "resp_tool", "usage": _usage()}},
                ]), "text/event-stream")

            def _overloaded(self) -> None:
                self._send(503, json.dumps({"error": {
                    "type": "service_unavailable_error", "code": "server_is_overloaded",
                    "message": "Our servers are currently overloaded. Please try again later."}}).encode())

            def _overloaded_stream(self) -> None:
                self._send(200, _sse([
                    {"type": "response.created", "response": {"id": "resp_f"}},
                    {"type": "response.failed", "response": {"id": "resp_f", "error": {
                        "code": "server_is_overloaded",
                        "message": "Our servers are currently overloaded. Please try again later."}}},
                ]), "text/event-stream")

            def _rate429(self) -> None:
                self._send(429, json.dumps({"error": {
                    "type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
                    "message": "Rate limit reached. Please try again later."}}).encode())

            def _usage_limit(self) -> None:
                self._send(429, json.dumps({"error": {
                    "type": "usage_limit_reached", "message": "The usage limit has been reached",
                    "plan_type": "plus", "resets_at": int(time.time() + mock.reset_in_s),
                    "resets_in_seconds": mock.reset_in_s}}).encode())

            def _auth401(self) -> None:
                self._send(401, json.dumps({"error": {
                    "type": "invalid_request_error", "code": "invalid_api_key",
                    "message": "Incorrect API key provided."}}).encode())

            def _model404(self) -> None:
                self._send(404, json.dumps({"error": {
                    "type": "invalid_request_error", "code": "model_not_found",
                    "message": "The model does not exist or you do not have access to it."}}).encode())

            def _slow(self) -> None:  # answers after a few seconds: time to send a signal
                time.sleep(4)
                self._ok()

            def _disconnect(self) -> None:  # the stream ends before response.completed
                self._send(200, _sse([
                    {"type": "response.created", "response": {"id": "resp_d"}},
                ]), "text/event-stream")

        return Handler


def codex_config(base_url: str, model: str = "gpt-6-sol") -> str:
    """config.toml of a Codex home that talks to the mock (no retries of its own)."""
    return (
        f'model = "{model}"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "mock"\n'
        f'base_url = "{base_url}"\nwire_api = "responses"\nenv_key = "MOCK_API_KEY"\n'
        "request_max_retries = 0\nstream_max_retries = 0\n"
    )
