"""Rollout lines -> the few records turn assembly needs.

Most bytes in a rollout are prompts, instructions and tool output that the statistics never
read. So each line is first recognised from its first few hundred bytes; only the line types
that carry facts (a few percent of the bytes) are decoded in full with orjson.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

# Record kinds, as small ints: this runs once per line of a possibly huge history.
META = 1
TURN_CONTEXT = 2
TASK_STARTED = 3
TASK_COMPLETE = 4
TURN_ABORTED = 5
ERROR = 6
SETTINGS = 7
TOKEN_COUNT = 8
USER_MESSAGE = 9
OUTPUT = 10  # an assistant message or agent_message: the model produced something
TOOL_CALL = 11
LEGACY = 12  # a line of the pre-envelope format (era A)

KNOWN_OUTER_TYPES = frozenset(
    {
        "session_meta", "response_item", "compacted", "turn_context", "event_msg",
        "world_state", "inter_agent_communication", "inter_agent_communication_metadata",
        "token_usage_record", "retained_context", "security_risk_score", "realtime_item",
        "transaction",
    }
)

_EVENTS_DECODED = {
    "task_started": TASK_STARTED,
    "task_complete": TASK_COMPLETE,
    "turn_aborted": TURN_ABORTED,
    "error": ERROR,
    "thread_settings_applied": SETTINGS,
    "token_count": TOKEN_COUNT,
}
_EVENTS_SEEN = {"user_message": USER_MESSAGE, "agent_message": OUTPUT}
_TOOL_ITEMS = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call",
     "tool_search_call", "image_generation_call"}
)

# What Codex writes (serde, compact, fixed field order). Anything else takes the slow path.
_HEADER = re.compile(
    rb'\{"timestamp":"([^"\\]{1,40})",(?:"ordinal":\d+,)?"type":"([a-z_]{1,64})"'
    rb'(?:,"payload":\{"type":"([A-Za-z_]{1,64})")?'
)
_ROLE = re.compile(rb'"role":"([a-z]+)"')
HEADER_BYTES = 320


@dataclass(slots=True)
class LineCounts:
    """Per-file parser health, filled while scanning."""

    lines: int = 0
    malformed: int = 0
    oversized: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)


def _decode(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def parse_line(
    buf: bytes, pos: int, end: int, counts: LineCounts, oversized: bool = False
) -> tuple | None:
    """The line buf[pos:end] (without its newline) -> (kind, timestamp, payload) or None.

    Works in place on the buffer: most lines are never copied. `oversized`: the line is too
    long to decode; it is recognised by its head only.
    """
    counts.lines += 1
    match = _HEADER.match(buf, pos, min(end, pos + HEADER_BYTES))
    if match is None:
        if oversized:
            counts.oversized += 1
            return None
        return _slow_path(buf[pos:end], counts)
    ts, outer, inner = match.group(1), match.group(2), match.group(3)
    if outer == b"response_item":
        if inner == b"message":
            role = _ROLE.search(buf, match.end(), min(end, match.end() + 200))
            if role is not None and role.group(1) == b"assistant":
                return (OUTPUT, ts, None)
            return None
        if inner is not None and inner.decode() in _TOOL_ITEMS:
            return (TOOL_CALL, ts, None)
        return None
    if outer == b"event_msg":
        name = inner.decode() if inner is not None else ""
        kind = _EVENTS_DECODED.get(name)
        if kind is None:
            seen = _EVENTS_SEEN.get(name)
            return (seen, ts, None) if seen is not None else None
        return _decoded(kind, ts, buf, pos, end, counts, oversized)
    if outer == b"turn_context":
        return _decoded(TURN_CONTEXT, ts, buf, pos, end, counts, oversized)
    if outer == b"session_meta":
        return _decoded(META, ts, buf, pos, end, counts, oversized)
    name = outer.decode()
    if name not in KNOWN_OUTER_TYPES:
        counts.unknown_types[name] = counts.unknown_types.get(name, 0) + 1
    return None


def _decoded(
    kind: int, ts: bytes, buf: bytes, pos: int, end: int, counts: LineCounts, oversized: bool
) -> tuple | None:
    if oversized:
        counts.oversized += 1
        return None
    obj = _decode(memoryview(buf)[pos:end])
    if not isinstance(obj, dict):
        counts.malformed += 1
        return None
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        counts.malformed += 1
        return None
    return (kind, ts, payload)


def _slow_path(raw: bytes, counts: LineCounts) -> tuple | None:
    """Lines not in Codex's usual byte layout: decode and look at the keys."""
    stripped = raw.strip()
    if not stripped:
        counts.lines -= 1  # a blank line is not a line of the log
        return None
    obj = _decode(stripped)
    if not isinstance(obj, dict):
        counts.malformed += 1
        return None
    outer = obj.get("type")
    payload = obj.get("payload")
    ts = obj.get("timestamp")
    ts_bytes = ts.encode() if isinstance(ts, str) else None
    if "payload" not in obj:
        # Era A: a bare meta object, `record_type` lines and bare response items.
        if "record_type" in obj or ("id" in obj and "timestamp" in obj) or isinstance(outer, str):
            return (LEGACY, ts_bytes, obj)
        counts.malformed += 1
        return None
    if not isinstance(outer, str) or not isinstance(payload, dict):
        counts.malformed += 1
        return None
    inner = payload.get("type")
    if outer == "response_item":
        if inner == "message" and payload.get("role") == "assistant":
            return (OUTPUT, ts_bytes, None)
        return (TOOL_CALL, ts_bytes, None) if inner in _TOOL_ITEMS else None
    if outer == "event_msg":
        if inner in _EVENTS_DECODED:
            return (_EVENTS_DECODED[inner], ts_bytes, payload)
        return (_EVENTS_SEEN[inner], ts_bytes, None) if inner in _EVENTS_SEEN else None
    if outer == "turn_context":
        return (TURN_CONTEXT, ts_bytes, payload)
    if outer == "session_meta":
        return (META, ts_bytes, payload)
    if outer not in KNOWN_OUTER_TYPES:
        counts.unknown_types[outer] = counts.unknown_types.get(outer, 0) + 1
    return None


def scan(buf: bytes, start: int, counts: LineCounts, max_line: int) -> tuple[list[tuple], int]:
    """Parse every complete line in buf[start:]; -> (records, offset after the last newline).

    A line longer than max_line is recognised by its head only and never decoded.
    """
    records: list[tuple] = []
    append = records.append
    find = buf.find
    pos = start
    while True:
        end = find(b"\n", pos)
        if end < 0:
            return records, pos
        rec = parse_line(buf, pos, end, counts, end - pos > max_line)
        if rec is not None:
            append(rec)
        pos = end + 1
