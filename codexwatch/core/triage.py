"""The triage wizard's steps, as data: the UI only lays them out.

The capacity ladder of triage-rules.md, in order: confirm the class from the logs, check the
status page, switch model once, new thread once, Fast off, stop and report. Each step says
what to type in Codex and what the logs show about it (`afterwards`). At most one step is
`current`: the one `advise` chose. For the other classes the ladder steps are `skipped` and the
class's own action is inserted as the current step, so the wizard is never a dead end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import tzinfo

from codexwatch.core.advice_facts import Advice, TriedStep, status_state
from codexwatch.core.advice_wording import local_time, plural
from codexwatch.core.classify import info_key
from codexwatch.core.models import Episode, StatusSnapshot

LADDER = ("switch_model", "new_thread", "fast_off", "stop_and_report")

# Titles of the class actions when they become a step of their own.
_ACTION_TITLES = {
    "wait": "Wait and back off",
    "slow_down": "Slow down",
    "wait_for_reset": "Wait for the usage limit to reset",
    "relogin": "Log in again",
    "pick_available_model": "Pick a model from your own list",
    "check_network": "Check your network",
    "compact": "Compact or start a new thread",
    "upgrade_codex": "Upgrade Codex",
}


@dataclass(slots=True)
class WizardStep:
    key: str
    title: str
    evidence: list[str] = field(default_factory=list)
    type_in_codex: list[str] = field(default_factory=list)
    afterwards: str = ""  # what the logs show about this step, or whether it is done
    state: str = "open"  # done | current | open | skipped


_VARIANT = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


def info_text(info) -> str:
    """A `codex_error_info` as a variant name. Codex writes enum names only, so anything else
    is shown as unrecognised rather than copied (it would be shown, and maybe pasted)."""
    if info is None:
        return "not recorded"
    key = info_key(info)
    return key if key is not None and _VARIANT.match(key) else "unrecognised value"


def error_info_counts(episode: Episode) -> list[tuple[str, int]]:
    """("server_overloaded", 2), ("response_too_many_failed_attempts 429", 1), ..."""
    counts: dict[str, int] = {}
    for t in episode.failures:
        key = info_text(t.codex_error_info)
        if t.http_status and t.codex_error_info is not None:
            key = f"{key} {t.http_status}"
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def _confirm(advice: Advice, episode: Episode) -> WizardStep:
    counts = error_info_counts(episode)
    evidence = [f"{n} × {k}" for k, n in counts]
    classes = ", ".join(f"{c} {n}" for c, n in episode.classes.items())
    if set(episode.classes) == {"unrecorded"}:
        return WizardStep("confirm_class", "Confirm the cause from the logs", evidence,
                          ["codex --version"],
                          "This Codex version does not record why a turn failed.", "open")
    after = f"The logs show: {classes}."
    if "capacity" in episode.classes:
        after += " Capacity is not the account and not the quota."
    return WizardStep("confirm_class", "Confirm the cause from the logs", evidence,
                      ["/status", "/usage"], after, "done")


def _status(advice: Advice, snapshot: StatusSnapshot | None, tz: tzinfo | None) -> WizardStep:
    state = status_state(snapshot)
    evidence = [e for e in advice.evidence if e.startswith("Status page:")]
    if state == "unknown":
        return WizardStep("status_page", "Check the status page", evidence, [],
                          "codexwatch could not read it: open https://status.openai.com and "
                          "look for a Codex incident.", "open")
    checked = local_time(snapshot.fetched_at, tz) if snapshot.fetched_at else "just now"
    after = (f"Codex incident ongoing (checked {checked}): wait; codexwatch tells you when it "
             "is resolved." if state == "incident"
             else f"No Codex incident (checked {checked}).")
    return WizardStep("status_page", "Check the status page", evidence, [], after, "done")


def _tried_text(step: TriedStep, tz: tzinfo | None) -> str:
    return f"You {step.detail} at {local_time(step.at, tz)}; {step.result}."


def _ladder_step(key: str, advice: Advice, episode: Episode, tz: tzinfo | None) -> WizardStep:
    done = {s.key: s for s in advice.tried_steps}
    title, typed, evidence = _LADDER_TEXT[key](advice)
    if key in done:
        return WizardStep(key, title, evidence, typed, _tried_text(done[key], tz), "done")
    if key == "fast_off" and not any(t.fast for t in episode.failures):
        unknown = all(t.fast is None for t in episode.failures)
        why = "Fast is not recorded by this Codex version." if unknown else "Fast was off."
        return WizardStep(key, title, evidence, typed, why, "skipped")
    if advice.error_class != "capacity" and key != "stop_and_report":
        return WizardStep(key, title, evidence, typed,
                          f"Not a step for {advice.error_class} failures.", "skipped")
    return WizardStep(key, title, evidence, typed, "Not tried yet.", "open")


def _switch_text(advice: Advice) -> tuple[str, list[str], list[str]]:
    top = advice.candidates[:3]
    evidence = [_candidate_line(c) for c in top] or ["No other model succeeded recently: "
                                                     "pick one from your own list."]
    typed = ["/model"] + [c.command for c in top[:1]]
    if top:
        typed.append(f'model = "{top[0].model}"  (in config.toml)')
    return "Switch model once", typed, evidence


def _candidate_line(c) -> str:
    if c.success_rate is None:
        return f"{c.model} ({c.tier}): in Codex's own model list; not run in the last 7 days"
    where = "in Codex's own model list; " if c.source == "catalogue" else ""
    return (f"{c.model} ({c.tier}): {where}{c.success_rate:.0%} of {plural(c.turns, 'turn')} succeeded "
            "in the last 7 days")


def _new_text(advice: Advice) -> tuple[str, list[str], list[str]]:
    return ("Start a new thread once", ["/new", "/compact", "/fork"],
            ["A fresh thread sometimes works while a long one keeps failing; it is a test, "
             "not a guaranteed fix."])


def _fast_text(advice: Advice) -> tuple[str, list[str], list[str]]:
    return ("Turn Fast off once", ["/fast"],
            ["Low confidence: one user's report. You can turn it back on any time."])


def _stop_text(advice: Advice) -> tuple[str, list[str], list[str]]:
    return ("Stop retrying and report", ["/feedback"],
            ["When switching and a new thread both failed and the status page shows no "
             "incident. `codexwatch report` builds a redacted report."])


_LADDER_TEXT = {"switch_model": _switch_text, "new_thread": _new_text,
                "fast_off": _fast_text, "stop_and_report": _stop_text}


def _current_key(advice: Advice) -> str | None:
    if advice.action == "none":
        return None
    if advice.action in LADDER:
        return advice.action
    if advice.action == "wait" and (advice.error_class == "capacity" or advice.status == "incident"):
        return "status_page"  # waiting on the incident, or on the user reading the page
    return advice.action


def wizard_steps(advice: Advice, episode: Episode | None, snapshot: StatusSnapshot | None,
                 tz: tzinfo | None = None) -> list[WizardStep]:
    """The wizard's steps for this episode, in order, with their states; [] without trouble."""
    if episode is None or not episode.failures:
        return []
    steps = [_confirm(advice, episode), _status(advice, snapshot, tz)]
    steps += [_ladder_step(key, advice, episode, tz) for key in LADDER]
    current = _current_key(advice)
    if current is not None and current not in {s.key for s in steps}:
        latest = episode.failures[-1]
        after = (f"Latest {latest.error_class or 'other'} failure at "
                 f"{local_time(latest.at, tz)}.")
        steps.insert(2, WizardStep(current, _ACTION_TITLES.get(current, current),
                                   list(advice.evidence[2:]), list(advice.commands),
                                   after, "current"))
    for step in steps:
        if step.key == current:
            step.state = "current"
    return steps
