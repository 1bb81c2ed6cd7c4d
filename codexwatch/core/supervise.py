"""The retry policy of `codexwatch run`: what to do after one `codex exec` attempt.

Pure: what the attempt left (its turn read from the rollout, else what Codex printed), the
task's attempts so far, the policy, whether a Codex incident is ongoing, the clock and a
random generator (the jitter) go in; a `Step` comes out. The process side
(`codexwatch/commands/run.py`) spawns Codex, waits and records.

The rules (issue 12; the field guide in seeds/ 000 §2.2, §3.3, §4.3, §5.3 and 003):

| class | next step |
|---|---|
| capacity | back off on the schedule, one step down the model list (only wait during a Codex incident) |
| server_error, other | back off on the schedule |
| stream_disconnected | same model, quick retries (5 s, 15 s, 30 s) |
| rate_limit | back off; in `--tasks` mode one job at a time for a while |
| usage_limit | stop (17), or wait for a known reset within `--wait-for-reset` |
| auth | stop (18) |
| model_unavailable | next model in the list, else stop (19) |
| context_window | stop (21) |

A turn that did work (`interrupted`) is resumed by thread id (`codex exec resume <id>`), and so
is every later attempt on that thread; a rejected turn on a fresh thread is run again. Once
`give_up_after` has passed since the task's first failure, it stops: 11 (`wait`) while a
Codex incident is ongoing, else 15 (`stop_and_report`). Waits are cut to end at that moment,
so the last try happens then; a wait for a usage limit's reset is the user's choice and is
not cut.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from codexwatch.core.advice import ACTION_EXIT_CODES, BACKOFF_LADDER_S, WIDE_OUTAGE_S, span
from codexwatch.core.classify import classify
from codexwatch.core.models import Turn
from codexwatch.core.times import iso_utc

QUICK_RETRY_S = (5.0, 15.0, 30.0)  # a broken stream: retry sooner than capacity [000 §4.1]
JITTER = 0.2  # each back-off wait is moved by up to ±20 %
START_GAP_S = (0.5, 2.0)  # between two starts in --tasks mode [000 §3.3]
RESET_MARGIN_S = 5.0  # after a usage limit's reset, before trying again
RESUME_PROMPT = "Continue where you stopped: your previous turn was cut off by an error."

BACKOFF_CLASSES = {"capacity", "server_error", "rate_limit", "other", "unrecorded"}
STOP_CLASSES = {"auth": "relogin", "context_window": "compact", "usage_limit": "wait_for_reset",
                "model_unavailable": "pick_available_model"}


@dataclass(frozen=True)
class Policy:
    models: tuple[str, ...] = ()  # walked down on capacity; empty: Codex's configured model only
    backoff: tuple[float, ...] = tuple(float(s) for s in BACKOFF_LADDER_S)
    quick: tuple[float, ...] = QUICK_RETRY_S
    give_up_after: float = float(WIDE_OUTAGE_S)
    wait_for_reset: float | None = None  # the longest wait for a usage limit's reset; None: stop
    jitter: float = JITTER


@dataclass(frozen=True)
class Failure:
    """Why one attempt's turn failed."""

    error_class: str
    at: float  # when it ended
    http_status: int | None = None
    shape: str | None = None  # rejected | interrupted | None (not known)
    session_id: str | None = None
    message: str | None = None
    resets_at: float | None = None  # a usage limit's reset, when known


@dataclass
class Attempt:
    """One `codex exec` run of a task, as the summary JSON writes it."""

    n: int
    model: str | None
    started_at: float
    wait_s: float = 0.0  # waited before this attempt started
    resumed: bool = False
    session_id: str | None = None
    ended_at: float | None = None
    outcome: str | None = None  # ok | failed | aborted | error (codex failed, not a turn)
    error_class: str | None = None
    http_status: int | None = None
    shape: str | None = None
    action: str | None = None  # what was decided after it failed

    def to_json(self) -> dict:
        return {
            "n": self.n, "model": self.model, "session_id": self.session_id,
            "started_at": iso_utc(self.started_at), "ended_at": iso_utc(self.ended_at),
            "outcome": "failed" if self.outcome == "error" else self.outcome,
            "error_class": self.error_class, "http_status": self.http_status,
            "shape": self.shape, "action": self.action, "wait_s": round(self.wait_s, 3),
            "resumed": self.resumed,
        }


@dataclass(frozen=True)
class Step:
    """What to do next: `retry` (after `wait_s`, with `model`, resuming `resume` or afresh)
    or `stop` with `exit_code`."""

    kind: str  # retry | stop
    action: str  # the advice action it follows (ACTION_EXIT_CODES)
    exit_code: int
    reason: str  # one sentence for codexwatch's stderr line
    wait_s: float = 0.0
    model: str | None = None
    resume: str | None = None  # the thread to resume; None: a fresh run
    serial_s: float = 0.0  # --tasks mode: one job at a time for this long

    @property
    def retry(self) -> bool:
        return self.kind == "retry"


# --- what an attempt left ----------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """ok | failed (a failed turn: `failure`) | error (Codex failed before or outside a turn:
    its exit status is passed through) | aborted (interrupted by a signal)."""

    kind: str
    failure: Failure | None = None
    exit_status: int = 0


def judge(exit_status: int, thread_id: str | None, turn: Turn | None, printed: str | None,
          worked: bool, ended_at: float, now_tz: tzinfo | None = None) -> Outcome:
    """The outcome of one attempt.

    `turn`: the last turn of the rollout the attempt wrote (None when none was found);
    `printed`: the message Codex printed for a failed turn (`turn.failed` under `--json`, else
    stderr's `ERROR:` line); `worked`: the attempt showed work on stdout (`--json` items).

    Success is a completed turn, never the exit status alone (0.40 exited 0 on a usage
    limit; 0.171 leaves `-o` files empty). Codex 0.100–0.140 record no cause: the printed
    message is classified then."""
    if turn is not None and turn.outcome == "ok":
        return Outcome("ok")
    failed_turn = turn is not None and turn.outcome == "failed"
    if not failed_turn and (thread_id is None or printed is None):
        if exit_status == 0:
            return Outcome("ok")  # no rollout to read (--ephemeral) and nothing failed
        return Outcome("error", exit_status=exit_status)
    if failed_turn and turn.error_class not in (None, "unrecorded"):
        cls, status, message = turn.error_class, turn.http_status, turn.message
    else:
        message = printed or (turn.message if turn is not None else None)
        cls, status, _ = classify(None, message)
        if cls == "other" and not message:
            cls = "unrecorded"
    shape = turn.shape if failed_turn else ("interrupted" if worked else None)
    if failed_turn and worked and shape == "rejected":
        shape = "interrupted"
    resets = turn.rate_limit_resets_at if turn is not None else None
    if cls == "usage_limit" and message:
        resets = reset_from_message(message, ended_at, now_tz) or resets
    return Outcome("failed", Failure(cls, ended_at, status, shape, thread_id or
                                     (turn.session_id if turn is not None else None),
                                     message, resets), exit_status)


_MONTHS = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_RESET = re.compile(
    r"try again at\s+(?:([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\s+)?"
    r"(\d{1,2}):(\d{2})\s*([AaPp][Mm])?")


def reset_from_message(message: str, now: float, tz: tzinfo | None = None) -> float | None:
    """A usage limit's reset from Codex's message, which prints it in local time: "try again
    at 4:35 AM" (the next such moment) or "try again at Dec 2nd, 2026 4:13 AM"."""
    match = _RESET.search(message or "")
    if not match:
        return None
    mon, day, year, hour, minute, half = match.groups()
    h, m = int(hour), int(minute)
    if half:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if half.lower() == "pm" else 0)
    if h > 23 or m > 59:
        return None
    base = datetime.fromtimestamp(now, tz) if tz is not None else datetime.fromtimestamp(now).astimezone()
    try:
        if mon:
            if mon.lower() not in _MONTHS:
                return None
            when = base.replace(year=int(year), month=_MONTHS[mon.lower()], day=int(day),
                                hour=h, minute=m, second=0, microsecond=0)
        else:
            when = base.replace(hour=h, minute=m, second=0, microsecond=0)
            if when.timestamp() < now - 60:
                when += timedelta(days=1)
    except ValueError:
        return None
    return when.timestamp()


# --- the policy ----------------------------------------------------------------------------


def _jittered(seconds: float, policy: Policy, rng: random.Random) -> float:
    return max(0.0, seconds * (1 + rng.uniform(-policy.jitter, policy.jitter)))


def _rung(ladder: tuple[float, ...], n: int) -> float:
    return ladder[min(max(n, 1), len(ladder)) - 1] if ladder else 0.0


def next_model(models: tuple[str, ...], current: str | None) -> str | None:
    """One step down the list from `current`; None at its end (or with no list)."""
    if not models:
        return None
    if current not in models:
        return models[0] if current is None else None
    i = models.index(current)
    return models[i + 1] if i + 1 < len(models) else None


def work_thread(attempts: list[Attempt]) -> str | None:
    """The thread that holds work done: the latest attempt that resumed one or did work."""
    for a in reversed(attempts):
        if a.session_id and (a.resumed or a.shape == "interrupted"):
            return a.session_id
    return None


def _stop(action: str, reason: str) -> Step:
    return Step("stop", action, ACTION_EXIT_CODES[action], reason)


def decide(failure: Failure, attempts: list[Attempt], policy: Policy, incident: bool,
           first_failure_at: float, now: float, rng: random.Random,
           model: str | None) -> Step:
    """The next step after `failure`, the failure of `attempts[-1]` (which ran `model`).

    `attempts`: this task's attempts so far, the failed one last; `incident`: an ongoing
    Codex incident on the status page (False when unknown)."""
    cls = failure.error_class
    failed = [a for a in attempts if a.outcome == "failed"]
    resume = work_thread(attempts)
    if failure.shape == "interrupted" and failure.session_id:
        resume = failure.session_id
    deadline = first_failure_at + policy.give_up_after

    if cls in ("auth", "context_window"):
        what = {"auth": "authentication failed: retrying cannot help; run `codex login`",
                "context_window": "the conversation no longer fits the context window"}[cls]
        return _stop(STOP_CLASSES[cls], what)
    if cls == "model_unavailable":
        nxt = next_model(policy.models, model)
        if nxt is None:
            return _stop("pick_available_model",
                         f"model {model or '(configured)'} is not available and no model is left in --models")
        return Step("retry", "pick_available_model", ACTION_EXIT_CODES["pick_available_model"],
                    f"model {model} is not available: trying {nxt}", 0.0, nxt, resume)
    if cls == "usage_limit":
        at = failure.resets_at
        if policy.wait_for_reset is None:
            return _stop("wait_for_reset", "usage limit reached (--wait-for-reset not given)")
        if at is None:
            return _stop("wait_for_reset", "usage limit reached and its reset is not known")
        if at - now > policy.wait_for_reset:
            return _stop("wait_for_reset", f"usage limit resets in {span(at - now)}, "
                                           f"past --wait-for-reset {span(policy.wait_for_reset)}")
        wait = max(0.0, at - now) + RESET_MARGIN_S * (1 + rng.random())
        return Step("retry", "wait_for_reset", ACTION_EXIT_CODES["wait_for_reset"],
                    f"usage limit: waiting for its reset at {iso_utc(at, 'seconds')}",
                    wait, model, resume)

    if now >= deadline:
        action = "wait" if incident else "stop_and_report"
        why = ("an ongoing Codex incident" if incident else "no Codex incident on the status page")
        return _stop(action, f"failing for {span(now - first_failure_at)}, past --give-up-after "
                             f"{span(policy.give_up_after)} ({why}): giving up")

    serial = 0.0
    if cls == "stream_disconnected":
        n = sum(1 for a in failed if a.error_class == "stream_disconnected")
        wait, action, nxt = _rung(policy.quick, n), "check_network", model
        reason = "the stream broke: quick retry, same model"
    else:
        n = sum(1 for a in failed if a.error_class in BACKOFF_CLASSES)
        wait, nxt = _rung(policy.backoff, n), model
        if cls == "capacity":
            if incident:
                action, reason = "wait", "capacity during a Codex incident: waiting, no model switch"
            else:
                down = next_model(policy.models, model)
                if down is not None:
                    action, nxt = "switch_model", down
                    reason = f"capacity: switching from {model or '(configured)'} to {down}"
                else:
                    action = "wait"
                    reason = "capacity: no other model left in --models, waiting"
        elif cls == "rate_limit":
            action, reason = "slow_down", "rate limited (429): backing off"
        else:
            action = "wait"
            reason = f"{cls.replace('_', ' ')}: backing off"
        wait = _jittered(wait, policy, rng)
        if cls == "rate_limit":
            serial = 2 * wait
    wait = min(wait, max(0.0, deadline - now))
    return Step("retry", action, ACTION_EXIT_CODES[action], reason, wait, nxt, resume, serial)


def start_gap(rng: random.Random) -> float:
    """The pause between two starts in --tasks mode."""
    return rng.uniform(*START_GAP_S)


# --- the summary ---------------------------------------------------------------------------


@dataclass
class TaskRecord:
    index: int  # 1-based line of the tasks file (non-empty lines counted)
    attempts: list[Attempt] = field(default_factory=list)
    outcome: str | None = None  # ok | failed | aborted; None while running
    exit_code: int | None = None
    state: str = "queued"  # queued | running | backing_off | ok | gave_up | aborted | failed
    until: float | None = None  # the end of the current wait
    note: str | None = None  # the last reason given

    def to_json(self) -> dict:
        return {"task": self.index, "outcome": self.outcome, "exit_code": self.exit_code,
                "attempts": [a.to_json() for a in self.attempts]}


def overall(tasks: list[TaskRecord], signal_exit: int | None = None) -> tuple[str, int]:
    """The run's outcome and exit status: 0 when every task ended in a successful turn;
    130/143 when interrupted; else the first failed task's code."""
    if signal_exit is not None:
        return "aborted", signal_exit
    for t in tasks:
        if t.outcome != "ok":
            return "failed", t.exit_code if t.exit_code is not None else 1
    return "ok", 0


def summary_json(tasks: list[TaskRecord], outcome: str, exit_code: int) -> dict:
    return {"outcome": outcome, "exit_code": exit_code, "tasks": [t.to_json() for t in tasks]}
