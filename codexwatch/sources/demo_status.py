"""The bundled demo status page, with its times moved to "now".

The payloads in `codexwatch/data/status/` are written around a fixed anchor time; the demo
serves them shifted so the ongoing incident is happening now and the history is recent.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import orjson

from codexwatch.core.status import PROXY_INCIDENTS_PATH, PROXY_SUMMARY_PATH
from codexwatch.core.times import iso_utc, parse_iso

ANCHOR = parse_iso("2026-11-29T09:00:00Z")
_FILES = {PROXY_SUMMARY_PATH: "proxy_summary.json", PROXY_INCIDENTS_PATH: "proxy_incidents.json"}
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


def shift_times(value: Any, delta: float) -> Any:
    """A copy of a decoded payload with every ISO-8601 UTC time moved by delta seconds."""
    if isinstance(value, dict):
        return {k: shift_times(v, delta) for k, v in value.items()}
    if isinstance(value, list):
        return [shift_times(v, delta) for v in value]
    if isinstance(value, str) and _ISO.match(value):
        return iso_utc(parse_iso(value) + delta)  # milliseconds and "Z", as incident.io writes them
    return value


def demo_payloads(now: float) -> dict[str, bytes]:
    """Request path -> response body, with the anchor moved to `now` (epoch seconds)."""
    folder = resources.files("codexwatch") / "data" / "status"
    out = {}
    for path, name in _FILES.items():
        payload = orjson.loads(folder.joinpath(name).read_bytes())
        out[path] = orjson.dumps(shift_times(payload, now - ANCHOR))
    return out
