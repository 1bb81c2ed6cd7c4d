"""The facts the advice rests on, drawn from the turns, the status page and the clock:
what the user already tried, how their models did, how long the thread is, how many sessions
ran at once; and the vocabulary of the advice (actions, exit codes, `Advice`).

Pure. The rules that read these are in `advice.py`, the sentences in `advice_wording.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any, NamedTuple

from codexwatch.core import context as ctx
from codexwatch.core.catalogue import Catalogue
from codexwatch.core.incident_link import link_incident
from codexwatch.core.usage import newest
from codexwatch.core.models import Episode, Incident, StatusSnapshot, Turn

ACTIONS = (
    "none",
    "wait",
    "switch_model",
    "new_thread",
    "fast_off",
    "stop_and_report",
    "slow_down",
    "wait_for_reset",
    "relogin",
    "pick_available_model",
    "check_network",
    "compact",
    "upgrade_codex",
)
ACTION_EXIT_CODES = {a: (0 if a == "none" else 10 + i) for i, a in enumerate(ACTIONS)}

TRIED_KEYS = ("switch_model", "new_thread", "fast_off")

BACKOFF_LADDER_S = (30, 120, 600, 1800)  # [000 §2.2, §5.2]
WIDE_OUTAGE_S = 1800  # past this, stop retrying: it is a wide outage [000 §5.2]
HISTORY_WINDOW_S = 7 * 86400  # "per-model success rate over the last 7 days"
LONG_THREAD_TURNS = 40  # "many turns": a long interactive thread, not a short task
LONG_CONTEXT_SHARE = 0.6  # "most of the context window used"
CONCURRENT_SESSIONS = 3  # "several sessions were running at once"
CONCURRENT_WINDOW_S = 300  # a session counts as running if it had a turn in these 5 min
PEAK_HOURS = range(9, 18)  # weekday working hours, local time [000 §3.1: 10-16 worst]
PEAK_MIN_FAILURES = 3
PEAK_MIN_SHARE = 0.6
PEAK_MIN_RATIO = 1.5  # peak failure rate against off-peak rate

# Classes where an ongoing Codex incident is the likeliest cause, so waiting comes first.
INCIDENT_CLASSES = {"capacity", "server_error", "stream_disconnected", "other", "unrecorded"}
# Classes where back-off applies (retrying later can work without the user changing anything).
BACKOFF_CLASSES = INCIDENT_CLASSES | {"rate_limit"}
# Classes that are "not the account, not the quota": say what does not help [003].
NOT_ACCOUNT_CLASSES = {"capacity", "server_error"}

_LIGHT = re.compile(r"mini|nano|light|lite|spark|luna", re.I)
_HEAVY = re.compile(r"pro|max|sol", re.I)
TIERS = ("heavy", "middle", "light")


@dataclass(slots=True)
class Candidate:
    model: str
    success_rate: float | None  # ok / (ok + failed), last 7 days; None: no such turns
    turns: int  # ok + failed turns on this model, last 7 days
    command: str  # `codex -m MODEL`
    tier: str = "middle"
    source: str = "history"  # "catalogue": from Codex's own model list; "history": the user's turns


@dataclass(slots=True)
class TriedStep:
    """A step the logs show the user already took during the episode."""

    key: str  # switch_model | new_thread | fast_off
    at: float
    detail: str  # "switched from gpt-6-sol to gpt-6-terra"
    result: str  # "still failing" | "the next turn succeeded" | "no turn since"


class Backoff(NamedTuple):
    next_retry_at: float
    step: int  # 1-based position on BACKOFF_LADDER_S

    @property
    def wait_s(self) -> int:
        return BACKOFF_LADDER_S[self.step - 1]


@dataclass(slots=True)
class Advice:
    action: str
    title: str
    evidence: list[str] = field(default_factory=list)
    side: list[str] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)
    open_steps: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    confidence: str = "high"
    commands: list[str] = field(default_factory=list)
    backoff: Backoff | None = None
    status: str = "unknown"  # ok | incident | unknown
    episode: Episode | None = None
    tried_steps: list[TriedStep] = field(default_factory=list)
    error_class: str | None = None  # the class that decided
    usage: tuple | None = None  # the newest reading of the plan's windows (core/usage.py)
    usage_session: str | None = None

    @property
    def exit_code(self) -> int:
        return ACTION_EXIT_CODES[self.action]

    @property
    def side_beside_countdown(self) -> list[str]:
        """The side advice where the back-off is shown as a live countdown (the dashboard):
        without the back-off line, which comes first whenever there is a back-off."""
        return self.side[1:] if self.backoff is not None else self.side



# --- small facts -----------------------------------------------------------------------


def model_tier(model: str | None) -> str:
    """heavy | middle | light, from the name (see the module docstring)."""
    if not model:
        return "middle"
    if _LIGHT.search(model):
        return "light"
    if _HEAVY.search(model):
        return "heavy"
    return "middle"


def status_state(snapshot: StatusSnapshot | None) -> str:
    """ok | incident | unknown. An unreadable page is unknown, never all clear."""
    if snapshot is None or not snapshot.ok:
        return "unknown"
    if snapshot.incidents_error:  # components without incidents: an incident may be open
        return "unknown"
    return "incident" if snapshot.codex_incidents_ongoing else "ok"


def _start(t: Turn) -> float:
    return t.started_at or t.at


# --- what the user already tried --------------------------------------------------------


def _window(episode: Episode, turns: list[Turn]) -> list[Turn]:
    """Turns from the episode's first failure up to and including the turn that ended it."""
    first = _start(episode.failures[0])
    out: list[Turn] = []
    # Those before the episode left out first: sorting a long history's every turn, at
    # every view, cost more than the rest of the advice.
    for t in sorted([t for t in turns if _start(t) >= first], key=_start):
        out.append(t)
        if t.outcome == "ok" and t.at > episode.last:
            break
    return out


def _result(at: float, episode: Episode, window: list[Turn]) -> str:
    if any(f.at > at for f in episode.failures):  # a failure ended after the step began
        return "still failing"
    if any(t.outcome == "ok" and t.at >= at for t in window):
        return "the next turn succeeded"
    return "no turn since"


def _detect_switch(episode: Episode, window: list[Turn]) -> tuple[float, str] | None:
    first_model = episode.failures[0].model
    for t in window:
        if t.model and first_model and t.model != first_model:
            return _start(t), f"switched from {first_model} to {t.model}"
    return None


def _detect_new_thread(episode: Episode, window: list[Turn], turns: list[Turn]) -> tuple[float, str] | None:
    first = _start(episode.failures[0])
    session_start = dict.fromkeys({t.session_id for t in window}, float("inf"))  # the window's sessions
    for t in turns:
        if t.session_id in session_start:
            session_start[t.session_id] = min(session_start[t.session_id], _start(t))
    for t in window:
        if t.session_id != episode.failures[0].session_id and session_start[t.session_id] > first:
            return _start(t), f"opened a new thread ({t.session_id[:8]})"
    return None


def _detect_fast_off(episode: Episode, window: list[Turn]) -> tuple[float, str] | None:
    if not any(f.fast for f in episode.failures):
        return None
    first_fast = min(_start(f) for f in episode.failures if f.fast)
    for t in window:
        if t.fast is False and _start(t) > first_fast:
            return _start(t), "turned Fast off"
    return None


def tried_steps(episode: Episode | None, turns: list[Turn]) -> list[TriedStep]:
    """Model switch, new thread and Fast off, as the logs show them during the episode."""
    if episode is None or not episode.failures:
        return []
    window = _window(episode, turns)
    found = {
        "switch_model": _detect_switch(episode, window),
        "new_thread": _detect_new_thread(episode, window, turns),
        "fast_off": _detect_fast_off(episode, window),
    }
    return [
        TriedStep(key, at, detail, _result(at, episode, window))
        for key, hit in found.items()
        if hit
        for at, detail in [hit]
    ]


# --- history-based facts ---------------------------------------------------------------


def model_success(turns: list[Turn], now: float) -> dict[str, tuple[int, int]]:
    """model -> (ok, failed) over the last 7 days; aborted and incomplete turns say nothing."""
    out: dict[str, tuple[int, int]] = {}
    for t in turns:
        if not t.model or t.outcome not in ("ok", "failed") or not now - HISTORY_WINDOW_S <= t.at <= now:
            continue
        ok, failed = out.get(t.model, (0, 0))
        out[t.model] = (ok + (t.outcome == "ok"), failed + (t.outcome == "failed"))
    return out


def _tier_preference(failing_tier: str) -> list[str]:
    """One tier down first, then the same tier, then the rest (lightest before heavier)."""
    i = TIERS.index(failing_tier)
    order = [TIERS[i + 1]] if i + 1 < len(TIERS) else []
    order.append(failing_tier)
    order += [t for t in reversed(TIERS) if t not in order]
    return order


def candidates(episode: Episode, turns: list[Turn], now: float) -> list[Candidate]:
    """Models the user ran successfully in the last 7 days, that did not fail in this episode."""
    failing = episode.failures[-1].model
    preference = _tier_preference(model_tier(failing))
    out = []
    for model, (ok, failed) in model_success(turns, now).items():
        if ok == 0 or model in episode.models:
            continue
        out.append(Candidate(model, ok / (ok + failed), ok + failed, f"codex -m {model}",
                             model_tier(model)))
    out.sort(key=lambda c: (preference.index(c.tier), -c.success_rate, -c.turns, c.model))
    return out


def catalogue_candidates(episode: Episode, turns: list[Turn], now: float,
                         catalogue: Catalogue | None) -> list[Candidate]:
    """With Codex's own model list: its visible models in its own order, the one a step down
    from the failing model (the next in that order) first, each with the user's own record
    on it when there is one; then the models of the user's history the list lacks (by
    `candidates`' order). Without a list (or one with no visible model): `candidates`."""
    listed = catalogue.visible if catalogue is not None else []
    if not listed:
        return candidates(episode, turns, now)
    failing = episode.failures[-1].model
    slugs = [m.slug for m in listed]
    if failing in slugs and slugs.index(failing) + 1 < len(slugs):
        step_down = listed[slugs.index(failing) + 1]
        listed = [step_down] + [m for m in listed if m is not step_down]
    record = model_success(turns, now)
    out = []
    for m in listed:
        if m.slug in episode.models:
            continue
        ok, failed = record.get(m.slug, (0, 0))
        out.append(Candidate(m.slug, ok / (ok + failed) if ok + failed else None, ok + failed,
                             f"codex -m {m.slug}", model_tier(m.slug), "catalogue"))
    out += [c for c in candidates(episode, turns, now) if catalogue.get(c.model) is None]
    return out


def thread_size(episode: Episode, turns: list[Turn]) -> tuple[int, float | None]:
    """(turns in the latest failure's session, share of its context window last used)."""
    session = episode.failures[-1].session_id
    mine = [t for t in turns if t.session_id == session] or episode.failures[-1:]
    count = max(len(mine), max(t.turn_index for t in mine) + 1)
    share = None
    for t in sorted(mine, key=_start):
        if t.context_used and t.context_window:
            share = t.context_used / t.context_window
    return count, share


def concurrent_sessions(episode: Episode, turns: list[Turn], now: float) -> int:
    """Sessions with a turn running in the 5 minutes up to the episode's first failure."""
    t0 = _start(episode.failures[0])
    running = set()
    for t in turns:
        end = t.ended_at or (now if t.live else _start(t))
        if _start(t) <= t0 and end >= t0 - CONCURRENT_WINDOW_S:
            running.add(t.session_id)
    return len(running)


def peak_split(grid: dict) -> tuple[int, int, int, int]:
    """(peak turns, peak failures, off-peak turns, off-peak failures) from hour-of-week grids."""
    cells = [(d, h) for d in range(7) for h in range(24)]
    peak = [(d, h) for d, h in cells if d < 5 and h in PEAK_HOURS]
    off = [c for c in cells if c not in peak]

    def total(name, which):
        return sum(grid[name][d][h] for d, h in which)

    return total("turns", peak), total("failures", peak), total("turns", off), total("failures", off)




def backoff_for(episode: Episode, now: float) -> Backoff | None:
    """The next rung of 30 s / 2 min / 10 min / 30 min; None once failures span 30 minutes.

    Measured between failures, not up to `now`: a user who stopped retrying has not been
    failing meanwhile, and may try again once the current rung has passed."""
    if episode.last - episode.first > WIDE_OUTAGE_S:
        return None
    step = min(len(episode.failures), len(BACKOFF_LADDER_S))
    return Backoff(episode.last + BACKOFF_LADDER_S[step - 1], step)



def current_incident(episode: Episode, snapshot: StatusSnapshot | None) -> Incident | None:
    """The ongoing Codex incident that best matches the failures, else the first ongoing one."""
    ongoing = snapshot.codex_incidents_ongoing if snapshot is not None and snapshot.ok else []
    if not ongoing:
        return None
    link = link_incident(episode.failures, snapshot)
    return link.incident if link is not None and link.ongoing else ongoing[0]


# --- the facts of one episode ---------------------------------------------------------


@dataclass(slots=True)
class Facts:
    episode: Episode
    turns: list[Turn]
    snapshot: StatusSnapshot | None
    now: float
    tz: tzinfo | None
    cls: str
    status: str
    steps: list[TriedStep]
    done: set[str]
    fast_on: bool
    thread_turns: int
    context_share: float | None
    catalogue: Catalogue | None = None
    usage: tuple | None = None  # the newest reading of the plan's windows (core/usage.py)
    usage_session: str | None = None
    threshold: dict | None = None  # the user's own context threshold (core/context.py)
    week: dict | None = None  # the hour-of-week grids of the last 7 days, if the caller has them

    @property
    def latest(self) -> Turn:
        return self.episode.failures[-1]

    @property
    def above_threshold(self) -> bool:
        """The thread's context is past the share from which the user's turns fail more."""
        return (self.threshold is not None and self.context_share is not None
                and 100 * self.context_share >= self.threshold["from_percent"])

    @property
    def long_thread(self) -> bool:
        return (self.thread_turns >= LONG_THREAD_TURNS or (self.context_share or 0) >= LONG_CONTEXT_SHARE
                or self.above_threshold)


def context_threshold(turns: list[Turn]) -> dict | None:
    """The user's own context threshold over these turns (core/context.py), or None."""
    return ctx.threshold(*ctx.tally(turns))


# `facts`' threshold when its caller has none: found from the turns.
FROM_TURNS: Any = object()


def facts(episode, turns, snapshot, now, tz, catalogue: Catalogue | None = None,
          threshold: dict | None = FROM_TURNS, week: dict | None = None) -> Facts:
    steps = tried_steps(episode, turns)
    count, share = thread_size(episode, turns)
    reading, session = newest(turns)
    return Facts(
        episode=episode, turns=turns, snapshot=snapshot, now=now, tz=tz,
        cls=episode.failures[-1].error_class or "other", status=status_state(snapshot),
        steps=steps, done={s.key for s in steps},
        fast_on=any(f.fast for f in episode.failures), thread_turns=count, context_share=share,
        catalogue=catalogue, usage=reading, usage_session=session,
        threshold=context_threshold(turns) if threshold is FROM_TURNS else threshold, week=week,
    )

