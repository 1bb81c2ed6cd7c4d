"""The advice engine: one recommended action for the current failure episode, with evidence.

Pure: the episode, the user's whole loaded history, the status snapshot and the clock go in;
an `Advice` comes out. The rules are those of `docs/triage-rules.md` (sources: the two field
guides in `seeds/` and the maintainers' comments in `peers-and-users.md` §5). Every action
names the facts it rests on, in `evidence`.

Which class decides: the class of the *latest* failure, because that is what the user is
facing now; the capacity ladder then reads the whole episode (what was tried, whether all
failures were capacity).

Exit codes of `codexwatch advise` (fixed; scripts rely on them, never renumber):

    0  none                  no ongoing trouble: start the long run
    11 wait                  Codex incident, or server trouble: wait with back-off
    12 switch_model          capacity: switch model once
    13 new_thread            capacity: long thread, or switching did not help
    14 fast_off              capacity with Fast on: turn it off once (low confidence)
    15 stop_and_report       capacity persists after switch + new thread, no incident
    16 slow_down             rate limit (429): fewer, slower requests
    17 wait_for_reset        usage limit: wait for the plan's window to reset
    18 relogin               auth (401/403): `codex login`
    19 pick_available_model  model not found / not in the plan
    20 check_network         stream disconnected
    21 compact               context window exceeded: `/compact` or `/new`
    22 upgrade_codex         cause not recorded (old Codex), or remote compact failing

1 and 2 stay free for errors (2: bad arguments, no Codex home).

Model tiers (`model_tier`), by name because Codex writes no tier: a name containing `mini`,
`nano`, `light`, `lite`, `spark` or `luna` is light; else `pro`, `max` or `sol` is heavy;
`terra` and everything unknown is middle. Light wins (`sol-light` is light).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import NamedTuple

from codexwatch.core.incident_link import link_incident
from codexwatch.core.models import Episode, Incident, StatusSnapshot, Turn
from codexwatch.core.redact import redact, shorten_home
from codexwatch.core.stats import hour_of_week

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
    success_rate: float  # ok / (ok + failed), last 7 days
    turns: int  # ok + failed turns on this model, last 7 days
    command: str  # `codex -m MODEL`
    tier: str = "middle"


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

    @property
    def exit_code(self) -> int:
        return ACTION_EXIT_CODES[self.action]


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
    return "incident" if snapshot.codex_incidents_ongoing else "ok"


def local_time(ts: float, tz: tzinfo | None = None, fmt: str = "%H:%M") -> str:
    dt = datetime.fromtimestamp(ts, tz) if tz else datetime.fromtimestamp(ts).astimezone()
    return dt.strftime(fmt)


def span(seconds: float) -> str:
    """45 s, 12 min, 2 h 5 min."""
    seconds = max(0, int(round(seconds)))
    if seconds < 90:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _start(t: Turn) -> float:
    return t.started_at or t.at


# --- what the user already tried --------------------------------------------------------


def _window(episode: Episode, turns: list[Turn]) -> list[Turn]:
    """Turns from the episode's first failure up to and including the turn that ended it."""
    first = _start(episode.failures[0])
    out: list[Turn] = []
    for t in sorted(turns, key=_start):
        if _start(t) < first:
            continue
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
    session_start: dict[str, float] = {}
    for t in turns:
        session_start[t.session_id] = min(session_start.get(t.session_id, _start(t)), _start(t))
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


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _peak_split(grid: dict) -> tuple[int, int, int, int]:
    """(peak turns, peak failures, off-peak turns, off-peak failures) from hour-of-week grids."""
    cells = [(d, h) for d in range(7) for h in range(24)]
    peak = [(d, h) for d, h in cells if d < 5 and h in PEAK_HOURS]
    off = [c for c in cells if c not in peak]

    def total(name, which):
        return sum(grid[name][d][h] for d, h in which)

    return total("turns", peak), total("failures", peak), total("turns", off), total("failures", off)


def peak_hint(turns: list[Turn], now: float, tz: tzinfo | None) -> str | None:
    """A hint to run long jobs off-peak, when the user's own failures cluster in work hours.

    Read from the same hour-of-week figures the dashboard shows, over the last 7 days. The
    failure *rate* must be higher at peak too: someone who only works 9 to 5 fails at 9 to 5."""
    recent = [t for t in turns if now - HISTORY_WINDOW_S <= t.at <= now]
    grid = hour_of_week(recent, tz)
    peak, peak_fail, off, off_fail = _peak_split(grid)
    if peak_fail < PEAK_MIN_FAILURES or peak_fail / (peak_fail + off_fail) < PEAK_MIN_SHARE:
        return None
    if off and peak_fail / peak < PEAK_MIN_RATIO * (off_fail / off):
        return None
    compare = f"{off_fail} of {off} off-peak" if off else "you ran nothing off-peak to compare"
    quiet = [f"{_DAYS[d]} {h:02d}:00" for d, h in grid["quietest"] if not (d < 5 and h in PEAK_HOURS)]
    best = f" Your quietest hours: {', '.join(quiet[:3])}." if quiet else ""
    return (f"Peak hours: {peak_fail} of your {peak} turns on weekdays "
            f"{PEAK_HOURS.start:02d}–{PEAK_HOURS.stop:02d} h failed in the last 7 days "
            f"({compare}); run long jobs in the evening or at the weekend.{best}")


# --- evidence sentences ----------------------------------------------------------------


def _summary(episode: Episode, cls: str, tz: tzinfo | None) -> str:
    n = len(episode.failures)
    classes = episode.classes
    models = ", ".join(episode.models)
    mix = ", ".join(f"{k} {v}" for k, v in classes.items())
    what = (_plural(n, cls + " failure") if classes.get(cls) == n
            else f"{_plural(n, 'failure')} ({mix}; the latest {cls})")
    if n == 1:
        return f"{what} on {models} at {local_time(episode.first, tz)}."
    fmt = "%H:%M:%S" if episode.last - episode.first < 120 else "%H:%M"  # never "08:42–08:42"
    return (f"{what} on {models} in {span(episode.last - episode.first)} "
            f"({local_time(episode.first, tz, fmt)}–{local_time(episode.last, tz, fmt)}).")


def current_incident(episode: Episode, snapshot: StatusSnapshot | None) -> Incident | None:
    """The ongoing Codex incident that best matches the failures, else the first ongoing one."""
    ongoing = snapshot.codex_incidents_ongoing if snapshot is not None and snapshot.ok else []
    if not ongoing:
        return None
    link = link_incident(episode.failures, snapshot)
    return link.incident if link is not None and link.ongoing else ongoing[0]


def _status_sentence(snapshot: StatusSnapshot | None, episode: Episode | None,
                     tz: tzinfo | None) -> str:
    state = status_state(snapshot)
    if state == "unknown":
        why = snapshot.error if snapshot is not None and snapshot.error else "not checked"
        return f"Status page: unknown ({why}); not treated as all clear."
    inc = current_incident(episode, snapshot) if episode else None
    if inc is None:
        # No incident tied to the user's failures; one may still be going on.
        ongoing = snapshot.codex_incidents_ongoing if snapshot is not None else []
        if not ongoing:
            return "Status page: no ongoing Codex incident."
        inc = ongoing[0]
    since = f" since {local_time(inc.started_at, tz)}" if inc.started_at else ""
    return f"Status page: Codex incident “{inc.name}” ({inc.status}{since})."


def _tried_sentences(steps: list[TriedStep], fast_on: bool, tz: tzinfo | None) -> list[str]:
    done = {s.key: s for s in steps}
    out = [f"You {s.detail} at {local_time(s.at, tz)}; {s.result}." for s in steps]
    if "switch_model" not in done:
        out.append("You have not switched model yet.")
    if "new_thread" not in done:
        out.append("You have not opened a new thread yet.")
    if fast_on and "fast_off" not in done:
        out.append("Fast was on (service_tier priority) and is still on.")
    return out


# --- the decision ----------------------------------------------------------------------


@dataclass(slots=True)
class _Facts:
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

    @property
    def latest(self) -> Turn:
        return self.episode.failures[-1]

    @property
    def long_thread(self) -> bool:
        return self.thread_turns >= LONG_THREAD_TURNS or (self.context_share or 0) >= LONG_CONTEXT_SHARE


def _facts(episode, turns, snapshot, now, tz) -> _Facts:
    steps = tried_steps(episode, turns)
    count, share = thread_size(episode, turns)
    return _Facts(
        episode=episode, turns=turns, snapshot=snapshot, now=now, tz=tz,
        cls=episode.failures[-1].error_class or "other", status=status_state(snapshot),
        steps=steps, done={s.key for s in steps},
        fast_on=any(f.fast for f in episode.failures), thread_turns=count, context_share=share,
    )


@dataclass(slots=True)
class _Decision:
    action: str
    title: str
    evidence: list[str] = field(default_factory=list)
    confidence: str = "high"
    commands: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)


def _thread_sentence(f: _Facts) -> str:
    share = f" and last used {f.context_share:.0%} of its context window" if f.context_share else ""
    return f"This thread has {_plural(f.thread_turns, 'turn')}{share}."


def _wait_incident(f: _Facts) -> _Decision:
    ev = ["An ongoing Codex incident explains failures like these; retrying or switching now "
          "mostly meets the same outage. codexwatch tells you when it is resolved."]
    link = link_incident(f.episode.failures, f.snapshot)
    if link is not None and link.lead_minutes is not None and link.lead_minutes >= 1:
        ev.append(f"Your failures began {span(link.lead_minutes * 60)} before OpenAI posted it.")
    return _Decision("wait", "Wait: OpenAI is working on a Codex incident", ev)


def _switch_model(f: _Facts) -> _Decision:
    cands = candidates(f.episode, f.turns, f.now)
    if not cands:
        return _Decision("switch_model", "Switch model once",
                         ["No other model succeeded in your last 7 days: pick one from your "
                          "own `/model` list."], "medium", ["/model"])
    best = cands[0]
    ev = [f"{best.model} succeeded in {best.success_rate:.0%} of your {best.turns} turns on it "
          f"in the last 7 days; capacity is per model, so another model may have room."]
    if best.tier == "light":
        ev.append("Light models suit small fixes, not refactors.")
    cmds = ["/model", best.command, f'model = "{best.model}"  (in config.toml)']
    return _Decision("switch_model", f"Switch model once: try {best.model}", ev, "high", cmds, cands)


def _new_thread(f: _Facts) -> _Decision:
    why = (_thread_sentence(f) if f.long_thread
           else "Switching model did not help; a fresh thread sometimes does.")
    return _Decision("new_thread", "Start a new thread once", [why], "medium",
                     ["/new", "/compact", "/fork"])


def _capacity(f: _Facts) -> _Decision:
    if "remote compact task" in (f.latest.message or "").lower():
        return _Decision("upgrade_codex", "Upgrade Codex: remote compaction is failing",
                         ["“Error running remote compact task”: newer Codex compacts locally."],
                         commands=["npm install -g @openai/codex@latest"])
    if f.long_thread and "new_thread" not in f.done:
        return _new_thread(f)
    if "switch_model" not in f.done:
        return _switch_model(f)
    if "new_thread" not in f.done:
        return _new_thread(f)
    if f.fast_on and "fast_off" not in f.done:
        ev = ["Fast was on; one user's report says turning it off helped. It is an "
              "experiment: you can turn it back on any time.", _fast_rates(f.turns, f.now)]
        return _Decision("fast_off", "Turn Fast off once (low confidence)", ev, "low", ["/fast"])
    return _after_ladder(f)


def _fast_rates(turns: list[Turn], now: float) -> str:
    """The user's own failure rate with and without Fast: the only evidence that is theirs."""
    recent = [t for t in turns if t.outcome in ("ok", "failed") and now - HISTORY_WINDOW_S <= t.at <= now]
    on = [t for t in recent if t.fast is True]
    off = [t for t in recent if t.fast is False]
    without = (f"without Fast {sum(t.failed for t in off)} of {len(off)}" if off
               else "no turns without Fast to compare")
    return f"Last 7 days: with Fast {sum(t.failed for t in on)} of {len(on)} turns failed; {without}."


def _after_ladder(f: _Facts) -> _Decision:
    all_capacity = set(f.episode.classes) == {"capacity"}
    if all_capacity and f.status == "ok":
        return _Decision("stop_and_report", "Stop retrying and report it",
                         ["Only capacity failures, a model switch and a new thread both tried, "
                          "and no incident on the status page: more retries waste time."],
                         commands=["/feedback", "codexwatch report"])
    why = ("The status page could not be read: look at status.openai.com before reporting."
           if f.status == "unknown"
           else "The failures are not all capacity failures: keep backing off.")
    return _Decision("wait", "Wait and back off", [why], "medium")


def _rate_limit(f: _Facts) -> _Decision:
    return _Decision("slow_down", "Slow down: too many requests",
                     ["HTTP 429 retry limit: too many requests, a different branch from "
                      "capacity.",
                      "For scripts: 0.5–2 s random gaps, 2–3 at once, exponential back-off "
                      "kept apart from network retries."])


def _usage_limit(f: _Facts) -> _Decision:
    resets = f.latest.rate_limit_resets_at
    if resets and resets > f.now:
        when = (f"Your plan's window resets at {local_time(resets, f.tz)} "
                f"(in {span(resets - f.now)}).")
    elif resets:
        when = f"The reset time in the logs ({local_time(resets, f.tz)}) has passed: try again."
    else:
        when = "The logs do not say when the window resets: `/status` shows it."
    return _Decision("wait_for_reset", "Wait for your usage limit to reset",
                     ["Your plan's quota is used up; this is not capacity.", when],
                     commands=["/status", "/usage"])


def _model_unavailable(f: _Facts) -> _Decision:
    cands = candidates(f.episode, f.turns, f.now)
    ev = [f"{f.latest.model or 'The model'} is retired or not in your plan."]
    if cands:
        ev.append("Models that worked for you recently: " + ", ".join(c.model for c in cands[:3]) + ".")
    cmds = ["/model"] + ([cands[0].command] if cands else [])
    return _Decision("pick_available_model", "Pick a model from your own list", ev,
                     commands=cmds, candidates=cands)


def _auth(f: _Facts) -> _Decision:
    status = f" (HTTP {f.latest.http_status})" if f.latest.http_status else ""
    return _Decision("relogin", "Log in again",
                     [f"Authentication failed{status}: login expired or key wrong; not a "
                      "capacity problem."], commands=["codex login"])


def _server_error(f: _Facts) -> _Decision:
    return _Decision("wait", "Wait and retry later with back-off",
                     ["The service answered with an error (500 or a plain 503): it is failing, "
                      "not necessarily busy."])


def _stream(f: _Facts) -> _Decision:
    return _Decision("check_network", "Check your network",
                     ["The connection broke before the answer completed. Look for packet loss "
                      "above 1 % or latency twice your usual; retry sooner than for capacity."])


def _context_window(f: _Facts) -> _Decision:
    return _Decision("compact", "Compact or start a new thread",
                     ["The conversation no longer fits the model's context window. "
                      + _thread_sentence(f)], commands=["/compact", "/new"])


def _unrecorded(f: _Facts) -> _Decision:
    version = f.latest.cli_version or "this version"
    return _Decision("upgrade_codex", "Upgrade Codex to see why turns fail",
                     [f"Codex {version} does not write why a turn failed, so the cause is "
                      "unknown."], "medium", ["npm install -g @openai/codex@latest"])


def _other(f: _Facts) -> _Decision:
    raw = f.latest.codex_error_info
    return _Decision("wait", "Wait and retry later with back-off",
                     [f"A failure codexwatch has no rule for (codex_error_info {raw!r}: "
                      f"“{redact(f.latest.message)[:160]}”)."], "low")


_BY_CLASS = {
    "capacity": _capacity,
    "rate_limit": _rate_limit,
    "usage_limit": _usage_limit,
    "model_unavailable": _model_unavailable,
    "auth": _auth,
    "server_error": _server_error,
    "stream_disconnected": _stream,
    "context_window": _context_window,
    "unrecorded": _unrecorded,
}


def _decide(f: _Facts) -> _Decision:
    if f.status == "incident" and f.cls in INCIDENT_CLASSES:
        return _wait_incident(f)
    return _BY_CLASS.get(f.cls, _other)(f)


# --- side advice -----------------------------------------------------------------------


def backoff_for(episode: Episode, now: float) -> Backoff | None:
    """The next rung of 30 s / 2 min / 10 min / 30 min; None once failures span 30 minutes.

    Measured between failures, not up to `now`: a user who stopped retrying has not been
    failing meanwhile, and may try again once the current rung has passed."""
    if episode.last - episode.first > WIDE_OUTAGE_S:
        return None
    step = min(len(episode.failures), len(BACKOFF_LADDER_S))
    return Backoff(episode.last + BACKOFF_LADDER_S[step - 1], step)


def _backoff_line(f: _Facts, b: Backoff | None) -> str:
    if b is None:
        return (f"Failing for {span(f.episode.last - f.episode.first)}, past 30 minutes: treat it as a "
                "wide outage, stop retrying and do something else.")
    wait = span(b.wait_s)
    if b.next_retry_at > f.now:
        return (f"Back off: wait {wait} after failure {len(f.episode.failures)}; next try at "
                f"{local_time(b.next_retry_at, f.tz, '%H:%M:%S')} (in {span(b.next_retry_at - f.now)}).")
    nxt = span(BACKOFF_LADDER_S[min(b.step, len(BACKOFF_LADDER_S) - 1)])
    return f"Back off: the {wait} wait is over; one try now, then wait {nxt} if it fails."


def _work_line(f: _Facts) -> str | None:
    worked = [t for t in f.episode.failures if t.shape == "interrupted" or t.tool_calls > 0]
    if not worked:
        return None
    t = worked[-1]
    where = shorten_home(t.cwd) or "the session's working directory"
    return (f"A failed turn did work before failing ({_plural(t.tool_calls, 'tool call')}, "
            f"session {t.session_id[:8]}): run `git status --short` and `git diff --stat` in "
            f"{where} before re-running.")


def _relay_line(f: _Facts) -> str | None:
    providers = sorted({t.provider for t in f.episode.failures if t.provider and t.provider != "openai"})
    if not providers:
        return None
    return (f"Provider {', '.join(providers)} is a custom provider or relay: the message may come "
            "from the relay, not OpenAI. Check the relay's logs and compare with the official "
            "route; the status page may not apply.")


def _side(f: _Facts, b: Backoff | None) -> list[str]:
    out = []
    if f.cls in BACKOFF_CLASSES:
        out.append(_backoff_line(f, b))
    out += [line for line in (_work_line(f), peak_hint(f.turns, f.now, f.tz)) if line]
    n = concurrent_sessions(f.episode, f.turns, f.now)
    if n >= CONCURRENT_SESSIONS:
        out.append(f"{n} sessions were running when the failures began: run fewer tasks in "
                   "parallel until it recovers.")
    if relay := _relay_line(f):
        out.append(relay)
    if f.cls in NOT_ACCOUNT_CLASSES:
        out.append("Does not help: changing password, logging out, switching VPN or exit IP, "
                   "deleting ~/.codex, reinstalling. This is not your account.")
    return out


def _open_steps(f: _Facts, action: str) -> list[str]:
    if f.cls != "capacity":
        return [] if action == "none" else [action]
    ladder = ["switch_model", "new_thread"] + (["fast_off"] if f.fast_on else [])
    return [s for s in ladder if s not in f.done] + ["stop_and_report"]


# --- entry point -----------------------------------------------------------------------


def _quiet(snapshot: StatusSnapshot | None, episode: Episode | None, tz) -> Advice:
    ev = ["No failed turn is waiting for an answer: the latest turns succeeded."]
    if episode is not None:
        ev = [f"The last failure episode ended; its last failure was at "
              f"{local_time(episode.last, tz)}."]
    ev.append(_status_sentence(snapshot, episode, tz))
    title = "No ongoing trouble"
    if snapshot is not None and snapshot.ok and snapshot.codex_incidents_ongoing:
        title = "Your turns work; OpenAI reports a Codex incident"
    return Advice("none", title, ev, status=status_state(snapshot), episode=episode)


def advise(episode: Episode | None, turns: list[Turn], snapshot: StatusSnapshot | None,
           now: float, tz: tzinfo | None = None) -> Advice:
    """One recommended action for `episode` (the current one, or None) at time `now`."""
    if episode is None or not episode.failures or not episode.ongoing:
        return _quiet(snapshot, episode, tz)
    f = _facts(episode, turns, snapshot, now, tz)
    d = _decide(f)
    b = backoff_for(episode, now) if f.cls in BACKOFF_CLASSES else None
    evidence = [_summary(episode, f.cls, tz), _status_sentence(snapshot, episode, tz)]
    if f.cls == "capacity":
        evidence.append("Codex had already retried before showing the error; pressing Enter "
                        "again at once mostly meets the same wave.")
        evidence += _tried_sentences(f.steps, f.fast_on, tz)
        if any((t.message or "").startswith("Reviewer model") for t in episode.failures):
            evidence.append("“Reviewer model is at capacity”: the auto-review step failed; "
                            "say so if you report it.")
    evidence += d.evidence
    return Advice(
        action=d.action, title=d.title, evidence=evidence, side=_side(f, b),
        tried=[s.key for s in f.steps], open_steps=_open_steps(f, d.action),
        candidates=d.candidates, confidence=_confidence(d, f), commands=d.commands,
        backoff=b, status=f.status, episode=episode, tried_steps=f.steps, error_class=f.cls,
    )


def _confidence(d: _Decision, f: _Facts) -> str:
    """Thin evidence lowers it: Fast off (one report), an unreadable status page."""
    if d.confidence == "high" and f.status == "unknown" and f.cls in INCIDENT_CLASSES:
        return "medium"
    return d.confidence
