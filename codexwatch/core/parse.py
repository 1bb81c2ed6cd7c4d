"""Rollout lines -> the few records turn assembly needs.

Most bytes in a rollout are prompts, instructions and tool output that the statistics never
read. So each line is first recognised from its first few hundred bytes; only the line types
that carry facts (a few percent of the bytes) are decoded in full with orjson.

What the engine reads is described once, in LINE_KINDS (a LineKind per kind of line: its
envelope and payload types, what its record carries, the needle the skimmer finds it by).
The three ways of reading work from that table: `parse_line` from a line's bytes, `_slow_path`
from a decoded line (lines not in Codex's usual layout), and `skim`, which visits only the
lines around turn boundaries of a whole file. Each gives records, (kind, timestamp bytes,
payload) tuples, for the TurnAssembler (`core/turns.py`), whose handlers take them by kind.
A new line type is a row of LINE_KINDS and, if it carries facts, a handler; a new field of a
kind is read where its record is used (a DECODED or RAW kind: the assembler's handler, e.g.
the token_count line's `rate_limits`) or, for a FIELDS kind, in its `from_bytes` and
`from_payload`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

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

# A record: (kind, timestamp, payload), a plain tuple (millions are made). `timestamp` is
# the line's own, as its bytes were written (bytes, never str; None when it has none).
# What `payload` is depends on how the kind is read (LineKind.read).
Record = tuple  # tuple[int, bytes | None, Any]

# How a line kind's payload reaches its record:
SEEN = "seen"  # nothing: only that the line was there (payload None)
DECODED = "decoded"  # the whole payload, decoded (a dict)
RAW = "raw"  # the line's bytes, decoded only if needed (token counts: many per turn, one used)
FIELDS = "fields"  # a few named fields (a dict), read from the bytes where Codex's layout allows


@dataclass(frozen=True)
class LineKind:
    """One kind of line the engine reads: the one description every path works from (the
    header path `parse_line`, the decoded path `_slow_path`, the skimmer). A new line type
    Codex writes is one more row of LINE_KINDS; a new field of a known kind is its reader's
    business (FIELDS: `from_bytes` and `from_payload`; DECODED: the assembler's handler)."""

    kind: int
    outer: str  # the envelope's `type`
    inner: str | None = None  # the payload's `type`; None: the outer type alone says it
    read: str = SEEN
    role: str | None = None  # SEEN messages: only those of this role count
    # FIELDS: (ts, buf, pos, end, counts, oversized) -> record, reading the bytes (falling
    # back to decoding the line), and payload dict -> fields, for a line already decoded.
    from_bytes: Callable | None = None
    from_payload: Callable | None = None
    # The skimmer finds this kind's lines by this needle (None: it does not look them up).
    needle: bytes | None = None

    # The same names as bytes, as the header path and the skimmer meet them.
    outer_b: bytes = field(init=False)
    inner_b: bytes | None = field(init=False)
    role_b: bytes | None = field(init=False)

    def __post_init__(self) -> None:
        encoded = lambda text: text.encode() if text is not None else None  # noqa: E731
        for name in ("outer", "inner", "role"):
            object.__setattr__(self, name + "_b", encoded(getattr(self, name)))


# Outer types Codex writes that carry nothing the statistics use (an unknown one is counted).
OTHER_OUTER_TYPES = frozenset(
    {
        "compacted", "world_state", "inter_agent_communication",
        "inter_agent_communication_metadata", "token_usage_record", "retained_context",
        "security_risk_score", "realtime_item", "transaction",
    }
)
TOOL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call",
              "tool_search_call", "image_generation_call")

# What Codex writes (serde, compact, fixed field order). Anything else takes the slow path.
_HEADER = re.compile(
    rb'\{"timestamp":"([^"\\]{1,40})",(?:"ordinal":\d+,)?"type":"([a-z_]{1,64})"'
    rb'(?:,"payload":\{"type":"([A-Za-z_]{1,64})")?'
)
_ROLE = re.compile(rb'"role":"([a-z]+)"')
HEADER_BYTES = 320


def _from_role(buf, at: int, end: int, role: bytes) -> bool:
    """Whether the message whose type ends at `at` is `role`'s: its role follows within
    200 bytes, before `end` (its line's end)."""
    found = _ROLE.search(buf, at, min(end, at + 200))
    return found is not None and found.group(1) == role


@dataclass(slots=True)
class LineCounts:
    """Per-file parser health, filled while scanning."""

    lines: int = 0  # lines read one by one (skimmed lines are not counted here)
    blank: int = 0
    malformed: int = 0
    skimmed_bytes: int = 0
    oversized: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)

    def export(self) -> dict:
        """Plain values (marshal-able); LineCounts(**them) is these counts again."""
        return {name: getattr(self, name) for name in LineCounts.__slots__}

    def add(self, other: "LineCounts") -> None:
        """Another part of the same file's counts (read by another process), added: every
        field, as export() gives them, so a new one is added too."""
        for name in LineCounts.__slots__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, dict):  # counts by name
                for key, n in theirs.items():
                    mine[key] = mine.get(key, 0) + n
            else:
                setattr(self, name, mine + theirs)


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
) -> Record | None:
    """The line buf[pos:end] (without its newline) -> its record, or None.

    Works in place on the buffer: most lines are never copied. `oversized`: the line is too
    long to decode; it is recognised by its head only.
    """
    match = _HEADER.match(buf, pos, min(end, pos + HEADER_BYTES))
    if match is None:
        if oversized:
            counts.oversized += 1
            return None
        return _slow_path(buf[pos:end], counts)
    ts, outer, inner = match.group(1, 2, 3)
    line = _BY_HEADER.get((outer, inner))
    if line is None:
        if outer in _BY_INNER_B:  # its kinds are told by the payload's type
            if inner is not None:
                return None  # a payload type nobody reads
            # Not the usual layout (a payload that is no object, or does not start with its type).
            if oversized:
                counts.oversized += 1
                return None
            return _slow_path(buf[pos:end], counts)
        line = _BY_HEADER.get((outer, None))
        if line is None:
            name = outer.decode()
            if name not in OTHER_OUTER_TYPES:
                counts.unknown_types[name] = counts.unknown_types.get(name, 0) + 1
            return None
    # _from_bytes, written out: this runs for every line read one by one.
    read = line.read
    if read == SEEN:
        if line.role is not None and not _from_role(buf, match.end(), end, line.role_b):
            return None
        return (line.kind, ts, None)
    if read == RAW:
        return None if oversized else (line.kind, ts, bytes(buf[pos:end]))
    if read == FIELDS:
        return line.from_bytes(ts, buf, pos, end, counts, oversized)
    return _decoded(line.kind, ts, buf, pos, end, counts, oversized)


def _from_bytes(line: LineKind, ts: bytes, buf, pos: int, end: int, counts: LineCounts,
                oversized: bool, after: int) -> Record | None:
    """The record of a line of a known kind, from its bytes (`after`: where its header
    ends)."""
    read = line.read
    if read == SEEN:
        if line.role is not None and not _from_role(buf, after, end, line.role_b):
            return None
        return (line.kind, ts, None)
    if read == RAW:
        return None if oversized else (line.kind, ts, bytes(buf[pos:end]))
    if read == FIELDS:
        return line.from_bytes(ts, buf, pos, end, counts, oversized)
    return _decoded(line.kind, ts, buf, pos, end, counts, oversized)


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


# --- the line kinds --------------------------------------------------------------------
#
# Every line the engine reads, in one table. The needles are how the skimmer finds a kind's
# lines in a whole file: as long as the layout allows (bytes.find skips further on a longer
# one); `"type"` always follows the timestamp (and, in some versions, an ordinal).
LINE_KINDS: tuple[LineKind, ...] = (
    LineKind(META, "session_meta", read=FIELDS, from_bytes=_meta, from_payload=_meta_fields),
    LineKind(TURN_CONTEXT, "turn_context", read=FIELDS, from_bytes=_turn_context,
             from_payload=_context_fields, needle=b',"type":"turn_context","payload":{'),
    LineKind(TASK_STARTED, "event_msg", "task_started", DECODED,
             needle=b',"type":"event_msg","payload":{"type":"task_started"'),
    LineKind(TASK_COMPLETE, "event_msg", "task_complete", DECODED,
             needle=b',"type":"event_msg","payload":{"type":"task_complete"'),
    LineKind(TURN_ABORTED, "event_msg", "turn_aborted", DECODED,
             needle=b'"payload":{"type":"turn_aborted"'),
    LineKind(ERROR, "event_msg", "error", DECODED, needle=b'"payload":{"type":"error"'),
    LineKind(SETTINGS, "event_msg", "thread_settings_applied", FIELDS, from_bytes=_settings,
             from_payload=_settings_fields,
             needle=b',"type":"event_msg","payload":{"type":"thread_settings_applied"'),
    LineKind(TOKEN_COUNT, "event_msg", "token_count", RAW, needle=b'"payload":{"type":"token_count"'),
    LineKind(USER_MESSAGE, "event_msg", "user_message"),
    LineKind(OUTPUT, "event_msg", "agent_message"),
    LineKind(OUTPUT, "response_item", "message", role="assistant"),
    *(LineKind(TOOL_CALL, "response_item", name) for name in TOOL_ITEMS),
)

# What the paths look a line up by, made from the table.
_BY_NAME = {(k.outer, k.inner): k for k in LINE_KINDS}  # decoded lines
_BY_HEADER = {(k.outer_b, k.inner_b): k for k in LINE_KINDS}  # lines read from their bytes
_BY_INNER = frozenset(k.outer for k in LINE_KINDS if k.inner is not None)
_BY_INNER_B = frozenset(k.outer_b for k in LINE_KINDS if k.inner is not None)
_OF_KIND = {k.kind: k for k in LINE_KINDS if k.needle is not None}  # those the skimmer looks up
KNOWN_OUTER_TYPES = frozenset(k.outer for k in LINE_KINDS) | OTHER_OUTER_TYPES


def _slow_path(raw: bytes, counts: LineCounts) -> Record | None:
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
        inner = None  # a list or an object here must not reach the lookups below
    line = _BY_NAME.get((outer, inner))
    if line is None:
        if outer in _BY_INNER:
            return None
        line = _BY_NAME.get((outer, None))
        if line is None:
            if outer not in OTHER_OUTER_TYPES:
                counts.unknown_types[outer] = counts.unknown_types.get(outer, 0) + 1
            return None
    read = line.read
    if read == SEEN:
        if line.role is not None and payload.get("role") != line.role:
            return None
        return (line.kind, ts_bytes, None)
    if read == RAW:
        return (line.kind, ts_bytes, raw)
    if read == FIELDS:
        return (line.kind, ts_bytes, line.from_payload(payload))
    return (line.kind, ts_bytes, payload)


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

# A turn's boundaries, task_started and task_complete, found by one needle: what their
# needles share.
_BOUNDARIES = {k.inner: k.kind for k in LINE_KINDS if k.kind in (TASK_STARTED, TASK_COMPLETE)}
TASK_NEEDLE = os.path.commonprefix([_OF_KIND[kind].needle for kind in _BOUNDARIES.values()])
# A turn's context and settings are written within its first lines (after the instructions,
# on a session's first turn): look no further than this into a turn's body.
TURN_HEAD_BYTES = 256 << 10
# What a failed turn's body is searched for: tool calls and model output (did it work before
# it failed?), the SEEN kinds of the table. One pass for all of them: a search per kind read
# long bodies several times over.
_WORK_KINDS = [k for k in LINE_KINDS if k.kind in (TOOL_CALL, OUTPUT)]
_WORK = re.compile(
    rb'"payload":\{"type":"(' + b"|".join(sorted({k.inner_b for k in _WORK_KINDS})) + rb')"'
)
_WORK_OF = {k.inner_b: (b'"type":"' + k.outer_b + b'",', k) for k in _WORK_KINDS}


def _work(buf, lo: int, hi: int) -> tuple[int, bool]:
    """(tool calls, whether the model produced output) between lo and hi, as parse_line
    would find them line by line."""
    calls, output = 0, False
    for match in _WORK.finditer(buf, lo, hi):
        envelope, line = _WORK_OF[match.group(1)]
        at = match.start()
        if not buf.startswith(envelope, at - len(envelope)):
            continue
        if line.kind == TOOL_CALL:
            calls += 1
        elif line.role is None:
            output = True
        elif not output:
            line_end = buf.find(b"\n", match.end(), hi)
            output = _from_role(buf, match.end(), hi if line_end < 0 else line_end, line.role_b)
    return calls, output


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
        buf, want = self.buf, _OF_KIND[kind]
        if first:
            hit = buf.find(want.needle, lo, min(hi, lo + TURN_HEAD_BYTES))
        else:
            hit = buf.rfind(want.needle, lo, hi)
        if hit < 0:
            return 0
        start = buf.rfind(b"\n", lo, hit) + 1 or lo
        end = buf.find(b"\n", hit)
        oversized = end - start > self.max_line
        match = _HEADER.match(buf, start, min(end, start + HEADER_BYTES))
        # The usual layout, of the expected type: straight to the fields (what parse_line
        # would do after recognising the header).
        if match is not None and match.group(2, 3) == (want.outer_b, want.inner_b):
            rec = _from_bytes(want, match.group(1), buf, start, end, self.counts, oversized,
                              match.end())
        else:
            rec = parse_line(buf, start, end, self.counts, oversized)
        if rec is not None and rec[0] == kind:
            self.records.append(rec)
            return end
        return 0

    def boundary(self, start: int, end: int) -> Record | None:
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
                    kind = _BOUNDARIES.get(inner) if type(inner) is str else None
                    if kind is not None:
                        return (kind, ts.encode(), payload)
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
