"""`codexwatch turns`: every turn, as JSON Lines or a table."""

from __future__ import annotations

import sys
from datetime import datetime

import orjson

from codexwatch.commands.common import HomeUnreadable, fail, load, table
from codexwatch.core.advice_wording import plural
from codexwatch.core.models import TURN_JSON_KEYS, Turn
from codexwatch.core.times import iso_utc

_TIME_KEYS = ("started_at", "ended_at")


def turn_json(turn: Turn) -> dict:
    out = {key: getattr(turn, key) for key in TURN_JSON_KEYS}
    for key in _TIME_KEYS:
        out[key] = iso_utc(out[key])
    return out


def _local(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if ts else "-"


def run(args, settings) -> int:
    try:
        history = load(settings)
    except HomeUnreadable as exc:
        return fail(str(exc))
    turns = history.turns
    out = sys.stdout.buffer
    if args.json:
        for turn in turns:
            out.write(orjson.dumps(turn_json(turn)) + b"\n")
        out.flush()
        return 0
    rows = [
        [_local(t.started_at), t.session_id[:8], t.model or "?", t.outcome, t.error_class or "",
         t.shape or "", f"{(t.duration_ms or 0) / 1000:.1f}s", (t.message or "")[:60]]
        for t in turns
    ]
    print(table(rows, ["started", "session", "model", "outcome", "class", "shape", "ran", "message"]))
    print(f"\n{plural(len(turns), 'turn')} from {plural(len(history.readers), 'file')} in {settings.codex_home}")
    return 0
