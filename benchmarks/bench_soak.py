"""Soak (issue 6): the real dashboard's memory while a simulated day of sessions is written.

    python benchmarks/bench_soak.py [--history DIR] [--sessions 60] [--minutes 3]

Runs `codexwatch --codex-home HOME --no-status` (default 7-day window, warm index) in a
140×45 tmux window on a scratch home holding the history (date folders symlinked; today's
left out, so the day written lands in a new date folder). Once the history is painted, a
writer renders `--sessions` sessions the way make_history.py does (the recordings' mix of
versions, TUI and exec, 12 % failed turns, tool output sizes; about one day of the 1 GiB
history) and appends them line by line at an even pace over `--minutes`, each session
ending now. The app's resident memory (its process tree) is read from /proc every second,
through the writing and 30 s after. Reports RSS at the start, max, end, and the slope
while writing. Writes benchmarks/out/results-soak.json.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import threading
import time
from pathlib import Path

import harness
from harness import OUT, REPO

AFTER_S = 30


def simulated_day(n: int, seed: int) -> list[tuple[str, list[str], int]]:
    """(session id, lines, turns) for `n` sessions, each ending when it is written."""
    gen = harness.load_generator()
    rng = random.Random(seed)
    recordings = gen.load_templates()
    pool = gen.output_pool(recordings, rng)
    shares, kinds = zip(*gen.session_kinds(recordings))
    midnight = time.mktime(time.strptime(time.strftime("%Y-%m-%d"), "%Y-%m-%d"))
    out = []
    for _ in range(n):
        plan = gen.plan_session(rng, rng.choices(kinds, shares)[0], pool, 0.12)
        start = max(int(time.time()) - gen.duration(plan), int(midnight) + 1)
        session_id, text, _, _ = gen.render_session(plan, start, rng, pool)
        out.append((session_id, text.splitlines(keepends=True), len(plan.blocks)))
    return out


def write_day(home: Path, day: list, seconds: float, log: dict) -> None:
    folder = harness.today_folder(home)
    total = sum(len(lines) for _, lines, _ in day)
    pace, began, written = seconds / total, time.monotonic(), 0
    for session_id, lines, _ in day:
        path = folder / f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S')}-{session_id}.jsonl"
        with open(path, "a") as f:
            for line in lines:
                f.write(line)
                f.flush()
                written += 1
                log["bytes"] = log.get("bytes", 0) + len(line.encode())
                delay = began + written * pace - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
    log["lines"], log["wrote_s"] = written, round(time.monotonic() - began, 1)


def slope_mb_per_min(samples: list) -> float:
    """Least-squares slope of RSS (MB) over time (min)."""
    n = len(samples)
    mt = sum(t for t, _ in samples) / n
    mr = sum(r for _, r in samples) / n
    var = sum((t - mt) ** 2 for t, _ in samples)
    return sum((t - mt) * (r - mr) for t, r in samples) / var * 60 if var else 0.0


def soak(source: Path, sessions: int, minutes: float, seed: int) -> dict:
    day = simulated_day(sessions, seed)
    with tempfile.TemporaryDirectory(prefix="cw-soak-") as tmp, harness.Tmux() as tmux:
        home, xdg = harness.scratch_home(source, Path(tmp) / "home"), Path(tmp) / "xdg"
        primed = harness.measure(
            harness.codexwatch_cmd("stats", "--json", "--codex-home", str(home), "--no-status"),
            OUT / "runs" / "soak-prime.out", env={**os.environ, "XDG_CACHE_HOME": str(xdg)},
            cwd=REPO)
        assert primed.returncode == 0, primed.stderr_tail
        pid = tmux.run("soak", harness.codexwatch_cmd("--codex-home", str(home), "--no-status"),
                       {"XDG_CACHE_HOME": str(xdg), "TERM": "xterm-256color"})
        tmux.wait_for("soak", harness.dashboard_loaded, timeout=120)
        time.sleep(3)
        log: dict = {}
        writer = threading.Thread(target=write_day, args=(home, day, minutes * 60, log), daemon=True)
        began = time.monotonic()
        writer.start()
        samples, cpu0 = [], harness.proc_usage(pid)[0]
        while writer.is_alive() or time.monotonic() - began < log.get("wrote_s", 1e9) + AFTER_S:
            cpu, rss = harness.proc_usage(pid)
            samples.append((round(time.monotonic() - began, 2), round(rss / 1e6, 1)))
            time.sleep(1)
        cpu = harness.proc_usage(pid)[0] - cpu0
        screen = tmux.screen("soak")
    writing = [s for s in samples if s[0] <= log["wrote_s"]]
    rss = [r for _, r in samples]
    turns = sum(t for _, _, t in day)
    return {"sessions": sessions, "turns_written": turns, "lines_written": log["lines"],
            "mb_written": round(log["bytes"] / 1e6, 1), "wrote_s": log["wrote_s"],
            "rss_start_mb": rss[0], "rss_max_mb": max(rss), "rss_end_mb": rss[-1],
            "slope_mb_per_min_while_writing": round(slope_mb_per_min(writing), 2),
            "kb_per_turn_written": round((rss[-1] - rss[0]) * 1000 / turns, 1),
            "app_cpu_s": round(cpu, 1), "samples": samples,
            "header_at_end": screen.splitlines()[0].strip()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", type=Path, default=OUT / "history-100m")
    ap.add_argument("--size", default="100MiB", help="size of the history built when missing")
    ap.add_argument("--sessions", type=int, default=60, help="sessions in the simulated day")
    ap.add_argument("--minutes", type=float, default=3.0, help="how long the day takes to write")
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--output", type=Path, default=OUT / "results-soak.json")
    args = ap.parse_args(argv)

    source = args.history.resolve()
    manifest = harness.ensure_history(source, harness.load_generator().parse_size(args.size), seed=2)
    load_before = os.getloadavg()
    print(f"history {source}; load average {load_before[0]:.2f}; writing {args.sessions} "
          f"sessions over {args.minutes:g} min ...", flush=True)
    r = soak(source, args.sessions, args.minutes, args.seed)
    table = ("| written | RSS start (MB) | max (MB) | end (MB) | slope while writing (MB/min) "
             "| growth per turn written (KB) | app CPU (s) |\n|---|---:|---:|---:|---:|---:|---:|\n"
             f"| {r['sessions']} sessions, {r['turns_written']} turns, {r['mb_written']} MB "
             f"in {r['wrote_s']:.0f} s | {r['rss_start_mb']:.0f} | {r['rss_max_mb']:.0f} "
             f"| {r['rss_end_mb']:.0f} | {r['slope_mb_per_min_while_writing']:.2f} "
             f"| {r['kb_per_turn_written']:.1f} | {r['app_cpu_s']:.1f} |")
    print("\n" + table + "\n\nheader at the end: " + r["header_at_end"])
    harness.write_results(args.output, {
        **harness.result_head("soak", argv, load_average_before=load_before,
                              load_average_after=os.getloadavg()),
        "history": {"path": str(source), **{k: manifest[k] for k in ("bytes", "files", "turns")}},
        "result": r, "table": table,
    })
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
