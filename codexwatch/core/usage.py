"""The user's quota as Codex records it: `token_count.rate_limits`, in every shape a release
wrote (`docs/rollout-eras.md`, "The usage meter"):

- 0.40: flat, `{"primary_used_percent", "secondary_used_percent", "primary_window_minutes",
  "secondary_window_minutes", "primary_to_secondary_ratio_percent"}`, no reset times;
- 0.59 on: `{"primary": W, "secondary": W}` with `W = {"used_percent", "window_minutes",
  "resets_at"}` (epoch seconds); 0.80 adds `credits` and `plan_type`, 0.100 `limit_id` and
  `limit_name`, 0.140 `individual_limit` and `rate_limit_reached_type`, 0.171
  `spend_control_reached`.

A window written as `null` (an API-key login, or a header the server did not send) is
unknown, never 0 %. A reset given as seconds from now (`resets_in_seconds`, or a flat
`primary_resets_in_seconds`) is placed from the line's own time.

A reading is a plain tuple (it travels in index rows and spilled turns, marshal-able):
`(as_of, primary, secondary, plan_type, limit_id, credits, reached)`, each window
`(used_percent, window_minutes | None, resets_at | None)` or None, credits a small dict or
None. Pure.
"""

from __future__ import annotations

from typing import Any, Iterable

from codexwatch.core.times import iso_utc, plausible

AS_OF, PRIMARY, SECONDARY, PLAN_TYPE, LIMIT_ID, CREDITS, REACHED = range(7)
NEAR_FULL = 90.0  # a window this full is worth a word before it fails
FULL = 100.0
_CREDIT_KEYS = ("has_credits", "unlimited", "balance")
_RESET_IN = ("resets_in_seconds", "reset_after_seconds", "resets_in")


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value == value and abs(value) < 1e18 else None  # not NaN / huge


def _epoch(value: Any) -> float | None:
    number = _num(value)
    if number is None:
        return None
    number = number / 1000.0 if number > 1e11 else number  # milliseconds by mistake
    return plausible(number) if number > 0 else None


def _minutes(value: Any) -> int | None:
    number = _num(value)
    return int(number) if number is not None and 0 < number < 1e9 else None


def _text(value: Any, longest: int = 64) -> str | None:
    return value if isinstance(value, str) and value and len(value) <= longest else None


def _reset(get, prefix: str, at: float | None) -> float | None:
    resets = _epoch(get(prefix + "resets_at"))
    if resets is not None:
        return resets
    for name in _RESET_IN:
        seconds = _num(get(prefix + name))
        if seconds is not None and at is not None and seconds >= 0:
            return at + seconds
    return None


def _window(raw: Any, at: float | None) -> tuple | None:
    if not isinstance(raw, dict):
        return None
    used = _num(raw.get("used_percent"))
    if used is None or used < 0:
        return None
    return (used, _minutes(raw.get("window_minutes")), _reset(raw.get, "", at))


def _flat_window(limits: dict, name: str, at: float | None) -> tuple | None:
    used = _num(limits.get(f"{name}_used_percent"))
    if used is None or used < 0:
        return None
    return (used, _minutes(limits.get(f"{name}_window_minutes")), _reset(limits.get, f"{name}_", at))


def _credits(raw: Any) -> dict | None:
    if not isinstance(raw, dict):
        return None
    kept = {}
    for key in _CREDIT_KEYS:
        value = raw.get(key)
        if isinstance(value, bool) or value is None:
            kept[key] = value
        elif isinstance(value, (int, float, str)):
            kept[key] = value if not isinstance(value, str) else value[:32]
    return kept if any(v is not None for v in kept.values()) else None


def read_limits(limits: Any, at: float | None) -> tuple | None:
    """A `rate_limits` object as written at `at` (the line's time) -> a reading, or None when
    it gives no figure (no window, no credits, nothing reached)."""
    if not isinstance(limits, dict):
        return None
    if "primary" in limits or "secondary" in limits:
        primary, secondary = _window(limits.get("primary"), at), _window(limits.get("secondary"), at)
    else:  # 0.40's flat form
        primary, secondary = _flat_window(limits, "primary", at), _flat_window(limits, "secondary", at)
    credits = _credits(limits.get("credits"))
    reached = _text(limits.get("rate_limit_reached_type"))
    if primary is None and secondary is None and credits is None and reached is None:
        return None
    return (at, primary, secondary, _text(limits.get("plan_type")), _text(limits.get("limit_id")),
            credits, reached)


def windows(reading: tuple | None) -> list[tuple[str, tuple]]:
    """[(name, window)] of the windows a reading knows: `5h`/`wk` for Codex's usual two,
    else named by their length."""
    if reading is None:
        return []
    out = []
    for default, window in (("5h", reading[PRIMARY]), ("wk", reading[SECONDARY])):
        if window is not None:
            out.append((window_name(window[1], default), window))
    return out


def window_name(minutes: int | None, default: str) -> str:
    if minutes is None:
        return default
    if minutes == 10080:
        return "wk"
    if minutes % 1440 == 0:
        return f"{minutes // 1440}d"
    if minutes % 60 == 0:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def window_words(minutes: int | None, default: str) -> str:
    """`5-hour window`, `weekly window`."""
    name = window_name(minutes, default)
    if name == "wk":
        return "weekly window"
    if name.endswith("h"):
        return f"{name[:-1]}-hour window"
    if name.endswith("d"):
        return f"{name[:-1]}-day window"
    return f"{name[:-1]}-minute window"


def full(reading: tuple | None) -> bool:
    """Whether a window of the reading is used up (100 %)."""
    return any(w[0] >= FULL for _, w in windows(reading))


def exhausted_reset(reading: tuple | None) -> float | None:
    """When the used-up window (the later, if both) resets."""
    resets = [w[2] for _, w in windows(reading) if w[0] >= FULL and w[2] is not None]
    return max(resets) if resets else None


class Newest:
    """The newest reading among turns (by the time it was written), and its session: a fold,
    taken a part at a time; its state is plain values."""

    __slots__ = ("reading", "session_id")

    def __init__(self) -> None:
        self.reading: tuple | None = None
        self.session_id: str | None = None

    def add(self, turns: Iterable) -> "Newest":
        for t in turns:
            reading = t.usage
            if reading is not None and self._newer(reading):
                self.reading, self.session_id = reading, t.session_id
        return self

    def _newer(self, reading: tuple) -> bool:
        if self.reading is None:
            return True
        return (reading[AS_OF] or 0.0) > (self.reading[AS_OF] or 0.0)

    def export_state(self) -> list | None:
        return None if self.reading is None else [list(self.reading), self.session_id]

    def restore(self, state: Any) -> "Newest":
        if state is not None:
            reading, self.session_id = state
            self.reading = tuple(tuple(v) if isinstance(v, list) else v for v in reading)
        return self


def newest(turns: Iterable) -> tuple[tuple | None, str | None]:
    """(the newest reading among `turns`, its session)."""
    found = Newest().add(turns)
    return found.reading, found.session_id


def usage_json(reading: tuple | None, session_id: str | None) -> dict | None:
    """The `"usage"` of `stats --json` and `advise --json`: None when nothing was recorded."""
    if reading is None:
        return None

    def window(w: tuple | None) -> dict | None:
        if w is None:
            return None
        return {"used_percent": w[0], "window_minutes": w[1], "resets_at": iso_utc(w[2])}

    return {
        "as_of": iso_utc(reading[AS_OF]),
        "session_id": session_id,
        "plan_type": reading[PLAN_TYPE],
        "limit_id": reading[LIMIT_ID],
        "primary": window(reading[PRIMARY]),
        "secondary": window(reading[SECONDARY]),
        "credits": dict(reading[CREDITS]) if reading[CREDITS] is not None else None,
        "reached": reading[REACHED],
    }


def percent(used: float) -> str:
    """34 %, 99.5 %: whole numbers as such."""
    return f"{used:.0f}" if float(used).is_integer() else f"{used:.1f}"


def compact(reading: tuple | None) -> str | None:
    """`5h 34% · wk 61%`: the header's meter; None when nothing is known."""
    parts = [f"{name} {percent(w[0])}%" for name, w in windows(reading)]
    return " · ".join(parts) if parts else None
