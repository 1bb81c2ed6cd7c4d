"""The report of one failure episode, for `/feedback` or a Codex issue: Markdown and JSON.

Safe to paste is the point. Only whitelisted fields are copied out of the turns (never the
working directory, file paths, prompts, assistant text or tool output, which a Turn does not
even carry), and every string then goes through `redact` (Codex's error message can hold a
relay's arbitrary text). The Markdown is built from the redacted data, then redacted again.

The login route (ChatGPT login or API key) is asked, never read: `auth.json` is not opened;
the report leaves a line to fill in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo

import re

import orjson

from codexwatch import __version__
from codexwatch.core.advice_facts import TRIED_KEYS, status_state, tried_steps
from codexwatch.core.advice_wording import plural, span
from codexwatch.core.incident_link import link_incident
from codexwatch.core.models import Episode, Incident, StatusSnapshot, Turn
from codexwatch.core.redact import redact, redact_value
from codexwatch.core.triage import error_info_counts, info_text

MAX_FAILURE_ROWS = 50  # a report is read by a person; the counts above cover the rest
MAX_MESSAGE_CHARS = 300
SEND_TO = (
    "`/feedback` inside Codex (uploads the session logs; mention the thread ids above)",
    "an issue on https://github.com/openai/codex/issues (search for an open one first)",
)
LOGIN_FILL_IN = "ChatGPT login or API key? (fill in; codexwatch never reads auth.json)"
# The messages Codex itself writes (docs/rollout-eras.md; classify.py's vocabulary). Only the
# matched part is kept: a relay can append anything after it, the user's prompt included,
# and no pattern can tell a prompt from a diagnosis.
_REASON = r"\d{3}(?: [A-Z][A-Za-z]*)*"  # "429 Too Many Requests", not the words after it
_KNOWN_MESSAGES = [re.compile(p) for p in (
    r"^(?:Error running remote compact task: )?(?:Selected|Reviewer) model is at capacity\."
    r"(?: Please try a different model\.)?",
    r"^model \S{1,80} is at capacity\.?",
    rf"^exceeded retry limit, last status: {_REASON}",
    rf"^unexpected status {_REASON}",
    r"^You.ve hit your usage limit\.",
    r"^Quota exceeded\.",
    r"^The model `[^`]{1,80}` does not exist or you do not have access to it\.",
    r"^We.re currently experiencing high demand, which may cause temporary errors\.",
    r"^stream disconnected before completion(?:: stream closed before response\.completed)?",
    r"^Codex ran out of room in the model.s context window\.",
)]
_TRIED_NAMES = {"switch_model": "Model switch", "new_thread": "New thread", "fast_off": "Fast off"}


@dataclass(slots=True)
class Report:
    data: dict
    markdown: str

    def to_json(self) -> str:
        return orjson.dumps(self.data, option=orjson.OPT_INDENT_2).decode()


# --- time ------------------------------------------------------------------------------


def utc_text(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _local(ts: float, tz: tzinfo | None) -> datetime:
    return datetime.fromtimestamp(ts, tz) if tz else datetime.fromtimestamp(ts).astimezone()


def offset_text(ts: float, tz: tzinfo | None) -> str:
    """UTC+08:00, the local offset at that moment (summer time included)."""
    off = _local(ts, tz).utcoffset()
    minutes = int(off.total_seconds() // 60) if off is not None else 0
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _both(ts: float, tz: tzinfo | None) -> str:
    return f"{utc_text(ts)} (local {_local(ts, tz).strftime('%H:%M:%S')} {offset_text(ts, tz)})"


# --- the data --------------------------------------------------------------------------


def shape_text(t: Turn) -> str:
    seconds = max(1.0, (t.duration_ms or 0) / 1000)  # "within 0 s" reads like a bug
    if t.shape == "interrupted":
        return f"interrupted after {span(seconds)} of work ({t.tool_calls} tool calls)"
    return f"rejected within {span(seconds)}"


def recovered_at(episode: Episode, turns: list[Turn]) -> float | None:
    """When the first successful turn after the episode ended, if one did."""
    if episode.ongoing:
        return None
    return next((t.at for t in turns if t.outcome == "ok" and t.at > episode.last), None)


def _distinct(values) -> list:
    return list(dict.fromkeys(values))


def _failure(t: Turn, tz: tzinfo | None) -> dict:
    return {
        "at_utc": utc_text(t.at),
        "local_offset": offset_text(t.at, tz),
        "session_id": t.session_id,
        "turn_id": t.turn_id,
        "model": t.model,
        "effort": t.effort,
        "fast": t.fast,
        "error_class": t.error_class,
        "codex_error_info": _info(t),
        "http_status": t.http_status,
        "shape": t.shape,
        "shape_text": shape_text(t),
        "duration_s": round((t.duration_ms or 0) / 1000, 1),
        "tool_calls": t.tool_calls,
    }


def safe_message(message: str | None) -> tuple[str, int]:
    """(the part of `message` Codex wrote, how many characters were left out)."""
    text = (message or "").strip()
    for pattern in _KNOWN_MESSAGES:
        match = pattern.match(text)
        if match:
            return match.group(0)[:MAX_MESSAGE_CHARS], len(text) - len(match.group(0))
    return "(not a message Codex writes: left out)", len(text)


def _messages(failures: list[Turn]) -> list[dict]:
    counts: dict[tuple[str, int], int] = {}
    for t in failures:
        if t.message:
            key = safe_message(t.message)
            counts[key] = counts.get(key, 0) + 1
    return [{"text": text, "left_out_chars": cut, "count": n} for (text, cut), n in counts.items()]


def _info(t: Turn):
    """The raw value's shape, as Codex writes it: a variant name, or {name: {http_status_code}}."""
    name = info_text(t.codex_error_info)
    if isinstance(t.codex_error_info, dict) and name not in ("unrecognised value",):
        return {name: {"http_status_code": t.http_status}} if t.http_status else {name: {}}
    return name


def _incident(i: Incident) -> dict:
    return {"name": i.name, "status": i.status, "impact": i.impact,
            "started_utc": utc_text(i.started_at), "resolved_utc": utc_text(i.resolved_at),
            "url": i.url}


def _status(episode: Episode, snapshot: StatusSnapshot | None) -> dict:
    state = status_state(snapshot)
    out = {"state": state, "checked_utc": utc_text(snapshot.fetched_at) if snapshot else None,
           "error": snapshot.error if snapshot is not None and not snapshot.ok else None,
           "incidents": [], "lead_minutes": None}
    if state == "unknown":
        return out
    link = link_incident(episode.failures, snapshot)
    chosen = [link.incident] if link else []
    chosen += [i for i in snapshot.codex_incidents_ongoing if i not in chosen]
    out["incidents"] = [_incident(i) for i in chosen]
    if link is not None and link.lead_minutes is not None:
        out["lead_minutes"] = round(link.lead_minutes, 1)
    return out


def _tried(episode: Episode, turns: list[Turn]) -> list[dict]:
    found = {s.key: s for s in tried_steps(episode, turns)}
    out = []
    for key in TRIED_KEYS:
        s = found.get(key)
        out.append({"step": key, "tried": s is not None, "at_utc": utc_text(s.at) if s else None,
                    "detail": s.detail if s else None, "result": s.result if s else None})
    return out


def report_data(episode: Episode, turns: list[Turn], snapshot: StatusSnapshot | None,
                now: float, tz: tzinfo | None = None) -> dict:
    """The whitelisted fields, not yet redacted."""
    f = episode.failures
    return {
        "generated_utc": utc_text(now),
        "codexwatch_version": __version__,
        "episode": {"id": episode.id, "first_utc": utc_text(episode.first),
                    "last_utc": utc_text(episode.last), "local_offset": offset_text(episode.last, tz),
                    "first": _both(episode.first, tz), "last": _both(episode.last, tz),
                    "failures": len(f), "ongoing": episode.ongoing,
                    "recovered_utc": utc_text(recovered_at(episode, turns)),
                    "classes": episode.classes},
        "codex_versions": _distinct(t.cli_version for t in f if t.cli_version),
        "surfaces": _distinct(t.originator for t in f if t.originator),
        "login_route": None,
        "providers": _distinct(t.provider for t in f if t.provider),
        "models": _distinct(t.model for t in f if t.model),
        "efforts": _distinct(t.effort for t in f if t.effort),
        "fast": _distinct(t.fast for t in f),
        "sessions": episode.sessions,
        "codex_error_info": [{"value": k, "count": n} for k, n in error_info_counts(episode)],
        "messages": _messages(f),
        "shapes": {s: sum(t.shape == s for t in f) for s in ("rejected", "interrupted")},
        "tried": _tried(episode, turns),
        "status": _status(episode, snapshot),
        "failures": [_failure(t, tz) for t in f],
        "send_to": list(SEND_TO),
    }


# --- Markdown --------------------------------------------------------------------------


def _cell(value) -> str:
    """A table cell: no pipes or newlines from log text can break the table."""
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "on" if value else "off"
    if not isinstance(value, str):
        value = orjson.dumps(value).decode()
    return value.replace("|", "\\|").replace("\n", " ").replace("`", "'")


def _code(value) -> str:
    return f"`{_cell(value)}`"


def _summary_rows(d: dict) -> list[tuple[str, str]]:
    ep = d["episode"]
    ended = ("; still failing" if ep["ongoing"] else
             f"; then a turn succeeded at {ep['recovered_utc']}" if ep["recovered_utc"] else "")
    providers = ", ".join(d["providers"]) or "-"
    if any(p != "openai" for p in d["providers"]):
        providers += " (custom provider or relay)"
    fast = ", ".join("unknown" if v is None else _cell(v) for v in d["fast"])
    return [
        ("Codex version", ", ".join(d["codex_versions"]) or "-"),
        ("Surface", ", ".join(d["surfaces"]) or "-"),
        ("Login route", LOGIN_FILL_IN),
        ("Provider", providers),
        ("Model", ", ".join(d["models"]) or "-"),
        ("Reasoning effort", ", ".join(d["efforts"]) or "default (not recorded)"),
        ("Fast (service_tier priority)", fast),
        ("Failures", f"{ep['failures']} ({', '.join(f'{k} {v}' for k, v in ep['classes'].items())})"),
        ("First failure", ep["first"]),
        ("Last failure", ep["last"] + ended),
        ("Thread ids", ", ".join(_code(s) for s in d["sessions"])),
    ]


def _tried_lines(d: dict) -> list[str]:
    out = []
    for t in d["tried"]:
        name = _TRIED_NAMES[t["step"]]
        out.append(f"- {name}: {t['detail']} at {t['at_utc']}; {t['result']}" if t["tried"]
                   else f"- {name}: not tried")
    return out


def _status_lines(d: dict) -> list[str]:
    s = d["status"]
    if s["state"] == "unknown":
        return [f"- Could not read status.openai.com ({s['error'] or 'not checked'}); "
                "look there before filing."]
    if not s["incidents"]:
        return [f"- No Codex incident on status.openai.com (checked {s['checked_utc']})."]
    out = [f"- {_cell(i['name'])}: {i['status']}, since {i['started_utc'] or '?'}"
           + (f", resolved {i['resolved_utc']}" if i["resolved_utc"] else "")
           + (f" ({i['url']})" if i["url"] else "") for i in s["incidents"]]
    if s["lead_minutes"] is not None and s["lead_minutes"] >= 1:
        out.append(f"- My failures began {s['lead_minutes']:.0f} min before it was posted.")
    return out


def _failure_table(d: dict) -> list[str]:
    rows = [f"| time (UTC; local is {d['episode']['local_offset']}) | thread | turn | model | "
            "class | codex_error_info | shape |",
            "|---|---|---|---|---|---|---|"]
    for f in d["failures"][:MAX_FAILURE_ROWS]:
        rows.append(f"| {f['at_utc']} | {_code(f['session_id'])} | {_code(f['turn_id'])} | "
                    f"{_cell(f['model'])} | {_cell(f['error_class'])} | "
                    f"{_code(f['codex_error_info'])} | {_cell(f['shape_text'])} |")
    extra = len(d["failures"]) - MAX_FAILURE_ROWS
    if extra > 0:
        rows.append(f"\n… and {extra} more failures (counts above include them).")
    return rows


def render_markdown(d: dict) -> str:
    ep = d["episode"]
    models = ", ".join(d["models"]) or "unknown model"
    lines = [f"## Codex: {plural(ep['failures'], 'failed turn')} on {models}", "",
             "<!-- Check this text before you share it. codexwatch left out prompts, code, "
             "tool output, keys, tokens and e-mail addresses, and wrote home paths as ~. -->", "",
             "| | |", "|---|---|"]
    lines += [f"| {k} | {_cell(v) if k != 'Thread ids' else v} |" for k, v in _summary_rows(d)]
    lines += ["", "### codex_error_info", ""]
    lines += [f"- {_code(e['value'])} × {e['count']}" for e in d["codex_error_info"]]
    lines += ["", "### Messages", ""]
    lines += [f"- {_code(m['text'])} × {m['count']}"
              + (f" ({m['left_out_chars']} more characters left out)" if m["left_out_chars"] else "")
              for m in d["messages"]] or ["- (none recorded)"]
    lines += ["", "### Shape", "",
              f"- rejected within seconds: {d['shapes']['rejected']}",
              f"- interrupted after doing work: {d['shapes']['interrupted']}",
              "", "### What I tried", ""]
    lines += _tried_lines(d)
    lines += ["", "### Status page at the time", ""] + _status_lines(d)
    lines += ["", "### Failures", ""] + _failure_table(d)
    lines += ["", "### Where to send this", ""] + [f"- {s}" for s in d["send_to"]]
    lines += ["", f"_Generated by codexwatch {d['codexwatch_version']} at {d['generated_utc']}._"]
    return "\n".join(lines) + "\n"


def build_report(episode: Episode, turns: list[Turn], snapshot: StatusSnapshot | None,
                 now: float, tz: tzinfo | None = None, home: str | None = None) -> Report:
    """The redacted report of `episode`; `home` is also written as `~` wherever it appears."""
    data = redact_value(report_data(episode, turns, snapshot, now, tz), home)
    return Report(data=data, markdown=redact(render_markdown(data), home))
