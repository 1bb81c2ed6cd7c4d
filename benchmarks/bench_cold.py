"""Cold `codexwatch stats` against the floor (grep) and the tool people use (ccusage).

    python benchmarks/bench_cold.py [--history DIR] [--runs 3]

On one history (built at benchmarks/out/history-1g if missing), measures:

- grep: `grep -c task_complete` over every rollout file: reading the bytes, the floor;
- ccusage: `ccusage codex daily --json --offline` with CODEX_HOME set to the history;
- codexwatch: `codexwatch stats --json --since all --no-status --no-cache` (no index
  cache: every file parsed).

"Cold" means no codexwatch index cache, not an empty page cache: the files are read once
by grep before anything is timed, so every subject reads from memory and the figures
compare the programs, not the disk. codexwatch is byte-compiled first, as pip installs it. Runs are interleaved; wall time is the best of
--runs (not sampled: see harness.py), memory the worst of those and of one more, sampled,
run per subject.
Prints a Markdown table, writes benchmarks/out/results-cold.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import harness
from harness import OUT, REPO, Result

TARGET_RSS_MB = 200  # issue 2: codexwatch's peak memory, whatever the history size


def grep_cmd(home: Path) -> list[str]:
    return ["sh", "-c", "find \"$1\" -name 'rollout-*.jsonl' -print0 | xargs -0 grep -c task_complete",
            "sh", str(home / "sessions")]


def ccusage_cmd(binary: Path) -> list[str]:
    return [str(binary), "codex", "daily", "--json", "--offline"]


def codexwatch_cmd(home: Path) -> list[str]:
    # From the working tree (cwd=REPO), so the code measured is the code checked out.
    return [sys.executable, "-m", "codexwatch", "stats", "--json", "--codex-home", str(home),
            "--since", "all", "--no-status", "--no-cache"]


# ---------------------------------------------------------------------------- answers
# Each subject's output is checked against the manifest, so a fast wrong answer shows.
def check_grep(out: Path, manifest: dict) -> str:
    found = sum(int(line.rsplit(":", 1)[1]) for line in out.read_text().splitlines())
    # One task_complete line per era C/D turn; era B (0.80) writes none.
    expected = manifest["turns"] - manifest["turns_by_version"].get("0.80.0", 0)
    return f"{found} lines{'' if found == expected else f' (expected {expected})'}"


def check_ccusage(out: Path, manifest: dict) -> str:
    data = json.loads(out.read_text())
    tokens, days = data["totals"]["totalTokens"], len(data["daily"])
    expected = manifest["tokens"].get("total_tokens", 0)
    verdict = "= manifest" if tokens == expected else f"≠ manifest {expected}"
    return f"{tokens} tokens {verdict}, {days} days"


def check_codexwatch(out: Path, manifest: dict) -> str:
    data = json.loads(out.read_text())
    turns, failed = data["turns"], data["outcomes"].get("failed", 0)
    want_turns, want_failed = manifest["turns"], manifest["turns_by_outcome"].get("failed", 0)
    verdict = "= manifest" if (turns, failed) == (want_turns, want_failed) else \
        f"≠ manifest {want_turns} turns, {want_failed} failed"
    return f"{turns} turns, {failed} failed {verdict}"


# ---------------------------------------------------------------------------- subjects
def subjects(home: Path, only: set) -> list:
    """(name, command, env, why not available or None, answer check) per subject."""
    found = []
    if "grep" in only:
        found.append(("grep", grep_cmd(home), None, None, check_grep))
    if "ccusage" in only:
        env = {**os.environ, "CODEX_HOME": str(home)}
        found.append(("ccusage", ccusage_cmd(harness.ensure_ccusage()), env, None, check_ccusage))
    if "codexwatch" in only:
        missing = None if (REPO / "codexwatch" / "commands" / "stats.py").exists() else \
            "codexwatch/commands/stats.py does not exist yet"
        found.append(("codexwatch", codexwatch_cmd(home), None, missing, check_codexwatch))
    return found


def bench(found: list, runs: int, nbytes: int, manifest: dict) -> dict:
    """Every subject `runs` times, interleaved (grep, ccusage, codexwatch, grep, ...), so
    that other work on the machine weighs on all of them alike."""
    results, done, sampled = {}, {}, {}
    for name, cmd, _, missing, _ in found:
        results[name] = Result(name, " ".join(cmd), available=missing is None, note=missing or "")
        done[name], sampled[name] = [], []
    for i in range(runs + 1):
        memory_run = i == runs  # the last round only measures memory
        for name, cmd, env, _, _ in found:
            if not results[name].available:
                continue
            run = harness.measure(cmd, OUT / "runs" / f"{name}-{i}.out", env=env, cwd=REPO,
                                  sample=memory_run)
            if memory_run:
                sampled[name].append(run)
                print(f"  {name} memory run: {run.peak_rss_tree_mb:.0f} MB RSS, "
                      f"{run.peak_pss_tree_mb:.0f} MB PSS", flush=True)
                continue
            if run.returncode != 0:
                results[name].available = False
                results[name].note = f"exit {run.returncode}: {run.stderr_tail[-300:]}"
                continue
            done[name].append(run)
            print(f"  {name} run {i + 1}: {run.wall_s:.2f} s", flush=True)
    for name, _, _, _, check in found:
        if results[name].available:
            results[name].add(done[name], nbytes, sampled[name])
            results[name].check = answer(check, done[name][-1].stdout, manifest)
    return results


def answer(check, stdout: Path, manifest: dict) -> str:
    try:
        return check(stdout, manifest)
    except (ValueError, KeyError, IndexError) as exc:
        return f"unreadable output: {exc!r}"


def verdicts(results: dict) -> list[str]:
    """Issue 2's targets for codexwatch, in words."""
    cw, cc = results.get("codexwatch"), results.get("ccusage")
    if not cw or not cw.available:
        return ["codexwatch: not available, targets not evaluated"]
    worst = max(cw.peak_rss_tree_mb, cw.peak_pss_tree_mb or 0)
    lines = [f"peak memory {cw.peak_pss_tree_mb or 0:.0f} MB PSS, {cw.peak_rss_tree_mb:.0f} MB RSS "
             f"(process tree; largest process {cw.peak_rss_process_mb:.0f} MB): "
             f"{'<' if worst < TARGET_RSS_MB else '>='} {TARGET_RSS_MB} MB target"]
    if cc and cc.available:
        faster = cw.wall_s < cc.wall_s
        lines.append(f"{cw.wall_s:.2f} s vs ccusage {cc.wall_s:.2f} s: "
                     f"{'faster' if faster else 'slower'} ({cc.wall_s / cw.wall_s:.2f}×)")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", type=Path, default=OUT / "history-1g",
                    help="Codex home to read (default benchmarks/out/history-1g, built if missing)")
    ap.add_argument("--size", default="1GiB", help="size of the history built when missing")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per subject (best is kept)")
    ap.add_argument("--only", default="grep,ccusage,codexwatch",
                    help="comma-separated subjects (grep is always run for the ratios)")
    ap.add_argument("--output", type=Path, default=OUT / "results-cold.json")
    args = ap.parse_args(argv)

    home = args.history.resolve()
    manifest = harness.ensure_history(home, harness.load_generator().parse_size(args.size))
    files = harness.rollout_files(home)
    nbytes = sum(f.stat().st_size for f in files)
    only = set(args.only.split(",")) | {"grep"}
    print(f"history {home}: {nbytes / 2**30:.2f} GiB, {len(files)} files, "
          f"{manifest['sessions']} sessions, {manifest['turns']} turns", flush=True)
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"note: load average {load:.2f} before starting: other work on this machine "
              "will show in the figures", flush=True)
    harness.compile_bytecode()
    print("warming the page cache: one untimed grep pass over every file", flush=True)
    harness.measure(grep_cmd(home), OUT / "runs" / "warmup.out")

    results = bench(subjects(home, only), args.runs, nbytes, manifest)
    floor = results["grep"].wall_s
    for r in results.values():
        r.vs_grep = round(r.wall_s / floor, 2) if r.available else None

    table = harness.markdown_table(list(results.values()))
    print("\n" + table + "\n")
    for line in verdicts(results):
        print(line)
    harness.write_results(args.output, {
        **harness.result_head("cold", argv, ccusage=harness.installed_version("ccusage")),
        "history": {"path": str(home), "bytes": nbytes, "files": len(files),
                    **{k: manifest[k] for k in ("sessions", "turns", "turns_by_outcome", "seed",
                                                "days")}},
        "page_cache": "warm: one untimed grep pass over every file before the timed runs",
        "runs": args.runs, "results": list(results.values()), "verdicts": verdicts(results),
        "table": table,
    })
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
