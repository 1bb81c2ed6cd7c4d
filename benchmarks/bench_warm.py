"""Warm start (issue 6): `codexwatch stats` with and without its index cache, against
ccusage (which has none), and the dashboard's first paint with the history loaded.

    python benchmarks/bench_warm.py [--history DIR] [--runs 5] [--paint-runs 5]
    python benchmarks/bench_warm.py --shapes default,small,giant [--since all,3650d,7d] [--runs 5]

(a) stats: per run, a fresh empty cache folder (XDG_CACHE_HOME) and
    `codexwatch stats --json --since all --no-status` twice in it: cold (builds the index),
    then warm (reads it); ccusage `codex daily --json --offline` in the same round.
(b) dashboard: the real `codexwatch --codex-home DIR --no-status` in a 140×45 tmux
    window, timed from spawning it to the first screen whose header shows the parser share
    (only there once the history is read and rendered; tmux's capture polled every 10 ms).
    Warm: the cache filled by a `stats --since all` run first. Cold: an empty cache
    (informational), with the time the progress line first shows.

(c) with --shapes (issue 14): `stats` only, on each make_history.py shape (its history
    under benchmarks/out, built if missing) and each window of --since (a window reaching
    back past the whole history, 3650d, must be warm as `all` is; 7d is the default): per
    round, every shape and window in turn, a fresh cache, cold then warm; ccusage once a
    round per shape.

The page cache is warm (one untimed grep pass) and codexwatch byte-compiled (as pip
installs it). Timed runs are not sampled (see harness.py): memory is the largest process's
peak. Medians over the runs; CPU is user +
system of the process tree. Writes benchmarks/out/results-warm.json.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path

import harness
from bench_cold import ccusage_cmd, check_ccusage, check_codexwatch, grep_cmd
from harness import OUT, REPO, median

WARM_TARGET = 4.0  # warm stats at least 4× faster than cold
PAINT_TARGET_S = 1.0  # dashboard start to first full paint, warm index


def stats_cmd(home: Path) -> list[str]:
    return harness.codexwatch_cmd("stats", "--json", "--codex-home", str(home), "--since", "all",
                                  "--no-status")


def bench_stats(home: Path, runs: int, manifest: dict) -> dict:
    out = {"cold": [], "warm": [], "ccusage": []}
    ccusage = ccusage_cmd(harness.ensure_ccusage())
    for i in range(runs):
        with tempfile.TemporaryDirectory(prefix="cw-cache-") as cache:
            env = {**os.environ, "XDG_CACHE_HOME": cache}
            for name in ("cold", "warm"):
                run = harness.measure(stats_cmd(home), OUT / "runs" / f"warm-{name}-{i}.out",
                                      env=env, cwd=REPO, sample=False)
                assert run.returncode == 0, run.stderr_tail
                out[name].append(run)
        run = harness.measure(ccusage, OUT / "runs" / f"warm-ccusage-{i}.out",
                              env={**os.environ, "CODEX_HOME": str(home)}, sample=False)
        out["ccusage"].append(run)
        print(f"  round {i + 1}: cold {out['cold'][-1].wall_s:.2f} s, warm "
              f"{out['warm'][-1].wall_s:.2f} s, ccusage {run.wall_s:.2f} s", flush=True)
    checks = {"cold": check_codexwatch, "warm": check_codexwatch, "ccusage": check_ccusage}
    return {name: summary(runs_, checks[name](runs_[-1].stdout, manifest))
            for name, runs_ in out.items()}


def summary(runs: list, check: str) -> dict:
    return {"wall_s": median([r.wall_s for r in runs]), "cpu_s": median([r.cpu_s for r in runs]),
            "walls_s": [r.wall_s for r in runs], "cpus_s": [r.cpu_s for r in runs],
            "peak_rss_tree_mb": max(r.peak_rss_tree_mb for r in runs), "answer": check}


def paint_once(tmux: harness.Tmux, name: str, home: Path, cache: str, since: str) -> dict:
    cmd = harness.codexwatch_cmd("--codex-home", str(home), "--no-status", "--since", since)
    seen: dict = {}

    def loaded(text: str) -> bool:
        now = time.perf_counter() - began
        if "Reading Codex history" in text:
            seen.setdefault("progress_s", round(now, 3))
        if "Could not read the Codex history" in text:
            found = re.search(r"\w+Error: [^│▌─\n]*", text)
            seen["error"] = found.group(0).strip() if found else "could not read the history"
            return True
        return harness.dashboard_loaded(text)

    began = time.perf_counter()
    tmux.run(name, cmd, {"XDG_CACHE_HOME": cache, "TERM": "xterm-256color"})
    try:
        tmux.wait_for(name, loaded, timeout=120)
        seen["paint_s"] = round(time.perf_counter() - began, 3)
    finally:
        tmux.kill(name)
    return seen


def bench_paint(home: Path, runs: int) -> dict:
    results = {}
    with harness.Tmux() as tmux, tempfile.TemporaryDirectory(prefix="cw-cache-") as warm:
        primed = harness.measure(stats_cmd(home), OUT / "runs" / "paint-prime.out",
                                 env={**os.environ, "XDG_CACHE_HOME": warm}, cwd=REPO)
        assert primed.returncode == 0, primed.stderr_tail
        for since in ("all", "7d"):
            for mode in ("warm", "cold"):
                key = f"{mode}, --since {since}"
                samples = []
                for i in range(runs if mode == "warm" else max(1, runs // 2)):
                    if mode == "warm":
                        samples.append(paint_once(tmux, f"p{i}", home, warm, since))
                    else:
                        with tempfile.TemporaryDirectory(prefix="cw-cache-") as cold:
                            samples.append(paint_once(tmux, f"p{i}", home, cold, since))
                    print(f"  dashboard {key} run {i + 1}: {samples[-1]}", flush=True)
                results[key] = paint_summary(samples)
    return results


def paint_summary(samples: list) -> dict:
    ok = [s for s in samples if "error" not in s]
    out: dict = {"runs": samples}
    if ok:
        out["paint_s"] = round(median([s["paint_s"] for s in ok]), 3)
        if all("progress_s" in s for s in ok):
            out["progress_s"] = round(median([s["progress_s"] for s in ok]), 3)
    errors = sorted({s["error"] for s in samples if "error" in s})
    if errors:
        out["error"] = f"{len(samples) - len(ok)}/{len(samples)} runs failed: " + "; ".join(errors)
    return out


def tables(stats: dict, paint: dict) -> str:
    cold, warm, cc = stats["cold"], stats["warm"], stats["ccusage"]
    rows = [
        "| subject | wall, median (s) | all runs (s) | CPU, median (s) | peak RSS, largest process (MB) | answer |",
        "|---|---:|---|---:|---:|---|",
    ]
    for name, label in (("cold", "codexwatch stats, cold (empty cache)"),
                        ("warm", "codexwatch stats, warm (same cache)"),
                        ("ccusage", f"ccusage {harness.CCUSAGE_VERSION} (no cache)")):
        s = stats[name]
        rows.append(f"| {label} | {s['wall_s']:.2f} | {', '.join(f'{w:.2f}' for w in s['walls_s'])} "
                    f"| {s['cpu_s']:.2f} | {s['peak_rss_tree_mb']:.0f} | {s['answer']} |")
    rows += ["", f"cold/warm: {cold['wall_s'] / warm['wall_s']:.1f}× wall, "
                 f"{cold['cpu_s'] / warm['cpu_s']:.1f}× CPU (target ≥ {WARM_TARGET:g}×); "
                 f"ccusage/warm: {cc['wall_s'] / warm['wall_s']:.1f}× wall, "
                 f"{cc['cpu_s'] / warm['cpu_s']:.1f}× CPU", "",
             "| dashboard | start → loaded dashboard painted, median (s) | progress line shown (s) | runs (s) |",
             "|---|---:|---:|---|"]
    for key, p in paint.items():
        runs = ", ".join(f"{s['paint_s']:.2f}" if "error" not in s else "failed" for s in p["runs"])
        shown = f"{p['paint_s']:.2f}" if "paint_s" in p else p.get("error", "")
        rows.append(f"| {key} | {shown} | {p.get('progress_s', '—')} | {runs} |")
        if "error" in p and "paint_s" in p:
            rows[-1] += f" {p['error']}"
    return "\n".join(rows)


def verdicts(stats: dict, paint: dict) -> list[str]:
    ratio = stats["cold"]["wall_s"] / stats["warm"]["wall_s"]
    out = [f"warm stats {ratio:.1f}× faster than cold: "
           f"{'meets' if ratio >= WARM_TARGET else 'misses'} the {WARM_TARGET:g}× target"]
    for key, p in paint.items():
        if key.startswith("warm") and "paint_s" in p:
            out.append(f"dashboard {key}: {p['paint_s']:.2f} s, "
                       f"{'meets' if p['paint_s'] < PAINT_TARGET_S else 'misses'} the "
                       f"{PAINT_TARGET_S:g} s target")
    return out


def bench_windows(homes: list, windows: list[str], runs: int) -> dict:
    """(c): {(shape, window): {"cold": summary, "warm": summary}, (shape, "ccusage"): summary}."""
    out: dict = {}
    ccusage = ccusage_cmd(harness.ensure_ccusage())
    for i in range(runs):
        for shape, home, _ in homes:
            for since in windows:
                cmd = harness.codexwatch_cmd("stats", "--json", "--codex-home", str(home),
                                             "--since", since, "--no-status")
                with tempfile.TemporaryDirectory(prefix="cw-cache-") as cache:
                    env = {**os.environ, "XDG_CACHE_HOME": cache}
                    for name in ("cold", "warm"):
                        run = harness.measure(cmd, OUT / "runs" / f"warm-{shape}-{since}-{name}-{i}.out",
                                              env=env, cwd=REPO, sample=False)
                        assert run.returncode == 0, run.stderr_tail
                        out.setdefault((shape, since), {}).setdefault(name, []).append(run)
                got = out[(shape, since)]
                print(f"  round {i + 1} {shape} --since {since}: cold {got['cold'][-1].wall_s:.2f} s, "
                      f"warm {got['warm'][-1].wall_s:.2f} s", flush=True)
            run = harness.measure(ccusage, OUT / "runs" / f"warm-{shape}-ccusage-{i}.out",
                                  env={**os.environ, "CODEX_HOME": str(home)}, sample=False)
            out.setdefault((shape, "ccusage"), []).append(run)
            print(f"  round {i + 1} {shape} ccusage: {run.wall_s:.2f} s", flush=True)
    manifests = {shape: manifest for shape, _, manifest in homes}
    summaries: dict = {}
    for key, value in out.items():
        shape = key[0]
        if key[1] == "ccusage":
            summaries[key] = summary(value, check_ccusage(value[-1].stdout, manifests[shape]))
        else:
            summaries[key] = {name: summary(runs_, check_codexwatch(runs_[-1].stdout, manifests[shape])
                                            if key[1] == "all" else "")
                              for name, runs_ in value.items()}
    return summaries


def windows_table(summaries: dict) -> str:
    rows = ["| shape | --since | cold, median (s) | warm, median (s) | cold/warm (wall) | "
            "cold/warm (CPU) | cold runs (s) | warm runs (s) | peak RSS (MB) | answer |",
            "|---|---|---:|---:|---:|---:|---|---|---:|---|"]
    for (shape, since), s in summaries.items():
        if since == "ccusage":
            rows.append(f"| {shape} | ccusage {harness.CCUSAGE_VERSION} | {s['wall_s']:.2f} | | | | "
                        f"{', '.join(f'{w:.2f}' for w in s['walls_s'])} | | "
                        f"{s['peak_rss_tree_mb']:.0f} | {s['answer']} |")
            continue
        cold, warm = s["cold"], s["warm"]
        rows.append(
            f"| {shape} | {since} | {cold['wall_s']:.2f} | {warm['wall_s']:.2f} | "
            f"{cold['wall_s'] / warm['wall_s']:.1f}× | {cold['cpu_s'] / warm['cpu_s']:.1f}× | "
            f"{', '.join(f'{w:.2f}' for w in cold['walls_s'])} | "
            f"{', '.join(f'{w:.2f}' for w in warm['walls_s'])} | "
            f"{max(cold['peak_rss_tree_mb'], warm['peak_rss_tree_mb']):.0f} | {cold['answer']} |")
    return "\n".join(rows)


def main_windows(args, argv) -> int:
    gen = harness.load_generator()
    homes = []
    for shape in args.shapes.split(","):
        home = harness.shape_home(shape)
        homes.append((shape, home, harness.ensure_history(
            home, gen.parse_size(harness.SHAPES[shape][1]), shape=shape)))
    load_before = os.getloadavg()
    print(f"load average {load_before[0]:.2f}", flush=True)
    harness.compile_bytecode()
    for _, home, _ in homes:
        harness.measure(grep_cmd(home), OUT / "runs" / "warmup.out")  # page cache warm
    summaries = bench_windows(homes, args.since.split(","), args.runs)
    table = windows_table(summaries)
    print("\n" + table + "\n")
    harness.write_results(args.output, {
        **harness.result_head("warm", argv, load_average_before=load_before,
                              load_average_after=os.getloadavg()),
        "histories": {shape: {"path": str(home), **{k: m.get(k) for k in ("shape", "bytes", "files", "turns")}}
                      for shape, home, m in homes},
        "stats": {f"{shape} {since}": s for (shape, since), s in summaries.items()},
        "table": table,
    })
    print(f"wrote {args.output}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", type=Path, default=OUT / "history-1g")
    ap.add_argument("--size", default="1GiB", help="size of the history built when missing")
    ap.add_argument("--runs", type=int, default=5, help="rounds of cold, warm and ccusage")
    ap.add_argument("--paint-runs", type=int, default=5, help="dashboard starts per setting")
    ap.add_argument("--shapes", default="", help="(c): comma-separated make_history.py shapes")
    ap.add_argument("--since", default="all,3650d,7d", help="(c): comma-separated windows")
    ap.add_argument("--output", type=Path, default=OUT / "results-warm.json")
    args = ap.parse_args(argv)
    if args.shapes:
        return main_windows(args, argv)

    home = args.history.resolve()
    manifest = harness.ensure_history(home, harness.load_generator().parse_size(args.size))
    load_before = os.getloadavg()
    print(f"history {home}; load average {load_before[0]:.2f}", flush=True)
    harness.compile_bytecode()
    harness.measure(grep_cmd(home), OUT / "runs" / "warmup.out")  # page cache warm
    stats = bench_stats(home, args.runs, manifest)
    paint = bench_paint(home, args.paint_runs)
    table = tables(stats, paint)
    print("\n" + table + "\n")
    for line in verdicts(stats, paint):
        print(line)
    harness.write_results(args.output, {
        **harness.result_head("warm", argv, load_average_before=load_before,
                              load_average_after=os.getloadavg()),
        "history": {"path": str(home), **{k: manifest[k] for k in ("bytes", "files", "turns")}},
        "stats": stats, "dashboard": paint,
        "verdicts": verdicts(stats, paint), "table": table,
    })
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
