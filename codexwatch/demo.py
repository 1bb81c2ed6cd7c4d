"""`codexwatch --demo`: real Codex recordings, re-timed into a temporary Codex home, then
further failures replayed into it live at a realistic pace, and a bundled status page with
a Codex incident served offline; and, in a temporary state directory of its own, the state
of two `codexwatch run` supervisors as they go (simulated: see `RunPlay`).

The recordings in `codexwatch/data/demo/` were written by released Codex CLIs (see the
README there). Re-timing only shifts timestamps and gives each copy fresh ids (so copies
do not collapse into one turn), and sometimes names another model; every other field is as
Codex wrote it. Nothing here touches the user's real Codex home.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import random
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import orjson

from codexwatch.core import supervise as S
from codexwatch.core.status import DEFAULT_PAGE_URL
from codexwatch.core.times import iso_utc, parse_iso
from codexwatch.sources import runs as R

DATA = "data/demo"

# Recordings by scenario (file-name stems in data/demo/); see data/demo/README.md.
SCENARIOS = {
    "healthy": "exec-healthy",
    "healthy_tools": "exec-healthy-tools",
    "capacity": "exec-overloaded-fast",
    "capacity_stream": "exec-overloaded-stream",
    "capacity_midturn": "exec-overloaded-midturn",
    "rate_limit": "exec-rate-limit-429",
    "usage_limit": "exec-usage-limit",
    "disconnected": "exec-disconnected",
    "tui": "tui-session",
}

EPOCH_S_KEYS = {"started_at", "completed_at", "create_time", "resets_at", "reset_at"}
EPOCH_MS_KEYS = {"started_at_ms", "completed_at_ms"}
MODELS = ("gpt-6-sol", "gpt-6-terra", "gpt-6-luna")


# --- re-timing (pure) -----------------------------------------------------------------


def _shift(value: Any, shift: float, models: dict[str, str], key: str | None = None) -> Any:
    if isinstance(value, dict):
        return {k: _shift(v, shift, models, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shift(v, shift, models) for v in value]
    if key == "timestamp" and isinstance(value, str):
        ts = parse_iso(value)
        return iso_utc(ts + shift) if ts is not None else value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if key in EPOCH_S_KEYS or (key == "timestamp" and 1e9 < value < 1e11):
            return type(value)(value + shift) if isinstance(value, int) else value + shift
        if key in EPOCH_MS_KEYS or (key == "timestamp" and value > 1e11):
            return int(value + shift * 1000)
    if key == "model" and isinstance(value, str) and value in models:
        return models[value]
    return value


def recording_ids(lines: list[bytes]) -> tuple[str | None, list[str]]:
    """(session id, turn ids) of one recording."""
    session, turns = None, []
    for line in lines:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        payload = obj.get("payload") if isinstance(obj, dict) else None
        if not isinstance(payload, dict):
            continue
        if obj.get("type") == "session_meta" and session is None:
            session = payload.get("id")
        if payload.get("type") == "task_started" and payload.get("turn_id"):
            turns.append(payload["turn_id"])
    return session, turns


def first_time(lines: list[bytes]) -> float:
    for line in lines:
        try:
            ts = parse_iso(orjson.loads(line).get("timestamp", ""))
        except (orjson.JSONDecodeError, AttributeError):
            continue
        if ts is not None:
            return ts
    return 0.0


def retime(
    lines: list[bytes],
    start: float,
    ids: dict[str, str] | None = None,
    models: dict[str, str] | None = None,
) -> list[bytes]:
    """The recording moved to begin at `start`, with ids and model names replaced."""
    shift = start - first_time(lines)
    out = []
    for line in lines:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(line)
            continue
        new = orjson.dumps(_shift(obj, shift, models or {}))
        for old, fresh in (ids or {}).items():
            new = new.replace(old.encode(), fresh.encode())
        out.append(new + b"\n")
    return out


# The recordings ran under an API-key login, which has no plan windows (`rate_limits` null).
# The demo fills them as a ChatGPT login records them (0.171's shape), with illustrative
# figures that climb through each 5-hour and weekly window (with the thread lengths below, the
# only figures it makes up).
WINDOW_5H_S, WINDOW_WK_S = 5 * 3600, 7 * 86400


def illustrative_limits(at: float) -> dict:
    def window(length: float, low: float, high: float, minutes: int) -> dict:
        start = at - at % length
        used = low + (high - low) * (at - start) / length
        return {"used_percent": float(round(used)), "window_minutes": minutes,
                "resets_at": int(start + length)}

    return {"limit_id": "codex", "limit_name": None,
            "primary": window(WINDOW_5H_S, 4, 96, 300), "secondary": window(WINDOW_WK_S, 8, 92, 10080),
            "credits": {"has_credits": False, "unlimited": False, "balance": None},
            "individual_limit": None, "spend_control_reached": None, "plan_type": "plus",
            "rate_limit_reached_type": None}


def _edit_token_counts(lines: list[bytes], marker: bytes, edit: Callable[[dict], bool]) -> list[bytes]:
    """The lines, each token_count line that holds `marker` decoded, given to `edit`, and
    written again where it changed it (it says so)."""
    out = []
    for line in lines:
        if b'"token_count"' in line and marker in line:
            obj = orjson.loads(line)
            if isinstance(obj.get("payload"), dict) and edit(obj):
                line = orjson.dumps(obj) + (b"\n" if line.endswith(b"\n") else b"")
        out.append(line)
    return out


def with_meter(lines: list[bytes]) -> list[bytes]:
    """token_count lines whose windows are null given illustrative ones (see above)."""
    def give_limits(obj: dict) -> bool:
        at = parse_iso(obj.get("timestamp"))
        if at is not None:
            obj["payload"]["rate_limits"] = illustrative_limits(at)
        return at is not None

    return _edit_token_counts(lines, b'"primary":null', give_limits)


# The recordings are one- or two-turn threads: each turn used a few percent of the model's
# context window, and the context curve (When tab) would be one bar. The demo gives each
# session of the past week an illustrative thread length instead, as if it had been resumed
# that far: most threads short, a few long, and a failing session more often a long one
# (as the week's failures are made more frequent in working hours: a pattern for the
# curve to show). A turn refused before any request has no context figure, as in Codex.
# Made up for the demo, as the plan windows are.
HEALTHY = frozenset({"healthy", "healthy_tools"})


def illustrative_fill(rng: random.Random, failing: bool) -> float:
    """The share of the context window a session's thread is given (see above)."""
    if failing and rng.random() < 0.5:
        return rng.uniform(0.7, 0.96)
    return min(0.95, rng.betavariate(1.3, 3.5))


def with_fill(lines: list[bytes], fill: float) -> list[bytes]:
    """token_count lines whose usage is raised to `fill` of the window, as a thread that
    long would have it (its input, so the totals too)."""
    return _edit_token_counts(lines, b'"model_context_window":', lambda obj: _raise_usage(obj["payload"], fill))


def _raise_usage(payload: dict, fill: float) -> bool:
    info = payload.get("info")
    if not isinstance(info, dict):
        return False
    window, last, total = (info.get("model_context_window"), info.get("last_token_usage"),
                           info.get("total_token_usage"))
    if not (isinstance(window, int) and isinstance(last, dict) and isinstance(total, dict)):
        return False
    extra = int(fill * window) - int(last.get("total_tokens") or 0)
    if extra <= 0:
        return False
    for usage in (last, total):
        for key in ("input_tokens", "total_tokens"):
            usage[key] = int(usage.get(key) or 0) + extra
    return True


def fresh_ids(lines: list[bytes], rng: random.Random) -> dict[str, str]:
    session, turns = recording_ids(lines)
    ids = {}
    for old in ([session] if session else []) + turns:
        ids[old] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return ids


def rollout_path(home: Path, start: float, session_id: str) -> Path:
    local = datetime.fromtimestamp(start).astimezone()
    return (
        home / "sessions" / local.strftime("%Y/%m/%d")
        / f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{session_id}.jsonl"
    )


def split_turns(lines: list[bytes]) -> tuple[list[bytes], list[list[bytes]]]:
    """(header lines before the first turn, one list of lines per turn)."""
    head: list[bytes] = []
    turns: list[list[bytes]] = []
    for line in lines:
        if b'"type":"task_started"' in line:
            turns.append([line])
        elif turns:
            turns[-1].append(line)
        else:
            head.append(line)
    return head, turns


# --- the demo --------------------------------------------------------------------------


def load_recording(name: str) -> list[bytes]:
    ref = resources.files("codexwatch").joinpath(DATA, SCENARIOS.get(name, name) + ".jsonl")
    return ref.read_bytes().splitlines(keepends=True)


@dataclass
class Step:
    """One live event of the replay: after `delay` seconds, a turn from `scenario`."""

    delay: float
    scenario: str
    model: str = "gpt-6-sol"
    new_session: bool = False


LIVE_SCRIPT = (
    Step(6, "capacity", "gpt-6-sol"),
    Step(25, "capacity_midturn", "gpt-6-sol"),
    Step(30, "capacity", "gpt-6-terra"),  # the user switched model: still at capacity
    Step(35, "healthy", "gpt-6-terra", new_session=True),  # a new thread works
    Step(90, "rate_limit", "gpt-6-luna", new_session=True),
    Step(40, "healthy_tools", "gpt-6-luna"),
)


# --- supervised runs (simulated) ---------------------------------------------------------
#
# The demo runs no `codexwatch run` and no Codex: it plays what a supervisor would record in
# its state file, through the supervisor's own policy (`core.supervise.decide`: the waits,
# with their jitter, and the model walked to) and its own writer (`sources.runs`), under the
# demo process's pid. The attempts write no sessions into the demo home.


@dataclass(frozen=True)
class RunTask:
    """One task of a simulated run: the classes its attempts fail with, in order (then it
    succeeds, unless the policy stops first), and how long each attempt runs (the last
    figure for the rest)."""

    failures: tuple[str, ...] = ()
    run_s: tuple[float, ...] = (20.0,)


@dataclass(frozen=True)
class RunPlay:
    """One simulated `codexwatch run`, starting `delay` seconds into the replay."""

    delay: float
    cwd: str
    tasks: tuple[RunTask, ...]
    model: str = "gpt-6-sol"  # the first attempt's model
    models: tuple[str, ...] = MODELS  # --models
    jobs: int = 1  # --jobs


DEMO_RUNS = (
    # codexwatch run --no-status --models gpt-6-sol,gpt-6-terra,gpt-6-luna --tasks tasks.txt
    #   --jobs 2 -- codex exec --full-auto: task 1 meets capacity on gpt-6-sol when the replay
    # does (6 s in), backs off 30 s ±20 % and ends ok on gpt-6-terra. (--no-status: with the
    # demo's incident on the status page, it would wait on gpt-6-sol rather than walk down.)
    RunPlay(0, "~/src/shop-api", (RunTask(("capacity",), (6.0, 25.0)), RunTask(run_s=(45.0,)),
                                  RunTask(run_s=(20.0,))), jobs=2),
    # codexwatch run -- codex exec -m gpt-6-luna: a usage limit, and no --wait-for-reset:
    # it stops at once (exit 17), "gave up".
    RunPlay(4, "~/src/docs", (RunTask(("usage_limit",), (9.0,)),), model="gpt-6-luna"),
)


def run_timeline(play: RunPlay, start: float, rng: random.Random) -> list[tuple[float, dict]]:
    """Every state the supervisor of `play` records, as (time, `sources.runs.run_state`),
    oldest first; the last one has ended. The gate is the supervisor's: at most `jobs`
    attempts at once, a start gap between two starts (`S.start_gap`) when jobs > 1."""
    policy = S.Policy(models=play.models)
    records = [S.TaskRecord(k + 1) for k in range(len(play.tasks))]
    model = {k: play.model for k in range(len(play.tasks))}
    wait = {k: 0.0 for k in model}
    resume = {k: False for k in model}
    first_failure: dict[int, float] = {}
    out: list[tuple[float, dict]] = []

    def record_state(t: float, ended_at: float | None = None) -> None:
        outcome = S.overall(records)[0] if ended_at is not None else None
        state = R.run_state(records, play.cwd, ended_at, outcome, t)
        if out and out[-1][0] == t:
            out[-1] = (t, state)
        else:
            out.append((t, state))

    END, WANT, TRY = 0, 1, 2  # at one time: attempts end before others start
    events: list[tuple[float, int, int, int]] = []
    seq = 0

    def push(t: float, kind: int, k: int) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, kind, seq, k))

    for k in range(len(play.tasks)):
        push(start, WANT, k)
    waiting: list[int] = []
    running = 0
    next_start = start
    t = start
    while events:
        t, kind, _, k = heapq.heappop(events)
        record = records[k]
        if kind == WANT:
            record.state, record.until = "queued", None
            waiting.append(k)
        elif kind == END:
            running -= 1
            attempt = record.attempts[-1]
            attempt.ended_at = t
            fails = play.tasks[k].failures
            if attempt.n <= len(fails):
                cls = fails[attempt.n - 1]
                attempt.outcome, attempt.error_class, attempt.shape = "failed", cls, "rejected"
                first_failure.setdefault(k, t)
                failure = S.Failure(cls, t, shape="rejected")
                step = S.decide(failure, record.attempts, policy, False, first_failure[k], t,
                                rng, model[k])
                attempt.action = step.action
                if step.retry:
                    model[k], wait[k], resume[k] = step.model, step.wait_s, step.resume is not None
                    record.state, record.until, record.note = "backing_off", t + step.wait_s, step.reason
                    push(t + step.wait_s, WANT, k)
                else:
                    record.outcome, record.exit_code, record.state = "failed", step.exit_code, "gave_up"
            else:
                attempt.outcome = record.outcome = record.state = "ok"
                record.exit_code = 0
        while waiting and running < play.jobs and t >= next_start:
            k = waiting.pop(0)
            record = records[k]
            n = len(record.attempts) + 1
            record.attempts.append(S.Attempt(n, model[k], t, wait[k], resume[k]))
            record.state, record.until = "running", None
            running += 1
            if play.jobs > 1:
                next_start = t + S.start_gap(rng)
            durations = play.tasks[k].run_s
            push(t + durations[min(n, len(durations)) - 1], END, k)
        if waiting and running < play.jobs and next_start > t:
            push(next_start, TRY, waiting[0])
        record_state(t)
    record_state(t, ended_at=t)
    return out


@dataclass
class Demo:
    """A temporary Codex home with a week of history, and a live replay into it."""

    clock: Callable[[], float] = time.time
    seed: int = 7
    days: int = 7
    script: tuple[Step, ...] = LIVE_SCRIPT
    pace: float = 1.0  # 0.5 = twice as fast
    runs: tuple[RunPlay, ...] = DEMO_RUNS  # simulated `codexwatch run` supervisors
    home: Path | None = None
    state_dir: Path | None = None  # the demo's own codexwatch state directory (run states)
    _tmp: str | None = None
    _rng: random.Random = field(default_factory=random.Random)
    _run_files: list[Path] = field(default_factory=list)

    def __enter__(self) -> "Demo":
        try:
            self.prepare()
        except BaseException:  # a signal or an error half way: nothing left in /tmp
            self.cleanup()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.cleanup()

    def cleanup(self) -> None:
        tmp, self._tmp = self._tmp, None  # first: the simulated runs stop writing (see _record)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    # history -----------------------------------------------------------------------

    def prepare(self) -> Path:
        """Write the past week into a fresh temporary Codex home; -> its path."""
        self._rng = random.Random(self.seed)
        self._tmp = tempfile.mkdtemp(prefix="codexwatch-demo-")
        self.home = Path(self._tmp) / "codex-home"
        (self.home / "sessions").mkdir(parents=True)
        # Beside the Codex home, never in it (nor in the user's own state directory).
        self.state_dir = Path(self._tmp) / "state"
        R.runs_dir(self.state_dir).mkdir(parents=True)
        now = self.clock()
        for start, scenario, model in self._week(now):
            self.write_session(scenario, start, model)
        # Codex's model list as a ChatGPT login caches it (0.171's bundled catalogue).
        catalogue = resources.files("codexwatch").joinpath(DATA, "models_cache.json")
        (self.home / "models_cache.json").write_bytes(catalogue.read_bytes())
        # A TUI session that ran in the last half hour: ok, capacity ×2, 429, ok.
        self.write_session("tui", now - 25 * 60, "gpt-6-sol")
        return self.home

    def _week(self, now: float) -> list[tuple[float, str, str]]:
        """Sessions over the past days: busier and failing more in weekday working hours."""
        rng = self._rng
        plan = []
        for day in range(self.days, 0, -1):
            base = datetime.fromtimestamp(now - day * 86400).astimezone().replace(minute=0, second=0, microsecond=0)
            weekend = base.weekday() >= 5
            for hour in range(8, 23):
                peak = 10 <= hour < 17 and not weekend
                sessions = rng.choice((0, 1, 1, 2)) if not weekend else rng.choice((0, 0, 1))
                for _ in range(sessions):
                    start = base.replace(hour=hour).timestamp() + rng.uniform(0, 3300)
                    model = rng.choices(MODELS, weights=(5, 3, 2))[0]
                    fail_p = (0.45 if model == "gpt-6-sol" else 0.2) if peak else 0.06
                    if rng.random() < fail_p:
                        scenario = rng.choices(
                            ("capacity", "capacity_stream", "capacity_midturn", "rate_limit", "disconnected", "usage_limit"),
                            weights=(6, 2, 3, 2, 1, 1 if day > 3 else 0),
                        )[0]
                    else:
                        scenario = rng.choice(("healthy", "healthy", "healthy_tools"))
                    plan.append((start, scenario, model))
        return plan

    def write_session(self, scenario: str, start: float, model: str) -> Path:
        assert self.home is not None
        lines = load_recording(scenario)
        ids = fresh_ids(lines, self._rng)
        models = {m: model for m in ("gpt-6-sol", "gpt-6.1-sol", "gpt-6-luna")} if scenario != "tui" else {}
        out = with_meter(retime(lines, start, ids, models))
        if scenario != "tui":  # the live session stays as recorded: its thread is short
            out = with_fill(out, illustrative_fill(self._rng, scenario not in HEALTHY))
        session_id, _ = recording_ids(out)
        path = rollout_path(self.home, start, session_id or "unknown")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(out))
        return path

    # live ---------------------------------------------------------------------------

    async def replay(self, stop: asyncio.Event | None = None, loop: bool = True) -> None:
        """Append the live script's turns into the home as Codex would, and play the
        simulated runs beside them (again each time round, the previous round's removed),
        until `stop`."""
        stop = stop or asyncio.Event()
        loop = loop and bool(self.script)  # nothing to go round
        session: Path | None = None
        runs: asyncio.Future | None = None
        try:
            while not stop.is_set():
                if self.runs:
                    if runs is not None:
                        runs.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await runs
                    self.clear_runs()
                    runs = asyncio.ensure_future(self.play_runs(stop))
                for step in self.script:
                    if await _sleep(step.delay * self.pace, stop):
                        return
                    session = await self.play(step, session, stop)
                    if session is None:
                        return
                if not loop:
                    if runs is not None:
                        await runs
                    return
        finally:
            if runs is not None and not runs.done():
                runs.cancel()

    async def play_runs(self, stop: asyncio.Event) -> None:
        """Every run of `self.runs`, each from its delay, at once."""

        async def one(play: RunPlay) -> None:
            if not await _sleep(play.delay * self.pace, stop):
                await self.play_run(play, stop)

        await asyncio.gather(*(one(p) for p in self.runs))

    async def play_run(self, play: RunPlay, stop: asyncio.Event,
                       after_write: Callable[[dict], None] | None = None) -> Path | None:
        """Record `play`'s states in the demo's state directory as its supervisor would, each
        at its time (scaled by `pace`), with the supervisor's heartbeat between; -> the state
        file. `after_write(state)` is called after each state is recorded."""
        assert self.state_dir is not None
        start = self.clock()
        timeline = run_timeline(play, start, self._run_rng(play))
        file = R.RunStateFile(self.state_dir, started_at=start)  # this process's pid: it is alive
        self._run_files.append(file.path)
        clock = asyncio.get_running_loop().time
        began = clock()
        for at, state in timeline:
            due = began + (at - start) * self.pace
            while clock() < due:
                if await _sleep(min(due - clock(), R.HEARTBEAT_S), stop):
                    return file.path
                if clock() < due and not self._record(file, dict(state, updated_at=self.clock())):
                    return file.path  # the heartbeat, as the supervisor writes it
            if not self._record(file, state):
                return file.path
            if after_write is not None:
                after_write(state)
        return file.path

    def _record(self, file: R.RunStateFile, state: dict) -> bool:
        """Write a run's state, unless the demo was cleaned up meanwhile (a signal's forced
        exit: the writer would make the removed folder again); False then."""
        if self._tmp is None:
            return False
        file.write(state)
        return True

    def stage_runs(self, elapsed: float) -> list[Path]:
        """Record each run's state as it stands `elapsed` seconds into the replay (those not
        yet started: nothing), as if they had started that long ago; -> the state files."""
        assert self.state_dir is not None
        now = self.clock()
        paths = []
        for play in self.runs:
            if play.delay > elapsed:
                continue
            start = now - elapsed + play.delay
            timeline = run_timeline(play, start, self._run_rng(play))
            state = [s for at, s in timeline if at <= now][-1]
            file = R.RunStateFile(self.state_dir, started_at=start)
            file.write(state)
            self._run_files.append(file.path)
            paths.append(file.path)
        return paths

    def _run_rng(self, play: RunPlay) -> random.Random:
        return random.Random(f"{self.seed}:{play.cwd}:{play.delay}")  # the same waits each time

    def clear_runs(self) -> None:
        """Remove the run states this demo recorded."""
        for path in self._run_files:
            with contextlib.suppress(OSError):
                path.unlink()
        self._run_files.clear()

    async def play(self, step: Step, session: Path | None, stop: asyncio.Event) -> Path | None:
        assert self.home is not None
        lines = load_recording(step.scenario)
        ids = fresh_ids(lines, self._rng)
        models = {m: step.model for m in ("gpt-6-sol", "gpt-6.1-sol", "gpt-6-luna")}
        now = self.clock()
        head, turns = split_turns(lines)
        recorded_session, _ = recording_ids(lines)
        if session is None or step.new_session or not session.exists():
            session = rollout_path(self.home, now, ids.get(recorded_session or "", "unknown"))
            session.parent.mkdir(parents=True, exist_ok=True)
            body = retime(head, now, ids, models)
        else:
            body = []
            if recorded_session:
                ids[recorded_session] = _session_id_of(session)
        turn = with_meter(retime(turns[0], now + 0.05, ids, models)) if turns else []
        # Write as Codex does: the session head at once, then the turn line by line,
        # through one open handle, with the recording's pauses (shortened).
        with open(session, "ab") as fh:
            if body:
                fh.write(b"".join(body))
                fh.flush()
            previous = None
            for raw, line in zip(turns[0] if turns else [], turn):
                at = first_time([raw])
                if previous is not None and at > previous:
                    if await _sleep(min(at - previous, 2.0) * self.pace, stop):
                        return None
                previous = at if at else previous
                fh.write(line)
                fh.flush()
        return session

    # wiring ---------------------------------------------------------------------------

    def app_config(self, settings, **overrides):
        """An AppConfig reading the demo home and the bundled status page, offline."""
        from codexwatch.ui.app import AppConfig

        if self.home is None:
            self.prepare()
        transport = demo_status_transport(self.clock)
        config = AppConfig(
            codex_home=self.home,
            since_seconds=(self.days + 1) * 86400,
            status_url=DEFAULT_PAGE_URL,
            status_enabled=transport is not None,
            status_interval=30.0,
            status_transport=transport,
            clock=self.clock,
            bell=settings.bell,
            notify=settings.notify,
            theme=settings.theme,
            use_cache=False,
            demo=self,
            runs_state_dir=self.state_dir,
        )
        return replace(config, **overrides)


def _session_id_of(path: Path) -> str:
    # rollout-YYYY-MM-DDTHH-MM-SS-<uuid>.jsonl
    return path.stem[len("rollout-2026-11-29T08-35-10-"):]


async def _sleep(seconds: float, stop: asyncio.Event) -> bool:
    """Sleep, or return True at once when stop is set."""
    try:
        await asyncio.wait_for(stop.wait(), timeout=max(0.0, seconds))
        return True
    except asyncio.TimeoutError:
        return False


def demo_status_transport(clock: Callable[[], float]):
    """An httpx MockTransport serving the status engineer's bundled demo payloads."""
    from codexwatch.sources.demo_status import demo_payloads

    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        payloads = demo_payloads(clock())
        body = payloads.get(request.url.path)
        if body is None:
            return httpx.Response(404, json={"error": "not in the demo"})
        if isinstance(body, (bytes, str)):
            return httpx.Response(200, content=body, headers={"content-type": "application/json"})
        return httpx.Response(200, json=body)

    return httpx.MockTransport(handler)
