"""Regenerate every screenshot in screenshots/ from the demo data: `python scripts/screenshots.py`.

Runs the app headless on the demo Codex home (bundled real recordings, re-timed), with the
bundled status page, the demo's simulated `codexwatch run` supervisors as they stand
`RUNS_AT_S` into the replay, a fixed theme and sizes, and saves one SVG per screen.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codexwatch.config import Settings  # noqa: E402
from codexwatch.demo import Demo, Step  # noqa: E402
from codexwatch.ui.app import AppConfig, CodexWatchApp  # noqa: E402

OUT = ROOT / "screenshots"
# The demo's runs as they stand this long into the replay: the --tasks job's task 1 backing
# off after capacity on gpt-6-sol (a few seconds left), task 2 running, task 3 ok; the other
# run gave up on a usage limit.
RUNS_AT_S = 27.0

# name, size, keys pressed after loading
SHOTS = (
    ("dashboard", (120, 40), ()),
    ("dashboard-narrow", (60, 15), ()),
    ("models", (120, 40), ("2",)),
    ("when", (120, 40), ("3",)),
    ("status", (120, 40), ("4",)),
    ("runs", (120, 30), ("5",)),
    ("wizard", (120, 36), ("w", "n", "n")),
    ("report", (120, 36), ("r",)),
    ("help", (100, 32), ("question_mark",)),
    ("palette", (120, 30), ("ctrl+p",)),
)


async def shoot(config: AppConfig, name: str, size: tuple[int, int], keys: tuple[str, ...]) -> Path:
    app = CodexWatchApp(config)
    async with app.run_test(size=size) as pilot:
        for _ in range(200):
            if app.loading.finished and app.snapshot is not None and app.view and app.view.now:
                break
            await pilot.pause(0.05)
        await app.settled()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.1)
        await app.settled()
        await pilot.pause(0.2)
        path = app.save_screenshot(f"{name}.svg", path=str(OUT))
    return Path(path)


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    settings = Settings(theme="textual-dark", bell=False, notify=False)
    with Demo() as demo:
        # The live part of the demo, played once: capacity on gpt-6-sol, twice.
        stop = asyncio.Event()
        session = await demo.play(Step(0, "capacity", "gpt-6-sol"), None, stop)
        await demo.play(Step(0, "capacity_midturn", "gpt-6-sol"), session, stop)
        config = demo.app_config(settings, demo=None, follow=False, clock_tick=False)
        for name, size, keys in SHOTS:
            # Staged afresh for each shot: a state file's heartbeat older than 30 s reads as ended.
            demo.clear_runs()
            demo.stage_runs(RUNS_AT_S)
            print(await shoot(config, name, size, keys))
    home = OUT / "no-codex-home"
    first = AppConfig(codex_home=home, status_enabled=False, load_history=False, bell=False, notify=False,
                      home_problem="No Codex home at ~/.codex. Set CODEX_HOME or pass --codex-home DIR "
                                   "(or try codexwatch --demo).")
    print(await shoot(replace(first, codex_home=Path("~/.codex")), "first-run", (100, 30), ()))


if __name__ == "__main__":
    asyncio.run(main())
