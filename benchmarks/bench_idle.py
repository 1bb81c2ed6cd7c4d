"""Idle CPU (issues 6 and 14): the real dashboard, history loaded, nothing written, for a minute.

    python benchmarks/bench_idle.py [--scenario as-is,bulk-copy,small,small-fresh]
        [--history DIR] [--size 100MiB] [--seconds 60] [--no-events]

Runs `codexwatch --codex-home DIR --no-status` (default window, 7 days) in a 140×45 tmux
window with a warm index, waits until the history is painted and 5 s more, then reads the
process's utime + stime from /proc every second for `--seconds`. Reports the share of one
core (total CPU seconds over wall seconds) and the busiest second; target < 1 %. CPU is
the dashboard's own (per process), which stays meaningful on a machine others load.

Scenarios (several, comma-separated, run one after another):

- `as-is`: `--history` as it is (default: 100 MiB over 90 days, seed 2, built into
  benchmarks/out/history-100m if missing);
- `bulk-copy`: that history copied with its mtimes, plus 5,000 (`--copied`) rollouts of the
  small-sessions history copied in with fresh mtimes (a restored backup, an `rsync`
  without `-t`): old contents, new mtimes, all inside the 7-day window;
- `copied-live`: the same 5,000 copied in while the dashboard runs (after its first paint;
  then 20 s for it to read them and settle, its CPU for that reported apart);
- `small`: a history of many small sessions (`--small-size`, 1 GiB: ~31,000 files; seed 3,
  benchmarks/out/history-small-1g), mtimes as Codex leaves them;
- `small-fresh`: the same files all copied with fresh mtimes.

Copies go to a temporary folder under /tmp, removed afterwards. `--no-events`: the
dashboard runs with `WATCHFILES_FORCE_POLLING=1`, so no file events at all (what macOS
gives for appends): the follower's bounded polling alone. Writes
benchmarks/out/results-idle.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import harness
import homes
from harness import OUT, REPO

TARGET_PERCENT = 1.0
SCENARIOS = ("as-is", "bulk-copy", "copied-live", "small", "small-fresh")


def sample_idle(home: Path, since: str, seconds: int, no_events: bool = False,
                after_paint=None) -> dict:
    env = {"TERM": "xterm-256color"}
    if no_events:
        env["WATCHFILES_FORCE_POLLING"] = "1"
    with tempfile.TemporaryDirectory(prefix="cw-idle-") as xdg, harness.Tmux() as tmux:
        primed = harness.measure(
            harness.codexwatch_cmd("stats", "--json", "--codex-home", str(home), "--since", since,
                                   "--no-status"),
            OUT / "runs" / "idle-prime.out", env={**os.environ, "XDG_CACHE_HOME": xdg}, cwd=REPO)
        assert primed.returncode == 0, primed.stderr_tail
        began = time.perf_counter()
        pid = tmux.run("idle", harness.codexwatch_cmd("--codex-home", str(home), "--no-status",
                                                      "--since", since),
                       {"XDG_CACHE_HOME": xdg, **env})
        tmux.wait_for("idle", harness.dashboard_loaded, timeout=180)
        painted = time.perf_counter() - began
        time.sleep(5)  # the follower starts, the first clock ticks pass
        extra = {}
        if after_paint is not None:  # e.g. copy thousands of files in while it runs
            cpu_a, _ = harness.proc_usage(pid)
            began_a = time.monotonic()
            after_paint()
            time.sleep(20)  # the app reads what came, and settles
            cpu_b, _ = harness.proc_usage(pid)
            extra = {"after_paint_cpu_s": round(cpu_b - cpu_a, 2),
                     "after_paint_wall_s": round(time.monotonic() - began_a, 1)}
        cpu0, rss0 = harness.proc_usage(pid)
        began, last, per_second = time.monotonic(), cpu0, []
        for _ in range(seconds):
            time.sleep(1)
            cpu, rss = harness.proc_usage(pid)
            per_second.append(round(cpu - last, 3))
            last = cpu
        wall = time.monotonic() - began
        threads = len(os.listdir(f"/proc/{pid}/task"))
    return {"wall_s": round(wall, 2), "cpu_s": round(last - cpu0, 3),
            "percent_of_core": round((last - cpu0) / wall * 100, 2),
            "busiest_second_cpu_s": max(per_second), "per_second_cpu_s": per_second,
            "rss_mb": round(rss / 1e6, 1), "rss_start_mb": round(rss0 / 1e6, 1), "threads": threads,
            "warm_paint_s": round(painted, 2), "no_events": no_events, **extra}


def describe(home: Path) -> dict:
    files = homes.rollouts(home)
    now = time.time()
    return {"path": str(home), "files": len(files), "bytes": sum(p.stat().st_size for p in files),
            "fresh_mtimes_7d": sum(1 for p in files if now - p.stat().st_mtime < 7 * 86400),
            "fresh_mtimes_30min": sum(1 for p in files if now - p.stat().st_mtime < 1800)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="as-is",
                    help=f"comma-separated, of {', '.join(SCENARIOS)} (default as-is)")
    ap.add_argument("--history", type=Path, default=OUT / "history-100m")
    ap.add_argument("--size", default="100MiB", help="size of the history built when missing")
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--small-history", type=Path, default=OUT / "history-small-1g")
    ap.add_argument("--small-size", default="1GiB")
    ap.add_argument("--copied", type=int, default=5000, help="rollouts copied in (bulk-copy)")
    ap.add_argument("--since", default="7d", help="the dashboard's window (its default: 7d)")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--no-events", action="store_true",
                    help="WATCHFILES_FORCE_POLLING=1: no file events, polling alone")
    ap.add_argument("--output", type=Path, default=OUT / "results-idle.json")
    args = ap.parse_args(argv)
    scenarios = [s.strip() for s in args.scenario.split(",") if s.strip()]
    unknown = set(scenarios) - set(SCENARIOS)
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")

    gen = harness.load_generator()
    base = args.history.resolve()
    manifest = harness.ensure_history(base, gen.parse_size(args.size), seed=args.seed)
    small = None
    if {"bulk-copy", "copied-live", "small", "small-fresh"} & set(scenarios):
        small = args.small_history.resolve()
        homes.small_history(small, gen.parse_size(args.small_size))
    harness.compile_bytecode()
    rows, runs = [], []
    for scenario in scenarios:
        with tempfile.TemporaryDirectory(prefix=f"cw-idle-{scenario}-") as tmp:
            after_paint = None
            if scenario == "as-is":
                home = base
            elif scenario == "small":
                home = small
            elif scenario == "copied-live":
                home = Path(tmp) / "home"
                homes.bulk_copied(base, home, small, 0)

                def after_paint(home=home) -> None:
                    print(f"{scenario}: copying {args.copied:,} rollouts in while it runs ...", flush=True)
                    homes.bulk_copied(None, home, small, args.copied)
            else:
                home = Path(tmp) / "home"
                print(f"{scenario}: copying ...", flush=True)
                homes.bulk_copied(base if scenario == "bulk-copy" else None, home, small,
                                  args.copied if scenario == "bulk-copy" else None)
            shape = describe(home)
            load_before = os.getloadavg()
            print(f"{scenario}: {home} ({shape['bytes'] / 2**20:.0f} MiB, {shape['files']} files, "
                  f"{shape['fresh_mtimes_7d']} written in the last 7 days by mtime); load average "
                  f"{load_before[0]:.2f}; sampling {args.seconds} s ...", flush=True)
            result = sample_idle(home, args.since, args.seconds, args.no_events, after_paint)
            if after_paint is not None:
                shape = describe(home)
            if home != base and home != small:
                shutil.rmtree(home, ignore_errors=True)
        print(f"  {result['percent_of_core']:.2f} % of a core", flush=True)
        runs.append({"scenario": scenario, "home": shape, "load_average_before": load_before,
                     "load_average_after": os.getloadavg(), "result": result})
        label = {"as-is": f"{Path(shape['path']).name}, as is", "bulk-copy":
                 f"{base.name} + {args.copied:,} copied in, fresh mtimes",
                 "copied-live": f"{base.name}, {args.copied:,} copied in while it ran",
                 "small": f"{small.name if small else ''} (small sessions), mtimes as written",
                 "small-fresh": f"{small.name if small else ''} (small sessions), all fresh mtimes"}[scenario]
        rows.append(f"| {label} | {shape['files']:,} | {shape['fresh_mtimes_7d']:,} | {args.since} "
                    f"| {'no (polling)' if args.no_events else 'yes'} | {result['cpu_s']:.2f} "
                    f"| **{result['percent_of_core']:.2f}** | {result['busiest_second_cpu_s']:.2f} "
                    f"| {result['rss_mb']:.0f} | {load_before[0]:.1f} |")
    table = ("| home | files | mtime in window | window | file events | CPU over the minute (s) "
             "| % of one core | busiest second (s) | RSS (MB) | load average |\n"
             "|---|---:|---:|---|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows))
    worst = max(r["result"]["percent_of_core"] for r in runs)
    verdict = (f"idle at most {worst:.2f} % of one core over {args.seconds} s: "
               f"{'meets' if worst < TARGET_PERCENT else 'misses'} the {TARGET_PERCENT:g} % target")
    print("\n" + table + "\n\n" + verdict)
    harness.write_results(args.output, {
        **harness.result_head("idle", argv),
        "history": {"path": str(base), "since": args.since,
                    **{k: manifest[k] for k in ("bytes", "files", "turns", "days", "seed")}},
        "runs": runs, "verdict": verdict, "table": table,
    })
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
