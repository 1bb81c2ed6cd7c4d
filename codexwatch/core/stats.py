"""Statistics over turns: pure functions, the clock passed in."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from datetime import datetime, timezone, tzinfo
from operator import attrgetter, itemgetter
from typing import Iterable

from codexwatch.core.models import ERROR_CLASSES, OUTCOMES, Episode, FileHealth, Turn
from codexwatch.core.times import iso_utc
from codexwatch.core.turns import turn_to_row, turns_from_rows

EPISODE_GAP = 30 * 60  # a pause this long between failures starts a new episode
CURRENT_WINDOW = 2 * 3600  # an ongoing episode this recent is the user's trouble "now"
WINDOWS = {"1h": 3600, "24h": 86400, "7d": 7 * 86400, "all": None}


def episode_id(first: Turn) -> str:
    return f"{iso_utc(first.at, 'compact')}-{first.turn_id[-6:]}"


def episodes(turns: Iterable[Turn], gap: float = EPISODE_GAP) -> list[Episode]:
    """Runs of failed turns with no success between and no pause over `gap`; oldest first."""
    return StatsFold(0.0).add(turns).episodes(gap)


def current_episode(turns: Iterable[Turn], now: float) -> Episode | None:
    """The episode the user is in right now, if any."""
    return current_of(episodes(turns), now)


def current_of(found: list[Episode], now: float) -> Episode | None:
    """The last of `found` if it is the user's trouble now."""
    if found and found[-1].ongoing and now - found[-1].last <= CURRENT_WINDOW:
        return found[-1]
    return None


def model_stats(turns: Iterable[Turn], now: float) -> dict:
    """Per model, and per model x effort x Fast, over 1 h / 24 h / 7 d / all."""
    return StatsFold(now).add(turns).model_stats()


def hour_of_week(turns: Iterable[Turn], tz: tzinfo | None = None) -> dict:
    """7 x 24 grids (Monday first, local time) of turns and failures."""
    return StatsFold(0.0, tz).add(turns).hour_of_week()


def parser_health(health: Iterable[FileHealth]) -> dict:
    fold = StatsFold(0.0)
    for h in health:
        fold.add_health(h)
    return fold.parser_health()


def compute_stats(
    turns: Iterable[Turn], health: Iterable[FileHealth], now: float, tz: tzinfo | None = None,
    unknown_error_infos: dict[str, int] | None = None,
) -> dict:
    """Everything `codexwatch stats --json` prints, for turns in the order History.turns
    gives them (by start)."""
    fold = StatsFold(now, tz).add(turns)
    for h in health:
        fold.add_health(h)
    fold.add_unknown_infos(unknown_error_infos or {})
    return fold.result()


_OUTCOME = attrgetter("outcome")
_Key = tuple[float, float, float]  # (at, start, place): where a turn falls among the finished


class StatsFold:
    """The statistics of a history taken in a part at a time, so that a large history need
    not be held whole: `add` the turns of each file in path order (each file's in its own
    order), as History lists them; then ask for the figures. Only failed turns are kept
    whole (a tenth of them); of a successful turn, its time, start and variant. What it
    holds does not depend on the clock: windows are counted when the figures are asked for.

    Finished turns are placed by time; equal times by start, then by the order they were
    added in: the order of sorting History's list (by start, stably) and then by time.
    """

    def __init__(self, now: float, tz: tzinfo | None = None) -> None:
        self.now, self.tz = now, tz
        self.turns = 0
        self._outcomes: Counter = Counter()
        self._running: set[str] = set()
        self._ok_at = array("d")
        self._ok_start = array("d")
        self._ok_code = array("I")  # each one's variant: its place in _variants
        self._variants: dict[tuple, int] = {}  # (model, effort, fast) as the turns say
        # (at, start, place, turn): place is the number of successful turns added before it,
        # less a half, comparable with a successful turn's position in _ok_at.
        self._failed: list[tuple[float, float, float, Turn]] = []
        self._health: dict[str, dict] = {}
        self._unreadable = 0
        self._unknown_infos: Counter = Counter()

    # -- taking turns in ----------------------------------------------------------------

    def add(self, turns: Iterable[Turn]) -> "StatsFold":
        turns = turns if isinstance(turns, list) else list(turns)
        self.turns += len(turns)
        self._outcomes.update(map(_OUTCOME, turns))
        self._running.update([t.session_id for t in turns if t.live])
        ok_at, ok_start, ok_code, variants = self._ok_at, self._ok_start, self._ok_code, self._variants
        failed = self._failed
        for t in turns:
            outcome = t.outcome
            if outcome != "ok" and outcome != "failed":
                continue  # aborted or incomplete: says neither
            at = t.at
            start = t.started_at or at
            if outcome == "ok":
                ok_at.append(at)
                ok_start.append(start)
                code = variants.get(variant := (t.model, t.effort, t.fast))
                if code is None:
                    code = variants[variant] = len(variants)
                ok_code.append(code)
            else:
                failed.append((at, start, len(ok_at) - 0.5, t))
        return self

    def add_health(self, h: FileHealth) -> None:
        row = self._health.get(h.cli_version or "unknown")
        if row is None:
            row = self._health[h.cli_version or "unknown"] = {
                "files": 0, "lines": 0, "malformed": 0, "oversized": 0, "unknown_types": {},
                "unsupported_files": 0, "skimmed_files": 0,
            }
        row["files"] += 1
        row["lines"] += h.lines
        row["malformed"] += h.malformed
        row["oversized"] += h.oversized
        for kind, n in (h.unknown_types or {}).items():
            row["unknown_types"][kind] = row["unknown_types"].get(kind, 0) + n
        row["unsupported_files"] += h.unsupported
        row["skimmed_files"] += h.skimmed
        self._unreadable += h.error is not None

    def add_unknown_infos(self, counts: dict[str, int]) -> None:
        self._unknown_infos.update(counts)

    def export_state(self) -> dict:
        """Plain values (marshal-able) from which restore makes this fold again, for
        any clock: what it holds does not depend on one. Export and store at once: the fold
        goes on changing what it holds."""
        return {
            "turns": self.turns, "outcomes": dict(self._outcomes), "running": list(self._running),
            "ok_at": self._ok_at.tobytes(), "ok_start": self._ok_start.tobytes(),
            "ok_code": self._ok_code.tobytes(), "variants": list(self._variants),
            "failed": [(at, start, place, turn_to_row(t)) for at, start, place, t in self._failed],
            "health": self._health, "unreadable": self._unreadable,
            "unknown_infos": dict(self._unknown_infos),
        }

    def restore(self, state: dict) -> "StatsFold":
        """Take up, in this fold (a new one), what export_state gave; a state that does not
        load raises, and leaves the fold as it was."""
        ok_at, ok_start = array("d", state["ok_at"]), array("d", state["ok_start"])
        ok_code = array("I", state["ok_code"])
        if not len(ok_at) == len(ok_start) == len(ok_code):
            raise ValueError("a fold's state of another shape")
        rows = state["failed"]
        turns = turns_from_rows([row[3] for row in rows])
        failed = [(at, start, place, turn) for (at, start, place, _), turn in zip(rows, turns)]
        variants = {tuple(v): code for code, v in enumerate(state["variants"])}
        outcomes, running = Counter(state["outcomes"]), set(state["running"])
        unknown_infos = Counter(state["unknown_infos"])
        self.turns, self._unreadable = int(state["turns"]), int(state["unreadable"])
        self._health = dict(state["health"])
        self._ok_at, self._ok_start, self._ok_code = ok_at, ok_start, ok_code
        self._variants, self._failed, self._outcomes = variants, failed, outcomes
        self._running, self._unknown_infos = running, unknown_infos
        return self

    @property
    def failed(self) -> list[Turn]:
        """The failed turns, as added: the ones a cause from Codex's log can still be given to."""
        return [entry[3] for entry in self._failed]

    # -- the figures --------------------------------------------------------------------

    def result(self) -> dict:
        """Everything `codexwatch stats --json` prints."""
        eps = self.episodes()
        before, after = self.result_around(eps)
        return {**before, "episodes": [episode_json(e) for e in eps], **after}

    def result_around(self, eps: list[Episode]) -> tuple[dict, dict]:
        """What result() has before its episodes, and after them: so that a long history's
        tens of thousands of episodes can be written out one at a time."""
        current = current_of(eps, self.now)
        before = {
            "generated_at": iso_utc(self.now),
            "turns": self.turns,
            "outcomes": {o: self._outcomes[o] for o in OUTCOMES if self._outcomes[o]},
            **self.model_stats(),
            "hour_of_week": self.hour_of_week(),
        }
        after = {
            "current_episode": current.id if current else None,
            "sessions_running": self.sessions_running(),
            "parser": {**self.parser_health(), "unknown_error_infos": dict(self._unknown_infos)},
        }
        return before, after

    def sessions_running(self) -> list[str]:
        """The sessions with a turn still running."""
        return sorted(self._running)

    def model_stats(self) -> dict:
        # The successes of the widest window, looked for once; the narrower ones lie within.
        widest = max(span for span in WINDOWS.values() if span is not None)
        recent = [(at, code) for at, code in zip(self._ok_at, self._ok_code)
                  if self.now - widest <= at <= self.now + 60]
        windows = {name: self._by_variant(span, recent) for name, span in WINDOWS.items()}
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

    def _by_variant(self, span: float | None, recent: list[tuple[float, int]]) -> tuple[Counter, dict]:
        """Finished turns per (model, effort, Fast) in one window, and the failed ones.
        `recent`: (time, variant) of the successes in the widest window."""
        lo, hi = (self.now - span, self.now + 60) if span is not None else (None, None)
        if lo is None:
            per_code = Counter(self._ok_code)
        else:
            per_code = Counter([code for at, code in recent if lo <= at])
        variant_of = list(self._variants)
        counts: Counter = Counter()
        for code, n in per_code.items():
            model, effort, fast = variant_of[code]
            counts[(model or "unknown", effort, fast)] += n
        failed: dict[tuple, list[Turn]] = defaultdict(list)
        for at, _, _, t in self._failed:
            if lo is None or lo <= at <= hi:
                key = (t.model or "unknown", t.effort, t.fast)
                counts[key] += 1
                failed[key].append(t)
        return counts, failed

    def hour_of_week(self) -> dict:
        turns_grid = [[0] * 24 for _ in range(7)]
        fail_grid = [[0] * 24 for _ in range(7)]
        # Counted per quarter hour (every zone's offset is a whole number of them), then each
        # quarter placed once: far fewer quarters than turns in a long history.
        fails_per_quarter = Counter([int(entry[0] // 900) for entry in self._failed])
        turns_per_quarter = Counter([int(at // 900) for at in self._ok_at]) + fails_per_quarter
        slot = _LocalSlots(self.tz)
        for grid, per_quarter in ((turns_grid, turns_per_quarter), (fail_grid, fails_per_quarter)):
            for quarter, n in per_quarter.items():
                day, hour = slot(quarter * 900)
                grid[day][hour] += n
        return {"turns": turns_grid, "failures": fail_grid,
                "quietest": quietest_hours(fail_grid, turns_grid)}

    def episodes(self, gap: float = EPISODE_GAP) -> list[Episode]:
        """Runs of failed turns with no success between and no pause over `gap`; oldest first."""
        failed = sorted(self._failed, key=_KEY)  # stable: equal keys keep the order added
        successes = _Successes(self._ok_at, self._ok_start, {entry[0] for entry in failed})
        out: list[Episode] = []
        run: list[Turn] = []
        last: _Key | None = None
        for entry in failed:
            key = _KEY(entry)
            if run and (key[0] - last[0] > gap or successes.between(last, key)):
                out.append(Episode(episode_id(run[0]), run, ongoing=False))
                run = []
            run.append(entry[3])
            last = key
        if run:
            out.append(Episode(episode_id(run[0]), run, ongoing=not successes.between(last, None)))
        return out

    def parser_health(self) -> dict:
        # `lines` counts the lines read one by one; skimmed files (quiet ones, first read)
        # contribute only the lines around their turn boundaries, so "understood" is the share
        # of checked lines.
        rows = {version: {**row, "unknown_types": dict(row["unknown_types"])}
                for version, row in sorted(self._health.items())}
        total = {
            "files": sum(r["files"] for r in rows.values()),
            "lines": sum(r["lines"] for r in rows.values()),
            "malformed": sum(r["malformed"] for r in rows.values()),
            "oversized": sum(r["oversized"] for r in rows.values()),
            "unknown_lines": sum(sum(r["unknown_types"].values()) for r in rows.values()),
            "unsupported_files": sum(r["unsupported_files"] for r in rows.values()),
            "unreadable_files": self._unreadable,
            "skimmed_files": sum(r["skimmed_files"] for r in rows.values()),
        }
        bad = total["malformed"] + total["unknown_lines"]
        total["understood"] = round(1 - bad / total["lines"], 4) if total["lines"] else None
        return {**total, "by_version": rows}


_KEY = itemgetter(0, 1, 2)


class _Successes:
    """Whether a successful turn falls between two places among the finished turns: by time
    in a sorted list; where times are equal (rare), by start and order added."""

    def __init__(self, ats: array, starts: array, failed_ats: set[float]) -> None:
        self.sorted = sorted(ats)
        self.tied: dict[float, list[tuple[float, int]]] = defaultdict(list)
        if failed_ats.isdisjoint(ats):  # as good as always: then nothing to walk
            return
        for i, at in enumerate(ats):
            if at in failed_ats:
                self.tied[at].append((starts[i], i))

    def between(self, lo: _Key, hi: _Key | None) -> bool:
        """Is there one after `lo` and before `hi` (None: after `lo` at all)?"""
        found = self.sorted
        if hi is None:
            if bisect_right(found, lo[0]) < len(found):
                return True
        elif hi[0] > lo[0] and bisect_left(found, hi[0]) > bisect_right(found, lo[0]):
            return True
        for at in {lo[0], hi[0]} if hi is not None else (lo[0],):
            for start, i in self.tied.get(at, ()):
                if lo < (at, start, i) and (hi is None or (at, start, i) < hi):
                    return True
        return False


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
