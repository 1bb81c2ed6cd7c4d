"""Cold `codexwatch stats` against the floor (grep) and the tool people use (ccusage).

    python benchmarks/bench_cold.py [--history DIR] [--runs 3]
    python benchmarks/bench_cold.py --shapes default,small,giant [--index] [--runs 5]

On one history (built at benchmarks/out/history-1g if missing), measures:

- grep: `grep -c task_complete` over every rollout file: reading the bytes, the floor;
- ccusage: `ccusage codex daily --json --offline` with CODEX_HOME set to the history;
- codexwatch: `codexwatch stats --json --since all --no-status --no-cache` (no index
  cache: every file parsed); with --index, without --no-cache and a fresh empty cache
  folder each run (cold, the index written, as a first start is).

--shapes names make_history.py shapes (issue 14: default, small, giant), each at its own
history under benchmarks/out (built if missing); --history (repeatable) names homes. With
several, every round runs every subject on every history in turn (A B A B ...), so that
the load on this shared machine weighs on all of them alike.

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
from dataclasses import asdict
from pathlib import Path

import harness
from harness import OUT, REPO, Result

TARGET_RSS_MB = 200  # issue 2: codexwatch's peak memory, whatever the history size


def grep_cmd(home: Path) -> list[str]:
    return ["sh", "-c", "find \"$1\" -name 'rollout-*.jsonl' -print0 | xargs -0 grep -c task_complete",
            "sh", str(home / "sessions")]


def ccusage_cmd(binary: Path) -> list[str]:
    return [str(binary), "codex", "daily", "--json", "--offline"]


def codexwatch_cmd(home: Path, index: bool = False) -> list[str]:
    # From the working tree (cwd=REPO), so the code measured is the code checked out.
    cmd = [sys.executable, "-m", "codexwatch", "stats", "--json", "--codex-home", str(home),
           "--since", "all", "--no-status", "--no-cache"]
    if index:  # a fresh cache folder each run: cold, the index written
        return ["sh", "-c", 'c=$(mktemp -d) && XDG_CACHE_HOME="$c" "$@"; r=$?; rm -rf "$c"; exit $r',
                "sh", *cmd[:-1]]
    return cmd


# ---------------------------------------------------------------------------- answers
# Each subject's output is checked against the manifest, so a fast wrong answer shows.
def check_grep(out: Path, manifest: dict) -> str:
    # "path:count" per file; a lone file's count comes bare
    found = sum(int(line.rsplit(":", 1)[-1]) for line in out.read_text().splitlines())
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
def subjects(home: Path, only: set, index: bool = False) -> list:
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
        name = "codexwatch, index written" if index else "codexwatch"
        found.append((name, codexwatch_cmd(home, index), None, missing, check_codexwatch))
    return found


def bench(found: list, runs: int, nbytes: int, manifest: dict) -> dict:
    """Every subject `runs` times, interleaved (grep, ccusage, codexwatch, grep, ...), so
    that other work on the machine weighs on all of them alike."""
    return bench_many([("", found, nbytes, manifest)], runs)[""]


def bench_many(histories: list, runs: int) -> dict:
    """bench() on several histories, (label, subjects, bytes, manifest) each, in one run:
    each round runs every subject on every history in turn -> {label: results}."""
    results: dict = {}
    done, sampled = {}, {}
    for label, found, _, _ in histories:
        results[label] = {}
        for name, cmd, _, missing, _ in found:
            results[label][name] = Result(name, " ".join(cmd), available=missing is None,
                                          note=missing or "")
            done[label, name], sampled[label, name] = [], []
    for i in range(runs + 1):
        memory_run = i == runs  # the last round only measures memory
        for label, found, _, _ in histories:
            for name, cmd, env, _, _ in found:
                result = results[label][name]
                if not result.available:
                    continue
                tag = f"{label}-{name}".strip("-").replace(" ", "").replace(",", "-")
                run = harness.measure(cmd, OUT / "runs" / f"{tag}-{i}.out", env=env, cwd=REPO,
                                      sample=memory_run)
                if memory_run:
                    sampled[label, name].append(run)
                    print(f"  {label} {name} memory run: {run.peak_rss_tree_mb:.0f} MB RSS, "
                          f"{run.peak_pss_tree_mb:.0f} MB PSS", flush=True)
                    continue
                if run.returncode != 0:
                    result.available = False
                    result.note = f"exit {run.returncode}: {run.stderr_tail[-300:]}"
                    continue
                done[label, name].append(run)
                print(f"  {label} {name} run {i + 1}: {run.wall_s:.2f} s", flush=True)
    for label, found, nbytes, manifest in histories:
        for name, _, _, _, check in found:
            result = results[label][name]
            if result.available:
                result.add(done[label, name], nbytes, sampled[label, name])
                result.check = answer(check, done[label, name][-1].stdout, manifest)
    return results


def answer(check, stdout: Path, manifest: dict) -> str:
    try:
        return check(stdout, manifest)
    except (ValueError, KeyError, IndexError) as exc:
        return f"unreadable output: {exc!r}"


def verdicts(results: dict) -> list[str]:
    """Issue 2's targets for codexwatch, in words."""
    cw = results.get("codexwatch") or results.get("codexwatch, index written")
    cc = results.get("ccusage")
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
    ap.add_argument("--history", type=Path, action="append",
                    help="Codex home to read (repeatable; default benchmarks/out/history-1g, "
                    "built if missing)")
    ap.add_argument("--shapes", default="",
                    help="comma-separated make_history.py shapes (default, small, giant), each "
                    "at its history under benchmarks/out, built if missing")
    ap.add_argument("--size", default="1GiB", help="size of the history built when missing")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per subject (best is kept)")
    ap.add_argument("--only", default="grep,ccusage,codexwatch",
                    help="comma-separated subjects (grep is always run for the ratios)")
    ap.add_argument("--index", action="store_true",
                    help="codexwatch cold with its index written (a fresh cache each run), "
                    "not --no-cache")
    ap.add_argument("--output", type=Path, default=OUT / "results-cold.json")
    args = ap.parse_args(argv)

    gen = harness.load_generator()
    homes = []  # (label, home, manifest)
    for shape in filter(None, args.shapes.split(",")):
        home = harness.shape_home(shape)
        homes.append((shape, home, harness.ensure_history(
            home, gen.parse_size(harness.SHAPES[shape][1]), shape=shape)))
    for path in args.history or ([] if homes else [OUT / "history-1g"]):
        home = path.resolve()
        homes.append((home.name if len(args.history or []) + len(homes) > 1 else "", home,
                      harness.ensure_history(home, gen.parse_size(args.size))))
    only = set(args.only.split(",")) | {"grep"}
    histories, described = [], {}
    for label, home, manifest in homes:
        files = harness.rollout_files(home)
        nbytes = sum(f.stat().st_size for f in files)
        print(f"history {label or home}: {nbytes / 2**30:.2f} GiB, {len(files)} files, "
              f"{manifest['sessions']} sessions, {manifest['turns']} turns", flush=True)
        histories.append((label, subjects(home, only, args.index), nbytes, manifest))
        described[label] = {"path": str(home), "bytes": nbytes, "files": len(files),
                            **{k: manifest.get(k) for k in ("shape", "sessions", "turns",
                                                            "turns_by_outcome", "seed", "days")}}
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"note: load average {load:.2f} before starting: other work on this machine "
              "will show in the figures", flush=True)
    harness.compile_bytecode()
    print("warming the page cache: one untimed grep pass over every file", flush=True)
    for _, home, _ in homes:
        harness.measure(grep_cmd(home), OUT / "runs" / "warmup.out")

    measured = bench_many(histories, args.runs)
    tables, all_verdicts = [], {}
    for label, results in measured.items():
        floor = results["grep"].wall_s
        for r in results.values():
            r.vs_grep = round(r.wall_s / floor, 2) if r.available else None
        table = harness.markdown_table(list(results.values()))
        tables.append((f"### {label}\n\n" if label else "") + table)
        all_verdicts[label] = verdicts(results)
        print("\n" + tables[-1] + "\n")
        for line in all_verdicts[label]:
            print(f"{label}: {line}" if label else line)
    single = len(measured) == 1
    harness.write_results(args.output, {
        **harness.result_head("cold", argv, ccusage=harness.installed_version("ccusage"),
                              load_before=load),
        "history": described[""] if single and "" in described else described,
        "page_cache": "warm: one untimed grep pass over every file before the timed runs",
        "runs": args.runs, "codexwatch_index": args.index,
        **({"results": list(next(iter(measured.values())).values())} if single else
           {"results_by_history": {label: [asdict(x) for x in r.values()]
                                   for label, r in measured.items()}}),
        "verdicts": all_verdicts[""] if single and "" in all_verdicts else all_verdicts,
        "table": "\n\n".join(tables),
    })
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
