"""Fuzzing the reader, the turn assembler and the classifier: nothing breaks, nothing is lost.

What the engine guarantees (read from codexwatch/core/parse.py and sources/reader.py):

- Line by line (`RolloutReader.read_new()`), every newline-terminated line is counted in
  `counts.lines` (blank lines included; `counts.blank` is a subset), however it was split
  across reads and however long it is.
- Lines are first recognised by a header of their first bytes. Only the kinds that carry facts
  are decoded in full: `task_started`, `task_complete`, `turn_aborted`, `error`; and
  `session_meta`, `turn_context`, `thread_settings_applied` when their fields are not found in
  the bytes; and every line whose head is not Codex's usual layout. Such a line that does not
  decode to an object with an object `payload` counts once in `counts.malformed`. Lines
  recognised by their header alone (response items, user/agent messages, unknown types,
  meta/context/settings whose fields were read from the bytes, and `token_count`, decoded
  lazily, the last of a turn only) are not checked further: damage after their head is not
  counted.
- A line over `max_line` is recognised by its head only and counted in `counts.oversized` when
  its head is not recognised or its kind needed decoding.
- Skimming (`read_new(WholeFileBuffer(), skim=True)`) visits only turn boundaries: it counts
  only the lines it decodes, so its counts are a subset.
- Garbage that carries no fact (undecodable bytes, non-objects, fact lines cut short, lines of
  kinds whose handler ignores them outside a turn) inserted *between* turns leaves the turns
  exactly as in the clean file, in both modes. Inside a turn a wrong-typed line may
  legitimately change that turn; then only "no exception, lines counted, known vocabulary,
  statistics computable and JSON-serialisable" is asserted.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codexwatch.commands.turns import turn_json
from codexwatch.core import parse as P
from codexwatch.core.classify import classify
from codexwatch.core.models import ERROR_CLASSES, OUTCOMES, SHAPES
from codexwatch.core.stats import compute_stats
from codexwatch.sources import reader as reader_module
from codexwatch.sources.reader import RolloutReader, WholeFileBuffer
from tests.conftest import REAL_CLI

NOW = time.time() + 3600
FILES = sorted(REAL_CLI.rglob("rollout-*.jsonl"))
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                           HealthCheck.too_slow,
                                                           HealthCheck.data_too_large],
)


def _kind(line: bytes) -> tuple[str | None, str | None]:
    obj = orjson.loads(line)
    payload = obj.get("payload") if isinstance(obj, dict) else None
    inner = payload.get("type") if isinstance(payload, dict) else None
    return (obj.get("type") if isinstance(obj, dict) else None), inner


LINES = {f: f.read_bytes().splitlines(keepends=True) for f in FILES}
TASK_FILES = [f for f in FILES if any(b'"type":"task_started"' in line for line in LINES[f])]
DECODED = {("event_msg", "task_started"), ("event_msg", "task_complete"),
           ("event_msg", "turn_aborted"), ("event_msg", "error")}
DECODED_LINES = [line.rstrip(b"\n") for f in FILES for line in LINES[f]
                 if (_kind(line)[0], _kind(line)[1] if _kind(line)[0] == "event_msg" else None)
                 in DECODED]


def fingerprint(turns):
    return [
        (t.turn_id, t.outcome, t.error_class, t.shape, t.model, t.effort, t.fast, t.tool_calls,
         t.duration_ms, t.message, t.tokens, t.http_status, repr(t.codex_error_info),
         t.started_at, t.ended_at)
        for t in turns
    ]


def between_turns(lines: list[bytes]) -> list[int]:
    """Insertion points (indices into lines) strictly between two turns of a task-mode file:
    after the meta line and before the first task_started, and after each task_complete or
    turn_aborted that another task_started follows."""
    kinds = [_kind(line) for line in lines]
    starts = [i for i, k in enumerate(kinds) if k == ("event_msg", "task_started")]
    points = {1} if starts and starts[0] >= 1 else set()
    for i, k in enumerate(kinds):
        if k in (("event_msg", "task_complete"), ("event_msg", "turn_aborted")) and any(s > i for s in starts):
            points.add(i + 1)
    return sorted(points)


def read(path: Path, mode: str, max_line: int = reader_module.MAX_LINE) -> RolloutReader:
    reader = RolloutReader(str(path), max_line=max_line)
    if mode == "skim":
        reader.read_new(WholeFileBuffer(), skim=True)
    else:
        reader.read_new()
    return reader


def check_usable(readers: list[RolloutReader]) -> None:
    """What the dashboard and `stats --json` do with the result must work."""
    turns = [t for r in readers for t in r.turns(NOW)]
    for t in turns:
        assert t.outcome in OUTCOMES
        assert t.error_class is None or t.error_class in ERROR_CLASSES
        assert t.shape is None or t.shape in SHAPES
        assert t.duration_ms is None or t.duration_ms >= 0
        for ts in (t.started_at, t.ended_at):
            assert ts is None or math.isfinite(ts)
        orjson.dumps(turn_json(t))
    stats = compute_stats(turns, [r.health() for r in readers], NOW)
    orjson.dumps(stats)


# --- garbage ------------------------------------------------------------------------------

DEEP_ARRAYS = b"[" * 10_000 + b"]" * 10_000  # past orjson's depth limit (1024): undecodable
DEEP_LIST_OK = b"[" * 1000 + b"]" * 1000  # decodes, but is no object
DEEP_OBJECTS = b'{"a":' * 2000 + b"1" + b"}" * 2000
HUGE_LINE = b'{"x":"' + b"a" * (2 << 20) + b'"'  # 2 MB, cut before its end
NON_OBJECTS = [b"[1,2]", b"null", b"1", b'"text"', b"true", b"{}", b"[]", DEEP_ARRAYS, DEEP_LIST_OK,
               DEEP_OBJECTS, HUGE_LINE, b"\xff\xfe\x00", b"{'single': 'quotes'}",
               b'{"timestamp":"2026-11-29T08:35:10.767Z","type":"session_meta","payload":[1,2]}',
               b'{"timestamp":"2026-11-29T08:35:10.767Z","type":"session_meta","payload":"x"}']

random_bytes = st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" "))


@st.composite
def truncated_fact_line(draw):
    line = draw(st.sampled_from(DECODED_LINES))
    return line[: draw(st.integers(1, len(line) - 1))]


# Garbage that carries no fact: each line counts as malformed (or blank) when read line by line.
pure_garbage = st.one_of(random_bytes, truncated_fact_line(), st.sampled_from(NON_OBJECTS))


def expected_bad(garbage: list[bytes]) -> tuple[int, int]:
    """(malformed, blank) that pure garbage adds when read line by line."""
    blank = sum(1 for g in garbage if not g.strip())
    return len(garbage) - blank, blank


# Lines of the kinds the engine reads with a wrong type in every field it looks at.
odd_scalars = st.sampled_from([None, True, 0, -1, 1e300, -1e300, 2**63 - 1, -(2**63), 1.5, "",
                               "x" * 500, "2026-11-29T08:35:10.767Z", "9999-12-31T23:59:59-14:00",
                               [], {}, [[[]]], {"a": {"b": {"c": None}}}])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
odd = st.one_of(odd_scalars, json_values, st.just("__DEEP__"))


def obj(**fields):
    return st.one_of(odd, st.fixed_dictionaries({}, optional={k: v for k, v in fields.items()}))


window = obj(used_percent=st.one_of(odd, st.just(100)), resets_at=odd)
usage = obj(total_tokens=odd)
FIELDS = {
    ("session_meta", None): dict(id=odd, session_id=odd, cli_version=odd, originator=odd,
                                 model_provider=odd, cwd=odd),
    ("turn_context", None): dict(model=odd, effort=odd, reasoning_effort=odd, cwd=odd,
                                 collaboration_mode=obj(settings=obj(reasoning_effort=odd))),
    ("event_msg", "thread_settings_applied"): dict(thread_settings=obj(service_tier=odd, model=odd)),
    ("event_msg", "task_started"): dict(turn_id=odd, started_at=odd, model_context_window=odd),
    ("event_msg", "task_complete"): dict(
        turn_id=odd, last_agent_message=odd, duration_ms=odd, time_to_first_token_ms=odd,
        completed_at=odd, started_at=odd,
        error=obj(message=odd, codex_error_info=odd)),
    ("event_msg", "turn_aborted"): dict(turn_id=odd, duration_ms=odd, completed_at=odd, reason=odd),
    ("event_msg", "error"): dict(message=odd, codex_error_info=odd),
    ("event_msg", "token_count"): dict(
        info=obj(total_token_usage=usage, last_token_usage=usage, model_context_window=odd),
        rate_limits=obj(primary=window, secondary=window)),
    ("event_msg", "user_message"): dict(message=odd),
    ("event_msg", "agent_message"): dict(message=odd),
    ("response_item", "message"): dict(role=st.one_of(odd, st.just("assistant")), content=odd),
    ("response_item", "function_call"): dict(name=odd, arguments=odd),
}
TIMESTAMPS = ["2026-11-29T08:35:10.767Z", "2020-01-01T00:00:00Z",  # out of order
              "2090-01-01T00:00:00Z", "9999-12-31T23:59:59-14:00",  # in the future
              "0001-01-01T00:00:00+14:00", "1969-12-31T23:59:59Z",  # before the epoch
              "not a time", "2026-13-45T99:99:99Z"]


def _dump(value) -> bytes:
    return orjson.dumps(value).replace(b'"__DEEP__"', DEEP_LIST_OK)


@st.composite
def typed_line(draw, kinds=tuple(FIELDS)):
    outer, inner = draw(st.sampled_from(kinds))
    payload = draw(st.fixed_dictionaries({}, optional=FIELDS[(outer, inner)]))
    if inner is not None:
        payload = {"type": inner, **payload}
    if draw(st.integers(0, 9)) == 0:
        payload = {**payload, "type": draw(odd)}  # the payload's own type as a list, ...
    if draw(st.integers(0, 9)) == 0:
        payload = draw(odd)  # payload as a list, a number, ...
    ts = draw(st.one_of(st.sampled_from(TIMESTAMPS), odd))
    line = {"timestamp": ts, "type": outer, "payload": payload}
    if draw(st.booleans()) and isinstance(payload, dict):
        line = {"payload": payload, "type": outer, "timestamp": ts}  # not Codex's layout
    return _dump(line)


# Kinds whose handlers ignore them outside a turn (in task mode), whatever their fields hold.
INERT_KINDS = (("session_meta", None), ("event_msg", "task_complete"), ("event_msg", "turn_aborted"),
               ("event_msg", "error"), ("event_msg", "user_message"), ("event_msg", "agent_message"),
               ("response_item", "message"), ("response_item", "function_call"))
inert_typed = st.one_of(
    typed_line(INERT_KINDS),
    odd.filter(lambda v: not isinstance(v, dict)).map(lambda v: _dump(
        {"timestamp": TIMESTAMPS[0], "type": "event_msg",
         "payload": {"type": "thread_settings_applied", "thread_settings": v}})),
)


def insert(lines: list[bytes], at: list[tuple[int, bytes]]) -> bytes:
    """The file with each garbage line inserted before lines[index]."""
    out = list(lines)
    for index, garbage in sorted(at, key=lambda x: x[0], reverse=True):
        out.insert(index, garbage + b"\n")
    return b"".join(out)


# --- (a) arbitrary bytes ----------------------------------------------------------------------

@SETTINGS
@given(data=st.binary(max_size=4000), max_line=st.sampled_from([16, 200, 1 << 20]))
def test_scan_of_arbitrary_bytes_counts_every_line(data, max_line):
    counts = P.LineCounts()
    records, consumed = P.scan(data, 0, counts, max_line)
    assert counts.lines == data.count(b"\n")
    assert consumed == data.rfind(b"\n") + 1
    assert counts.blank <= counts.lines
    assert counts.malformed + counts.blank + counts.oversized <= counts.lines
    counts = P.LineCounts()
    P.skim(data, len(data), counts, max_line)
    assert counts.lines <= data.count(b"\n")


soup_line = st.one_of(random_bytes, typed_line(), truncated_fact_line(),
                      st.sampled_from([line.rstrip(b"\n") for f in FILES[:6] for line in LINES[f]]))


@SETTINGS
@given(lines=st.lists(soup_line, max_size=30), tail=random_bytes, cuts=st.lists(st.floats(0, 1), max_size=4))
def test_reader_survives_any_soup_of_lines_in_any_pieces(tmp_path, lines, tail, cuts):
    data = b"\n".join(lines) + (b"\n" if lines else b"") + tail
    path = tmp_path / "soup.jsonl"
    path.write_bytes(data)
    whole = read(path, "lines")
    skimmed = read(path, "skim")
    small = read(path, "lines", max_line=64)
    assert whole.counts.lines == small.counts.lines == data.count(b"\n")
    # The same bytes appended in pieces while being followed.
    path.write_bytes(b"")
    live = RolloutReader(str(path))
    written = 0
    for point in sorted({int(c * len(data)) for c in cuts}) + [len(data)]:
        with open(path, "ab") as out:
            out.write(data[written:point])
        written = point
        live.read_new()
    assert live.counts.lines == data.count(b"\n")
    assert live.counts.malformed == whole.counts.malformed
    check_usable([whole, skimmed, small, live])


# --- (b) real recordings with garbage -------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_garbage_between_turns_loses_nothing(tmp_path, data):
    path = data.draw(st.sampled_from(TASK_FILES), label="file")
    lines = LINES[path]
    points = between_turns(lines)
    garbage = data.draw(st.lists(st.one_of(pure_garbage, inert_typed), min_size=1, max_size=6),
                        label="garbage")
    at = [(data.draw(st.sampled_from(points)), g) for g in garbage]
    dirty = tmp_path / path.name
    dirty.write_bytes(insert(lines, at))
    # Skimming finds turns by their boundary lines: a stray one is taken as a boundary (see
    # test_stray_boundary_before_the_first_turn_when_skimming); line by line it is ignored.
    stray_boundary = any(b'"type":"task_' in g for g in garbage)
    for mode in ("lines", "skim"):
        clean_reader = read(path, mode)
        dirty_reader = read(dirty, mode)
        if mode == "lines" or not stray_boundary:
            assert fingerprint(dirty_reader.turns(NOW)) == fingerprint(clean_reader.turns(NOW)), mode
        assert dirty_reader.counts.malformed >= clean_reader.counts.malformed
        if mode == "lines":
            assert dirty_reader.counts.lines == clean_reader.counts.lines + len(garbage)
        check_usable([dirty_reader])


@SETTINGS
@given(data=st.data())
def test_every_undecodable_line_is_counted(tmp_path, data):
    """Pure garbage anywhere (even inside a turn): line by line, each one is counted."""
    path = data.draw(st.sampled_from(FILES), label="file")
    lines = LINES[path]
    garbage = data.draw(st.lists(pure_garbage, min_size=1, max_size=6), label="garbage")
    at = [(data.draw(st.integers(0, len(lines))), g) for g in garbage]
    dirty = tmp_path / path.name
    dirty.write_bytes(insert(lines, at))
    clean_reader, dirty_reader = read(path, "lines"), read(dirty, "lines")
    malformed, blank = expected_bad(garbage)
    assert dirty_reader.counts.lines == clean_reader.counts.lines + len(garbage)
    assert dirty_reader.counts.malformed == clean_reader.counts.malformed + malformed
    assert dirty_reader.counts.blank == clean_reader.counts.blank + blank
    assert dirty_reader.health().malformed == dirty_reader.counts.malformed
    skimmed = read(dirty, "skim")
    assert skimmed.counts.malformed <= dirty_reader.counts.malformed
    check_usable([dirty_reader, skimmed])


@SETTINGS
@given(data=st.data())
def test_wrong_types_anywhere_break_nothing(tmp_path, data):
    """Wrong-typed fact lines anywhere, timestamps out of order, in the future or absurd."""
    path = data.draw(st.sampled_from(FILES), label="file")
    lines = LINES[path]
    garbage = data.draw(st.lists(st.one_of(typed_line(), pure_garbage), min_size=1, max_size=8),
                        label="garbage")
    at = [(data.draw(st.integers(1 if len(lines) > 1 else 0, len(lines))), g) for g in garbage]
    dirty = tmp_path / path.name
    dirty.write_bytes(insert(lines, at))
    clean_turns = read(path, "lines").turns(NOW)
    readers = []
    for mode in ("lines", "skim"):
        reader = read(dirty, mode)
        readers.append(reader)
        if mode == "lines":
            assert reader.counts.lines == len(lines) + len(garbage)
        if path in TASK_FILES:
            # A stray task_started may cut a real turn short, but no real turn disappears.
            ids = {t.turn_id for t in reader.turns(NOW)}
            assert {t.turn_id for t in clean_turns} <= ids, mode
    check_usable(readers)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_oversized_lines_split_across_reads_are_counted(tmp_path, data):
    path = data.draw(st.sampled_from(TASK_FILES), label="file")
    lines = LINES[path]
    points = between_turns(lines)
    huge = [HUGE_LINE, b"x" * 300_000, _dump({"timestamp": TIMESTAMPS[0], "type": "event_msg",
                                              "payload": {"type": "error", "message": "y" * 300_000}})]
    at = [(data.draw(st.sampled_from(points)), g) for g in data.draw(st.lists(st.sampled_from(huge),
                                                                             min_size=1, max_size=3))]
    dirty = tmp_path / path.name
    dirty.write_bytes(insert(lines, at))
    chunk = data.draw(st.sampled_from([4096, 65536]))
    old = reader_module.CHUNK
    reader_module.CHUNK = chunk
    try:
        reader = RolloutReader(str(dirty), max_line=100_000)
        reader.read_new()
        # The same, as a first read larger than the whole-file buffer: chunks through it.
        buffered = RolloutReader(str(dirty), max_line=100_000)
        buffered.read_new(WholeFileBuffer(limit=1000))
    finally:
        reader_module.CHUNK = old
    clean = RolloutReader(str(path), max_line=100_000)
    clean.read_new()
    for got in (reader, buffered):
        assert got.counts.lines == len(lines) + len(at)
        assert got.counts.oversized == len(at)
        assert fingerprint(got.turns(NOW)) == fingerprint(clean.turns(NOW))
    check_usable([reader, buffered])


def test_stray_boundary_before_the_first_turn_when_skimming(tmp_path):
    path = next(f for f in TASK_FILES if "tui-0.171.0" in str(f))
    lines = LINES[path]
    stray = b'{"timestamp":"2026-11-29T08:35:10.767Z","type":"event_msg","payload":{"type":"task_complete"}}'
    dirty = tmp_path / path.name
    dirty.write_bytes(insert(lines, [(1, stray)]))
    assert fingerprint(read(dirty, "skim").turns(NOW)) == fingerprint(read(path, "lines").turns(NOW))


def test_deep_error_info_inside_a_turn_is_kept_bounded(tmp_path):
    """A failed turn whose codex_error_info nests 1000 deep: classified, shown, serialisable."""
    meta = (b'{"timestamp":"2026-11-29T08:35:07.000Z","type":"session_meta","payload":{"id":"s",'
            b'"cli_version":"0.171.0"}}\n')
    start = (b'{"timestamp":"2026-11-29T08:35:08.000Z","type":"event_msg","payload":'
             b'{"type":"task_started","turn_id":"t1"}}\n')
    end = (b'{"timestamp":"2026-11-29T08:35:09.000Z","type":"event_msg","payload":{"type":"task_complete",'
           b'"turn_id":"t1","last_agent_message":null,"error":{"message":"boom","codex_error_info":'
           + DEEP_LIST_OK + b"}}}\n")
    path = tmp_path / "deep.jsonl"
    path.write_bytes(meta + start + end)
    for mode in ("lines", "skim"):
        reader = read(path, mode)
        (turn,) = reader.turns(NOW)
        assert (turn.outcome, turn.error_class) == ("failed", "other")
        assert reader.assembler.unknown_infos
        check_usable([reader])


def test_absurd_times_and_counts_do_not_reach_the_statistics(tmp_path):
    meta = (b'{"timestamp":"2026-11-29T08:35:07.000Z","type":"session_meta","payload":{"id":"s",'
            b'"cli_version":"0.171.0"}}\n')
    lines = [meta]
    for n, (ts, extra) in enumerate([
        (b"0001-01-01T00:00:00+14:00", b""),
        (b"9999-12-31T23:59:59-14:00", b',"duration_ms":1e300'),
        (b"garbage", b',"duration_ms":-5,"time_to_first_token_ms":1e300'),
        (b"2026-11-29T08:35:09.000Z", b',"duration_ms":12'),
    ]):
        lines.append(b'{"timestamp":"%s","type":"event_msg","payload":{"type":"task_started",'
                     b'"turn_id":"t%d","started_at":-1e308,"model_context_window":1e300}}\n' % (ts, n))
        lines.append(b'{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":'
                     b'{"total_token_usage":{"total_tokens":1e300},"last_token_usage":{"total_tokens":-1}}}}\n' % ts)
        lines.append(b'{"timestamp":"%s","type":"event_msg","payload":{"type":"task_complete",'
                     b'"turn_id":"t%d","last_agent_message":null,"completed_at":1e300%s,'
                     b'"error":{"message":"x","codex_error_info":"server_overloaded"}}}\n' % (ts, n, extra))
    path = tmp_path / "absurd.jsonl"
    path.write_bytes(b"".join(lines))
    for mode in ("lines", "skim"):
        reader = read(path, mode)
        turns = reader.turns(NOW)
        assert [t.error_class for t in turns] == ["capacity"] * 4
        assert turns[-1].duration_ms == 12
        check_usable([reader])


# --- (c) the classifier --------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(info=st.one_of(json_values, odd_scalars), message=st.one_of(st.none(), st.text(max_size=300)))
def test_classify_never_raises_and_speaks_the_vocabulary(info, message):
    cls, status, unknown = classify(info, message)
    assert cls in ERROR_CLASSES
    assert status is None or (isinstance(status, int) and 100 <= status <= 999)
    assert isinstance(unknown, bool)


@settings(max_examples=100, deadline=None)
@given(key=st.text(max_size=40), inner=json_values, message=st.one_of(st.none(), st.text(max_size=100)))
def test_classify_one_key_objects_of_any_shape(key, inner, message):
    cls, _, _ = classify({key: inner}, message)
    assert cls in ERROR_CLASSES
