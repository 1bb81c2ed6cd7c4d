"""Responsiveness while Codex streams (issue 15): a long window in the dashboard, a line
appended every 100 ms; how long a key press takes to repaint, and a failure to show.

    python benchmarks/bench_responsive.py [--turns 100000] [--seconds 20] [--interval 0.1]
        [--failure-every 10]

The app runs headless (`App.run_test`), its view built by its own worker as in use. Its
facts are `--turns` turns cloned from the real CLI recordings (`tests/fixtures/real-cli`:
every recorded outcome and failure, new ids, spread over the last 30 days, 12 % failed as
recorded), given as the history. Every `--interval` seconds a new failed turn arrives the
way the live follower hands it on (`TurnsChanged` with every turn, the failed picked out
in a thread); reading the file it came from is `bench_latency.py`'s part. Meanwhile keys
are pressed, 0.1-0.4 s apart: `2` and `1` (tab switches) and `down` / `up` (the failures
table's cursor), each sent as the terminal driver sends it and timed until the screen
refresh after the key took effect (the tab shown, the cursor moved). Each arrival is timed
until the refresh that shows it as the table's first row. (Not `Pilot.press`: it waits
until the whole process is idle, which a process building views never is.)

Targets: key press to repaint under 100 ms at p95; arrival to painted row under 250 ms at
median. Writes benchmarks/out/results-responsive.json.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import time
from dataclasses import replace
from pathlib import Path

import harness
from harness import OUT, REPO, median, percentile

KEY_P95_MS, ARRIVAL_MEDIAN_MS = 100, 250


def cloned_turns(n: int, now: float, seed: int = 15) -> list:
    """`n` turns cloned from every recording, oldest first, over the last 30 days."""
    from codexwatch.sources.history import load_history

    recorded = []
    for folder in sorted((REPO / "tests" / "fixtures" / "real-cli").iterdir()):
        if folder.is_dir():
            recorded += [t for t in load_history(folder, None, now, use_cache=False).turns
                         if t.outcome in ("ok", "failed")]
    ok = [t for t in recorded if not t.failed]
    failed = [t for t in recorded if t.failed]
    rng, span, out = random.Random(seed), 30 * 86400, []
    for i in range(n):
        model = rng.choice(failed if rng.random() < 0.12 else ok)
        start = now - span + span * i / n
        took = (model.ended_at or 0) - (model.started_at or 0)
        out.append(replace(model, session_id=f"bench-{i // 4:07d}", turn_id=f"turn-{i:07d}",
                           started_at=start, ended_at=start + max(took, 1.0), live=False))
    return out


async def measure(turns: list, seconds: float, interval: float,
                  failure_every: int) -> tuple[list[float], list[float], int]:
    from textual import events
    from textual.widgets import TabbedContent

    from codexwatch.ui import messages as msg
    from codexwatch.ui.app import AppConfig, CodexWatchApp
    from codexwatch.ui.widgets.failures import FailuresTable, turn_key

    now = time.time()
    app = CodexWatchApp(AppConfig(codex_home=REPO, since_seconds=None, status_enabled=False, bell=False,
                                  notify=False, load_history=False, follow=False))
    keys_ms: list[float] = []
    arrivals_ms: list[float] = []
    stop = asyncio.Event()

    async def refreshed() -> None:
        done = asyncio.get_running_loop().create_future()
        app.call_after_refresh(lambda: done.done() or done.set_result(None))
        await done

    async def press(key: str) -> float:
        tabs, table = app.screen.query_one(TabbedContent), app.screen.query_one(FailuresTable)
        if key in ("1", "2"):
            want = {"1": "failures", "2": "models"}[key]
            took_effect = lambda: tabs.active == want  # noqa: E731
        else:
            row = table.cursor_row
            took_effect = lambda: table.cursor_row != row  # noqa: E731
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        began = time.perf_counter()
        app._driver.send_message(event)
        await harness.until(took_effect, 5.0, "a key press took no effect")
        await refreshed()
        return (time.perf_counter() - began) * 1000

    async def feed() -> None:
        facts, n = list(turns), 0
        template = next(t for t in reversed(turns) if t.failed)
        while not stop.is_set():
            await asyncio.sleep(interval)
            n += 1
            at = time.time()
            turn_no, line_no = divmod(n, failure_every)
            if line_no:  # a line of the turn being written: it is still running
                new = replace(template, session_id="bench-live", turn_id=f"live-{turn_no:05d}", started_at=at - 2,
                              ended_at=None, outcome="incomplete", error_class=None, live=True, tokens=line_no)
            else:  # its last line: it failed
                new = replace(template, session_id="bench-live", turn_id=f"live-{turn_no - 1:05d}",
                              started_at=at - 2, ended_at=at)
            facts = facts[:-1] + [new] if facts[-1].session_id == "bench-live" and facts[-1].turn_id == new.turn_id \
                else facts + [new]

            def message(facts=facts):
                return msg.TurnsChanged(facts, [], tuple(t for t in facts if t.failed))

            began = time.perf_counter()
            app.post_message(await asyncio.to_thread(message))
            if line_no:
                continue
            table, key = app.screen.query_one(FailuresTable), turn_key(new)
            while not (table.selected_key and table._keys and table._keys[0] == key) and not stop.is_set():
                await asyncio.sleep(0.002)
            await refreshed()
            arrivals_ms.append((time.perf_counter() - began) * 1000)

    async with app.run_test(headless=True, size=(140, 45)) as pilot:
        app.post_message(msg.HistoryLoaded(turns, []))
        await app.settled()
        await pilot.pause()
        feeder = asyncio.create_task(feed())
        rng, end = random.Random(7), time.monotonic() + seconds
        sequence = ["2", "1", "down", "down", "up", "2", "1", "down", "up"]
        while time.monotonic() < end:
            await asyncio.sleep(rng.uniform(0.1, 0.4))
            keys_ms.append(await press(sequence[len(keys_ms) % len(sequence)]))
        stop.set()
        await feeder
        rows = app.screen.query_one(FailuresTable).row_count
    return keys_ms, arrivals_ms, rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between appended lines")
    ap.add_argument("--failure-every", type=int, default=10,
                    help="every Nth line ends the turn being written as failed (default 10: a failure a second)")
    ap.add_argument("--output", type=Path, default=OUT / "results-responsive.json")
    args = ap.parse_args(argv)

    turns = cloned_turns(args.turns, time.time())
    gc.freeze()  # as the dashboard's history load leaves its turns: out of every collection's walk
    load_before = os.getloadavg()
    keys, arrivals, rows = asyncio.run(measure(turns, args.seconds, args.interval, args.failure_every))
    summary = {name: {"n": len(values), "median": round(median(values), 1), "p95": round(percentile(values, 95), 1),
                      "max": round(max(values), 1)}
               for name, values in (("key_to_repaint_ms", keys), ("arrival_to_painted_ms", arrivals))}
    key_ok = summary["key_to_repaint_ms"]["p95"] < KEY_P95_MS
    arrival_ok = summary["arrival_to_painted_ms"]["median"] < ARRIVAL_MEDIAN_MS
    verdict = (f"{args.turns:,} turns, a line every {args.interval * 1000:.0f} ms, a failure every "
               f"{args.failure_every}: key press to repaint p95 "
               f"{summary['key_to_repaint_ms']['p95']:.0f} ms ({'meets' if key_ok else 'misses'} < {KEY_P95_MS}); "
               f"arrival to painted row median {summary['arrival_to_painted_ms']['median']:.0f} ms "
               f"({'meets' if arrival_ok else 'misses'} < {ARRIVAL_MEDIAN_MS})")
    print(summary)
    print(verdict)
    harness.write_results(args.output, {
        **harness.result_head("responsive", argv, load_average_before=load_before, load_average_after=os.getloadavg()),
        "turns": args.turns, "interval_s": args.interval, "failure_every": args.failure_every,
        "seconds": args.seconds, "failures_rows": rows,
        "summary": summary, "verdict": verdict, "keys_ms": keys, "arrivals_ms": arrivals,
    })
    print(f"wrote {args.output}")
    return 0 if key_ok and arrival_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
