"""What every benchmark here shares: the history, ccusage, and measuring a process tree.

A measured command runs as a child of this process. Its wall time is taken around
spawn-and-wait; its memory two ways, because neither alone is the whole truth:

- `peak_rss_tree_mb`: the largest sum of resident memory over the whole process tree
  (`sh` + `find` + `xargs` + `grep`, or ccusage's node launcher + its native binary),
  sampled from /proc every 5 ms. What the machine had to give the command.
- `peak_rss_process_mb`: the largest single process, exact: `/usr/bin/time`'s "Maximum
  resident set size". The command is started through /usr/bin/time because a child forked
  straight from Python counts Python's own ~20 MB in its high-water mark before `exec`.
  Without /usr/bin/time (`apt-get install -y time`), `wait4()` is used and says so.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "out"  # git-ignored: histories, node_modules, results
CCUSAGE_VERSION = "20.0.24"  # 20.0.26's linux-x64 native part is missing from the registry
NODE_PREFIX = OUT / "node"
PAGE = os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------------------- inputs
def load_generator():
    """benchmarks/make_history.py as a module (benchmarks/ is not a package)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import make_history

    return make_history


def ensure_history(home: Path, size: int, seed: int = 1) -> dict:
    """The history's manifest, building the history first if there is none."""
    manifest = home / "manifest.json"
    if not manifest.exists():
        gen = load_generator()
        gen.prepare(home, force=False)
        print(f"building a {size / 2**30:.2f} GiB history in {home} (seed {seed}) ...", flush=True)
        gen.build(home, size, seed=seed)
    return json.loads(manifest.read_text())


def rollout_files(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*/*/*/rollout-*.jsonl"))


def ensure_ccusage() -> Path:
    """ccusage, pinned, installed once under benchmarks/out/node (never committed)."""
    binary = NODE_PREFIX / "node_modules" / ".bin" / "ccusage"
    if installed_version("ccusage") != CCUSAGE_VERSION:
        NODE_PREFIX.mkdir(parents=True, exist_ok=True)
        print(f"installing ccusage@{CCUSAGE_VERSION} into {NODE_PREFIX} ...", flush=True)
        subprocess.run(["npm", "install", "--prefix", str(NODE_PREFIX), "--save-exact",
                        "--no-audit", "--no-fund", f"ccusage@{CCUSAGE_VERSION}"], check=True)
    return binary


def installed_version(package: str) -> str | None:
    meta = NODE_PREFIX / "node_modules" / package / "package.json"
    return json.loads(meta.read_text())["version"] if meta.exists() else None


def tool_version(cmd: list[str]) -> str | None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else None


def machine() -> dict:
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PHYS_PAGES") * PAGE / 2**30, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "node": tool_version(["node", "--version"]),
        "grep": tool_version(["grep", "--version"]),
        "load_average_1m": round(os.getloadavg()[0], 2),  # others' work makes figures noisy
    }


def git_state() -> dict:
    """The commit measured, and the engine files that differ from it (others work here)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout

    changed = git("status", "--porcelain", "--", "codexwatch").splitlines()  # "XY path"
    return {"commit": git("rev-parse", "--short", "HEAD").strip(),
            "uncommitted_codexwatch_files": [line[3:] for line in changed]}


# ---------------------------------------------------------------------------- measuring
@dataclass
class Run:
    wall_s: float
    cpu_s: float  # user + system time of the whole tree: above wall_s means several cores
    peak_rss_tree_mb: float
    peak_rss_process_mb: float
    returncode: int
    stdout: Path
    stderr_tail: str = ""


def _children(pid: int) -> list[int]:
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass  # gone already
    return kids


TICK = os.sysconf("SC_CLK_TCK")


def tree_usage(root: int, cpu: dict) -> int:
    """Resident bytes of a process and all its descendants, now; records each one's CPU
    seconds so far into `cpu` (pid -> seconds)."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu[pid] = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
        except (OSError, IndexError, ValueError):
            continue
        todo += _children(pid)
    return total


class TreeSampler(threading.Thread):
    """Polls a process tree until told to stop: peak resident memory, CPU per process.

    The CPU figures catch processes nobody waits for (a pool's workers, a forkserver),
    which the kernel's rusage of the waited child leaves out.
    """

    def __init__(self, pid: int, skip_root: bool, interval: float = 0.005):
        super().__init__(daemon=True)
        self.pid, self.skip_root, self.interval, self.peak = pid, skip_root, interval, 0
        self.cpu: dict = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            roots = _children(self.pid) if self.skip_root else [self.pid]
            self.peak = max(self.peak, sum(tree_usage(p, self.cpu) for p in roots))
            self.done.wait(self.interval)


TIME = shutil.which("time", path="/usr/bin:/bin")  # GNU time, not the shell keyword


def measure(cmd: list[str], stdout: Path, env: dict | None = None, cwd: Path | None = None) -> Run:
    """Run `cmd` once, output to `stdout` (a file: a pipe would add a reader to the cost)."""
    stdout.parent.mkdir(parents=True, exist_ok=True)
    report = stdout.with_suffix(".maxrss")
    wrapped = [TIME, "-f", "%M", "-o", str(report), *cmd] if TIME else cmd
    with open(stdout, "wb") as out, open(stdout.with_suffix(".stderr"), "wb") as err:
        began = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=err, env=env, cwd=cwd)
        sampler = TreeSampler(proc.pid, skip_root=bool(TIME))
        sampler.start()
        # wait4 rather than proc.wait(): it hands back the rusage of the finished tree.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
        sampler.done.set()
        sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    tail = stdout.with_suffix(".stderr").read_text(errors="replace")[-2000:]
    largest = _time_maxrss(report) if TIME else usage.ru_maxrss * 1024
    # The sampler may miss a short peak that the kernel saw: the tree is at least that.
    tree = max(sampler.peak, largest)
    # rusage misses unwaited processes, sampling misses each one's last 5 ms: the larger.
    cpu = max(usage.ru_utime + usage.ru_stime, sum(sampler.cpu.values()))
    return Run(round(wall, 3), round(cpu, 3), round(tree / 1e6, 1), round(largest / 1e6, 1),
               proc.returncode, stdout, tail)


def _time_maxrss(report: Path) -> int:
    """Bytes from GNU time's %M (KiB); its last line, as a failing command adds one before."""
    return int(report.read_text().split()[-1]) * 1024


@dataclass
class Result:
    """One subject's figures over N runs: best wall time, worst memory."""

    name: str
    command: str
    available: bool
    note: str = ""
    walls_s: list = field(default_factory=list)
    wall_s: float | None = None
    cpu_s: float | None = None  # of the best run
    mb_per_s: float | None = None
    peak_rss_tree_mb: float | None = None
    peak_rss_process_mb: float | None = None
    vs_grep: float | None = None
    check: str = ""

    def add(self, runs: list[Run], nbytes: int) -> None:
        self.walls_s = [r.wall_s for r in runs]
        best = min(runs, key=lambda r: r.wall_s)
        self.wall_s, self.cpu_s = best.wall_s, best.cpu_s
        self.mb_per_s = round(nbytes / 1e6 / self.wall_s, 1)
        self.peak_rss_tree_mb = max(r.peak_rss_tree_mb for r in runs)
        self.peak_rss_process_mb = max(r.peak_rss_process_mb for r in runs)


def markdown_table(results: list[Result]) -> str:
    head = ("| subject | wall, best (s) | all runs (s) | CPU (s) | MB/s | × grep "
            "| peak RSS tree (MB) | largest process (MB) | answer |\n"
            "|---|---:|---|---:|---:|---:|---:|---:|---|")
    rows = []
    for r in results:
        if not r.available:
            rows.append(f"| {r.name} | not available | | | | | | | {r.note} |")
            continue
        runs = ", ".join(f"{w:.2f}" for w in r.walls_s)
        rows.append(f"| {r.name} | {r.wall_s:.2f} | {runs} | {r.cpu_s:.2f} | {r.mb_per_s:.0f} "
                    f"| {r.vs_grep:.2f} "
                    f"| {r.peak_rss_tree_mb:.0f} | {r.peak_rss_process_mb:.0f} | {r.check} |")
    return "\n".join([head, *rows])


def write_results(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {k: ([asdict(x) for x in v] if k == "results" else v) for k, v in payload.items()}
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")
