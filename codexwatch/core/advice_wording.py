"""The sentences of the advice: times and spans as the user reads them, the evidence lines
and the side advice, from the facts in `advice_facts.py`.

Pure; `report.py` and `triage.py` take their time and span wording from here too.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from codexwatch.core.advice_facts import (
    BACKOFF_LADDER_S,
    HISTORY_WINDOW_S,
    PEAK_HOURS,
    PEAK_MIN_FAILURES,
    PEAK_MIN_RATIO,
    PEAK_MIN_SHARE,
    Backoff,
    Facts,
    TriedStep,
    current_incident,
    peak_split,
    status_state,
)
from codexwatch.core import context as ctx
from codexwatch.core import usage
from codexwatch.core.models import Episode, StatusSnapshot, Turn
from codexwatch.core.redact import shorten_home
from codexwatch.core.stats import hour_of_week
from codexwatch.core.times import WEEKDAYS

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


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")



def of_the_week(turns: list[Turn], now: float) -> list[Turn]:
    """The turns of the last 7 days up to `now`: what the hints below read."""
    return [t for t in turns if now - HISTORY_WINDOW_S <= t.at <= now]


def peak_hint(turns: list[Turn], now: float, tz: tzinfo | None, week: dict | None = None) -> str | None:
    """A hint to run long jobs off-peak, when the user's own failures cluster in work hours.

    Read from the same hour-of-week figures the dashboard shows, over the last 7 days
    (`week`, when the caller has them: the dashboard's own when its turns are all that
    recent: of_the_week gives them all). The failure *rate* must be higher at peak too:
    someone who only works 9 to 5 fails at 9 to 5."""
    grid = week if week is not None else hour_of_week(of_the_week(turns, now), tz)
    peak, peak_fail, off, off_fail = peak_split(grid)
    if peak_fail < PEAK_MIN_FAILURES or peak_fail / (peak_fail + off_fail) < PEAK_MIN_SHARE:
        return None
    if off and peak_fail / peak < PEAK_MIN_RATIO * (off_fail / off):
        return None
    compare = f"{off_fail} of {off} off-peak" if off else "you ran nothing off-peak to compare"
    quiet = [f"{WEEKDAYS[d]} {h:02d}:00" for d, h in grid["quietest"] if not (d < 5 and h in PEAK_HOURS)]
    best = f" Your quietest hours: {', '.join(quiet[:3])}." if quiet else ""
    return (f"Peak hours: {peak_fail} of your {plural(peak, 'turn')} on weekdays "
            f"{PEAK_HOURS.start:02d}–{PEAK_HOURS.stop:02d} h failed in the last 7 days "
            f"({compare}); run long jobs in the evening or at the weekend.{best}")


# --- evidence sentences ----------------------------------------------------------------


def summary(episode: Episode, cls: str, tz: tzinfo | None) -> str:
    n = len(episode.failures)
    classes = episode.classes
    models = ", ".join(episode.models)
    mix = ", ".join(f"{k} {v}" for k, v in classes.items())
    what = (plural(n, cls + " failure") if classes.get(cls) == n
            else f"{plural(n, 'failure')} ({mix}; the latest {cls})")
    if n == 1:
        return f"{what} on {models} at {local_time(episode.first, tz)}."
    fmt = "%H:%M:%S" if episode.last - episode.first < 120 else "%H:%M"  # never "08:42–08:42"
    return (f"{what} on {models} in {span(episode.last - episode.first)} "
            f"({local_time(episode.first, tz, fmt)}–{local_time(episode.last, tz, fmt)}).")


def status_sentence(snapshot: StatusSnapshot | None, episode: Episode | None,
                     tz: tzinfo | None) -> str:
    state = status_state(snapshot)
    if state == "unknown":
        if snapshot is not None and snapshot.ok and snapshot.incidents_error:
            return (f"Status page: incidents unknown ({snapshot.incidents_error}); the components "
                    "answered, but that is not treated as all clear.")
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


def tried_sentences(steps: list[TriedStep], fast_on: bool, tz: tzinfo | None) -> list[str]:
    done = {s.key: s for s in steps}
    out = [f"You {s.detail} at {local_time(s.at, tz)}; {s.result}." for s in steps]
    if "switch_model" not in done:
        out.append("You have not switched model yet.")
    if "new_thread" not in done:
        out.append("You have not opened a new thread yet.")
    if fast_on and "fast_off" not in done:
        out.append("Fast was on (service_tier priority) and is still on.")
    return out


def thread_sentence(f: Facts) -> str:
    share = f" and last used {f.context_share:.0%} of its context window" if f.context_share else ""
    return f"This thread has {plural(f.thread_turns, 'turn')}{share}."


def fast_rates(turns: list[Turn], now: float) -> str:
    """The user's own failure rate with and without Fast: the only evidence that is theirs."""
    recent = [t for t in of_the_week(turns, now) if t.outcome in ("ok", "failed")]
    on = [t for t in recent if t.fast is True]
    off = [t for t in recent if t.fast is False]
    without = (f"without Fast {sum(t.failed for t in off)} of {len(off)}" if off
               else "no turns without Fast to compare")
    return f"Last 7 days: with Fast {sum(t.failed for t in on)} of {plural(len(on), 'turn')} failed; {without}."


def backoff_rule(b: Backoff, episode: Episode) -> str:
    """The rung of the back-off ladder the episode is on: 'wait 30 s after failure 1'."""
    return f"wait {span(b.wait_s)} after failure {len(episode.failures)}"


def backoff_line(f: Facts, b: Backoff | None) -> str:
    if b is None:
        return (f"Failing for {span(f.episode.last - f.episode.first)}, past 30 minutes: treat it as a "
                "wide outage, stop retrying and do something else.")
    if b.next_retry_at > f.now:
        return (f"Back off: {backoff_rule(b, f.episode)}; next try at "
                f"{local_time(b.next_retry_at, f.tz, '%H:%M:%S')} (in {span(b.next_retry_at - f.now)}).")
    nxt = span(BACKOFF_LADDER_S[min(b.step, len(BACKOFF_LADDER_S) - 1)])
    return f"Back off: the {span(b.wait_s)} wait is over; one try now, then wait {nxt} if it fails."


def work_line(f: Facts) -> str | None:
    worked = [t for t in f.episode.failures if t.shape == "interrupted" or t.tool_calls > 0]
    if not worked:
        return None
    t = worked[-1]
    where = shorten_home(t.cwd) or "the session's working directory"
    return (f"A failed turn did work before failing ({plural(t.tool_calls, 'tool call')}, "
            f"session {t.session_id[:8]}): run `git status --short` and `git diff --stat` in "
            f"{where} before re-running.")


def relay_line(f: Facts) -> str | None:
    providers = sorted({t.provider for t in f.episode.failures if t.provider and t.provider != "openai"})
    if not providers:
        return None
    return (f"Provider {', '.join(providers)} is a custom provider or relay: the message may come "
            "from the relay, not OpenAI. Check the relay's logs and compare with the official "
            "route; the status page may not apply.")



# --- the plan's windows and the context threshold ---------------------------------------


def _when(ts: float, now: float, tz: tzinfo | None) -> str:
    """15:40 today; `Sun 09:01` further off."""
    return local_time(ts, tz, "%a %H:%M" if ts - now > 20 * 3600 else "%H:%M")


def _current_windows(reading: tuple | None, now: float) -> list[tuple[str, tuple]]:
    """The reading's windows that have not reset since it was written (one that has, no
    longer stands where the figure says)."""
    return [(name, w) for name, w in usage.windows(reading) if w[2] is None or w[2] > now]


def quota_sentence(reading: tuple | None, now: float, tz: tzinfo | None) -> str | None:
    """`Not your quota: 5-hour window 34 % used, weekly window 61 %, as of 14:02.` when
    every window the logs know is below 100 %; None when none is known."""
    current = _current_windows(reading, now)
    if not current or any(w[0] >= usage.FULL for _, w in current):
        return None
    parts = [f"{usage.window_words(w[1], name)} {usage.percent(w[0])} %" + (" used" if i == 0 else "")
             for i, (name, w) in enumerate(current)]
    as_of = reading[usage.AS_OF]
    when = f", as of {_when(as_of, now, tz) if as_of else 'an unknown time'}"
    return f"Not your quota: {', '.join(parts)}{when}."


def near_full_lines(reading: tuple | None, now: float, tz: tzinfo | None) -> list[str]:
    """`5-hour window at 92 %, resets 15:40.` for each window at NEAR_FULL or more."""
    out = []
    for name, w in _current_windows(reading, now):
        if w[0] < usage.NEAR_FULL:
            continue
        resets = f", resets {_when(w[2], now, tz)}" if w[2] else ""
        state = "used up" if w[0] >= usage.FULL else f"at {usage.percent(w[0])} %"
        out.append(f"Your {usage.window_words(w[1], name)} is {state}{resets}"
                   + (": long runs may hit the limit." if w[0] < usage.FULL else "."))
    return out


def threshold_line(f: Facts) -> str | None:
    """`Your turns from 75 % of the context window up failed 4× as often …; this thread is
    at 82 %.` when the thread is past the user's own threshold."""
    if not f.above_threshold:
        return None
    said = ctx.threshold_sentence(f.threshold)
    return f"{said[0].upper()}{said[1:]}; this thread is at {round(100 * f.context_share)} %."
