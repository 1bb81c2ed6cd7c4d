"""Statistics over turns: pure functions, the clock passed in."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from datetime import datetime, timezone, tzinfo
from operator import attrgetter, itemgetter
from typing import Callable, Iterable, Iterator, Mapping

from codexwatch.core import context as ctx
from codexwatch.core.classify import with_logged_cause
from codexwatch.core.models import ERROR_CLASSES, OUTCOMES, Episode, FileHealth, Turn
from codexwatch.core.times import iso_utc
from codexwatch.core.turns import turn_to_row, turns_from_rows
from codexwatch.core.usage import Newest, usage_json

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


QUARTER_S = 900  # every zone's offset is a whole number of quarter hours


def quarter_of(at: float) -> int:
    """The quarter hour since the epoch `at` falls in."""
    return int(at // QUARTER_S)


_OUTCOME = attrgetter("outcome")
_Key = tuple[float, float, float]  # (at, start, place): where a turn falls among the finished


class StatsFold:
    """The statistics of a history taken in a part at a time, so that a large history need
    not be held whole: `add` the turns of each file in path order (each file's in its own
    order), as History lists them; then ask for the figures. Only failed turns are kept
    whole (a tenth of them); of a successful turn, its time, start and variant; given a
    `spill`, these leave memory past SPILL_BYTES. What it holds does not depend on the
    clock: windows are counted when the figures are asked for.

    Finished turns are placed by time; equal times by start, then by the order they were
    added in: the order of sorting History's list (by start, stably) and then by time.
    """

    def __init__(self, now: float, tz: tzinfo | None = None,
                 spill: "Callable[[Finished], Finished] | None" = None) -> None:
        """`spill`: where the finished turns go once they weigh SPILL_BYTES in memory (it
        is given those so far and returns their new keeper, e.g. a database on disk)."""
        self.now, self.tz = now, tz
        self.turns = 0
        self._outcomes: Counter = Counter()
        self._running: set[str] = set()
        self._finished: Finished = Finished()
        self._spill = spill
        # Sessions with a failure of unrecorded cause, to look up in Codex's log: only
        # where there is one (else they are as many as a large history's sessions).
        self.causes_wanted = True
        self._unrecorded: set[str] = set()
        self._causes: Mapping[str, str] = {}  # turn id -> the cause Codex's log has
        self._variants: dict[tuple, int] = {}  # (model, effort, fast) as the turns say
        self._health: dict[str, dict] = {}
        self._unreadable = 0
        self._unknown_infos: Counter = Counter()
        self._usage = Newest()  # the newest plan windows any turn recorded
        self._context: Counter = Counter()  # turns (ok or failed) per band of context fill

    # -- taking turns in ----------------------------------------------------------------

    def add(self, turns: Iterable[Turn]) -> "StatsFold":
        turns = turns if isinstance(turns, list) else list(turns)
        self.turns += len(turns)
        self._outcomes.update(map(_OUTCOME, turns))
        self._running.update([t.session_id for t in turns if t.live])
        ok_at, ok_start, ok_code, failed = array("d"), array("d"), array("I"), []
        variants, before = self._variants, self._finished.successes
        bands, band_of = self._context, ctx.band_of
        self._usage.add(turns)
        for t in turns:
            outcome = t.outcome
            if outcome != "ok" and outcome != "failed":
                continue  # aborted or incomplete: says neither
            bands[band_of(t.context_used, t.context_window)] += 1
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
                # place: the successes added before it, less a half: comparable with a
                # success's place, its number in the order added.
                failed.append((at, start, before + len(ok_at) - 0.5, t))
                if t.error_class == "unrecorded" and self.causes_wanted:
                    self._unrecorded.add(t.session_id)
        self._finished.add(ok_at, ok_start, ok_code, failed)
        if self._spill is not None and self._finished.weight > SPILL_BYTES:
            self._finished = self._spill(self._finished)
            self._spill = None  # its keeper now takes the rest too
        return self

    @property
    def on_disk(self) -> bool:
        """Whether the finished turns were spilled."""
        return type(self._finished) is not Finished

    def unrecorded_sessions(self) -> set[str]:
        """The sessions with a failed turn whose cause the rollout did not record."""
        return set(self._unrecorded)

    def give_causes(self, causes: Mapping[str, str]) -> None:
        """Causes found after the read, in Codex's log (turn id -> message), for failures
        whose rollout recorded none: counted as if the rollout had them."""
        self._causes = causes

    def _failures(self, in_place: bool = False) -> Iterator[tuple[float, float, float, Turn]]:
        """The failures, as added or (`in_place`) by (time, start, place), with the causes
        given."""
        entries = self._finished.failures_in_place() if in_place else self._finished.failures()
        return _with_causes(entries, self._causes) if self._causes else entries

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
        state = {
            "turns": self.turns, "outcomes": dict(self._outcomes), "running": list(self._running),
            "variants": list(self._variants), "health": self._health, "unreadable": self._unreadable,
            "unknown_infos": dict(self._unknown_infos), "unrecorded": list(self._unrecorded),
            "usage": self._usage.export_state(), "context": dict(self._context),
        }
        if self.on_disk:  # stored by its keeper (`spilled`), apart
            state["spilled"] = self._finished.successes
        else:
            state["ok_at"], state["ok_start"], state["ok_code"], state["failed"] = self._finished.export()
        return state

    @property
    def spilled(self) -> "Finished | None":
        """The keeper on disk the finished turns went to, if they did."""
        return self._finished if self.on_disk else None

    def restore(self, state: dict, spilled: "Callable[[int], Finished] | None" = None) -> "StatsFold":
        """Take up, in this fold (a new one), what export_state gave; a state that does not
        load raises, and leaves the fold as it was. `spilled`: given the number of successes,
        the keeper of the turns a fold on disk stored apart."""
        if "spilled" in state:
            if spilled is None:
                raise ValueError("a fold on disk, and nowhere to take its turns from")
            finished = spilled(int(state["spilled"]))
        else:
            finished = Finished.restore(state["ok_at"], state["ok_start"], state["ok_code"], state["failed"])
        variants = {tuple(v): code for code, v in enumerate(state["variants"])}
        outcomes, running = Counter(state["outcomes"]), set(state["running"])
        unknown_infos, unrecorded = Counter(state["unknown_infos"]), set(state["unrecorded"])
        self.turns, self._unreadable = int(state["turns"]), int(state["unreadable"])
        self._health = dict(state["health"])
        self._finished, self._variants, self._outcomes = finished, variants, outcomes
        self._running, self._unknown_infos, self._unrecorded = running, unknown_infos, unrecorded
        self._usage, self._context = Newest().restore(state["usage"]), Counter(state["context"])
        if self.on_disk:
            self._spill = None
        elif self._spill is not None and finished.weight > SPILL_BYTES:
            self._finished, self._spill = self._spill(finished), None
        return self

    # -- the figures --------------------------------------------------------------------

    def result(self) -> dict:
        """Everything `codexwatch stats --json` prints."""
        eps = self.episodes()
        return {**self.result_before(), "episodes": [episode_json(e) for e in eps],
                **self.result_after(eps[-1] if eps else None)}

    def result_before(self) -> dict:
        """What result() has before its episodes: a long history's tens of thousands of
        episodes can then be written out as they come (iter_episodes)."""
        return {
            "generated_at": iso_utc(self.now),
            "turns": self.turns,
            "outcomes": {o: self._outcomes[o] for o in OUTCOMES if self._outcomes[o]},
            **self.model_stats(),
            "hour_of_week": self.hour_of_week(),
            "usage": self.usage_json(),
            **self.context(),
        }

    def usage(self) -> tuple[tuple | None, str | None]:
        """(the newest reading of the plan's windows, core/usage.py; its session)."""
        return self._usage.reading, self._usage.session_id

    def usage_json(self) -> dict | None:
        return usage_json(*self.usage())

    def context(self) -> dict:
        """`{"context": bands, "context_threshold": ... | None}` (core/context.py)."""
        failures: dict[str, Counter] = {}
        for _, _, _, t in self._failures():  # with the causes given: found later, they count
            key = ctx.turn_band(t)
            failures.setdefault(key, Counter())[t.error_class or "other"] += 1
        turns = dict(self._context)
        return {"context": ctx.context_json(turns, failures),
                "context_threshold": ctx.threshold(turns, failures)}

    def result_after(self, last: Episode | None) -> dict:
        """What result() has after its episodes, the last of which is `last`."""
        current = current_of([last] if last is not None else [], self.now)
        return {
            "current_episode": current.id if current else None,
            "sessions_running": self.sessions_running(),
            "parser": {**self.parser_health(), "unknown_error_infos": dict(self._unknown_infos)},
        }

    def sessions_running(self) -> list[str]:
        """The sessions with a turn still running."""
        return sorted(self._running)

    def model_stats(self) -> dict:
        lows = {name: None if span is None else self.now - span for name, span in WINDOWS.items()}
        high = self.now + 60
        counts = {name: Counter() for name in WINDOWS}
        tallies: dict[str, dict[tuple, _Tally]] = {name: defaultdict(_Tally) for name in WINDOWS}
        variant_of = list(self._variants)
        for name, per_code in self._finished.successes_per_variant(lows, high).items():
            for code, n in per_code.items():
                model, effort, fast = variant_of[code]
                counts[name][(model or "unknown", effort, fast)] += n
        for at, _, _, t in self._failures():
            key = (t.model or "unknown", t.effort, t.fast)
            for name, low in lows.items():
                if low is None or low <= at <= high:
                    counts[name][key] += 1
                    tallies[name][key].add(t)
        variants = sorted(counts["all"], key=lambda key: tuple(map(str, key)))
        models = sorted({key[0] for key in variants})

        def of_model(model: str, name: str) -> dict:
            keys = [key for key in variants if key[0] == model]
            tally = _Tally()
            for key in keys:
                tally.merge(tallies[name].get(key))
            return tally.summary(sum(counts[name][k] for k in keys))

        def of_variant(key: tuple, name: str) -> dict:
            return (tallies[name].get(key) or _Tally()).summary(counts[name][key])

        return {
            "models": [{"model": m, **{name: of_model(m, name) for name in WINDOWS}} for m in models],
            "variants": [{"model": m, "effort": e, "fast": f,
                          **{name: of_variant((m, e, f), name) for name in WINDOWS}}
                         for m, e, f in variants],
        }

    def hour_of_week(self) -> dict:
        turns_grid = [[0] * 24 for _ in range(7)]
        fail_grid = [[0] * 24 for _ in range(7)]
        # Counted per quarter hour (every zone's offset is a whole number of them), then each
        # quarter placed once: far fewer quarters than turns in a long history.
        slot = _LocalSlots(self.tz)
        for grids, per_quarter in (((turns_grid,), self._finished.successes_per_quarter()),
                                   ((turns_grid, fail_grid), self._finished.failures_per_quarter())):
            for quarter, n in per_quarter:
                day, hour = slot(quarter * QUARTER_S)
                for grid in grids:
                    grid[day][hour] += n
        return {"turns": turns_grid, "failures": fail_grid,
                "quietest": quietest_hours(fail_grid, turns_grid)}

    def episodes(self, gap: float = EPISODE_GAP) -> list[Episode]:
        """Runs of failed turns with no success between and no pause over `gap`; oldest first."""
        return list(self.iter_episodes(gap))

    def iter_episodes(self, gap: float = EPISODE_GAP) -> Iterator[Episode]:
        """episodes(), one at a time."""
        successes = self._finished.successes_between()
        run: list[Turn] = []
        last: _Key | None = None
        for entry in self._failures(in_place=True):
            key = _KEY(entry)
            if run and (key[0] - last[0] > gap or successes(last, key)):
                yield Episode(episode_id(run[0]), run, ongoing=False)
                run = []
            run.append(entry[3])
            last = key
        if run:
            yield Episode(episode_id(run[0]), run, ongoing=not successes(last, None))

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


def _with_causes(entries: Iterable[tuple], causes: Mapping[str, str]) -> Iterator[tuple]:
    for at, start, place, turn in entries:
        yield at, start, place, with_logged_cause(turn, causes.get(turn.turn_id))


SPILL_BYTES = 16 << 20  # what a fold's finished turns may weigh in memory, with somewhere to spill
_OK_BYTES, _FAILED_BYTES = 20, 500  # a success's time, start and variant; a failed turn, whole


class Finished:
    """The finished turns a fold keeps, in memory: of a success its time, start and variant
    (in arrays: 20 bytes); a failure whole, as (time, start, place, turn). A place orders
    turns with equal times and starts: a success's is its number in the order added; a
    failure's, the successes added before it less a half. sources/spill.py's SpilledTurns
    keeps the same on disk, answering the same methods."""

    def __init__(self) -> None:
        self.ok_at, self.ok_start, self.ok_code = array("d"), array("d"), array("I")
        self.failed: list[tuple[float, float, float, Turn]] = []

    @classmethod
    def restore(cls, ok_at: bytes, ok_start: bytes, ok_code: bytes, failed: list) -> "Finished":
        """From export()'s values; raises if they do not fit together."""
        kept = cls()
        kept.ok_at, kept.ok_start, kept.ok_code = array("d", ok_at), array("d", ok_start), array("I", ok_code)
        if not len(kept.ok_at) == len(kept.ok_start) == len(kept.ok_code):
            raise ValueError("finished turns of another shape")
        turns = turns_from_rows([row[3] for row in failed])
        kept.failed = [(at, start, place, turn) for (at, start, place, _), turn in zip(failed, turns)]
        return kept

    def export(self) -> tuple[bytes, bytes, bytes, list]:
        return (self.ok_at.tobytes(), self.ok_start.tobytes(), self.ok_code.tobytes(),
                [(at, start, place, turn_to_row(t)) for at, start, place, t in self.failed])

    @property
    def successes(self) -> int:
        return len(self.ok_at)

    @property
    def weight(self) -> int:
        """Bytes held, roughly."""
        return _OK_BYTES * len(self.ok_at) + _FAILED_BYTES * len(self.failed)

    def add(self, ok_at: array, ok_start: array, ok_code: array,
            failed: list[tuple[float, float, float, Turn]]) -> None:
        self.ok_at.extend(ok_at)
        self.ok_start.extend(ok_start)
        self.ok_code.extend(ok_code)
        self.failed += failed

    def failures(self) -> Iterator[tuple[float, float, float, Turn]]:
        """In the order added."""
        return iter(self.failed)

    def failures_in_place(self) -> Iterator[tuple[float, float, float, Turn]]:
        """By (time, start, place)."""
        return iter(sorted(self.failed, key=_KEY))  # stable, though places are never equal

    def successes_per_variant(self, lows: dict[str, float | None], high: float) -> dict[str, Counter]:
        """Successes per variant code in each window from lows[name] to `high` (no low:
        all of them)."""
        finite = [low for low in lows.values() if low is not None]
        # The successes of the widest window, looked for once; the narrower ones lie within.
        recent = [(at, code) for at, code in zip(self.ok_at, self.ok_code)
                  if min(finite) <= at <= high] if finite else []
        return {name: Counter(self.ok_code) if low is None else Counter([c for at, c in recent if low <= at])
                for name, low in lows.items()}

    def successes_per_quarter(self) -> Iterable[tuple[int, int]]:
        """(quarter hour since the epoch, successes in it), each quarter once."""
        return Counter(map(quarter_of, self.ok_at)).items()

    def failures_per_quarter(self) -> Iterable[tuple[int, int]]:
        return Counter([quarter_of(entry[0]) for entry in self.failed]).items()

    def successes_between(self) -> Callable[[_Key, _Key | None], bool]:
        """-> is there a success placed after `lo` and before `hi` (None: at all)?"""
        return _Successes(self.ok_at, self.ok_start, {entry[0] for entry in self.failed}).between


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


class _Tally:
    """Failed turns counted for a summary: how many, by class, the time and tokens lost."""

    __slots__ = ("failures", "classes", "ms", "tokens")

    def __init__(self) -> None:
        self.failures, self.classes, self.ms, self.tokens = 0, Counter(), 0, 0

    def add(self, t: Turn) -> None:
        self.failures += 1
        self.classes[t.error_class or "other"] += 1
        self.ms += t.duration_ms or 0
        self.tokens += t.tokens

    def merge(self, other: "_Tally | None") -> None:
        if other is not None:
            self.failures += other.failures
            self.classes.update(other.classes)
            self.ms += other.ms
            self.tokens += other.tokens

    def summary(self, decided: int) -> dict:
        """`decided`: the finished turns, successes and these failures."""
        return {
            "turns": decided,
            "failures": self.failures,
            "failure_rate": round(self.failures / decided, 4) if decided else None,
            "by_class": {c: self.classes[c] for c in ERROR_CLASSES if c in self.classes},
            "lost_minutes": round(self.ms / 60000, 1),
            "lost_tokens": self.tokens,
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
