"""Failure rate by context size: the third question of the seed's log analysis (000 §4.2),
"the context size above which turns start failing".

A turn is placed by the context in use when it started (or failed) against its model's
window: `Turn.context_used` / `Turn.context_window` (a turn that fails at once writes no
usage of its own; it starts with what the last request of its thread left). A turn whose
window is unknown goes by absolute tokens, in a list of its own. Only turns that ended
(ok or failed) count. Pure.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from codexwatch.core.models import ERROR_CLASSES, Turn

# (from %, to %) of the window; a share above 100 % falls in the last band.
BANDS = ((0, 25), (25, 50), (50, 75), (75, 90), (90, 100))
# (from, to) tokens, for turns whose window is unknown; the last is open-ended.
TOKEN_BANDS = ((0, 32_000), (32_000, 64_000), (64_000, 128_000), (128_000, 200_000), (200_000, None))
MIN_TURNS = 20  # on each side of a threshold, to say anything
MIN_FAILURES = 3  # failures from the threshold up
THRESHOLD_RATIO = 2.0  # "at least twice the rate below it"
UNKNOWN = "unknown"


def band_of(used: int | None, window: int | None) -> str:
    """`p0`..`p4` (share of the window), `t0`..`t4` (tokens, window unknown), or `unknown`."""
    if used is None:
        return UNKNOWN
    if window:
        percent = 100.0 * used / window
        for i, (_, high) in enumerate(BANDS[:-1]):
            if percent < high:
                return _P[i]
        return _P[-1]
    for i, (_, high) in enumerate(TOKEN_BANDS[:-1]):
        if used < high:
            return _T[i]
    return _T[-1]


_P = tuple(f"p{i}" for i in range(len(BANDS)))
_T = tuple(f"t{i}" for i in range(len(TOKEN_BANDS)))


def band_label(key: str) -> str:
    """`75–90 %`, `64k–128k tokens`, `200k+ tokens`."""
    if key.startswith("p"):
        low, high = BANDS[int(key[1:])]
        return f"{low}–{high} %"
    if key.startswith("t"):
        low, high = TOKEN_BANDS[int(key[1:])]
        low_text = f"{low // 1000}k" if low else "0"
        return f"{low_text}+ tokens" if high is None else f"{low_text}–{high // 1000}k tokens"
    return "unknown"


def turn_band(t: Turn) -> str:
    return band_of(t.context_used, t.context_window)


def _row(key: str, turns: int, classes: Counter) -> dict:
    failures = sum(classes.values())
    row = {"band": band_label(key)}
    if key.startswith("p"):
        low, high = BANDS[int(key[1:])]
        row.update(from_percent=low, to_percent=high)
    else:
        low, high = TOKEN_BANDS[int(key[1:])]
        row.update(from_tokens=low, to_tokens=high)
    row.update(turns=turns, failures=failures,
               failure_rate=round(failures / turns, 4) if turns else None,
               by_class={c: classes[c] for c in ERROR_CLASSES if c in classes})
    return row


def context_json(turns_per_band: dict[str, int], failures_per_band: dict[str, Counter]) -> dict:
    """The `"context"` of `stats --json`: every band, empty ones too."""
    empty: Counter = Counter()
    return {
        "bands": [_row(k, turns_per_band.get(k, 0), failures_per_band.get(k, empty)) for k in _P],
        "by_tokens": [_row(k, turns_per_band.get(k, 0), failures_per_band.get(k, empty)) for k in _T],
        "unknown": turns_per_band.get(UNKNOWN, 0),
        "min_turns": MIN_TURNS,
    }


def threshold(turns_per_band: dict[str, int], failures_per_band: dict[str, Counter]) -> dict | None:
    """The lowest band (of the window's share, one with turns) from which the failure rate
    is at least twice the rate below it, with MIN_TURNS turns on each side and MIN_FAILURES
    failures from it up; None when no band qualifies."""
    turns = [turns_per_band.get(k, 0) for k in _P]
    fails = [sum(failures_per_band[k].values()) if k in failures_per_band else 0 for k in _P]
    for i in range(1, len(_P)):
        above_t, above_f = sum(turns[i:]), sum(fails[i:])
        below_t, below_f = sum(turns[:i]), sum(fails[:i])
        if not turns[i] or above_t < MIN_TURNS or below_t < MIN_TURNS or above_f < MIN_FAILURES:
            continue  # an empty band starts nothing: the next one up would say it better
        rate, rate_below = above_f / above_t, below_f / below_t
        if rate >= THRESHOLD_RATIO * rate_below:
            return {
                "band": band_label(_P[i]), "from_percent": BANDS[i][0],
                "failure_rate": round(rate, 4), "failure_rate_below": round(rate_below, 4),
                "ratio": round(rate / rate_below, 2) if rate_below else None,
                "turns": above_t, "failures": above_f, "turns_below": below_t,
                "failures_below": below_f, "min_turns": MIN_TURNS,
            }
    return None


def tally(turns: Iterable[Turn]) -> tuple[dict[str, int], dict[str, Counter]]:
    """(turns per band, failures per band by class) of the turns that ended ok or failed."""
    per_band: Counter = Counter()
    failures: dict[str, Counter] = {}
    for t in turns:
        if t.outcome not in ("ok", "failed"):
            continue
        key = turn_band(t)
        per_band[key] += 1
        if t.outcome == "failed":
            failures.setdefault(key, Counter())[t.error_class or "other"] += 1
    return dict(per_band), failures


def threshold_sentence(found: dict | None) -> str | None:
    """`Turns from 75 % of the window up failed 4× as often as below it (12 of 40, against
    9 of 120).`"""
    if found is None:
        return None
    ratio = found["ratio"]
    times = (f"{ratio:.1f}".rstrip("0").rstrip(".") + "× as often as") if ratio else "while none failed"
    return (f"your turns from {found['from_percent']} % of the context window up failed {times} "
            f"below it ({found['failures']} of {found['turns']}, against "
            f"{found['failures_below']} of {found['turns_below']})")
