"""What every benchmark here shares: the history, ccusage, and measuring a process tree.

A measured command runs as a child of this process. Its wall time is taken around
spawn-and-wait. Timed runs are not sampled: polling /proc every 5 ms takes a share of a
core, and on a 2-core machine that slows whatever uses both (codexwatch, ccusage) more than
what uses one (grep). Memory comes from separate, sampled runs (`sample=True`), two ways,
because neither alone is the whole truth:

- `peak_rss_tree_mb`: the largest sum of resident memory over the whole process tree
  (`sh` + `find` + `xargs` + `grep`, or ccusage's node launcher + its native binary),
  sampled from /proc every 5 ms. What the machine had to give the command.
- `peak_pss_tree_mb`: the largest sum of proportional set size over the tree, sampled
  likewise (from /proc/PID/smaps_rollup). A page that several processes share counts once
  in all, split between them; in the RSS sum above it counts once per process. codexwatch
  forks its helper from a process that already holds the fold so far: the helper's RSS
  includes all of that, though it is the same memory. So this is the tree's true footprint.
- `peak_rss_process_mb`: the largest single process, exact: `/usr/bin/time`'s "Maximum
  resident set size". The command is started through /usr/bin/time because a child forked
  straight from Python counts Python's own ~20 MB in its high-water mark before `exec`.
  Without /usr/bin/time (`apt-get install -y time`), `wait4()` is used and says so.
"""

from __future__ import annotations

import json
import os
import platform
import re
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


# The shapes of history issue 14 measures: make_history.py's --shape, where each is built
# when missing (benchmarks/out/), and its size.
SHAPES = {"default": ("history-1g", "1GiB"), "small": ("history-1g-small", "1GiB"),
          "giant": ("history-300m-giant", "300MB")}


def shape_home(shape: str) -> Path:
    return OUT / SHAPES[shape][0]


def ensure_history(home: Path, size: int, seed: int = 1, shape: str | None = None) -> dict:
    """The history's manifest, building the history first if there is none (or rebuilding
    one an older version of the generator made, or of another shape than `shape`, when
    given)."""
    manifest = home / "manifest.json"
    gen = load_generator()
    made = json.loads(manifest.read_text()) if manifest.exists() else None
    stale = made is not None and (made.get("generator_version") != gen.GENERATOR_VERSION or (
        shape is not None and made.get("shape", "default") != shape))
    if stale or made is None:
        gen.prepare(home, force=stale)
        print(f"building a {size / 2**30:.2f} GiB history in {home} (seed {seed}, shape "
              f"{shape or 'default'}) ...", flush=True)
        gen.build(home, size, seed=seed, shape=shape or "default")
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
    peak_pss_tree_mb: float | None = None  # None: not sampled


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


def _tree_total(root: int, measure) -> int:
    """`measure(pid)` summed over a process and all its descendants, now; a process that
    is gone (its /proc files unreadable) counts nothing, nor do its children."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            total += measure(pid)
        except (OSError, IndexError, ValueError, StopIteration):
            continue
        todo += _children(pid)
    return total


def tree_usage(root: int, cpu: dict) -> int:
    """Resident bytes of a process and all its descendants, now; records each one's CPU
    seconds so far into `cpu` (pid -> seconds)."""
    def resident(pid: int) -> int:
        with open(f"/proc/{pid}/statm") as f:
            rss = int(f.read().split()[1]) * PAGE
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu[pid] = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
        return rss

    return _tree_total(root, resident)


def tree_pss(root: int) -> int:
    """Proportional set size, in bytes, of a process and all its descendants, now."""
    def pss(pid: int) -> int:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Pss:")) * 1024

    return _tree_total(root, pss)


class TreeSampler(threading.Thread):
    """Polls a process tree until told to stop: peak resident memory, CPU per process.

    The CPU figures catch processes nobody waits for (a pool's workers, a forkserver),
    which the kernel's rusage of the waited child leaves out.
    """

    def __init__(self, pid: int, skip_root: bool, interval: float = 0.005):
        super().__init__(daemon=True)
        self.pid, self.skip_root, self.interval, self.peak, self.peak_pss = pid, skip_root, interval, 0, 0
        self.cpu: dict = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            roots = _children(self.pid) if self.skip_root else [self.pid]
            self.peak = max(self.peak, sum(tree_usage(p, self.cpu) for p in roots))
            self.peak_pss = max(self.peak_pss, sum(tree_pss(p) for p in roots))
            self.done.wait(self.interval)


TIME = shutil.which("time", path="/usr/bin:/bin")  # GNU time, not the shell keyword


def measure(cmd: list[str], stdout: Path, env: dict | None = None, cwd: Path | None = None,
            sample: bool = True) -> Run:
    """Run `cmd` once, output to `stdout` (a file: a pipe would add a reader to the cost).
    `sample`: poll the process tree for its memory and for CPU nobody waits for (costs CPU
    while it runs: leave it off for timing)."""
    stdout.parent.mkdir(parents=True, exist_ok=True)
    report = stdout.with_suffix(".maxrss")
    wrapped = [TIME, "-f", "%M", "-o", str(report), *cmd] if TIME else cmd
    with open(stdout, "wb") as out, open(stdout.with_suffix(".stderr"), "wb") as err:
        began = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=err, env=env, cwd=cwd)
        sampler = TreeSampler(proc.pid, skip_root=bool(TIME))
        if sample:
            sampler.start()
        # wait4 rather than proc.wait(): it hands back the rusage of the finished tree.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
        sampler.done.set()
        if sample:
            sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    tail = stdout.with_suffix(".stderr").read_text(errors="replace")[-2000:]
    largest = _time_maxrss(report) if TIME else usage.ru_maxrss * 1024
    # The sampler may miss a short peak that the kernel saw: the tree is at least that.
    tree = max(sampler.peak, largest)
    # rusage misses unwaited processes, sampling misses each one's last 5 ms: the larger.
    cpu = max(usage.ru_utime + usage.ru_stime, sum(sampler.cpu.values()))
    pss = round(sampler.peak_pss / 1e6, 1) if sample else None
    return Run(round(wall, 3), round(cpu, 3), round(tree / 1e6, 1), round(largest / 1e6, 1),
               proc.returncode, stdout, tail, pss)


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
    peak_pss_tree_mb: float | None = None
    peak_rss_process_mb: float | None = None
    vs_grep: float | None = None
    check: str = ""

    def add(self, runs: list[Run], nbytes: int, sampled: list[Run] = ()) -> None:
        """`runs`: the timed ones; `sampled`: more runs, for memory only."""
        self.walls_s = [r.wall_s for r in runs]
        best = min(runs, key=lambda r: r.wall_s)
        self.wall_s, self.cpu_s = best.wall_s, best.cpu_s
        self.mb_per_s = round(nbytes / 1e6 / self.wall_s, 1)
        self.peak_rss_tree_mb = max(r.peak_rss_tree_mb for r in [*runs, *sampled])
        self.peak_rss_process_mb = max(r.peak_rss_process_mb for r in [*runs, *sampled])
        pss = [r.peak_pss_tree_mb for r in [*runs, *sampled] if r.peak_pss_tree_mb is not None]
        self.peak_pss_tree_mb = max(pss) if pss else None


def markdown_table(results: list[Result]) -> str:
    head = ("| subject | wall, best (s) | all runs (s) | CPU (s) | MB/s | × grep "
            "| peak RSS tree (MB) | peak PSS tree (MB) | largest process (MB) | answer |\n"
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
    rows = []
    for r in results:
        if not r.available:
            rows.append(f"| {r.name} | not available | | | | | | | | {r.note} |")
            continue
        runs = ", ".join(f"{w:.2f}" for w in r.walls_s)
        rows.append(f"| {r.name} | {r.wall_s:.2f} | {runs} | {r.cpu_s:.2f} | {r.mb_per_s:.0f} "
                    f"| {r.vs_grep:.2f} "
                    f"| {r.peak_rss_tree_mb:.0f} | {_mb(r.peak_pss_tree_mb)} | {r.peak_rss_process_mb:.0f} "
                    f"| {r.check} |")
    return "\n".join([head, *rows])


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def result_head(name: str, argv: list[str] | None, **machine_extra) -> dict:
    """What every results file starts with: the benchmark, when, the command that ran it,
    the machine (with `machine_extra`, e.g. load averages) and the code measured."""
    return {
        "benchmark": name, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": f"python benchmarks/bench_{name}.py " + " ".join(argv or sys.argv[1:]),
        "machine": {**machine(), **machine_extra},
        "git": git_state(),
    }


def write_results(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {k: ([asdict(x) for x in v] if k == "results" else v) for k, v in payload.items()}
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")


# ---------------------------------------------------------------------------- the running app
async def until(predicate, timeout: float, what: str) -> None:
    """Poll `predicate` every millisecond (in the app's loop, between its tasks) until it
    holds; TimeoutError saying `what` did not happen after `timeout` seconds."""
    import asyncio

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.001)


def median(values: list) -> float:
    s = sorted(values)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2


def percentile(values: list, q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, -(-len(s) * q // 100) - 1))]


def scratch_home(source: Path, into: Path, keep_today: bool = False) -> Path:
    """A Codex home the benchmark may write into, holding `source`'s history without copying
    it: each date folder of `source` is a symlink. Today's folder is left out (unless
    `keep_today`), so what a benchmark writes today lands in a real folder of its own and
    never in `source`."""
    today = time.strftime("%Y/%m/%d")
    for day in (source / "sessions").glob("*/*/*"):
        rel = day.relative_to(source / "sessions").as_posix()
        if rel == today and not keep_today:
            continue
        link = into / "sessions" / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(day.resolve(), target_is_directory=True)
    (into / "sessions").mkdir(parents=True, exist_ok=True)
    return into


def today_folder(home: Path) -> Path:
    """Where Codex writes a session started now; refuses a folder that is a symlink."""
    folder = home / "sessions" / time.strftime("%Y/%m/%d")
    if folder.is_symlink():
        raise RuntimeError(f"{folder} links into a source history: not writing there")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def failing_sessions(version: str = "0.171.0", mode: str = "exec", seed: int = 1):
    """An endless supply of fresh failing sessions built from the recordings:
    (session id, lines, turn id of the failed turn). The last line is the failing
    `task_complete`; ids and times are new each time, the session ends now."""
    import random

    gen = load_generator()
    rng = random.Random(seed)
    recordings = gen.load_templates()
    pool = gen.output_pool(recordings, rng)
    kind = next(k for _, k in gen.session_kinds(recordings) if (k.version, k.mode) == (version, mode))
    failed = [(r, b) for r, b in kind.openers if b.expected[0] == "failed"]
    while True:
        recording, block = rng.choice(failed)
        plan = gen.Plan(recording, [block], [{}], [], 0)
        start = int(time.time()) - gen.duration(plan)
        session_id, text, _, _ = gen.render_session(plan, start, rng, pool)
        lines = text.splitlines(keepends=True)
        last = json.loads(lines[-1])
        assert last["payload"]["type"] == "task_complete", "recording does not end a turn"
        yield session_id, lines, last["payload"]["turn_id"]


def proc_usage(pid: int) -> tuple[float, int]:
    """(CPU seconds so far, resident bytes) of one process and its descendants."""
    cpu: dict = {}
    rss = tree_usage(pid, cpu)
    return sum(cpu.values()), rss


class Tmux:
    """The real app in a real terminal: a private tmux server (own socket, so nobody
    else's tmux is touched), started once; `run()` opens a window per command."""

    def __init__(self, width: int = 140, height: int = 45, socket: str | None = None):
        self.socket = socket or f"codexwatch-bench-{os.getpid()}"
        self.width, self.height = width, height
        self.tmux(["new-session", "-d", "-s", "hold", "-x", str(width), "-y", str(height),
                   "sleep", "86400"])

    def tmux(self, args: list[str]) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def run(self, name: str, cmd: list[str], env: dict) -> int:
        """Start `cmd` in a new window; -> the pid of the command itself (tmux execs it)."""
        sets = [f"{k}={v}" for k, v in env.items()]
        out = self.tmux(["new-window", "-d", "-n", name, "-c", str(REPO), "-P", "-F", "#{pane_pid}",
                         "env", *sets, *cmd])
        return int(out.strip())

    def screen(self, name: str) -> str:
        return self.tmux(["capture-pane", "-p", "-t", f"hold:{name}"])

    def wait_for(self, name: str, predicate, timeout: float = 60, interval: float = 0.01) -> str:
        """Poll the window's text until `predicate(text)`; -> the text."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen(name)
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                raise TimeoutError(f"window {name}: condition not met in {timeout} s:\n{text}")
            time.sleep(interval)

    def kill(self, name: str) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-window", "-t", f"hold:{name}"],
                       capture_output=True)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def dashboard_loaded(text: str) -> bool:
    """The dashboard shows a read history: the header's parser share is a figure, or `—`
    when the window holds no file (a giant session older than 7 days), once not loading."""
    return re.search(r"│ parser (?:\d+%|—)", text) is not None and "loading" not in text.split("\n", 1)[0]


def codexwatch_cmd(*args: str) -> list[str]:
    """codexwatch from the working tree (run with cwd=REPO)."""
    return [sys.executable, "-m", "codexwatch", *args]


def compile_bytecode() -> None:
    """Byte-compile the working tree's codexwatch, as `pip install` does for a user: without
    it, an environment with PYTHONDONTWRITEBYTECODE set (as some sandboxes and containers
    have) compiles every module again on every run, about 30 ms a start."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "codexwatch")], check=True)
