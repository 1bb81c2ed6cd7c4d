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


from __future__ import annotations

from dataclasses import dataclass, field
from datetime import tzinfo

from codexwatch.core.advice_facts import (
    ACTION_EXIT_CODES,
    ACTIONS,
    BACKOFF_CLASSES,
    BACKOFF_LADDER_S,
    CONCURRENT_SESSIONS,
    CONCURRENT_WINDOW_S,
    HISTORY_WINDOW_S,
    INCIDENT_CLASSES,
    LONG_CONTEXT_SHARE,
    LONG_THREAD_TURNS,
    NOT_ACCOUNT_CLASSES,
    PEAK_HOURS,
    TIERS,
    TRIED_KEYS,
    WIDE_OUTAGE_S,
    Advice,
    Backoff,
    Candidate,
    FROM_TURNS,
    Facts,
    TriedStep,
    backoff_for,
    candidates,
    catalogue_candidates,
    concurrent_sessions,
    context_threshold,
    current_incident,
    facts,
    model_success,
    model_tier,
    status_state,
    thread_size,
    tried_steps,
)
from codexwatch.core.advice_wording import (
    backoff_line,
    fast_rates,
    local_time,
    near_full_lines,
    of_the_week,
    peak_hint,
    plural,
    quota_sentence,
    relay_line,
    span,
    status_sentence,
    summary,
    thread_sentence,
    threshold_line,
    tried_sentences,
    work_line,
)
from codexwatch.core.catalogue import Catalogue
from codexwatch.core.incident_link import link_incident
from codexwatch.core.usage import exhausted_reset, newest
from codexwatch.core.models import Episode, StatusSnapshot, Turn
from codexwatch.core.redact import redact

# What importers take from here (the facts and the wording live in their own modules).
__all__ = [
    "ACTIONS",
    "ACTION_EXIT_CODES",
    "Advice",
    "BACKOFF_CLASSES",
    "BACKOFF_LADDER_S",
    "Backoff",
    "CONCURRENT_SESSIONS",
    "CONCURRENT_WINDOW_S",
    "Candidate",
    "Facts",
    "HISTORY_WINDOW_S",
    "INCIDENT_CLASSES",
    "LONG_CONTEXT_SHARE",
    "LONG_THREAD_TURNS",
    "NOT_ACCOUNT_CLASSES",
    "PEAK_HOURS",
    "TIERS",
    "TRIED_KEYS",
    "TriedStep",
    "WIDE_OUTAGE_S",
    "advise",
    "backoff_for",
    "backoff_line",
    "candidates",
    "catalogue_candidates",
    "context_threshold",
    "concurrent_sessions",
    "current_incident",
    "facts",
    "fast_rates",
    "local_time",
    "near_full_lines",
    "model_success",
    "model_tier",
    "of_the_week",
    "peak_hint",
    "plural",
    "quota_sentence",
    "relay_line",
    "span",
    "status_sentence",
    "status_state",
    "summary",
    "thread_sentence",
    "thread_size",
    "threshold_line",
    "tried_sentences",
    "tried_steps",
    "work_line",
]

# --- the rules: one per class, the capacity ladder -------------------------------------


@dataclass(slots=True)
class _Decision:
    action: str
    title: str
    evidence: list[str] = field(default_factory=list)
    confidence: str = "high"
    commands: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)


def _wait_incident(f: Facts) -> _Decision:
    ev = ["An ongoing Codex incident explains failures like these; retrying or switching now "
          "mostly meets the same outage. codexwatch tells you when it is resolved."]
    link = link_incident(f.episode.failures, f.snapshot)
    if link is not None and link.lead_minutes is not None and link.lead_minutes >= 1:
        ev.append(f"Your failures began {span(link.lead_minutes * 60)} before OpenAI posted it.")
    return _Decision("wait", "Wait: OpenAI is working on a Codex incident", ev)


def _switch_model(f: Facts) -> _Decision:
    cands = catalogue_candidates(f.episode, f.turns, f.now, f.catalogue)
    if not cands:
        return _Decision("switch_model", "Switch model once",
                         ["No other model succeeded in your last 7 days: pick one from your "
                          "own `/model` list."], "medium", ["/model"])
    best = cands[0]
    if best.source == "catalogue":
        where = (f"next after {f.latest.model} in Codex's own model list"
                 if f.catalogue.get(f.latest.model) is not None else "first in Codex's own model list")
        record = (f"it succeeded in {best.success_rate:.0%} of your {plural(best.turns, 'turn')} on it in the "
                  "last 7 days" if best.turns else "you have not run it in the last 7 days")
        ev = [f"{best.model} is {where}; {record}. Capacity is per model, so another model may "
              "have room."]
    else:
        ev = [f"{best.model} succeeded in {best.success_rate:.0%} of your {plural(best.turns, 'turn')} on it "
              f"in the last 7 days; capacity is per model, so another model may have room."]
    if best.tier == "light":
        ev.append("Light models suit small fixes, not refactors.")
    cmds = ["/model", best.command, f'model = "{best.model}"  (in config.toml)']
    confidence = "high" if best.turns else "medium"
    return _Decision("switch_model", f"Switch model once: try {best.model}", ev, confidence, cmds, cands)


def _new_thread(f: Facts) -> _Decision:
    why = (thread_sentence(f) if f.long_thread
           else "Switching model did not help; a fresh thread sometimes does.")
    ev = [why] + [line for line in (threshold_line(f),) if line]
    return _Decision("new_thread", "Start a new thread once", ev, "medium",
                     ["/new", "/compact", "/fork"])


def _capacity(f: Facts) -> _Decision:
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
              "experiment: you can turn it back on any time.", fast_rates(f.turns, f.now)]
        return _Decision("fast_off", "Turn Fast off once (low confidence)", ev, "low", ["/fast"])
    return _after_ladder(f)


def _after_ladder(f: Facts) -> _Decision:
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


def _rate_limit(f: Facts) -> _Decision:
    return _Decision("slow_down", "Slow down: too many requests",
                     ["HTTP 429 retry limit: too many requests, a different branch from "
                      "capacity.",
                      "For scripts: 0.5–2 s random gaps, 2–3 at once, exponential back-off "
                      "kept apart from network retries."])


def _usage_limit(f: Facts) -> _Decision:
    # The failed turn's own figures first, else the newest the logs hold.
    resets = f.latest.rate_limit_resets_at or exhausted_reset(f.usage)
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


def _model_unavailable(f: Facts) -> _Decision:
    cands = catalogue_candidates(f.episode, f.turns, f.now, f.catalogue)
    ev = [f"{f.latest.model or 'The model'} is retired or not in your plan."]
    if cands and cands[0].source == "catalogue":
        ev.append("Codex's own model list for your account offers: "
                  + ", ".join(c.model for c in cands[:3]) + ".")
    elif cands:
        ev.append("Models that worked for you recently: " + ", ".join(c.model for c in cands[:3]) + ".")
    cmds = ["/model"] + ([cands[0].command] if cands else [])
    return _Decision("pick_available_model", "Pick a model from your own list", ev,
                     commands=cmds, candidates=cands)


def _auth(f: Facts) -> _Decision:
    status = f" (HTTP {f.latest.http_status})" if f.latest.http_status else ""
    return _Decision("relogin", "Log in again",
                     [f"Authentication failed{status}: login expired or key wrong; not a "
                      "capacity problem."], commands=["codex login"])


def _server_error(f: Facts) -> _Decision:
    return _Decision("wait", "Wait and retry later with back-off",
                     ["The service answered with an error (500 or a plain 503): it is failing, "
                      "not necessarily busy."])


def _stream(f: Facts) -> _Decision:
    return _Decision("check_network", "Check your network",
                     ["The connection broke before the answer completed. Look for packet loss "
                      "above 1 % or latency twice your usual; retry sooner than for capacity."])


def _context_window(f: Facts) -> _Decision:
    ev = ["The conversation no longer fits the model's context window. " + thread_sentence(f)]
    ev += [line for line in (threshold_line(f),) if line]
    return _Decision("compact", "Compact or start a new thread", ev, commands=["/compact", "/new"])


def _unrecorded(f: Facts) -> _Decision:
    version = f.latest.cli_version or "this version"
    return _Decision("upgrade_codex", "Upgrade Codex to see why turns fail",
                     [f"Codex {version} does not write why a turn failed, so the cause is "
                      "unknown."], "medium", ["npm install -g @openai/codex@latest"])


def _other(f: Facts) -> _Decision:
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


def _decide(f: Facts) -> _Decision:
    if f.status == "incident" and f.cls in INCIDENT_CLASSES:
        return _wait_incident(f)
    return _BY_CLASS.get(f.cls, _other)(f)


# --- side advice -----------------------------------------------------------------------


def _side(f: Facts, b: Backoff | None) -> list[str]:
    out = []
    if f.cls in BACKOFF_CLASSES:
        out.append(backoff_line(f, b))
    out += [line for line in (work_line(f), peak_hint(f.turns, f.now, f.tz, f.week)) if line]
    n = concurrent_sessions(f.episode, f.turns, f.now)
    if n >= CONCURRENT_SESSIONS:
        out.append(f"{n} sessions were running when the failures began: run fewer tasks in "
                   "parallel until it recovers.")
    if relay := relay_line(f):
        out.append(relay)
    if f.cls in NOT_ACCOUNT_CLASSES:
        out.append("Does not help: changing password, logging out, switching VPN or exit IP, "
                   "deleting ~/.codex, reinstalling. This is not your account.")
    if f.cls != "usage_limit":
        out += near_full_lines(f.usage, f.now, f.tz)
    return out


def _open_steps(f: Facts, action: str) -> list[str]:
    if f.cls != "capacity":
        return [] if action == "none" else [action]
    ladder = ["switch_model", "new_thread"] + (["fast_off"] if f.fast_on else [])
    return [s for s in ladder if s not in f.done] + ["stop_and_report"]


# --- entry point -----------------------------------------------------------------------


def _quiet(snapshot: StatusSnapshot | None, episode: Episode | None, tz, turns: list[Turn],
           now: float) -> Advice:
    ev = ["No failed turn is waiting for an answer: the latest turns succeeded."]
    if episode is not None:
        ev = [f"The last failure episode ended; its last failure was at "
              f"{local_time(episode.last, tz)}."]
    ev.append(status_sentence(snapshot, episode, tz))
    title = "No ongoing trouble"
    if snapshot is not None and snapshot.ok and snapshot.codex_incidents_ongoing:
        title = "Your turns work; OpenAI reports a Codex incident"
    side = near_full_lines(newest(turns)[0], now, tz)  # before it fails
    return Advice("none", title, ev, side=side, status=status_state(snapshot), episode=episode)


def advise(episode: Episode | None, turns: list[Turn], snapshot: StatusSnapshot | None,
           now: float, tz: tzinfo | None = None, catalogue: Catalogue | None = None,
           threshold: dict | None = FROM_TURNS, week: dict | None = None) -> Advice:
    """One recommended action for `episode` (the current one, or None) at time `now`.
    `catalogue`: Codex's own model list (`models_cache.json`), when there is one.
    `threshold`: the context threshold of `turns`, when the caller's statistics found it
    (StatsFold.context()); else it is found here. `week`: the hour-of-week grids
    (StatsFold.hour_of_week()) of the turns of the last 7 days, when the caller has them;
    else they are counted here."""
    if episode is None or not episode.failures or not episode.ongoing:
        adv = _quiet(snapshot, episode, tz, turns, now)
        adv.usage, adv.usage_session = newest(turns)
        return adv
    f = facts(episode, turns, snapshot, now, tz, catalogue, threshold, week)
    d = _decide(f)
    b = backoff_for(episode, now) if f.cls in BACKOFF_CLASSES else None
    evidence = [summary(episode, f.cls, tz), status_sentence(snapshot, episode, tz)]
    if f.cls == "capacity":
        evidence.append("Codex had already retried before showing the error; pressing Enter "
                        "again at once mostly meets the same wave.")
        evidence += [line for line in (quota_sentence(f.usage, now, tz),) if line]
        evidence += tried_sentences(f.steps, f.fast_on, tz)
        if any((t.message or "").startswith("Reviewer model") for t in episode.failures):
            evidence.append("“Reviewer model is at capacity”: the auto-review step failed; "
                            "say so if you report it.")
    evidence += d.evidence
    return Advice(
        action=d.action, title=d.title, evidence=evidence, side=_side(f, b),
        tried=[s.key for s in f.steps], open_steps=_open_steps(f, d.action),
        candidates=d.candidates or _ladder_candidates(f), confidence=_confidence(d, f), commands=d.commands,
        backoff=b, status=f.status, episode=episode, tried_steps=f.steps, error_class=f.cls,
        usage=f.usage, usage_session=f.usage_session,
    )


def _ladder_candidates(f: Facts) -> list[Candidate]:
    """For capacity, whatever the step: the models to switch to when that step comes (the
    wizard's switch step names one while the advice is still to wait)."""
    if f.cls != "capacity" or "switch_model" in f.done:
        return []
    return catalogue_candidates(f.episode, f.turns, f.now, f.catalogue)


def _confidence(d: _Decision, f: Facts) -> str:
    """Thin evidence lowers it: Fast off (one report), an unreadable status page."""
    if d.confidence == "high" and f.status == "unknown" and f.cls in INCIDENT_CLASSES:
        return "medium"
    return d.confidence
