"""Shared helpers for the UI tests: a Codex home from the real recordings, a fixed clock,
and a way to append a failed turn as Codex would."""

from __future__ import annotations

import asyncio
import random
import shutil
from datetime import datetime, timezone
from pathlib import Path

from codexwatch.core.models import Component, Incident, IncidentUpdate, Overall, StatusSnapshot
from codexwatch.demo import fresh_ids, load_recording, recording_ids, retime, split_turns
from codexwatch.ui.app import AppConfig, CodexWatchApp

REAL_CLI = Path(__file__).resolve().parents[1] / "fixtures" / "real-cli"
# Just after the recordings were made (2026-11-29 08:35-08:46 UTC).
NOW = datetime(2026, 11, 29, 8, 50, tzinfo=timezone.utc).timestamp()
UTC = timezone.utc


def make_home(tmp_path: Path, *folders: str) -> Path:
    home = tmp_path / "codex-home"
    (home / "sessions").mkdir(parents=True)
    for name in folders or ("exec-0.171.0", "tui-0.171.0"):
        shutil.copytree(REAL_CLI / name / "sessions", home / "sessions", dirs_exist_ok=True)
    for path in home.rglob("*.jsonl"):
        path.chmod(0o644)
    return home


def config(home: Path, **kw) -> AppConfig:
    base = dict(
        codex_home=home,
        since_seconds=None,
        clock=lambda: NOW,
        tz=UTC,
        status_enabled=False,
        clock_tick=False,
        follow=False,
        bell=False,
        notify=False,
        theme="textual-dark",
    )
    base.update(kw)
    return AppConfig(**base)


def failed_turn_lines(scenario: str, at: float, session_id: str, seed: int = 1, model: str | None = None) -> list[bytes]:
    """The lines of one recorded turn, moved to `at`, inside the session `session_id`."""
    lines = load_recording(scenario)
    ids = fresh_ids(lines, random.Random(seed))
    recorded, _ = recording_ids(lines)
    ids[recorded] = session_id
    _, turns = split_turns(lines)
    models = {"gpt-6-sol": model, "gpt-6.1-sol": model} if model else {}
    return retime(turns[0], at, ids, models)


def tui_session(home: Path) -> tuple[Path, str]:
    path = next(home.rglob("rollout-2026-11-29T08-42-06-*.jsonl"))
    return path, "01a22677-fa5d-7172-925b-dcb719d2880b"


def append(path: Path, lines: list[bytes]) -> None:
    """Lines written to a rollout one by one, as Codex writes them."""
    with open(path, "ab") as fh:
        for line in lines:
            fh.write(line)
            fh.flush()


def failing_home(tmp_path: Path) -> tuple[Path, Path, str]:
    """The recordings plus a fresh capacity failure in the TUI session: an ongoing episode."""
    home = make_home(tmp_path)
    session, sid = tui_session(home)
    append(session, failed_turn_lines("capacity", NOW - 120, sid, seed=3, model="gpt-6-sol"))
    return home, session, sid


async def wait_until(pilot, predicate, timeout: float = 10.0) -> bool:
    """Let the app run until predicate() holds (no timing assertion: a generous ceiling)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        if predicate():
            return True
        await pilot.pause(0.05)
    return predicate()


async def history_shown(pilot) -> bool:
    """Let the app run until its history is read and the view of it built."""
    app = pilot.app
    return await wait_until(pilot, lambda: app.loading.finished and app.view and app.view.now)


def snapshot_ok(now: float = NOW, incident: bool = False) -> StatusSnapshot:
    incidents = []
    if incident:
        incidents.append(
            Incident(
                id="inc-1",
                name="Elevated errors on Codex [bold]responses[/]",
                status="investigating",
                impact="major",
                started_at=now - 1800,
                updated_at=now - 600,
                resolved_at=None,
                codex=True,
                url="https://status.openai.com/incidents/inc-1",
                updates=[IncidentUpdate(now - 600, "investigating", "We are looking into [red]errors[/].")],
                published_at=now - 1200,
            )
        )
    return StatusSnapshot(
        ok=True,
        error=None,
        source="https://status.openai.com/proxy/status.openai.com",
        fetched_at=now - 42,
        stale=False,
        overall=Overall("minor" if incident else "none", "Partial outage" if incident else "All Systems Operational"),
        components=[
            Component("c1", "Codex", "degraded_performance" if incident else "operational", group="Codex"),
            Component("c2", "Codex API", "operational", group="Codex"),
        ],
        incidents=incidents,
    )


__all__ = ["CodexWatchApp", "config", "make_home", "NOW", "UTC"]


def hanging_transport():
    """A status transport that never answers: snapshots then come only from the test."""
    import httpx

    async def hang(request):
        await asyncio.Event().wait()

    return httpx.MockTransport(hang)
