"""Records of one rollout file -> its turns, for every era of the format.

- era D (0.145+): `task_complete.error` gives the cause;
- era C (0.100-0.140): `task_started`/`task_complete`; an `error` event gives the cause where
  the TUI wrote one, otherwise a turn with no final message and no output failed, cause
  `unrecorded`;
- era B (0.40-0.80): no boundaries; a turn starts at each user message and failed when no
  output and no tool call came before the next one;
- era A (0.20): nothing recoverable; the file is marked unsupported.
"""

from __future__ import annotations

import itertools
import operator
import re
import sys
from datetime import datetime
from typing import Any

from codexwatch.core import parse as P
from codexwatch.core.classify import classify
from codexwatch.core.models import Turn
from codexwatch.core.times import parse_iso, plausible
from codexwatch.core.usage import exhausted_reset, full, read_limits

_fromisoformat = datetime.fromisoformat

ERA_D_FROM = (0, 145)  # first versions that write task_complete.error
ERA_C_FROM = (0, 100)  # first versions that write task_started/task_complete
_VERSION = re.compile(r"(\d+)\.(\d+)")


def version_tuple(version: str | None) -> tuple[int, int] | None:
    match = _VERSION.match(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


_MAX_COUNT = 2**53  # tokens and milliseconds beyond this are garbage (and not JSON-safe)


# A line's timestamp as Codex writes every one (`2026-11-29T08:35:10.767Z`, serde's UTC with
# milliseconds), several per turn. parse_iso reads it with fromisoformat on 3.11 and later;
# 3.10's reads no Z, and the way round it took three times as long: there the Z is given as
# an offset fromisoformat reads. Anything else is parse_iso's.
if sys.version_info >= (3, 11):
    line_time = parse_iso
else:
    def line_time(raw: bytes | str | None) -> float | None:
        """A line's `timestamp` (its bytes) -> epoch seconds, as parse_iso gives it."""
        if raw.__class__ is bytes and len(raw) == 24 and raw[23] == 90 and raw[10] == 84 and raw[19] == 46:
            try:  # 90, 84, 46: Z, T, "."
                return plausible(_fromisoformat(raw[:23].decode("ascii") + "+00:00").timestamp())
            except ValueError:
                pass
        return parse_iso(raw)


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _count(value: Any) -> int | None:
    """A whole non-negative count (tokens, milliseconds), else None."""
    if type(value) is int:  # the usual case, several per turn
        return value if 0 <= value <= _MAX_COUNT else None
    number = _num(value)
    return int(number) if number is not None and 0 <= number <= _MAX_COUNT else None


def _time(value: Any) -> float | None:
    """Epoch seconds, or an ISO string (some writers use one)."""
    number = _num(value)
    if number is not None:
        return plausible(number / 1000.0 if number > 1e11 else number)  # milliseconds by mistake
    return parse_iso(value) if isinstance(value, str) else None


def _bounded(value: Any, room: int = 8) -> Any:
    """A raw value kept from a log line, nesting cut below `room` levels: it is repr'd and
    written as JSON later, and a pathologically deep one would overflow both."""
    if isinstance(value, dict):
        return {k: _bounded(v, room - 1) for k, v in value.items()} if room else "..."
    if isinstance(value, list):
        return [_bounded(v, room - 1) for v in value] if room else "..."
    return value


def _usage_of(info: dict) -> tuple[int | None, int | None, int | None]:
    total, last = info.get("total_token_usage"), info.get("last_token_usage")
    return (
        _count(total.get("total_tokens")) if isinstance(total, dict) else None,
        _count(last.get("total_tokens")) if isinstance(last, dict) else None,
        _count(info.get("model_context_window")),
    )


def _limits_part(raw: bytes) -> bytes:
    """What a usage limit's reset time is read from, of the last token_count line: its rate
    limits, as a line of their own (a third of it; kept per file, in the index too)."""
    at = raw.rfind(b',"rate_limits":')
    if at > 0 and raw.endswith(b"}}"):
        return b'{"payload":{' + raw[at + 1:]
    return raw


def _limits_of(raw: bytes) -> tuple | None:
    """The plan's windows a token_count line gives (core/usage.py's reading), placed at the
    line's own time."""
    line = P.decode_line(raw)
    payload = line.get("payload") if line is not None else None
    if not isinstance(payload, dict):
        return None
    stamp = line.get("timestamp")
    return read_limits(payload.get("rate_limits"), parse_iso(stamp) if isinstance(stamp, str) else None)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _name(value: Any, longest: int = 64) -> str | None:
    """A name repeated across a long history (a model, an effort, a version, a folder): one
    of a few, kept once (interned) instead of once per turn or file."""
    return sys.intern(value) if isinstance(value, str) and len(value) <= longest else _str(value)


class TurnAssembler:
    """Fed the records of one file in order; knows its turns at any moment."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.session_id: str | None = None
        self.cli_version: str | None = None
        self.originator: str | None = None
        self.provider: str | None = None
        self.cwd: str | None = None
        self.unsupported = False
        self.unknown_infos: dict[str, int] = {}
        self._model: str | None = None
        self._effort: str | None = None
        self._fast: bool | None = None
        self._task_mode = False
        self._last_total_tokens = 0
        self._context: int | None = None  # the context in use as the last request left it
        self._window: int | None = None
        self._last_raw: bytes | None = None
        self._last_parsed: tuple = (None, None)
        self._pending_tokens: bytes | None = None
        self._limits_raw: bytes | None = None
        self.done: list[Turn] = []
        self.open: Turn | None = None
        self._has_output = False
        self._error: tuple[Any, str | None] | None = None
        self._tokens_at_start = 0
        self._seen_records = 0

    # -- saving and restoring (the index cache) ----------------------------------------

    def export_state(self) -> dict:
        """Plain values only (marshal-able): enough to go on reading later (or, settled,
        to know the file's turns)."""
        state = {k: v for k, v in vars(self).items() if k not in ("done", "open", "_last_parsed")}
        state["done"] = [turn_to_row(t) for t in self.done]
        state["open"] = turn_to_row(self.open) if self.open is not None else None
        if state.get("_limits_raw") is not None:
            state["_limits_raw"] = _limits_part(state["_limits_raw"])
        return state

    def settle(self) -> None:
        """Keep only the turns and what the file's health needs: for a file nobody writes
        any more, whose reader will not go on (it reads the file anew if it changes after
        all). Most of an assembler is there to go on reading. A turn still open is over
        (the file is idle): it is kept as turns() gives it for an idle file, which is what
        it gives for as long as the file stays as it is (an unsupported file's: none)."""
        if self.open is not None or self.unsupported:
            self.done = self.turns(idle=True)
            self.open = None
        self._settle_tokens()
        self.__dict__ = {k: self.__dict__[k] for k in _SETTLED_KEYS}

    @classmethod
    def from_state(cls, state: dict) -> "TurnAssembler":
        """The assembler `state` describes. Takes the dict over: a warm start restores
        thousands, fresh from the index, that nobody else holds."""
        done, open_row = state.pop("done"), state.pop("open")
        settled = state.keys() == _SETTLED_STATE_KEYS
        if not settled and state.keys() != _STATE_KEYS:
            raise ValueError("assembler state of another shape")
        assembler = cls.__new__(cls)  # every field comes from the state
        assembler.__dict__ = state
        if not settled:
            assembler._last_parsed = (None, None)
        assembler.done = turns_from_rows(done)
        assembler.open = turn_from_row(open_row) if open_row is not None else None
        return assembler

    # -- feeding -------------------------------------------------------------------

    def feed(self, records: list[tuple]) -> None:
        if not self._seen_records and records and records[0][0] == P.LEGACY:
            self._on_legacy(records[0][2])
        self._seen_records += len(records)
        handlers = _HANDLERS
        for kind, ts, payload in records:
            handler = handlers[kind]
            if handler is not None:
                handler(self, ts, payload)
            if ts is not None:
                self._last_raw = ts  # parsed only when a duration needs it

    @property
    def last_ts(self) -> float | None:
        """Time of the last line seen."""
        if self._last_raw is not self._last_parsed[0]:
            self._last_parsed = (self._last_raw, line_time(self._last_raw))
        return self._last_parsed[1]

    def _on_meta(self, ts, p: dict) -> None:
        if self.session_id is not None:
            return  # a fork replays its parent's meta: the first one is the file's identity
        self.session_id = _str(p.get("id")) or _str(p.get("session_id"))
        self.cli_version = _name(p.get("cli_version"))
        self.originator = _name(p.get("originator"))
        self.provider = _name(p.get("model_provider"))
        self.cwd = _name(p.get("cwd"), 512)
        version = version_tuple(self.cli_version)
        if version is not None and version >= ERA_C_FROM:
            self._task_mode = True

    def _on_legacy(self, obj: dict) -> None:
        """A file whose first line is in the pre-envelope format (era A)."""
        if self.session_id is None:
            self.unsupported = True
            self.session_id = _str(obj.get("id"))

    def _on_turn_context(self, ts, p: dict) -> None:
        self._model = _name(p.get("model")) or self._model
        self._effort = _name(p.get("effort"))
        if self.open is not None:
            self.open.model = self._model
            self.open.effort = self._effort

    def _on_settings(self, ts, p: dict) -> None:
        self._fast = True if p.get("service_tier") == "priority" else None
        self._model = self._model or _name(p.get("model"))
        if self.open is not None:
            self.open.fast = self._fast

    def _on_task_started(self, ts, p: dict) -> None:
        self._task_mode = True
        self._settle_tokens()
        if self.open is not None:
            self._close_open("incomplete")
        turn_id = _str(p.get("turn_id")) or f"{self.session_id}#{len(self.done)}"
        self._start(turn_id, line_time(ts) or _time(p.get("started_at")))
        window = _count(p.get("model_context_window"))
        if window and self.open is not None:
            self.open.context_window = window

    def _on_user_message(self, ts, p) -> None:
        if self._task_mode:
            return
        # Era B: the previous turn ends where the next prompt begins.
        self._settle_tokens()
        self._close_era_b()
        self._start(f"{self.session_id}#{len(self.done)}", line_time(ts))

    def _on_output(self, ts, p) -> None:
        self._has_output = True

    def _on_tool_call(self, ts, p) -> None:
        if self.open is not None:
            self.open.tool_calls += 1

    def _on_error(self, ts, p: dict) -> None:
        message = _str(p.get("message"))
        info = p.get("codex_error_info")
        if info in ("thread_rollback_failed",) or (
            isinstance(info, dict) and "active_turn_not_steerable" in info
        ):
            return  # reported to the user, but the turn goes on
        self._error = (info, message)

    def _on_token_count(self, ts, raw: bytes) -> None:
        # Snapshots come many to a turn and only the last one counts: decode lazily.
        self._pending_tokens = raw

    def _settle_tokens(self) -> None:
        raw, self._pending_tokens = self._pending_tokens, None
        if raw is None:
            return
        self._limits_raw = raw  # plan limits are read only if a usage limit is hit
        numbers = P.usage_numbers(raw)
        if numbers is None:  # not the usual layout: decode it
            obj = P.decode_payload(raw)
            info = obj.get("info") if obj is not None else None
            numbers = _usage_of(info) if isinstance(info, dict) else (None, None, None)
        self._take_usage(*numbers)
        if self.open is not None and b'used_percent"' in raw:  # a window with a figure
            reading = _limits_of(raw)
            if reading is not None:
                self.open.usage = reading

    def _last_limits(self) -> tuple | None:
        """The reading of the last token_count line seen, in a turn or not."""
        return _limits_of(self._limits_raw) if self._limits_raw else None

    def _take_usage(self, total: int | None, used: int | None, window: int | None) -> None:
        if total is not None:
            self._last_total_tokens = total
        turn = self.open
        if turn is None:
            return
        if used is not None:
            turn.context_used = self._context = used
        if window:
            turn.context_window = self._window = window
        turn.tokens = max(0, self._last_total_tokens - self._tokens_at_start)

    def _on_task_complete(self, ts, p: dict) -> None:
        if self.open is None and self.done and p.get("turn_id") is not None \
                and self.done[-1].turn_id == p.get("turn_id") and self.done[-1].outcome == "aborted":
            # An abort, then the turn's own completion (another tool's fixtures have it):
            # the completion is the turn's last word, as the skimmer reads it too, with the
            # token counts between the two.
            self.open = self.done.pop()
        self._settle_tokens()
        turn = self.open
        if turn is None or (p.get("turn_id") not in (None, turn.turn_id)):
            return  # the end of a turn we never saw begin (a replayed or truncated prefix)
        ended = line_time(ts) or _time(p.get("completed_at"))
        duration = _count(p.get("duration_ms"))
        turn.time_to_first_token_ms = _count(p.get("time_to_first_token_ms"))
        turn.ended_at = ended
        turn.duration_ms = duration if duration is not None else _span_ms(turn)
        error = p.get("error")
        if isinstance(error, dict):
            self._fail(turn, error.get("codex_error_info"), _str(error.get("message")))
        elif self._error is not None:
            self._fail(turn, *self._error)
        elif p.get("last_agent_message") is None and not self._has_output and not self._era_d():
            self._fail(turn, None, None, unrecorded=True)
        else:
            turn.outcome = "ok"
            turn.tool_calls = 0  # counted for turns that failed or never finished only
        self._finish()

    def _on_turn_aborted(self, ts, p: dict) -> None:
        self._settle_tokens()
        turn = self.open
        if turn is None or (p.get("turn_id") not in (None, turn.turn_id)):
            return
        turn.outcome = "aborted"
        turn.ended_at = line_time(ts) or _time(p.get("completed_at"))
        duration = _count(p.get("duration_ms"))
        turn.duration_ms = duration if duration is not None else _span_ms(turn)
        self._finish()

    # -- turn life -------------------------------------------------------------------

    def _era_d(self) -> bool:
        version = version_tuple(self.cli_version)
        return version is not None and version >= ERA_D_FROM

    def _start(self, turn_id: str, started_at: float | None) -> None:
        self.open = Turn(
            session_id=self.session_id or "",
            turn_id=turn_id,
            file=self.file,
            cli_version=self.cli_version,
            originator=self.originator,
            provider=self.provider,
            cwd=self.cwd,
            model=self._model,
            effort=self._effort,
            fast=self._fast,
            started_at=started_at,
            turn_index=len(self.done),
            # The context in use when it started: what the last request left (a turn that
            # fails at once writes none of its own).
            context_used=self._context,
            context_window=self._window,
        )
        self._has_output = False
        self._error = None
        self._tokens_at_start = self._last_total_tokens

    def _fail(self, turn: Turn, info: Any, message: str | None, unrecorded: bool = False) -> None:
        info = _bounded(info)
        turn.outcome = "failed"
        turn.codex_error_info = info
        turn.message = message
        if unrecorded:
            turn.error_class = "unrecorded"
        else:
            turn.error_class, turn.http_status, unknown = classify(info, message)
            if unknown:
                key = repr(info)[:80]
                self.unknown_infos[key] = self.unknown_infos.get(key, 0) + 1
        worked = turn.tool_calls > 0 or self._has_output or bool(turn.time_to_first_token_ms)
        turn.shape = "interrupted" if worked else "rejected"
        if unrecorded and full(turn.usage):
            # 0.59-0.140 record no cause for a usage limit, but the failed turn's own
            # token_count shows the window used up.
            turn.error_class = "usage_limit"
        if turn.error_class == "usage_limit":
            turn.rate_limit_resets_at = exhausted_reset(turn.usage) or exhausted_reset(self._last_limits())

    def _finish(self) -> None:
        assert self.open is not None
        self.done.append(self.open)
        self.open = None

    def _close_open(self, outcome: str) -> None:
        """A turn that never got its end line (Codex was killed, or the session resumed)."""
        if self.open is not None:
            self.open.outcome = outcome
            self.open.ended_at = self.last_ts
            self.open.duration_ms = _span_ms(self.open)
            self._finish()

    def _close_era_b(self) -> None:
        turn = self.open
        if turn is None:
            return
        turn.ended_at = self.last_ts
        turn.duration_ms = _span_ms(turn)
        if self._has_output:
            turn.outcome = "ok"
        else:
            self._fail(turn, None, None, unrecorded=True)
        self._finish()

    # -- reading out -----------------------------------------------------------------

    def turns(self, idle: bool) -> list[Turn]:
        """All turns so far. `idle`: the file has not been written for a while, so an open
        turn is over (killed, crashed) rather than still running."""
        if self.unsupported:
            return []
        self._settle_tokens()
        out = list(self.done)
        turn = self.open
        if turn is not None:
            if not self._task_mode and self._has_output:
                view = _copy(turn, outcome="ok", ended_at=self.last_ts)
            elif not self._task_mode and idle:
                view = _copy(turn, ended_at=self.last_ts)
                self._fail(view, None, None, unrecorded=True)
            else:
                view = _copy(turn, outcome="incomplete", live=not idle)
            view.duration_ms = view.duration_ms or _span_ms(view, self.last_ts)
            out.append(view)
        return out


turn_to_row = operator.attrgetter(*Turn.__slots__)  # Turn -> the tuple of its fields
_WIDTH = len(Turn.__slots__)


def turn_from_row(row) -> Turn:
    return turns_from_rows([row])[0]


def turns_from_rows(rows: list) -> list[Turn]:
    if not set(map(len, rows)) <= {_WIDTH}:
        raise ValueError("turn row of another shape")
    return list(itertools.starmap(Turn, rows))


def _span_ms(turn: Turn, end: float | None = None) -> int | None:
    stop = end if end is not None else turn.ended_at
    if turn.started_at is None or stop is None:
        return None
    return max(0, int(round((stop - turn.started_at) * 1000)))


def _copy(turn: Turn, **changes) -> Turn:
    clone = Turn(**{name: getattr(turn, name) for name in Turn.__slots__})
    for key, value in changes.items():
        setattr(clone, key, value)
    return clone


_STATE_KEYS = set(vars(TurnAssembler(""))) - {"done", "open", "_last_parsed"}
# What a settled assembler keeps: its turns, and what turns(), the file's health and the
# unknown error infos read.
_SETTLED_KEYS = ("cli_version", "unsupported", "unknown_infos", "_pending_tokens", "done", "open")
_SETTLED_STATE_KEYS = set(_SETTLED_KEYS) - {"done", "open"}

# Indexed by record kind (small ints); None: nothing to do but note the time. Era A's first
# line is seen to by `feed` itself.
_HANDLER_OF = {
    P.META: TurnAssembler._on_meta,
    P.TURN_CONTEXT: TurnAssembler._on_turn_context,
    P.SETTINGS: TurnAssembler._on_settings,
    P.TASK_STARTED: TurnAssembler._on_task_started,
    P.USER_MESSAGE: TurnAssembler._on_user_message,
    P.OUTPUT: TurnAssembler._on_output,
    P.TOOL_CALL: TurnAssembler._on_tool_call,
    P.ERROR: TurnAssembler._on_error,
    P.TOKEN_COUNT: TurnAssembler._on_token_count,
    P.TASK_COMPLETE: TurnAssembler._on_task_complete,
    P.TURN_ABORTED: TurnAssembler._on_turn_aborted,
}
_HANDLERS = tuple(_HANDLER_OF.get(kind) for kind in range(max(P.KINDS) + 1))
