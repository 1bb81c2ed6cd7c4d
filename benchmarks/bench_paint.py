"""Dashboard first paint on any history (issues 6 and 14): start → loaded dashboard painted,
warm and cold, `--since all` and the default 7 days, the way `bench_warm.py` measures it.

    python benchmarks/bench_paint.py [--history DIR | --shape small] [--runs 5]

`--shape small`: benchmarks/out/history-small-1g (many small sessions, built if missing, see
`homes.py`). Targets (issue 14): under 2 s cold and under 1 s warm, on every shape. Writes
benchmarks/out/results-paint-<history>.json.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import bench_warm
import harness
import homes
from harness import OUT

COLD_TARGET_S = 2.0
WARM_TARGET_S = 1.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", type=Path, default=None, help="default: benchmarks/out/history-1g")
    ap.add_argument("--shape", choices=("default", "small"), default="default")
    ap.add_argument("--runs", type=int, default=5, help="warm starts per window (cold: half)")
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args(argv)

    gen = harness.load_generator()
    if args.shape == "small":
        home = (args.history or OUT / "history-small-1g").resolve()
        manifest = homes.small_history(home, gen.parse_size("1GiB"))
    else:
        home = (args.history or OUT / "history-1g").resolve()
        manifest = harness.ensure_history(home, gen.parse_size("1GiB"))
    load_before = os.getloadavg()
    print(f"history {home} ({manifest['files']} files); load average {load_before[0]:.2f}", flush=True)
    harness.compile_bytecode()
    harness.measure(bench_warm.grep_cmd(home), OUT / "runs" / "warmup.out")  # page cache warm
    paint = bench_warm.bench_paint(home, args.runs)
    rows = ["| dashboard | start → loaded dashboard painted, median (s) | progress line shown (s) | runs (s) |",
            "|---|---:|---:|---|"]
    verdicts = []
    for key, p in paint.items():
        runs = ", ".join(f"{s['paint_s']:.2f}" if "error" not in s else "failed" for s in p["runs"])
        shown = f"{p['paint_s']:.2f}" if "paint_s" in p else p.get("error", "")
        rows.append(f"| {key} | {shown} | {p.get('progress_s', '—')} | {runs} |")
        if "paint_s" in p:
            target = WARM_TARGET_S if key.startswith("warm") else COLD_TARGET_S
            verdicts.append(f"{home.name}, {key}: {p['paint_s']:.2f} s, "
                            f"{'meets' if p['paint_s'] < target else 'misses'} the {target:g} s target")
    table = "\n".join(rows)
    print("\n" + table + "\n\n" + "\n".join(verdicts))
    output = args.output or OUT / f"results-paint-{home.name}.json"
    harness.write_results(output, {
        **harness.result_head("paint", argv, load_average_before=load_before,
                              load_average_after=os.getloadavg()),
        "history": {"path": str(home), **{k: manifest.get(k) for k in ("bytes", "files", "turns", "shape")}},
        "dashboard": paint, "verdicts": verdicts, "table": table,
    })
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
