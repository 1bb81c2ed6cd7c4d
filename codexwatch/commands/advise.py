"""`codexwatch advise`: what to do now, with the evidence; the exit code names the action.

Exit codes (fixed, see `codexwatch.core.advice`): 0 none, 11 wait, 12 switch_model,
13 new_thread, 14 fast_off, 15 stop_and_report, 16 slow_down, 17 wait_for_reset, 18 relogin,
19 pick_available_model, 20 check_network, 21 compact, 22 upgrade_codex; 2 for a bad argument
or no Codex home. `--at TIME` evaluates as if the clock read TIME: turns that started later
are ignored. The status page, when checked, always describes the present.
"""

from __future__ import annotations

import re
import sys
import time

import orjson

from codexwatch.commands.common import HomeUnreadable, fail, load
from codexwatch.config import ConfigError
from codexwatch.core.advice import Advice, advise
from codexwatch.core.advice_wording import plural
from codexwatch.core.models import StatusSnapshot, Turn
from codexwatch.core.stats import current_episode, episode_json
from codexwatch.core.times import iso_utc, parse_iso
from codexwatch.core.usage import compact, usage_json
from codexwatch.sources.catalogue import load_catalogue

NOT_CHECKED = "not checked: --no-status"
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # log text must not drive the terminal


def parse_at(text: str | None) -> float | None:
    """ISO-8601 (a trailing Z allowed; no offset means local time) -> epoch seconds."""
    if not text:
        return None
    at = parse_iso(text.strip(), naive="local")
    if at is None:
        raise ConfigError(f"--at: not an ISO-8601 time: {text!r} (e.g. 2026-11-29T08:45:00Z)")
    return at


def status_snapshot(settings, now: float) -> StatusSnapshot:
    """The status page, or 'unknown' when it is turned off (never 'all clear')."""
    if not settings.status_enabled:
        return StatusSnapshot.unknown(NOT_CHECKED, now)
    from codexwatch.sources.status_client import fetch_status_once  # only when used: httpx

    try:
        return fetch_status_once(settings.status_url)
    except ValueError as exc:  # a base URL that is not http(s)://host
        raise ConfigError(str(exc)) from None


def clock_and_turns(args, settings) -> tuple[float, list[Turn]]:
    """The clock (`--at`, else now) and the history as it stood then (raises HomeUnreadable)."""
    now = parse_at(getattr(args, "at", None)) or time.time()
    return now, [t for t in load(settings, now).turns if (t.started_at or t.at) <= now]


def advice_json(adv: Advice, now: float) -> dict:
    b = adv.backoff
    return {
        "action": adv.action,
        "exit_code": adv.exit_code,
        "title": adv.title,
        "evidence": adv.evidence,
        "side": adv.side,
        "tried": adv.tried,
        "open_steps": adv.open_steps,
        "candidates": [{"model": c.model,
                        "success_rate": None if c.success_rate is None else round(c.success_rate, 4),
                        "turns": c.turns, "tier": c.tier, "command": c.command, "source": c.source}
                       for c in adv.candidates],
        "confidence": adv.confidence,
        "commands": adv.commands,
        "backoff": None if b is None else {"next_retry_at": iso_utc(b.next_retry_at), "step": b.step,
                                           "wait_s": b.wait_s},
        "status": adv.status,
        "error_class": adv.error_class,
        "episode": episode_json(adv.episode) if adv.episode is not None else None,
        "usage": usage_json(adv.usage, adv.usage_session),
        "at": iso_utc(now),
    }


def render(adv: Advice) -> str:
    lines = [f"{adv.title.upper()}  (exit {adv.exit_code}: {adv.action})",
             f"confidence {adv.confidence} · status page {adv.status}", "", "Why:"]
    lines += [f"  - {e}" for e in adv.evidence]
    if adv.side:
        lines += ["", "Also:"] + [f"  - {s}" for s in adv.side]
    if adv.tried or adv.open_steps:
        lines += ["", f"Tried: {', '.join(adv.tried) or 'nothing yet'}; "
                      f"still open: {', '.join(adv.open_steps) or 'nothing'}"]
    if adv.candidates:
        from_list = adv.candidates[0].source == "catalogue"
        lines += ["", "Models to switch to, in Codex's own order (your record, last 7 days):" if from_list
                  else "Models that worked for you (last 7 days):"]
        lines += [f"  {c.model:<24} {_record(c):<18} {c.command}" for c in adv.candidates[:5]]
    meter = compact(adv.usage)
    if meter:
        as_of = adv.usage[0]
        when = time.strftime(" (as of %a %H:%M)", time.localtime(as_of)) if as_of else ""
        lines += ["", f"Plan usage: {meter}{when}"]
    if adv.commands:
        lines += ["", "Type:"] + [f"  {c}" for c in adv.commands]
    return _CONTROL.sub("", "\n".join(lines)) + "\n"


def _record(c) -> str:
    if c.success_rate is None:
        return "not run lately"
    return f"{c.success_rate:>4.0%} of {plural(c.turns, 'turn')}"


def run(args, settings) -> int:
    try:
        now, turns = clock_and_turns(args, settings)
    except HomeUnreadable as exc:
        return fail(str(exc))
    adv = advise(current_episode(turns, now), turns, status_snapshot(settings, now), now,
                 catalogue=load_catalogue(settings.codex_home))
    if getattr(args, "json", False):
        sys.stdout.write(orjson.dumps(advice_json(adv, now), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render(adv))
    sys.stdout.flush()
    return adv.exit_code
