"""Build a large, realistic Codex home from the real CLI recordings.

    python benchmarks/make_history.py OUT_DIR --size 1GiB [--days 90] [--seed 1]

Every line written is a line the real Codex CLI wrote (tests/fixtures/real-cli), with its
ids, times, `ordinal` and cumulative token counters rewritten so that each generated session
is a new, self-consistent session:

- a session is one recorded session's `session_meta` plus its first turn, followed (TUI
  sessions only) by more turns of the same CLI version: later TUI turns, and `codex exec`
  turns with the session preamble (developer instructions, tools, environment) stripped;
- every session gets a fresh UUIDv7-like id (filename, `session_meta.payload.id`,
  `session_id`, `thread_id`), every turn fresh turn ids, every item fresh item ids;
- times are shifted (ISO stamps, epoch seconds, milliseconds and fractional seconds alike,
  each in its own format) to a start drawn from local working hours over the last `--days`
  days, never in the future;
- sessions reach realistic sizes (hundreds of KB to a few MB) the way real ones do, through
  tool output: a turn that made tool calls gets more `function_call`/`function_call_output`
  pairs, with long outputs made of recorded text. A turn without tool calls gets none, so
  its shape (rejected / interrupted) and outcome do not change.

Lines are cut once into literal text and placeholders; writing a session is a string join,
no JSON serialisation. `OUT_DIR/manifest.json` holds the counts a reader of the history must
find (turns by outcome, class and shape, token totals), so benchmarks can check answers.
"""

from __future__ import annotations

import argparse
import calendar
import json
import math
import os
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECORDINGS = REPO / "tests" / "fixtures" / "real-cli"

# Bumped whenever the same seed would give different files: a benchmark rebuilds a history
# made by another version (2: each added tool call is a model request with its token count,
# outputs cut where Codex cuts them).
GENERATOR_VERSION = 2

# Versions used, with the era of their format (docs: rollout-eras.md). exec-0.20.0 (era A,
# no turns) is left out: it adds no work for a reader.
ERAS = {"0.80.0": "B", "0.120.0": "C", "0.140.0": "C", "0.171.0": "D"}

# Share of sessions per (version, mode). Newest releases dominate a real history.
SESSION_MIX = {
    ("0.171.0", "tui"): 0.32,
    ("0.171.0", "exec"): 0.28,
    ("0.140.0", "tui"): 0.12,
    ("0.120.0", "tui"): 0.10,
    ("0.120.0", "exec"): 0.10,
    ("0.80.0", "exec"): 0.08,
}


@dataclass(frozen=True)
class Shape:
    """How a history is put together (issue 14 measured three shapes of real homes)."""

    mix: dict  # (version, mode) -> share of sessions
    extra_turns: float  # mean of the extra turns a TUI session gets (exponential)
    max_extra: int  # at most this many
    grow: bool  # grow tool turns toward a log-normal target size (median 200 KB)
    one_session: bool = False  # one session to the whole size (a TUI thread kept open)


SHAPES = {
    # ~4,700 sessions per GiB, ~4 turns each, median 94 KB: the first benchmarks' shape.
    "default": Shape(SESSION_MIX, 6.0, 60, True),
    # Many small sessions, as `codex exec` from scripts and CI and short TUI sessions make:
    # ~31,700 per GiB, ~1.7 turns, ~13 lines and ~34 KB each, turns as recorded (no tool
    # calls added), the large session_meta first line of current releases.
    "small": Shape({
        ("0.171.0", "exec"): 0.04,
        ("0.171.0", "tui"): 0.04,
        ("0.140.0", "tui"): 0.13,
        ("0.120.0", "tui"): 0.18,
        ("0.120.0", "exec"): 0.30,
        ("0.80.0", "exec"): 0.31,
    }, 2.5, 12, False),
    # One TUI thread kept open for days: a real 0.171 TUI session's turns repeated with
    # fresh ids, in their order, until the size is reached (300 MB: ~12,800 turns, 60 %
    # failed, as in the recording; --failure-rate does not apply).
    "giant": Shape({("0.171.0", "tui"): 1.0}, 0.0, 0, False, one_session=True),
}

# What each recorded scenario must come out as (tests/fixtures/real-cli/README.md):
# outcome, error class, shape. A failed turn whose cause the file does not record is
# `unrecorded` instead (decided per turn from its lines, see Block.expected).
SCENARIOS = {
    "healthy": ("ok", None, None),
    "healthy_tools": ("ok", None, None),
    "ok": ("ok", None, None),
    "overloaded_fast": ("failed", "capacity", "rejected"),
    "overloaded503": ("failed", "capacity", "rejected"),
    "overloaded_stream": ("failed", "capacity", "rejected"),
    "overloaded_midturn": ("failed", "capacity", "interrupted"),
    "stream_failed_overloaded": ("failed", "capacity", "interrupted"),
    "rate_limit_429": ("failed", "rate_limit", "rejected"),
    "rate429": ("failed", "rate_limit", "rejected"),
    "usage_limit": ("failed", "usage_limit", "rejected"),
    "disconnected": ("failed", "stream_disconnected", "rejected"),
}
TOKEN_AT = re.compile(r'\{"timestamp":"([^"]+)",(?:"ordinal":\d+,)?"type":"event_msg","payload":\{"type":"token_count"')
PROMPT_RE = re.compile(r"^(?:scenario (\S+): do the task|prompt \d+: (\S+))$")

# One pass over a raw line finds everything that must change. Order matters: an ISO time
# must win over the bare date inside it.
TOKEN_RE = re.compile(
    r"(?P<uuid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"|(?P<iso>(?P<isosec>20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d)(?P<frac>\.\d+)?Z)"
    r"|(?P<date>20\d\d-\d\d-\d\d)"
    r"|(?P<cum>\"(?:total_token_usage|thread_token_usage)\":\{[^{}]*\})"
    r"|(?P<ord>(?<=Z\",)\"ordinal\":)(?P<ordn>\d+)"
    r"|(?<![\w.])(?P<epoch>1\d{9}(?:\d{3})?)(?P<efrac>\.\d+)?(?![\w.])"
)
# Lines that belong to a session's start, not to a turn: dropped when an exec turn is
# reused as a later turn of a TUI session.
PREAMBLE_TEXT = ("<environment_context>", "# AGENTS.md", "<permissions instructions>")


# ---------------------------------------------------------------------------- rendering
@dataclass
class Ctx:
    """What one rendering of a block needs: the shift, the id maps, the counters."""

    rng: random.Random
    delta: int  # milliseconds added to every time in the block
    session_id: str
    turn_ids: dict
    item_ids: dict
    ordinal: int = 0
    cum: dict = field(default_factory=dict)  # key -> {field: offset} running token totals


def uuid7(ms: int, rng: random.Random) -> str:
    """A UUIDv7 for the given epoch milliseconds, like Codex's own ids."""
    rand = rng.getrandbits(74)
    hi = (ms & 0xFFFFFFFFFFFF) << 80 | 0x7 << 76 | (rand >> 62) << 64
    lo = 0b10 << 62 | (rand & ((1 << 62) - 1))
    h = f"{hi | lo:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@lru_cache(maxsize=1 << 16)
def utc_text(sec: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))


@lru_cache(maxsize=1 << 12)
def local_date(sec: int) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(sec))


class Uuid:
    __slots__ = ("orig", "scope", "ms")

    def __init__(self, orig: str, scope: str):
        self.orig, self.scope = orig, scope
        # Codex ids are UUIDv7: keep the embedded time in step with the shifted times.
        self.ms = int(orig[:8] + orig[9:13], 16) if orig[14] == "7" else None

    def render(self, ctx: Ctx) -> str:
        if self.scope == "session":
            return ctx.session_id
        ids = ctx.turn_ids if self.scope == "turn" else ctx.item_ids
        new = ids.get(self.orig)
        if new is None:
            ms = (self.ms + ctx.delta) if self.ms is not None else ctx.rng.getrandbits(48)
            new = ids[self.orig] = uuid7(ms, ctx.rng)
        return new


class Iso:
    """An ISO-8601 UTC time with milliseconds, as Codex writes them."""

    __slots__ = ("ms",)

    def __init__(self, ms: int):
        self.ms = ms

    def render(self, ctx: Ctx) -> str:
        sec, ms = divmod(self.ms + ctx.delta, 1000)
        return f"{utc_text(sec)}.{ms:03d}Z"


class Date:
    __slots__ = ("ms",)

    def __init__(self, ms: int):
        self.ms = ms  # the time of the line it sits in

    def render(self, ctx: Ctx) -> str:
        return local_date((self.ms + ctx.delta) // 1000)


class Epoch:
    """Epoch seconds or milliseconds, whole or with decimals, shifted in integer arithmetic."""

    __slots__ = ("units", "per_second", "decimals")

    def __init__(self, digits: str, per_second: int, decimals: int):
        self.units = int(digits)  # the number without its decimal point
        self.per_second = per_second  # units per second: 1, 1000, 10**decimals
        self.decimals = decimals

    def render(self, ctx: Ctx) -> str:
        text = str(self.units + ctx.delta * self.per_second // 1000)
        return f"{text[:-self.decimals]}.{text[-self.decimals:]}" if self.decimals else text


class Ordinal:
    __slots__ = ("prefix",)

    def __init__(self, prefix: str):
        self.prefix = prefix

    def render(self, ctx: Ctx) -> str:
        n = ctx.ordinal
        ctx.ordinal = n + 1
        return self.prefix + str(n)


class Cumulative:
    """A session-cumulative token counter: value relative to the block start + offset."""

    __slots__ = ("key", "rel")

    def __init__(self, key: str, rel: tuple):
        self.key, self.rel = key, rel

    def render(self, ctx: Ctx) -> str:
        off = ctx.cum.get(self.key, {})
        body = ",".join(f'"{k}":{v + off.get(k, 0)}' for k, v in self.rel)
        return f'"{self.key}":{{{body}}}'


def render(parts: list, ctx: Ctx) -> str:
    return "".join([p if p.__class__ is str else p.render(ctx) for p in parts])


# ---------------------------------------------------------------------------- templates
@dataclass
class Line:
    parts: list
    ms: int  # the line's own timestamp, epoch milliseconds
    obj: dict  # parsed once, for classification only

    @property
    def kind(self) -> tuple:
        payload = self.obj.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else None
        return self.obj.get("type"), sub


@dataclass
class ToolPair:
    """A recorded tool call and its output; repeated (with outputs of realistic sizes) to
    grow a turn, each copy a model request of its own: call, output, token count."""

    call: list  # parts of the call line, stamped with the output's time
    before: list  # parts of the output line before the output text
    after: list
    nested: bool  # output is a JSON document in a string (0.120): escape twice
    tokens: list | None = None  # parts of the turn's token_count line, at the output's time
    step: dict = field(default_factory=dict)  # its last_token_usage: what one request adds


@dataclass
class Block:
    """One recorded turn: its lines, what it must come out as, and how to grow it."""

    version: str
    mode: str
    lines: list
    insert_after: dict  # line index -> ToolPair, repeats go right after that line
    t0: int  # first and last line, epoch ms
    t1: int
    final_cum: dict
    nbytes: int
    expected: tuple  # (outcome, error_class, shape)


@dataclass
class Recording:
    version: str
    mode: str
    meta: Line  # the session_meta line
    start: int  # session_meta.payload.timestamp, epoch ms (the filename's time)
    blocks: list  # turn blocks in file order
    reusable: list  # exec turns without the session preamble, to continue TUI sessions


class Tokenizer:
    """Cuts raw lines into literal text and placeholders."""

    def __init__(self, session_ids: set, lo: int, hi: int):
        self.session_ids = session_ids
        self.lo, self.hi = lo, hi  # epoch seconds that are recording times

    def parts(self, raw: str, ms: int, turn_ids: set, base: dict) -> list:
        out, pos = [], 0
        for m in TOKEN_RE.finditer(raw):
            ph = self._placeholder(m, ms, turn_ids, base)
            if ph is None:
                continue
            out.append(raw[pos:m.start()])
            out.append(ph)
            pos = m.end()
        out.append(raw[pos:])
        return [p for p in out if p != ""]

    def _placeholder(self, m: re.Match, ms: int, turn_ids: set, base: dict):
        if m.group("uuid"):
            orig = m.group("uuid")
            scope = "session" if orig in self.session_ids else "turn" if orig in turn_ids else "item"
            return Uuid(orig, scope)
        if m.group("iso"):
            frac = m.group("frac") or ""
            if len(frac) != 4:
                raise ValueError(f"a time without milliseconds: {m.group()}")
            return Iso(iso_seconds(m.group("isosec")) * 1000 + int(frac[1:]))
        if m.group("date"):
            return Date(ms)
        if m.group("cum"):
            return self._cumulative(m.group("cum"), base)
        if m.group("ord"):
            return Ordinal(m.group("ord"))
        value = int(m.group("epoch"))
        scale = 1000 if value > 10**12 else 1
        if not self.lo <= value // scale <= self.hi:
            return None  # a count that only looks like a time
        decimals = (m.group("efrac") or ".")[1:]
        return Epoch(m.group("epoch") + decimals, scale * 10 ** len(decimals), len(decimals))

    @staticmethod
    def _cumulative(text: str, base: dict) -> Cumulative:
        key, body = text.split(":", 1)
        key = key.strip('"')
        values = json.loads(body)
        rel = tuple((k, v - base.get(key, {}).get(k, 0)) for k, v in values.items())
        return Cumulative(key, rel)


def iso_seconds(text: str) -> int:
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))


def line_ms(obj: dict) -> int:
    stamp = obj["timestamp"]
    return iso_seconds(stamp[:19]) * 1000 + int(stamp[20:23])


def find_recordings() -> list:
    """The recorded rollout files of the versions in ERAS, with mode and version."""
    found = []
    for folder in sorted(RECORDINGS.iterdir()):
        mode, _, version = folder.name.partition("-")
        if version in ERAS:
            for path in sorted(folder.glob("sessions/**/rollout-*.jsonl")):
                found.append((mode, version, path))
    return found


def load_templates() -> list:
    """Every recording, cut into a session_meta line and turn blocks."""
    files = [(mode, version, path.read_text(encoding="utf-8").splitlines(keepends=True))
             for mode, version, path in find_recordings()]
    objs = [[json.loads(raw) for raw in lines] for _, _, lines in files]
    session_ids = {o[0]["payload"]["id"] for o in objs}
    secs = [line_ms(o) // 1000 for lines in objs for o in lines]
    tok = Tokenizer(session_ids, min(secs) - 86400, max(secs) + 86400)
    return [cut_recording(tok, mode, version, raws, lines)
            for (mode, version, raws), lines in zip(files, objs)]


def cut_recording(tok: Tokenizer, mode: str, version: str, raws: list, objs: list) -> Recording:
    groups = split_turns(version, objs)
    base: dict = {}
    blocks = [make_block(tok, mode, version, [raws[i] for i in g], [objs[i] for i in g], base)
              for g in groups]
    reusable = []
    if mode == "exec":
        for g in groups:
            keep = [i for i in g if not is_preamble(objs[i])]
            reusable.append(make_block(tok, mode, version, [raws[i] for i in keep],
                                       [objs[i] for i in keep], {}))
    ms = line_ms(objs[0])
    meta = Line(tok.parts(raws[0], ms, set(), {}), ms, objs[0])
    return Recording(version, mode, meta, line_ms({"timestamp": objs[0]["payload"]["timestamp"]}),
                     blocks, reusable)


def split_turns(version: str, objs: list) -> list:
    """Line indices of each turn: cut after task_complete (eras C, D); era B: one turn."""
    groups, current = [], []
    for i in range(1, len(objs)):
        current.append(i)
        payload = objs[i].get("payload") or {}
        if objs[i].get("type") == "event_msg" and payload.get("type") == "task_complete":
            groups.append(current)
            current = []
    if current:
        if groups:
            groups[-1].extend(current)  # lines after the last task_complete stay with it
        else:
            groups.append(current)
    return groups


def is_preamble(obj: dict) -> bool:
    """A line Codex writes once at a session's start (instructions, tools, environment)."""
    payload = obj.get("payload") or {}
    if obj.get("type") == "world_state" or payload.get("type") == "additional_tools":
        return True
    if obj.get("type") != "response_item" or payload.get("type") != "message":
        return False
    if payload.get("role") == "developer":
        return True
    texts = [c.get("text", "") for c in payload.get("content") or []]
    return payload.get("role") == "user" and any(t.startswith(PREAMBLE_TEXT) for t in texts)


def make_block(tok: Tokenizer, mode: str, version: str, raws: list, objs: list, base: dict) -> Block:
    """Cut one turn; `base` holds the recording's token totals before it (updated here)."""
    turn_ids = {o["payload"]["turn_id"] for o in objs
                if isinstance(o.get("payload"), dict) and isinstance(o["payload"].get("turn_id"), str)}
    start_base = {k: dict(v) for k, v in base.items()}
    lines = []
    for raw, obj in zip(raws, objs):
        lines.append(Line(tok.parts(raw, line_ms(obj), turn_ids, start_base), line_ms(obj), obj))
        for key in ("total_token_usage", "thread_token_usage"):
            found = find_key(obj, key)
            if found is not None:
                base[key] = found
    final = {k: {f: v - start_base.get(k, {}).get(f, 0) for f, v in base[k].items()}
             for k in base}
    return Block(version, mode, lines, tool_pairs(tok, lines, turn_ids, start_base),
                 lines[0].ms, lines[-1].ms, final,
                 sum(len(r.encode()) for r in raws), expected_outcome(objs))


def find_key(obj, key):
    """The first value of `key` anywhere in a parsed line (token totals sit at depth 2-3)."""
    if isinstance(obj, dict):
        if key in obj and isinstance(obj[key], dict):
            return obj[key]
        for v in obj.values():
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def tool_pairs(tok: Tokenizer, lines: list, turn_ids: set, base: dict) -> dict:
    """Recorded function_call_output lines, each with its call, ready to be repeated."""
    token = next((line for line in lines if line.kind == ("event_msg", "token_count")
                  and isinstance((line.obj["payload"].get("info") or {}).get("last_token_usage"), dict)),
                 None)
    calls, pairs = {}, {}
    counted: dict = {}  # key -> the running token totals last written before here
    for i, line in enumerate(lines):
        counted.update((p.key, p.rel) for p in line.parts if isinstance(p, Cumulative))
        kind = line.kind
        if kind == ("response_item", "function_call"):
            calls[line.obj["payload"]["call_id"]] = line
        elif kind == ("response_item", "function_call_output"):
            call = calls.get(line.obj["payload"]["call_id"])
            if call is not None:
                pairs[i] = make_pair(tok, call, line, turn_ids, base, token, dict(counted))
    return pairs


MARKER = "\x00OUTPUT\x00"


def make_pair(tok: Tokenizer, call: Line, out: Line, turn_ids: set, base: dict,
              token: Line | None, counted: dict) -> ToolPair:
    obj = json.loads(json.dumps(out.obj))
    payload = obj["payload"]
    nested = False
    try:
        inner = json.loads(payload["output"])
        nested = isinstance(inner, dict) and isinstance(inner.get("output"), str)
    except (ValueError, TypeError):
        inner = None
    if nested:
        inner["output"] = MARKER
        payload["output"] = dumps(inner)
    else:
        payload["output"] = MARKER
    raw = dumps(obj) + "\n"
    escaped = dumps(dumps(MARKER)[1:-1])[1:-1] if nested else dumps(MARKER)[1:-1]
    before, after = raw.split(escaped)
    # The repeated call (and token count) carries the output's timestamp, so times in the
    # file never go back.
    def at_output(line: Line) -> list:
        return [Iso(out.ms) if isinstance(p, Iso) and i < 2 else p for i, p in enumerate(line.parts)]

    # An added request's totals: those written last before it, plus its own tokens (the
    # running offset that rendering adds), so the totals in a file never go down.
    def counting_on(part):
        if not isinstance(part, Cumulative):
            return part
        return Cumulative(part.key, counted.get(part.key, tuple((k, 0) for k, _ in part.rel)))

    step = token.obj["payload"]["info"]["last_token_usage"] if token is not None else {}
    return ToolPair(at_output(call), tok.parts(before, out.ms, turn_ids, base),
                    tok.parts(after, out.ms, turn_ids, base), nested,
                    [counting_on(p) for p in at_output(token)] if token is not None else None,
                    {k: v for k, v in step.items() if type(v) is int})


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def expected_outcome(objs: list) -> tuple:
    """The scenario's outcome, with `unrecorded` when the turn's lines do not name a cause."""
    name = None
    for o in objs:
        p = o.get("payload") or {}
        if o.get("type") == "response_item" and p.get("role") == "user":
            for item in p.get("content") or []:
                m = PROMPT_RE.match(item.get("text", ""))
                if m:
                    name = (m.group(1) or m.group(2)).split(",")[-1]
    if name is None:
        raise ValueError("a recorded turn without a scenario prompt")
    outcome, klass, shape = SCENARIOS[name]
    recorded = any(
        o.get("type") == "event_msg" and (
            (o["payload"].get("type") == "task_complete" and o["payload"].get("error"))
            or o["payload"].get("type") == "error")
        for o in objs)
    if outcome == "failed" and not recorded:
        klass = "unrecorded"
    calls = any(o.get("type") == "response_item"
                and (o.get("payload") or {}).get("type") in ("function_call", "custom_tool_call")
                for o in objs)
    assert shape is None or (shape == "interrupted") == calls, (name, calls)
    return outcome, klass, shape


# ---------------------------------------------------------------------------- tool output
# Codex cuts what a tool returned to the model at 10,000 tokens (`truncation_policy` in
# turn_context) and records what the model was given: about 40 KB of text at most.
OUTPUT_SIZES = (256, 40 * 1024)


def output_pool(recordings: list, rng: random.Random, count: int = 64) -> list:
    """Tool outputs made of recorded text (instructions, tool docs), pre-escaped.

    Sizes are log-uniform over OUTPUT_SIZES: from a `git status` to a test log cut at the
    limit (median 3 KB). Each entry: (bytes, escaped once, escaped twice for outputs nested
    in JSON).
    """
    corpus = "\n".join(long_texts(r.meta.obj) for r in recordings)
    pool = []
    for _ in range(count):
        size = int(math.exp(rng.uniform(*map(math.log, OUTPUT_SIZES))))
        start = rng.randrange(len(corpus))
        text = (corpus[start:] + corpus)[: size]
        once = dumps(text)[1:-1]
        pool.append((len(once.encode()), once, dumps(once)[1:-1]))
    return pool


def long_texts(obj) -> str:
    """Every string of 200 characters or more inside a parsed line."""
    if isinstance(obj, str):
        return obj if len(obj) >= 200 else ""
    values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else ()
    return "\n".join(t for t in (long_texts(v) for v in values) if t)


# ---------------------------------------------------------------------------- planning
@dataclass
class Kind:
    """What a session of one (version, mode) can be made of."""

    version: str
    mode: str
    openers: list  # (Recording, Block): the first turn, with its session_meta
    followers: list  # blocks that may come after it (TUI only)


def session_kinds(recordings: list, shape: Shape = None) -> list:
    shape = shape or SHAPES["default"]
    kinds = []
    for (version, mode), share in shape.mix.items():
        same = [r for r in recordings if r.version == version]
        if mode == "tui":
            tui = next(r for r in same if r.mode == "tui")
            openers = [(tui, tui.blocks[0])]
            if shape.one_session:  # one thread kept open: the session's turns, repeated
                followers = list(tui.blocks)
            else:
                followers = tui.blocks[1:] + [b for r in same for b in r.reusable]
        else:
            openers = [(r, r.blocks[0]) for r in same if r.mode == "exec"]
            followers = []
        kinds.append((share, Kind(version, mode, openers, followers)))
    return kinds


@dataclass
class Plan:
    recording: Recording
    blocks: list  # Block
    repeats: list  # per block: {line index: [pool index, ...]}
    gaps: list  # seconds of user think time before each block after the first
    nbytes: int
    token_lines: int = 0  # token_count lines added with the tool calls (set when rendered)


def pick_by_outcome(rng: random.Random, items: list, failure_rate: float, key=lambda x: x):
    """An item, failed with probability `failure_rate` (ok otherwise).

    Failed turns are drawn uniformly; ok turns that made tool calls four times as often as
    those that did not, as most real working turns run tools.
    """
    failed = [x for x in items if key(x).expected[0] == "failed"]
    ok = [x for x in items if key(x).expected[0] != "failed"]
    if (rng.random() < failure_rate and failed) or not ok:
        return rng.choice(failed)
    return rng.choices(ok, [4 if key(x).insert_after else 1 for x in ok])[0]


def plan_session(rng: random.Random, kind: Kind, pool: list, failure_rate: float,
                 shape: Shape = None, size: int = 0) -> Plan:
    """Choose the turns of one session, then grow its tool turns toward a target size.
    `size`: the bytes of a shape made of one session."""
    shape = shape or SHAPES["default"]
    recording, first = pick_by_outcome(rng, kind.openers, failure_rate, key=lambda x: x[1])
    blocks = [first]
    if shape.one_session:  # the recorded session's turns over and over, in their order
        recording, turns = kind.openers[0][0], kind.followers
        blocks = [turns[0]]
        nbytes = len(render_estimate(recording.meta)) + turns[0].nbytes
        while nbytes < size:
            blocks.append(turns[len(blocks) % len(turns)])
            nbytes += blocks[-1].nbytes
    elif kind.followers and shape.extra_turns:
        # TUI sessions: 1 + extra_turns turns on average
        extra = min(int(rng.expovariate(1 / shape.extra_turns)), shape.max_extra)
        blocks += [pick_by_outcome(rng, kind.followers, failure_rate) for _ in range(extra)]
    # User think time between turns, in ms: median 90 s, 5 s to 30 min.
    gaps = [int(min(max(rng.lognormvariate(math.log(90), 1.0), 5), 1800) * 1000)
            for _ in blocks[1:]]
    repeats = [{} for _ in blocks]
    nbytes = len(render_estimate(recording.meta)) + sum(b.nbytes for b in blocks)
    # Session sizes: log-normal, median 200 KB, capped at 8 MB (real ones reach a few MB).
    target = min(rng.lognormvariate(math.log(200_000), 1.1), 8_000_000) if shape.grow else 0
    slots = [(i, at) for i, b in enumerate(blocks) for at in b.insert_after]
    while slots and nbytes < target:
        i, at = rng.choice(slots)
        k = rng.randrange(len(pool))
        repeats[i].setdefault(at, []).append(k)
        # The output, plus the call line, the envelope and the token count.
        nbytes += pool[k][0] + 1200 + (800 if blocks[i].insert_after[at].tokens else 0)
    return Plan(recording, blocks, repeats, gaps, nbytes)


def render_estimate(line: Line) -> str:
    return "".join(p for p in line.parts if isinstance(p, str))


def duration(plan: Plan) -> int:
    """Whole seconds from the session start (filename time) to its last line, rounded up."""
    first = plan.blocks[0]
    total = first.t1 - plan.recording.start
    for block, gap in zip(plan.blocks[1:], plan.gaps):
        total += gap + (block.t1 - block.t0)
    total += 1000 * len(plan.blocks)  # room for the milliseconds drawn at render time
    total += sum(len(v) + 1 for r in plan.repeats for v in r.values())  # 1 ms per added request
    return -(-total // 1000)


# Relative session starts per local hour: a working day with a lunch dip and some evening.
HOUR_WEIGHTS = [1, 0.5, 0.3, 0.2, 0.2, 0.3, 1, 3, 8, 14, 16, 15,
                9, 12, 16, 16, 14, 11, 7, 5, 5, 4, 3, 2]
WEEKEND_SHARE = 0.3  # a weekend day sees 30 % of a weekday's sessions


def pick_start(rng: random.Random, now: int, days: int, length: int) -> int:
    """A local working-hours start in the window, such that the session ends before now."""
    lo = now - days * 86400
    for _ in range(1000):
        day = time.localtime(now - rng.randrange(days) * 86400)
        if day.tm_wday >= 5 and rng.random() > WEEKEND_SHARE:
            continue
        hour = rng.choices(range(24), HOUR_WEIGHTS)[0]
        start = int(time.mktime((day.tm_year, day.tm_mon, day.tm_mday, hour,
                                 rng.randrange(60), rng.randrange(60), 0, 0, -1)))
        if lo <= start and start + length <= now:
            return start
    return max(lo, now - length - 1)  # a window too short for working hours: fit it in


# ---------------------------------------------------------------------------- writing
@dataclass
class Totals:
    files: int = 0
    sessions: int = 0
    turns: int = 0
    lines: int = 0
    bytes: int = 0
    tool_pairs_added: int = 0
    token_lines_added: int = 0
    outcomes: Counter = field(default_factory=Counter)
    classes: Counter = field(default_factory=Counter)
    shapes: Counter = field(default_factory=Counter)
    versions: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    tokens: Counter = field(default_factory=Counter)
    first: int | None = None
    last: int | None = None


def render_session(plan: Plan, start: int, rng: random.Random, pool: list) -> tuple:
    """The session's id and text; the shift of every block keeps its recorded durations."""
    rec = plan.recording
    # Milliseconds drawn too: two sessions made of one recording never share a time stamp
    # (ccusage, for one, drops token events it has seen at the same instant).
    start_ms = start * 1000 + rng.randrange(1000)
    ctx = Ctx(rng, start_ms - rec.start, uuid7(start_ms, rng), {}, {})
    out = [render(rec.meta.parts, ctx)]
    plan.token_lines = 0
    at = plan.blocks[0].t0 + ctx.delta
    for n, block in enumerate(plan.blocks):
        if n:
            at += plan.gaps[n - 1] + rng.randrange(1000)
            ctx.delta = at - block.t0
        ctx.turn_ids, ctx.item_ids = {}, {}
        plan.token_lines += render_block(block, plan.repeats[n], ctx, pool, out)
        at = block.t1 + ctx.delta
        for key, values in block.final_cum.items():
            offsets = ctx.cum.setdefault(key, {})
            for f, v in values.items():
                offsets[f] = offsets.get(f, 0) + v
    return ctx.session_id, "".join(out), ctx.cum.get("total_token_usage", {}), at // 1000


def render_block(block: Block, repeats: dict, ctx: Ctx, pool: list, out: list) -> int:
    """Append the block's lines; -> how many token_count lines were added."""
    added = 0
    for i, line in enumerate(block.lines):
        out.append(render(line.parts, ctx))
        # Each added request a millisecond after what came before it, and what follows a
        # millisecond after the last (all shifted with it): two token counts at one instant
        # are one event to some readers (ccusage).
        for k in repeats.get(i, ()):
            pair = block.insert_after[i]
            ctx.delta += 1
            turn_items = ctx.item_ids
            ctx.item_ids = {}  # each copy is a new call with new item ids
            text = pool[k][2] if pair.nested else pool[k][1]
            out.append(render(pair.call, ctx))
            out.append(render(pair.before, ctx) + text + render(pair.after, ctx))
            ctx.item_ids = turn_items
            if pair.tokens is not None:
                _spend(ctx, pair.step)
                out.append(render(pair.tokens, ctx))
                added += 1
        ctx.delta += 1 if i in repeats else 0
    return added


def _spend(ctx: Ctx, step: dict) -> None:
    """One more request's tokens in the session's running totals, for every line after."""
    for key in ("total_token_usage", "thread_token_usage"):
        offsets = ctx.cum.setdefault(key, {})
        for name, value in step.items():
            offsets[name] = offsets.get(name, 0) + value


def session_path(root: Path, start: int, session_id: str) -> Path:
    """Codex's layout: local date folders, local time in the name."""
    t = time.localtime(start)
    return (root / "sessions" / time.strftime("%Y/%m/%d", t)
            / f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', t)}-{session_id}.jsonl")


def count(totals: Totals, plan: Plan, start: int, end: int, text: str, nbytes: int, tokens: dict):
    totals.files += 1
    totals.sessions += 1
    totals.bytes += nbytes
    totals.lines += text.count("\n")
    totals.kinds[f"{plan.recording.version} {plan.recording.mode}"] += 1
    totals.tool_pairs_added += sum(len(v) for r in plan.repeats for v in r.values())
    totals.token_lines_added += plan.token_lines
    for block in plan.blocks:
        outcome, klass, shape = block.expected
        totals.turns += 1
        totals.outcomes[outcome] += 1
        totals.versions[block.version] += 1
        if outcome == "failed":
            totals.classes[klass] += 1
            totals.shapes[shape] += 1
    totals.tokens.update(tokens)
    totals.first = start if totals.first is None else min(totals.first, start)
    totals.last = end if totals.last is None else max(totals.last, end)


def build(out_dir: Path, size: int, days: int = 90, seed: int = 1, now: float | None = None,
          failure_rate: float = 0.12, progress=None, shape: str = "default") -> dict:
    """Write sessions into `out_dir` until `size` bytes; return (and write) the manifest.
    `shape`: one of SHAPES."""
    began = time.monotonic()
    now = int(now if now is not None else time.time())
    rng = random.Random(seed)
    recordings = load_templates()
    pool = output_pool(recordings, rng)
    form = SHAPES[shape]
    shares, kinds = zip(*session_kinds(recordings, form))
    totals = Totals()
    seen = set()
    token_instants: set = set()
    while totals.bytes < size:
        kind = rng.choices(kinds, shares)[0]
        plan = plan_session(rng, kind, pool, failure_rate, form, size)
        for _ in range(100):
            start = pick_start(rng, now, days, duration(plan))
            session_id, text, tokens, end = render_session(plan, start, rng, pool)
            # ccusage counts token events of one instant once, across sessions too (as a
            # fork's replay would repeat them): no two sessions share one.
            instants = set(TOKEN_AT.findall(text))
            if token_instants.isdisjoint(instants):
                break
        token_instants |= instants
        path = session_path(out_dir, start, session_id)
        if path in seen:
            raise RuntimeError(f"two sessions drew the same file name: {path}")
        seen.add(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        os.utime(path, (end, end))  # as Codex left it: last written when the session ended
        count(totals, plan, start, end, text, len(data), tokens)
        if progress and totals.files % 200 == 0:
            progress(totals)
    manifest = make_manifest(totals, size, days, seed, now, failure_rate, shape)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    manifest["elapsed_seconds"] = round(time.monotonic() - began, 2)  # not written: stays reproducible
    return manifest


def make_manifest(t: Totals, size: int, days: int, seed: int, now: int,
                  failure_rate: float, shape: str = "default") -> dict:
    iso = lambda s: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(s))  # noqa: E731
    return {
        "generator": "benchmarks/make_history.py", "generator_version": GENERATOR_VERSION,
        "shape": shape, "seed": seed, "days": days, "failure_rate": failure_rate, "size_requested": size,
        "now": now, "now_iso": iso(now),
        "window": {"start": now - days * 86400, "end": now},
        "first_session_start": t.first, "last_line": t.last,
        "files": t.files, "sessions": t.sessions, "turns": t.turns,
        "lines": t.lines, "bytes": t.bytes, "tool_pairs_added": t.tool_pairs_added,
        "token_lines_added": t.token_lines_added,
        "turns_by_outcome": dict(sorted(t.outcomes.items())),
        "failed_by_class": dict(sorted(t.classes.items())),
        "failed_by_shape": dict(sorted(t.shapes.items())),
        "turns_by_version": dict(sorted(t.versions.items())),
        "sessions_by_kind": dict(sorted(t.kinds.items())),
        # Sum over sessions of the last total_token_usage: what a token counter must find.
        "tokens": dict(sorted(t.tokens.items())),
    }


# ---------------------------------------------------------------------------- command line
def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B?)?\s*", text, re.I)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 1GiB, 500MB, 2MiB)")
    unit = (m.group(2) or "").upper().rstrip("B")
    base = 1024 if unit.endswith("I") else 1000
    power = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}[unit.rstrip("I")]
    return int(float(m.group(1)) * base ** power)


def parse_now(text: str) -> int:
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return int(float(text))
    return iso_seconds(text.rstrip("Z")[:19])


def prepare(out_dir: Path, force: bool) -> None:
    """Refuse to write over anything this script did not make (it could be a real home)."""
    if not out_dir.exists() or not any(out_dir.iterdir()):
        out_dir.mkdir(parents=True, exist_ok=True)
        return
    if not force or not (out_dir / "manifest.json").exists():
        sys.exit(f"{out_dir} is not empty: pass --force to replace a history made by this "
                 "script (one with a manifest.json)")
    import shutil

    shutil.rmtree(out_dir / "sessions", ignore_errors=True)
    (out_dir / "manifest.json").unlink()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", type=Path, help="the Codex home to create")
    ap.add_argument("--size", type=parse_size, default=parse_size("1GiB"),
                    help="bytes of rollout files to write (default 1GiB)")
    ap.add_argument("--days", type=int, default=90, help="spread over the last N days (90)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (1)")
    ap.add_argument("--now", type=parse_now, help="end of the window, ISO-8601 UTC or epoch "
                    "seconds (default: now); with --seed, makes the output byte-identical")
    ap.add_argument("--failure-rate", type=float, default=0.12,
                    help="share of turns that fail (0.12)")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="default",
                    help="default: ~4,700 sessions per GiB, ~4 turns each; small: ~31,700 "
                    "sessions per GiB, ~1.7 turns, ~34 KB; giant: one session of --size")
    ap.add_argument("--force", action="store_true",
                    help="replace a history this script made before")
    args = ap.parse_args(argv)
    prepare(args.out_dir, args.force)

    def progress(t: Totals) -> None:
        print(f"  {t.files} files, {t.bytes / 2**20:.0f} MiB", file=sys.stderr, flush=True)

    m = build(args.out_dir, args.size, args.days, args.seed, args.now, args.failure_rate,
              progress, args.shape)
    print(f"wrote {m['files']} files, {m['sessions']} sessions, {m['turns']} turns "
          f"({m['turns_by_outcome'].get('failed', 0)} failed), {m['lines']} lines, "
          f"{m['bytes']} bytes ({m['bytes'] / 2**30:.2f} GiB) in {m['elapsed_seconds']} s "
          f"into {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
