"""Statistics over turns: pure functions, the clock passed in."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from datetime import datetime, timezone, tzinfo
from operator import attrgetter
from typing import Iterable

from codexwatch.core.models import ERROR_CLASSES, Episode, FileHealth, Turn
from codexwatch.core.times import iso_utc

EPISODE_GAP = 30 * 60  # a pause this long between failures starts a new episode
CURRENT_WINDOW = 2 * 3600  # an ongoing episode this recent is the user's trouble "now"
WINDOWS = {"1h": 3600, "24h": 86400, "7d": 7 * 86400, "all": None}


class _Finished(list):
    """Marks a list _finished() already made, so helpers called with it do not redo it; and
    holds each turn's time (`ats`), which every statistic needs."""

    ats: list[float]


def _finished(turns: Iterable[Turn]) -> _Finished:
    """Turns that either worked or failed, by time; aborted and incomplete ones say neither."""
    if isinstance(turns, _Finished):
        return turns
    finished = _Finished(t for t in turns if t.outcome in ("ok", "failed"))
    # A finished turn as good as always has an end: then its time is read in C.
    at = _ENDED if all(t.ended_at for t in finished) else Turn.at.fget
    finished.sort(key=at)  # stable; and turns come nearly in this order already
    finished.ats = list(map(at, finished))
    return finished


_ENDED = attrgetter("ended_at")


def episode_id(first: Turn) -> str:
    return f"{iso_utc(first.at, 'compact')}-{first.turn_id[-6:]}"


def episodes(turns: Iterable[Turn], gap: float = EPISODE_GAP) -> list[Episode]:
    """Runs of failed turns with no success between and no pause over `gap`; oldest first."""
    out: list[Episode] = []
    run: list[Turn] = []
    last = 0.0  # time of run[-1]
    finished = _finished(turns)
    for turn, at in zip(finished, finished.ats):
        if turn.outcome == "ok":
            if run:
                out.append(Episode(episode_id(run[0]), run, ongoing=False))
                run = []
            continue
        if run and at - last > gap:
            out.append(Episode(episode_id(run[0]), run, ongoing=False))
            run = []
        run.append(turn)
        last = at
    if run:
        out.append(Episode(episode_id(run[0]), run, ongoing=True))
    return out


def current_episode(turns: Iterable[Turn], now: float) -> Episode | None:
    """The episode the user is in right now, if any."""
    return current_of(episodes(turns), now)


def current_of(found: list[Episode], now: float) -> Episode | None:
    """The last of `found` if it is the user's trouble now."""
    if found and found[-1].ongoing and now - found[-1].last <= CURRENT_WINDOW:
        return found[-1]
    return None


def _summary(decided: int, failed: list[Turn]) -> dict:
    classes = Counter(t.error_class or "other" for t in failed)
    return {
        "turns": decided,
        "failures": len(failed),
        "failure_rate": round(len(failed) / decided, 4) if decided else None,
        "by_class": {c: classes[c] for c in ERROR_CLASSES if c in classes},
        "lost_minutes": round(sum((t.duration_ms or 0) for t in failed) / 60000, 1),
        "lost_tokens": sum(t.tokens for t in failed),
    }


_VARIANT = attrgetter("model", "effort", "fast")


def _by_variant(turns: list[Turn]) -> tuple[Counter, dict[tuple, list[Turn]]]:
    """Turns per (model, effort, Fast), and the failed ones. Counted in C (Counter over an
    attrgetter): only the failures, a small share, are walked in Python."""
    counts: Counter = Counter()
    for (model, effort, fast), n in Counter(map(_VARIANT, turns)).items():
        counts[(model or "unknown", effort, fast)] += n
    failed: dict[tuple, list[Turn]] = defaultdict(list)
    for t in [t for t in turns if t.outcome == "failed"]:
        failed[(t.model or "unknown", t.effort, t.fast)].append(t)
    return counts, failed


def model_stats(turns: Iterable[Turn], now: float) -> dict:
    """Per model, and per model x effort x Fast, over 1 h / 24 h / 7 d / all."""
    finished = _finished(turns)
    stop = bisect_right(finished.ats, now + 60)
    windows = {
        name: _by_variant(finished if span is None else
                          finished[bisect_left(finished.ats, now - span, 0, stop):stop])
        for name, span in WINDOWS.items()
    }
    variants = sorted(windows["all"][0], key=lambda key: tuple(map(str, key)))
    models = sorted({key[0] for key in variants})

    def of_model(model: str, counts: Counter, failed: dict) -> dict:
        keys = [key for key in variants if key[0] == model]
        return _summary(sum(counts[k] for k in keys), [t for k in keys for t in failed.get(k, ())])

    def of_variant(key: tuple, counts: Counter, failed: dict) -> dict:
        return _summary(counts[key], failed.get(key, []))

    return {
        "models": [{"model": m, **{name: of_model(m, *w) for name, w in windows.items()}}
                   for m in models],
        "variants": [{"model": m, "effort": e, "fast": f,
                      **{name: of_variant((m, e, f), *w) for name, w in windows.items()}}
                     for m, e, f in variants],
    }


def hour_of_week(turns: Iterable[Turn], tz: tzinfo | None = None) -> dict:
    """7 x 24 grids (Monday first, local time) of turns and failures."""
    turns_grid = [[0] * 24 for _ in range(7)]
    fail_grid = [[0] * 24 for _ in range(7)]
    finished = _finished(turns)
    # Counted per quarter hour (every zone's offset is a whole number of them), then each
    # quarter placed once: far fewer quarters than turns in a long history.
    turns_per_quarter = Counter([int(at // 900) for at in finished.ats])
    fails_per_quarter = Counter([int(at // 900) for t, at in zip(finished, finished.ats)
                                 if t.outcome == "failed"])
    slot = _LocalSlots(tz)
    for grid, per_quarter in ((turns_grid, turns_per_quarter), (fail_grid, fails_per_quarter)):
        for quarter, n in per_quarter.items():
            day, hour = slot(quarter * 900)
            grid[day][hour] += n
    return {"turns": turns_grid, "failures": fail_grid, "quietest": quietest_hours(fail_grid, turns_grid)}


class _LocalSlots:
    """Epoch seconds -> (weekday, hour) in a time zone. The zone's offset is looked up once
    per UTC day, at its start and end: equal, the clocks did not change that day."""

    def __init__(self, tz: tzinfo | None) -> None:
        self.tz = tz
        self.offsets: dict[int, int | None] = {}

    def __call__(self, at: int) -> tuple[int, int]:
        day = at // 86400
        if day not in self.offsets:
            start, end = self._offset(day * 86400), self._offset(day * 86400 + 86399)
            self.offsets[day] = start if start == end else None
        offset = self.offsets[day]
        if offset is None:  # the clocks change that day: ask the zone about this moment
            local = datetime.fromtimestamp(at, timezone.utc).astimezone(self.tz)
            return local.weekday(), local.hour
        local_seconds = at + offset
        return (local_seconds // 86400 + 3) % 7, local_seconds % 86400 // 3600  # 1970-01-01: a Thursday

    def _offset(self, at: int) -> int:
        offset = datetime.fromtimestamp(at, timezone.utc).astimezone(self.tz).utcoffset()
        return int(offset.total_seconds()) if offset is not None else 0


def quietest_hours(failures: list[list[int]], turns: list[list[int]], n: int = 5) -> list[list[int]]:
    """The hours with the lowest failure rate among those the user actually works in."""
    worked = [(d, h) for d in range(7) for h in range(24) if turns[d][h] > 0]
    ranked = sorted(worked, key=lambda dh: (failures[dh[0]][dh[1]] / turns[dh[0]][dh[1]], -turns[dh[0]][dh[1]]))
    return [[d, h] for d, h in ranked[:n]]


def sessions_running(turns: Iterable[Turn]) -> list[str]:
    return sorted({t.session_id for t in turns if t.live})


def parser_health(health: Iterable[FileHealth]) -> dict:
    # `lines` counts the lines read one by one; skimmed files (quiet ones, first read)
    # contribute only the lines around their turn boundaries, so "understood" is the share
    # of checked lines.
    by_version: dict[str, list[FileHealth]] = {}
    for h in health:
        by_version.setdefault(h.cli_version or "unknown", []).append(h)
    rows = {version: _health_row(files) for version, files in sorted(by_version.items())}
    unreadable = sum(h.error is not None for files in by_version.values() for h in files)
    total = {
        "files": sum(r["files"] for r in rows.values()),
        "lines": sum(r["lines"] for r in rows.values()),
        "malformed": sum(r["malformed"] for r in rows.values()),
        "oversized": sum(r["oversized"] for r in rows.values()),
        "unknown_lines": sum(sum(r["unknown_types"].values()) for r in rows.values()),
        "unsupported_files": sum(r["unsupported_files"] for r in rows.values()),
        "unreadable_files": unreadable,
        "skimmed_files": sum(r["skimmed_files"] for r in rows.values()),
    }
    bad = total["malformed"] + total["unknown_lines"]
    total["understood"] = round(1 - bad / total["lines"], 4) if total["lines"] else None
    return {**total, "by_version": rows}


def _health_row(files: list[FileHealth]) -> dict:
    unknown: Counter = Counter()
    for h in files:
        if h.unknown_types:
            unknown.update(h.unknown_types)
    return {
        "files": len(files),
        "lines": sum(h.lines for h in files),
        "malformed": sum(h.malformed for h in files),
        "oversized": sum(h.oversized for h in files),
        "unknown_types": dict(unknown),
        "unsupported_files": sum(h.unsupported for h in files),
        "skimmed_files": sum(h.skimmed for h in files),
    }


def episode_json(ep: Episode) -> dict:
    return {
        "id": ep.id,
        "first": iso_utc(ep.first),
        "last": iso_utc(ep.last),
        "failures": len(ep.failures),
        "classes": ep.classes,
        "models": ep.models,
        "sessions": ep.sessions,
        "ongoing": ep.ongoing,
    }


def compute_stats(
    turns: list[Turn], health: Iterable[FileHealth], now: float, tz: tzinfo | None = None,
    unknown_error_infos: dict[str, int] | None = None,
) -> dict:
    """Everything `codexwatch stats --json` prints."""
    outcomes: dict[str, int] = defaultdict(int)
    for t in turns:
        outcomes[t.outcome] += 1
    finished = _finished(turns)
    eps = episodes(finished)
    current = current_of(eps, now)
    return {
        "generated_at": iso_utc(now),
        "turns": len(turns),
        "outcomes": dict(outcomes),
        **model_stats(finished, now),
        "hour_of_week": hour_of_week(finished, tz),
        "episodes": [episode_json(e) for e in eps],
        "current_episode": current.id if current else None,
        "sessions_running": sessions_running(turns),
        "parser": {**parser_health(health), "unknown_error_infos": unknown_error_infos or {}},
    }
