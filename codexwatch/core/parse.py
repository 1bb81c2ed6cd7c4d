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
TICK = 13  # only the time of the last line read: how long an unfinished turn has run
KINDS = range(META, TICK + 1)

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


def _from_assistant(buf, at: int, end: int) -> bool:
    """Whether the message whose type ends at `at` is the assistant's: its role follows
    within 200 bytes, before `end` (its line's end)."""
    role = _ROLE.search(buf, at, min(end, at + 200))
    return role is not None and role.group(1) == b"assistant"


@dataclass(slots=True)
class LineCounts:
    """Per-file parser health, filled while scanning."""

    lines: int = 0  # lines read one by one (skimmed lines are not counted here)
    blank: int = 0
    malformed: int = 0
    skimmed_bytes: int = 0
    oversized: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)


def last_line_time(buf, pos: int) -> tuple:
    match = _HEADER.match(buf, pos, pos + HEADER_BYTES)
    return (TICK, match.group(1) if match else None, None)


# token_count lines, as Codex lays them out: the three numbers the assembler needs.
_TOTAL_AT = b'"info":{"total_token_usage":{'
_USAGE = re.compile(
    rb'"info":\{"total_token_usage":\{[^}]*"total_tokens":(\d+)\},'
    rb'"last_token_usage":\{[^}]*"total_tokens":(\d+)\}'
    rb'(?:,"last_usage_includes_reasoning":(?:true|false))?(?:,"model_context_window":(\d+|null))?'
)
_WINDOW_KEY = b'"model_context_window":'
_DIGITS = re.compile(rb"\d+")


def usage_numbers(raw: bytes) -> tuple[int | None, int | None, int | None] | None:
    """(total tokens so far, tokens of the last request, context window) of a token_count
    line, read from its bytes; None when the line is not in the usual layout (then the
    caller decodes it)."""
    at = raw.find(_TOTAL_AT)
    if at < 0:
        return (None, None, None) if b'"info":null' in raw else None
    match = _USAGE.match(raw, at)
    if match is None:
        return None
    total, last, window = match.groups()
    if window is None:  # not where Codex puts it: wherever it is after the usage objects
        at = raw.find(_WINDOW_KEY, match.end())
        window = _DIGITS.match(raw, at + len(_WINDOW_KEY)) if at >= 0 else None
        return int(total), int(last), int(window.group(0)) if window else None
    return int(total), int(last), None if window == b"null" else int(window)


def decode_payload(raw: bytes) -> dict | None:
    obj = _decode(raw)
    payload = obj.get("payload") if isinstance(obj, dict) else None
    return payload if isinstance(payload, dict) else None


def decode_line(raw: bytes) -> dict | None:
    """A whole line decoded, if it is an object."""
    obj = _decode(raw)
    return obj if isinstance(obj, dict) else None


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
    match = _HEADER.match(buf, pos, min(end, pos + HEADER_BYTES))
    if match is None:
        if oversized:
            counts.oversized += 1
            return None
        return _slow_path(buf[pos:end], counts)
    ts, outer, inner = match.group(1), match.group(2), match.group(3)
    if inner is None and outer in (b"event_msg", b"response_item"):
        # Not the usual layout (a payload that is no object, or does not start with its type).
        if oversized:
            counts.oversized += 1
            return None
        return _slow_path(buf[pos:end], counts)
    if outer == b"response_item":
        if inner == b"message":
            return (OUTPUT, ts, None) if _from_assistant(buf, match.end(), end) else None
        if inner is not None and inner.decode() in _TOOL_ITEMS:
            return (TOOL_CALL, ts, None)
        return None
    if outer == b"event_msg":
        name = inner.decode() if inner is not None else ""
        kind = _EVENTS_DECODED.get(name)
        if kind is None:
            seen = _EVENTS_SEEN.get(name)
            return (seen, ts, None) if seen is not None else None
        if kind == TOKEN_COUNT:  # many per turn, one used: the assembler decodes it lazily
            return None if oversized else (TOKEN_COUNT, ts, bytes(buf[pos:end]))
        if kind == SETTINGS:
            return _settings(ts, buf, pos, end, counts, oversized)
        return _decoded(kind, ts, buf, pos, end, counts, oversized)
    if outer == b"turn_context":
        return _turn_context(ts, buf, pos, end, counts, oversized)
    if outer == b"session_meta":
        return _meta(ts, buf, pos, end, counts, oversized)
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


# turn_context and thread_settings_applied lines run to kilobytes (instructions, permission
# profiles) and come once per turn or more; the few string fields needed are read straight
# from the bytes. The first occurrence of each key is the top-level one: it precedes every
# nested object that could hold the same key.
_META_KEYS = ("id", "session_id", "cli_version", "originator", "model_provider", "cwd")
_KEYS = {name: b'"' + name.encode() + b'":' for name in ("model", "service_tier") + _META_KEYS}
_STRING_VALUE = re.compile(rb'"(?:[^"\\]|\\.)*"|null')


def _string_fields(buf, pos: int, end: int, names: tuple[str, ...]) -> dict:
    return {name: _string_field(buf, pos, end, name) for name in names}


def _string_field(buf, pos: int, end: int, name: str) -> str | None:
    key = _KEYS[name]
    at = buf.find(key, pos, end)  # a plain substring search is several times faster
    return _string_value(buf, at + len(key), end) if at >= 0 else None


def _string_value(buf, at: int, end: int) -> str | None:
    """The JSON string (or null) that starts at `at`, else None."""
    close = buf.find(b'"', at + 1, end) if at < end and buf[at] == 34 else -1  # 34: '"'
    if close > 0 and buf.find(b"\\", at, close) < 0:  # the usual case: no escapes
        return buf[at + 1:close].decode("utf-8", "replace")
    match = _STRING_VALUE.match(buf, at, end)
    return _json_string(match.group(0)) if match else None


def _turn_context(ts, buf, pos: int, end: int, counts: LineCounts, oversized: bool) -> tuple | None:
    model = _string_field(buf, pos, end, "model")
    if model is None:  # not the usual layout: read it properly
        rec = _decoded(TURN_CONTEXT, ts, buf, pos, end, counts, oversized)
        return None if rec is None else (TURN_CONTEXT, ts, _context_fields(rec[2]))
    return (TURN_CONTEXT, ts, {"model": model, "effort": _effort(buf, pos, end)})


_NOT_SEEN = object()


def _effort(buf, pos: int, end: int) -> str | None:
    """The first `effort`, else the first `reasoning_effort` (the collaboration mode's), in
    one pass over the line: the two keys end alike, and a search that misses reads it all."""
    effort = reasoning = _NOT_SEEN
    at = buf.find(b'effort":', pos, end)
    while at > pos and (effort is _NOT_SEEN or reasoning is _NOT_SEEN):
        if buf[at - 1] == 34:  # '"effort":'
            if effort is _NOT_SEEN:
                effort = _string_value(buf, at + 8, end)
                if effort is not None:
                    return effort
        elif reasoning is _NOT_SEEN and buf.startswith(b'"reasoning_', at - 11):
            reasoning = _string_value(buf, at + 8, end)
        at = buf.find(b'effort":', at + 8, end)
    return None if reasoning is _NOT_SEEN else reasoning


def _meta(ts, buf, pos: int, end: int, counts: LineCounts, oversized: bool) -> tuple | None:
    """A session's first line carries its base instructions (tens of KB): read the
    identity fields from the bytes; they precede the instructions."""
    found = _string_fields(buf, pos, end, _META_KEYS[:1] + _META_KEYS[2:])
    # Newer versions write `id` only: looking for the other key would read all the instructions.
    found["session_id"] = _string_field(buf, pos, end, "session_id") if found["id"] is None else None
    if found["id"] is None and found["session_id"] is None:
        rec = _decoded(META, ts, buf, pos, end, counts, oversized)
        return None if rec is None else (META, ts, _meta_fields(rec[2]))
    return (META, ts, found)


def _meta_fields(payload: dict) -> dict:
    return {key: payload.get(key) for key in _META_KEYS}


def _settings(ts, buf, pos: int, end: int, counts: LineCounts, oversized: bool) -> tuple | None:
    found = _string_fields(buf, pos, end, ("model", "service_tier"))
    if found["model"] is None:
        rec = _decoded(SETTINGS, ts, buf, pos, end, counts, oversized)
        return None if rec is None else (SETTINGS, ts, _settings_fields(rec[2]))
    return (SETTINGS, ts, found)


def _settings_fields(payload: dict) -> dict:
    settings = payload.get("thread_settings")
    if not isinstance(settings, dict):
        return {"model": None, "service_tier": None}
    return {"model": settings.get("model"), "service_tier": settings.get("service_tier")}


def _json_string(raw: bytes) -> str | None:
    if raw == b"null":
        return None
    if b"\\" in raw:  # escapes: let the JSON decoder undo them
        value = _decode(raw)
        return value if isinstance(value, str) else None
    return raw[1:-1].decode("utf-8", "replace")


def _context_fields(payload: dict) -> dict:
    effort = payload.get("effort")
    mode = payload.get("collaboration_mode")
    if effort is None and isinstance(mode, dict) and isinstance(mode.get("settings"), dict):
        effort = mode["settings"].get("reasoning_effort")
    return {"model": payload.get("model"), "effort": effort}


def _slow_path(raw: bytes, counts: LineCounts) -> tuple | None:
    """Lines not in Codex's usual byte layout: decode and look at the keys."""
    stripped = raw.strip()
    if not stripped:
        counts.blank += 1
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
    if not isinstance(inner, str):
        inner = None  # a list or an object here must not reach the set lookups below
    if outer == "response_item":
        if inner == "message" and payload.get("role") == "assistant":
            return (OUTPUT, ts_bytes, None)
        return (TOOL_CALL, ts_bytes, None) if inner in _TOOL_ITEMS else None
    if outer == "event_msg":
        if inner == "token_count":
            return (TOKEN_COUNT, ts_bytes, raw)
        if inner == "thread_settings_applied":
            return (SETTINGS, ts_bytes, _settings_fields(payload))
        if inner in _EVENTS_DECODED:
            return (_EVENTS_DECODED[inner], ts_bytes, payload)
        return (_EVENTS_SEEN[inner], ts_bytes, None) if inner in _EVENTS_SEEN else None
    if outer == "turn_context":
        return (TURN_CONTEXT, ts_bytes, _context_fields(payload))
    if outer == "session_meta":
        return (META, ts_bytes, _meta_fields(payload))
    if outer not in KNOWN_OUTER_TYPES:
        counts.unknown_types[outer] = counts.unknown_types.get(outer, 0) + 1
    return None


def scan(
    buf, start: int, counts: LineCounts, max_line: int, stop: int | None = None
) -> tuple[list[tuple], int]:
    """Parse every complete line in buf[start:stop]; -> (records, offset after the last newline).

    A line longer than max_line is recognised by its head only and never decoded.
    """
    records: list[tuple] = []
    append = records.append
    find = buf.find
    stop = len(buf) if stop is None else stop
    pos = start
    last_was_record = True
    while True:
        end = find(b"\n", pos, stop)
        if end < 0:
            break
        counts.lines += 1
        rec = parse_line(buf, pos, end, counts, end - pos > max_line)
        last_was_record = rec is not None
        if last_was_record:
            append(rec)
        pos = end + 1
    if not last_was_record:
        append(last_line_time(buf, buf.rfind(b"\n", start, pos - 1) + 1 or start))
    return records, pos


# --- skimming -------------------------------------------------------------------------
#
# A whole file read at once need not be walked line by line: only the lines around turn
# boundaries carry facts. Skimming finds the boundaries with bytes.find (C speed) and reads
# just the few lines each turn needs, producing the same records the line-by-line path would
# for the assembler. It is used for the first read of files that are not being written.

# Needles are as long as the layout allows: bytes.find skips further on a longer one (on
# JSON, `,"type":"event_msg","payload":{"type":"task_` scans 15 % faster than its last 35
# bytes). `"type"` always follows the timestamp (and, in some versions, an ordinal).
TASK_NEEDLE = b',"type":"event_msg","payload":{"type":"task_'
# A turn's context and settings are written within its first lines (after the instructions,
# on a session's first turn): look no further than this into a turn's body.
TURN_HEAD_BYTES = 256 << 10
_NEEDLES = {
    TURN_CONTEXT: b',"type":"turn_context","payload":{',
    SETTINGS: b',"type":"event_msg","payload":{"type":"thread_settings_applied"',
    TOKEN_COUNT: b'"payload":{"type":"token_count"',
    ERROR: b'"payload":{"type":"error"',
    TURN_ABORTED: b'"payload":{"type":"turn_aborted"',
}
# What a failed turn's body is searched for: tool calls and model output (did it work before
# it failed?). One pass for all of them: a search per kind read long bodies several times over.
_WORK = re.compile(
    rb'"payload":\{"type":"(' + b"|".join(sorted(n.encode() for n in _TOOL_ITEMS)) + rb'|message|agent_message)"'
)
_RESPONSE_ITEM = b'"type":"response_item",'
_EVENT_MSG = b'"type":"event_msg",'


def _work(buf, lo: int, hi: int) -> tuple[int, bool]:
    """(tool calls, whether the model produced output) between lo and hi, as parse_line
    would find them line by line."""
    calls, output = 0, False
    for match in _WORK.finditer(buf, lo, hi):
        name, at = match.group(1), match.start()
        if name == b"agent_message":
            output = output or buf.startswith(_EVENT_MSG, at - len(_EVENT_MSG))
        elif not buf.startswith(_RESPONSE_ITEM, at - len(_RESPONSE_ITEM)):
            continue
        elif name != b"message":
            calls += 1
        elif not output:
            line_end = buf.find(b"\n", match.end(), hi)
            output = _from_assistant(buf, match.end(), hi if line_end < 0 else line_end)
    return calls, output


# What each line kind's header says (outer type, payload type), for the lines skimming
# looks up by needle; and how those that are not simply decoded read their fields.
_EXPECTED = {kind: (b"event_msg", name.encode()) for name, kind in _EVENTS_DECODED.items()}
_EXPECTED[TURN_CONTEXT] = (b"turn_context", None)
_EXTRACT = {TURN_CONTEXT: _turn_context, SETTINGS: _settings}


def skim(buf, end: int, counts: LineCounts, max_line: int) -> tuple[list[tuple], int] | None:
    """Records of the complete lines in buf[:end], visiting only turn boundaries.

    -> (records, offset after the last complete line); None for a file without task
    boundaries (before era C), which cannot be skimmed.
    """
    stop = buf.rfind(b"\n", 0, end) + 1
    first_end = buf.find(b"\n", 0, stop)
    if first_end < 0 or buf.find(TASK_NEEDLE, first_end, stop) < 0:
        return None
    skimmer = _Skimmer(buf, counts, max_line)
    skimmer.read(first_end, stop)
    counts.skimmed_bytes += stop
    return skimmer.records, stop


class _Skimmer:
    """One pass over a whole file from boundary line to boundary line."""

    def __init__(self, buf, counts: LineCounts, max_line: int) -> None:
        self.buf, self.counts, self.max_line = buf, counts, max_line
        self.records: list[tuple] = []
        # Versions that record thread settings write them at the start of every turn (after
        # its context), and between turns when the user changes one (/fast). A turn's start
        # is searched for them only in files that have any: none in the first turn, and
        # none between turns so far, means this version writes none.
        self.settings: bool | None = None

    def line(self, kind: int, lo: int, hi: int, first: bool = False) -> int:
        """The last (or first) line of a kind between lo and hi, decoded, as a record;
        -> where that line ends, 0 if there was none."""
        buf = self.buf
        if first:
            hit = buf.find(_NEEDLES[kind], lo, min(hi, lo + TURN_HEAD_BYTES))
        else:
            hit = buf.rfind(_NEEDLES[kind], lo, hi)
        if hit < 0:
            return 0
        start = buf.rfind(b"\n", lo, hit) + 1 or lo
        end = buf.find(b"\n", hit)
        oversized = end - start > self.max_line
        match = _HEADER.match(buf, start, min(end, start + HEADER_BYTES))
        # The usual layout, of the expected type: straight to the fields (what parse_line
        # would do after recognising the header).
        if match is not None and match.group(2, 3) == _EXPECTED[kind]:
            ts = match.group(1)
            if kind == TOKEN_COUNT:
                rec = None if oversized else (TOKEN_COUNT, ts, bytes(buf[start:end]))
            elif kind in _EXTRACT:
                rec = _EXTRACT[kind](ts, buf, start, end, self.counts, oversized)
            else:
                rec = _decoded(kind, ts, buf, start, end, self.counts, oversized)
        else:
            rec = parse_line(buf, start, end, self.counts, oversized)
        if rec is not None and rec[0] == kind:
            self.records.append(rec)
            return end
        return 0

    def boundary(self, start: int, end: int) -> tuple | None:
        """The line a task needle was found in -> its record, if it is a turn boundary.
        Such lines are short and always decoded: straight to orjson, no header first."""
        if end - start <= self.max_line:
            try:
                obj = orjson.loads(self.buf[start:end])
            except orjson.JSONDecodeError:
                obj = None
            if type(obj) is dict and obj.get("type") == "event_msg":
                payload, ts = obj.get("payload"), obj.get("timestamp")
                if type(payload) is dict and type(ts) is str:
                    inner = payload.get("type")
                    if inner == "task_started":
                        return (TASK_STARTED, ts, payload)
                    if inner == "task_complete":
                        return (TASK_COMPLETE, ts, payload)
        # Anything unusual: the general path decides, and counts what is wrong.
        rec = parse_line(self.buf, start, end, self.counts, end - start > self.max_line)
        return rec if rec is not None and rec[0] in (TASK_STARTED, TASK_COMPLETE) else None

    def read(self, first_end: int, stop: int) -> None:
        buf, counts = self.buf, self.counts
        counts.lines += 1
        head = parse_line(buf, 0, first_end, counts, first_end > self.max_line)
        if head is not None:
            self.records.append(head)
        open_end: int | None = None  # end of the open turn's task_started line
        pos = gap_lo = first_end
        find, rfind, boundary = buf.find, buf.rfind, self.boundary
        while True:
            hit = find(TASK_NEEDLE, pos, stop)
            if hit < 0:
                break
            start = rfind(b"\n", pos, hit) + 1 or pos
            line_end = find(b"\n", hit)
            rec = boundary(start, line_end)
            pos = line_end + 1
            if rec is None:
                continue  # the needle sat inside some other line
            if rec[0] == TASK_STARTED:
                if open_end is not None:
                    self.unfinished(open_end, start)
                elif start > gap_lo + 1:  # settings (and older files' turn_context) can precede task_started
                    if self.line(SETTINGS, gap_lo, start):
                        self.settings = True
                    self.line(TURN_CONTEXT, gap_lo, start)
                self.records.append(rec)
                open_end = line_end
                continue
            if open_end is not None:  # else a stray end, before any start
                self.body(open_end, start, rec[2])
            self.records.append(rec)
            open_end = None
            gap_lo = line_end
        if open_end is not None:
            self.unfinished(open_end, stop)
        self.records.append(last_line_time(buf, buf.rfind(b"\n", 0, stop - 1) + 1))

    def body(self, lo: int, hi: int, end: dict | None) -> None:
        """What the assembler needs from between a turn's boundary lines (`end`: the payload
        of its task_complete, None if it has none). Settings and context come at a turn's
        start (the model cannot change mid-turn): search forward for them, and backward for
        the last token count, so no body is read through."""
        context_end = self.line(TURN_CONTEXT, lo, hi, first=True)
        if self.settings is not False:
            # Settings written at a turn's start follow its context: looked for there first,
            # so the instructions that can precede the context are not read twice.
            found = ((context_end and self.line(SETTINGS, context_end, hi, first=True))
                     or self.line(SETTINGS, lo, context_end or hi, first=True))
            self.settings = self.settings or bool(found)
        self.line(TOKEN_COUNT, lo, hi)
        error = end.get("error") if end is not None else None
        if end is not None and error is None and end.get("last_agent_message") is not None:
            return  # it worked: whether work was done, and what the TUI said, do not matter
        calls, output = _work(self.buf, lo, hi)
        self.records.extend([(TOOL_CALL, None, None)] * calls)
        if output:
            self.records.append((OUTPUT, None, None))
        if not isinstance(error, dict):  # else the end line gives the cause
            self.line(ERROR, lo, hi)

    def unfinished(self, lo: int, hi: int) -> None:
        """A turn with no task_complete: aborted by the user, killed, or still running."""
        self.body(lo, hi, None)
        self.line(TURN_ABORTED, lo, hi)
