"""What the screens show, computed from the engine's output. Pure: no Textual import.

The App keeps the facts (turns, file health, status snapshot); when they change, a worker
thread calls `build_dashboard(...)` and the App publishes the result (`ViewUpdate`) to the
screens, whose widgets only render it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from codexwatch.core import context as ctx
from codexwatch.core import usage as us
from codexwatch.core.models import Episode, FileHealth, StatusSnapshot, Turn
from codexwatch.core.status import codex_components_in_trouble
from codexwatch.ui import fmt


@dataclass(frozen=True)
class Loading:
    done: int = 0
    total: int = 0
    finished: bool = False
    error: str | None = None

    @property
    def fraction(self) -> float | None:
        if self.total <= 0:
            return None
        return min(1.0, self.done / self.total)


@dataclass(frozen=True)
class HeaderView:
    verdict: str  # ok | degraded | failing | loading
    verdict_reason: str
    status_text: str  # "Codex operational", "incident: …", "status unknown"
    status_level: str  # ok | warn | bad | unknown | off
    status_age: str  # "fetched 42 s ago", "unknown since 14:03"
    running: int
    parser_share: float | None  # share of lines understood, None when nothing read
    parser_note: str  # "3 unknown line types (0.171.0)"
    loading: Loading = Loading(finished=True)
    meter: str | None = None  # the plan's windows, "5h 34% · wk 61%"; None when unknown
    meter_level: str = "ok"  # ok | warn (a window at 90 % or more) | bad (one used up)


@dataclass(frozen=True)
class NowView:
    action: str  # the advice engine's action code
    title: str
    evidence: tuple[str, ...] = ()
    side: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    confidence: str | None = None
    backoff_until: float | None = None  # epoch seconds
    backoff_label: str | None = None
    episode: str | None = None  # one line summary of the current episode
    last_failure: Turn | None = None
    wizard_available: bool = False


@dataclass(frozen=True)
class ModelRow:
    label: str
    indent: int  # 0 = model, 1 = effort × Fast under it
    turns: dict[str, int]  # window -> n
    failures: dict[str, int]
    rates: dict[str, float | None]
    lost_minutes: float = 0.0
    lost_tokens: int = 0
    spark: str = ""


@dataclass(frozen=True)
class HeatmapView:
    failures: tuple[tuple[int, ...], ...]  # 7 rows (Mon..Sun) × 24 hours
    turns: tuple[tuple[int, ...], ...]
    quiet: frozenset[tuple[int, int]] = frozenset()  # (weekday, hour) marked as quietest
    tz_name: str = "local"


@dataclass(frozen=True)
class UsageWindow:
    name: str  # "5-hour window", "weekly window"
    used_percent: float
    resets_at: float | None


@dataclass(frozen=True)
class UsageView:
    """The user's plan windows as the newest token_count across sessions gave them."""

    as_of: float | None
    session_id: str | None
    windows: tuple[UsageWindow, ...]
    plan_type: str | None = None
    reached: str | None = None


@dataclass(frozen=True)
class ContextBand:
    label: str  # "75–90 %", "64k–128k tokens"
    turns: int
    failures: int
    rate: float | None


@dataclass(frozen=True)
class ContextView:
    """Failure rate by context fill: the bands, the threshold in words."""

    bands: tuple[ContextBand, ...]  # by share of the window
    by_tokens: tuple[ContextBand, ...]  # turns whose window is unknown (non-empty bands only)
    threshold: str  # a sentence, found or not
    threshold_percent: int | None = None  # the band's start, when found
    unknown: int = 0  # turns with no context figure


@dataclass(frozen=True)
class DashboardView:
    header: HeaderView
    now: NowView | None
    failures: tuple[Turn, ...]
    models: tuple[ModelRow, ...] = ()
    heatmap: HeatmapView | None = None
    snapshot: StatusSnapshot | None = None
    episode: Episode | None = None  # the current one: ongoing, recent
    advice: Any = None
    latest_episode: Episode | None = None  # the current one, else the last that ended
    status_enabled: bool = True
    # For the wizard and the report, built only while one of them is open:
    wizard_steps: tuple = ()  # core.triage.WizardStep of the current episode
    report: Any = None  # core.report.Report of the latest episode
    usage: UsageView | None = None
    context: ContextView | None = None

    @property
    def reportable(self) -> Episode | None:
        """The episode a report is about: the current one, else the latest that ended."""
        return self.episode or self.latest_episode


@dataclass(frozen=True)
class ViewUpdate:
    """What the App publishes to the screens: a view, and the clock it is shown at."""

    view: DashboardView
    now: float
    tz: tzinfo | None
    rebuilt: bool  # False: only the clock moved (ages, countdowns)
    runs: tuple = ()  # `codexwatch run` supervisors as recorded (sources.runs.read_runs)


# --- header -----------------------------------------------------------------------


def status_summary(snapshot: StatusSnapshot | None, now: float, enabled: bool, tz: tzinfo | None) -> tuple[str, str, str]:
    """(text, level, age) for the header; unknown is never shown as all clear."""
    if not enabled:
        return "status page off", "off", ""
    if snapshot is None:
        return "status page: checking…", "unknown", ""
    if not snapshot.ok or snapshot.fetched_at is None:
        since = snapshot.last_attempt_at
        when = f"unknown since {fmt.local_time(since, tz, with_date=False)}" if since else "unknown"
        if snapshot.fetched_at is not None:
            when = f"unknown; last read {fmt.age(now - snapshot.fetched_at)} ago"
        return "status page unknown", "unknown", when
    age_text = f"{fmt.age(now - snapshot.fetched_at)} ago"
    if snapshot.stale:
        age_text += " (stale)"
    ongoing = snapshot.codex_incidents_ongoing
    if ongoing:
        return f"Codex incident: {fmt.one_line(ongoing[0].name, 60)}", "bad", age_text
    bad = codex_components_in_trouble(snapshot)  # the verdict's rule too
    if bad:
        worst = bad[0]
        return f"{fmt.one_line(worst.name, 30)}: {worst.status.replace('_', ' ')}", "warn", age_text
    if snapshot.incidents_error:
        return "Codex components operational · incidents unknown", "unknown", age_text
    return "Codex operational", "ok", age_text


def verdict(turns: list[Turn], episode: Episode | None, snapshot: StatusSnapshot | None, now: float) -> tuple[str, str]:
    """OK / degraded / failing, with the reason in a few words.

    failing: an ongoing failure episode (no success since the last failure).
    degraded: a Codex incident or component problem, or failures in the last hour.
    """
    if episode is not None and episode.ongoing:
        n = len(episode.failures)
        classes = ", ".join(fmt.class_label(c) for c in episode.classes)
        return "failing", f"{n} failed turn{'s' if n != 1 else ''} in a row ({classes})"
    if snapshot is not None and snapshot.ok and snapshot.codex_incidents_ongoing:
        return "degraded", "Codex incident on the status page"
    if codex_components_in_trouble(snapshot):  # the header's rule too
        return "degraded", "a Codex component is degraded"
    recent = [t for t in turns if t.failed and now - t.at < 3600]
    if recent:
        return "degraded", f"{len(recent)} failure{'s' if len(recent) != 1 else ''} in the last hour, then a success"
    return "ok", "no failures in the last hour"


# --- the whole dashboard ----------------------------------------------------------


def usage_view(reading: tuple | None, session_id: str | None) -> UsageView | None:
    if reading is None:
        return None
    windows = tuple(UsageWindow(us.window_words(w[1], name), w[0], w[2]) for name, w in us.windows(reading))
    return UsageView(reading[us.AS_OF], session_id, windows, reading[us.PLAN_TYPE], reading[us.REACHED])


def meter(reading: tuple | None, now: float) -> tuple[str | None, str]:
    """The header's `5h 34% · wk 61%` and its level, from the windows that have not reset
    since they were read (one that has stands no longer where the figure says)."""
    current = [(name, w) for name, w in us.windows(reading) if w[2] is None or w[2] > now]
    if not current:
        return None, "ok"
    top = max(w[0] for _, w in current)
    level = "bad" if top >= us.FULL else ("warn" if top >= us.NEAR_FULL else "ok")
    return " · ".join(f"{name} {us.percent(w[0])}%" for name, w in current), level


def context_view(found: dict) -> ContextView | None:
    bands = found["context"]
    if not any(b["turns"] for b in bands["bands"] + bands["by_tokens"]):
        return None

    def band(b: dict) -> ContextBand:
        return ContextBand(b["band"], b["turns"], b["failures"], b["failure_rate"])

    threshold = found["context_threshold"]
    if threshold is not None:
        words = ctx.threshold_sentence(threshold)
        text = f"Threshold: {words[0].upper()}{words[1:]}."
    else:
        text = (f"No threshold: no band of context fill fails twice as often as the turns below "
                f"it, with at least {bands['min_turns']} turns on each side.")
    return ContextView(
        bands=tuple(band(b) for b in bands["bands"]),
        by_tokens=tuple(band(b) for b in bands["by_tokens"] if b["turns"]),
        threshold=text,
        threshold_percent=threshold["from_percent"] if threshold is not None else None,
        unknown=bands["unknown"],
    )


def now_view(advice: Any, episode: Episode | None, last_failure: Turn | None) -> NowView:
    from codexwatch.core.advice_wording import backoff_rule  # as build_dashboard's: after the first paint

    backoff = advice.backoff
    return NowView(
        action=advice.action,
        title=advice.title,
        evidence=tuple(advice.evidence),
        side=tuple(advice.side_beside_countdown),
        commands=tuple(advice.commands),
        confidence=advice.confidence,
        backoff_until=backoff.next_retry_at if backoff is not None else None,
        backoff_label=(f"Back off: {backoff_rule(backoff, advice.episode)}; next try"
                       if backoff is not None else None),
        episode=None,
        last_failure=last_failure,
        wizard_available=episode is not None,
    )


SPARK_BUCKET = 6 * 3600
SPARK_BUCKETS = 28  # 7 days of 6-hour buckets


def model_rows(stats_models: dict, turns: list[Turn], now: float) -> tuple[ModelRow, ...]:
    """Models first, each followed by its effort × Fast variants (when there is more than one)."""
    spark_by_model: dict[str, list[float]] = {}
    start = now - SPARK_BUCKET * SPARK_BUCKETS
    for t in turns:
        if t.failed and t.at >= start:
            buckets = spark_by_model.setdefault(t.model or "unknown", [0.0] * SPARK_BUCKETS)
            buckets[min(SPARK_BUCKETS - 1, int((t.at - start) // SPARK_BUCKET))] += 1
    variants: dict[str, list[dict]] = {}
    for v in stats_models.get("variants", []):
        variants.setdefault(v["model"], []).append(v)
    rows: list[ModelRow] = []
    models = sorted(stats_models.get("models", []), key=lambda m: -(m["7d"]["turns"]))
    for m in models:
        if not m["7d"]["turns"] and not m["all"]["turns"]:
            continue
        rows.append(_row(m["model"], 0, m, fmt.spark(spark_by_model.get(m["model"], []))))
        subs = variants.get(m["model"], [])
        if len(subs) > 1:
            for v in sorted(subs, key=lambda v: -(v["7d"]["turns"])):
                effort = f"effort {v['effort']}" if v.get("effort") else "default effort"
                fast = {True: "Fast on", False: "Fast off"}.get(v.get("fast"), "Fast ?")  # "?" is unknown everywhere in the UI
                rows.append(_row(f"{effort} · {fast}", 1, v, ""))
    return tuple(rows)


def _row(label: str, indent: int, data: dict, spark: str) -> ModelRow:
    windows = ("1h", "24h", "7d")
    return ModelRow(
        label=label,
        indent=indent,
        turns={w: data[w]["turns"] for w in windows},
        failures={w: data[w]["failures"] for w in windows},
        rates={w: data[w]["failure_rate"] for w in windows},
        lost_minutes=data["7d"]["lost_minutes"],
        lost_tokens=data["7d"]["lost_tokens"],
        spark=spark,
    )


def heatmap_view(how: dict, tz: tzinfo | None) -> HeatmapView | None:
    if not any(any(row) for row in how["turns"]):
        return None
    name = "local time"
    if tz is not None:
        name = str(tz)
    return HeatmapView(
        failures=tuple(tuple(r) for r in how["failures"]),
        turns=tuple(tuple(r) for r in how["turns"]),
        quiet=frozenset((d, h) for d, h in how.get("quietest", [])),
        tz_name=name,
    )


def parser_badge(parser: dict) -> tuple[float | None, str]:
    share = parser.get("understood")
    notes = []
    for version, row in parser.get("by_version", {}).items():
        unknown = row.get("unknown_types") or {}
        if unknown:
            names = ", ".join(sorted(unknown)[:3])
            notes.append(f"{version}: {len(unknown)} new line type{'s' if len(unknown) != 1 else ''} ({names})")
    if parser.get("unsupported_files"):
        notes.append(f"{parser['unsupported_files']} old-format file{'s' if parser['unsupported_files'] != 1 else ''}")
    return share, "; ".join(notes[:2])


def build_dashboard(
    turns: list[Turn],
    health: list[FileHealth],
    snapshot: StatusSnapshot | None,
    now: float,
    tz: tzinfo | None,
    loading: Loading = Loading(finished=True),
    status_enabled: bool = True,
    triage: bool = False,
    catalogue: Any = None,
) -> DashboardView:
    """Everything the screens show. Heavy on a long history (a fold over every turn):
    the App calls it in a worker thread. `triage`: also the wizard's steps and the report.
    `catalogue`: Codex's own model list (core.catalogue), when there is one."""
    from codexwatch.core import stats
    from codexwatch.core.advice import advise, of_the_week

    fold = stats.StatsFold(now, tz).add(turns)  # every figure below from one pass over the turns
    all_episodes = fold.episodes()
    current = stats.current_of(all_episodes, now)
    failures = tuple(t for t in turns if t.failed)
    last_failure = max(failures, key=lambda t: t.at) if failures else None
    found = fold.context()
    grid = fold.hour_of_week()
    # The advice's off-peak hint (an episode's) reads the last 7 days' grids: these, when
    # the window holds nothing else (the default window, mostly), else it counts its own.
    # Counting them again was a quarter of each rebuild while an episode ages.
    week = grid if current is not None and len(of_the_week(turns, now)) == len(turns) else None
    advice = (advise(current, turns, snapshot, now, tz, catalogue=catalogue,
                     threshold=found["context_threshold"], week=week) if loading.finished else None)
    reading, reading_session = fold.usage()
    meter_text, meter_level = meter(reading, now)
    v, reason = verdict(turns, current, snapshot, now)
    if not loading.finished and not turns:
        v, reason = "loading", "reading history"
    elif loading.error and not turns:  # nothing read is not "no failures"
        v, reason = "unknown", "the history could not be read"
    st_text, st_level, st_age = status_summary(snapshot, now, status_enabled, tz)
    share, note = parser_badge(stats.parser_health(health))
    header = HeaderView(
        verdict=v,
        verdict_reason=reason,
        status_text=st_text,
        status_level=st_level,
        status_age=st_age,
        running=len(fold.sessions_running()),
        parser_share=share,
        parser_note=note,
        loading=loading,
        meter=meter_text,
        meter_level=meter_level,
    )
    latest = all_episodes[-1] if all_episodes else None
    steps, report = triage_of(advice, current, latest, turns, snapshot, now, tz) if triage else ((), None)
    return DashboardView(
        header=header,
        now=now_view(advice, current, last_failure) if advice is not None else None,
        failures=failures,
        models=model_rows(fold.model_stats(), turns, now),
        heatmap=heatmap_view(grid, tz),
        snapshot=snapshot,
        episode=current,
        advice=advice,
        latest_episode=latest,
        status_enabled=status_enabled,
        wizard_steps=steps,
        report=report,
        usage=usage_view(reading, reading_session),
        context=context_view(found),
    )


def triage_of(advice: Any, current: Episode | None, latest: Episode | None, turns: list[Turn],
              snapshot: StatusSnapshot | None, now: float, tz: tzinfo | None) -> tuple[tuple, Any]:
    """The wizard's steps (of the current episode) and the report (of the current episode,
    else the latest one)."""
    from pathlib import Path

    from codexwatch.core.report import build_report
    from codexwatch.core.triage import wizard_steps

    steps = tuple(wizard_steps(advice, current, snapshot, tz)) if current is not None and advice is not None else ()
    episode = current or latest
    report = build_report(episode, turns, snapshot, now, tz, home=str(Path.home())) if episode is not None else None
    return steps, report
