"""`codexwatch run`: run `codex exec` and carry it through capacity errors, 429s and broken
streams the way the field guide says (the policy is `codexwatch.core.supervise`).

    codexwatch run [options] -- codex exec [codex args] PROMPT
    codexwatch run --tasks FILE [--jobs N] [options] -- codex exec [codex args]

Codex's stdout and stderr pass through unchanged (always drained); its stdin is /dev/null
unless one is piped in (read once, given to every attempt). codexwatch's own lines go to
stderr, `codexwatch: …`, and never hold a prompt. SIGINT and SIGTERM are forwarded to Codex;
the summary is then written with outcome `aborted` and the exit status is 130 or 143.
"""

from __future__ import annotations

import os
import random
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import orjson

from codexwatch.config import ConfigError, parse_duration
from codexwatch.core import supervise as S
from codexwatch.core.advice import local_time, model_tier, span
from codexwatch.core.models import Episode, StatusSnapshot, Turn
from codexwatch.core.redact import redact
from codexwatch.sources import runs as R
from codexwatch.sources.catalogue import load_catalogue

STATUS_REUSE_S = 60.0
CLOCK_SKEW_S = 1.0  # a turn that started this much before its attempt is not the attempt's  # one status page answer serves every task for this long
_TIERS = {"heavy": 0, "middle": 1, "light": 2}
_WORK_ITEMS_SKIPPED = {"error"}  # `--json` items that are warnings, not work


# --- arguments ----------------------------------------------------------------------------------


def _durations(text: str, what: str) -> tuple[float, ...]:
    out = []
    for part in text.split(","):
        seconds = parse_duration(part) if part.strip() else None
        if seconds is None:
            raise ConfigError(f"{what}: not a list of durations: {text!r} (e.g. 30s,2m,10m,30m)")
        out.append(seconds)
    return tuple(out)


def _duration(text: str | None, what: str) -> float | None:
    if text is None:
        return None
    seconds = parse_duration(text)
    if seconds is None:
        raise ConfigError(f"{what}: a duration is needed, e.g. 30m")
    return seconds


class Command:
    """The Codex command line, taken apart: what comes up to `exec`, the flags after it (the
    model flag taken out: codexwatch passes `-m` itself), and the prompt (single mode)."""

    def __init__(self, argv: list[str], tasks_mode: bool):
        if not argv:
            raise ConfigError("give the Codex command after `--`: codexwatch run -- codex exec PROMPT")
        if "exec" not in argv[1:] and "e" not in argv[1:]:
            raise ConfigError("the command after `--` must be `codex exec …`")
        at = next(i for i, a in enumerate(argv) if i > 0 and a in ("exec", "e"))
        self.head = argv[: at + 1]
        rest = argv[at + 1:]
        if rest and rest[0] == "resume":
            raise ConfigError("codexwatch run resumes threads itself: give `codex exec … PROMPT`")
        self.prompt: str | None = None
        if not tasks_mode:
            if not rest:
                raise ConfigError("give the prompt as the last argument of `codex exec`")
            self.prompt = rest[-1]
            rest = rest[:-1]
        self.model: str | None = None
        self.flags: list[str] = []
        i = 0
        while i < len(rest):
            a = rest[i]
            if a in ("-m", "--model") and i + 1 < len(rest):
                self.model = rest[i + 1]
                i += 2
                continue
            if a.startswith("--model="):
                self.model = a.split("=", 1)[1]
            elif a.startswith("-m") and len(a) > 2 and not a.startswith("--"):
                self.model = a[2:]
            else:
                self.flags.append(a)
            i += 1
        self.json = "--json" in self.flags or "--experimental-json" in self.flags
        self.ephemeral = "--ephemeral" in self.flags  # no rollout: a thread cannot be resumed

    def fresh(self, prompt: str, model: str | None) -> list[str]:
        return self.head + self.flags + (["-m", model] if model else []) + [prompt]

    def resume(self, thread_id: str, model: str | None) -> list[str]:
        """`codex exec [flags] resume <id> [-m M] PROMPT`: exec-level flags go before `resume`,
        and the model on every resume (resume uses the configured model, not the recorded one)."""
        return (self.head + self.flags + ["resume", thread_id] + (["-m", model] if model else [])
                + [S.RESUME_PROMPT])


def catalogue_models(home: Path) -> list[str]:
    """Codex's own model list (`models_cache.json`, written for a ChatGPT login): the
    models shown in its picker, heavy → middle → light, each tier in Codex's order."""
    catalogue = load_catalogue(home)
    if catalogue is None:
        return []
    slugs = dict.fromkeys(m.slug for m in catalogue.visible)  # Codex's order, by priority
    return sorted(slugs, key=lambda slug: _TIERS[model_tier(slug)])  # stable: that order kept


def history_models(settings, now: float) -> list[str]:
    """The models that worked in the user's own last 7 days, heavy → middle → light, best
    success rate first in each tier."""
    from codexwatch.commands.common import HomeUnreadable, load
    from codexwatch.core.advice import model_success

    try:
        turns = load(replace(settings, since="7d"), now).turns
    except HomeUnreadable:
        return []
    ranked = sorted(((m, ok / (ok + failed)) for m, (ok, failed) in model_success(turns, now).items() if ok),
                    key=lambda mr: (_TIERS[model_tier(mr[0])], -mr[1]))
    return [m for m, _ in ranked]


def configured_model(home: Path) -> str | None:
    """`model` in the Codex home's config.toml (read only)."""
    path = home / "config.toml"
    if not path.is_file():
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        model = tomllib.loads(path.read_text(encoding="utf-8")).get("model")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return model if isinstance(model, str) else None


# --- one attempt ----------------------------------------------------------------------------------


class Output:
    """codexwatch's stdout and stderr, shared by every child: whole lines, one writer at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.out = sys.stdout.buffer
        self.err = sys.stderr.buffer

    def write(self, stream, data: bytes) -> None:
        with self.lock:
            try:
                stream.write(data)
                stream.flush()
            except (BrokenPipeError, ValueError):
                pass

    def say(self, text: str) -> None:
        self.write(self.err, f"codexwatch: {text}\n".encode("utf-8", "replace"))


_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


class Child:
    """One `codex exec` process: its output passed through and watched for the thread id and
    the failure message."""

    def __init__(self, argv: list[str], env: dict, stdin_bytes: bytes | None, out: Output):
        self.thread_id: str | None = None
        self.printed: str | None = None  # turn.failed's message, else stderr's ERROR: line
        self.json_failed: str | None = None
        self.completed = False
        self.worked = False
        self.out = out
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.PIPE if stdin_bytes is not None else subprocess.DEVNULL,
            start_new_session=True,  # a terminal's ^C reaches codexwatch, which forwards it once
        )
        self.readers = [threading.Thread(target=self._drain, args=(self.proc.stdout, True), daemon=True),
                        threading.Thread(target=self._drain, args=(self.proc.stderr, False), daemon=True)]
        for t in self.readers:
            t.start()
        if stdin_bytes is not None:
            threading.Thread(target=self._feed, args=(stdin_bytes,), daemon=True).start()

    def _feed(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def _drain(self, pipe, is_stdout: bool) -> None:
        target = self.out.out if is_stdout else self.out.err
        for line in iter(pipe.readline, b""):
            self.out.write(target, line)
            try:
                (self._on_stdout if is_stdout else self._on_stderr)(line)
            except Exception:  # a line we do not understand never stops the passing through
                pass
        pipe.close()

    def _on_stdout(self, line: bytes) -> None:
        if not line.startswith(b'{"type":'):
            return
        event = orjson.loads(line)
        kind = event.get("type")
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            self.thread_id = self.thread_id or event["thread_id"]
        elif kind == "turn.failed":
            msg = (event.get("error") or {}).get("message")
            if isinstance(msg, str):
                self.json_failed = msg
        elif kind == "turn.completed":
            self.completed = True
        elif kind in ("item.started", "item.completed"):
            item = event.get("item") or {}
            if item.get("type") not in _WORK_ITEMS_SKIPPED:
                self.worked = True

    def _on_stderr(self, line: bytes) -> None:
        text = _ANSI.sub(b"", line).decode("utf-8", "replace").rstrip("\r\n")
        if text.startswith("session id:") and self.thread_id is None:
            self.thread_id = text.split(":", 1)[1].strip() or None
        elif text.startswith("ERROR: ") and self.printed is None:
            self.printed = text[len("ERROR: "):].strip()

    def wait(self) -> int:
        status = self.proc.wait()
        for t in self.readers:
            t.join()
        if self.json_failed is not None:
            self.printed = self.json_failed
        return status if status >= 0 else 128 - status  # killed by a signal: as a shell says it

    def signal(self, signum: int) -> None:
        try:
            self.proc.send_signal(signum)
        except (ProcessLookupError, OSError, ValueError):  # gone; or a signal Windows lacks
            pass


# --- the supervisor ----------------------------------------------------------------------------------


class Gate:
    """At most `jobs` Codex processes at once (one while rate limited), with a random pause
    between two starts."""

    def __init__(self, jobs: int, rng: random.Random, clock=time.time):
        self.jobs = jobs
        self.rng = rng
        self.clock = clock
        self.cond = threading.Condition()
        self.running = 0
        self.next_start = 0.0
        self.serial_until = 0.0
        self.spaced = jobs > 1

    def limit(self, now: float) -> int:
        return 1 if now < self.serial_until else self.jobs

    def acquire(self, stop: threading.Event) -> bool:
        with self.cond:
            while not stop.is_set():
                now = self.clock()
                if self.running < self.limit(now) and now >= self.next_start:
                    self.running += 1
                    if self.spaced:
                        self.next_start = now + S.start_gap(self.rng)
                    return True
                waits = [0.5]
                if self.next_start > now:
                    waits.append(self.next_start - now)
                self.cond.wait(min(waits))
            return False

    def release(self) -> None:
        with self.cond:
            self.running -= 1
            self.cond.notify_all()

    def slow_down(self, seconds: float) -> None:
        with self.cond:
            self.serial_until = max(self.serial_until, self.clock() + seconds)


class Supervisor:
    def __init__(self, args, settings, command: Command, prompts: list[str], policy: S.Policy,
                 first_model: str | None, stdin_bytes: bytes | None):
        self.settings = settings
        self.command = command
        self.prompts = prompts
        self.policy = policy
        self.first_model = first_model
        self.stdin_bytes = stdin_bytes
        self.tasks_mode = bool(getattr(args, "tasks", None))
        self.out = Output()
        self.rng = random.Random()
        self.stop = threading.Event()
        self.signum: int | None = None
        self.lock = threading.Lock()
        self.children: set[Child] = set()
        self.records = [S.TaskRecord(i + 1) for i in range(len(prompts))]
        self.failed_turns: dict[int, list[Turn]] = {i: [] for i in range(len(prompts))}
        self.gate = Gate(max(1, args.jobs or 2) if self.tasks_mode else 1, self.rng)
        self.snapshot: StatusSnapshot | None = None
        self.snapshot_at = 0.0
        self.status_lock = threading.Lock()
        self.configured: str | None = None  # Codex's configured model (no -m needed for it)
        self.env = dict(os.environ, CODEX_HOME=str(settings.codex_home))
        self.state = R.RunStateFile(getattr(settings, "state_dir", None))
        self.state_lock = threading.Lock()
        self.ended_at: float | None = None

    # -- signals

    def on_signal(self, signum, _frame) -> None:
        if self.signum is None:
            self.signum = signum
        self.stop.set()
        with self.lock:
            children = list(self.children)
        for child in children:
            child.signal(signum)

    # -- status page

    def incident(self, now: float) -> bool:
        if not self.settings.status_enabled:
            return False
        with self.status_lock:  # one request at a time; the others take its answer
            if self.snapshot is None or now - self.snapshot_at >= STATUS_REUSE_S:
                from codexwatch.sources.status_client import fetch_status_once

                try:
                    self.snapshot = fetch_status_once(self.settings.status_url)
                except Exception as exc:  # noqa: BLE001 - no answer is "unknown", never "all clear"
                    self.snapshot = StatusSnapshot.unknown(f"status page not readable: {exc}", now)
                self.snapshot_at = now
            snap = self.snapshot
        return bool(snap is not None and snap.ok and snap.codex_incidents_ongoing)

    # -- state for the dashboard

    def write_state(self) -> None:
        with self.state_lock:  # tasks and the heartbeat write it; one file, one writer at a time
            self._write_state()

    def _write_state(self) -> None:
        outcome = None
        if self.ended_at is not None:
            outcome, code = S.overall(self.records, self._signal_exit())
        self.state.write(R.run_state(self.records, redact(os.getcwd(), str(Path.home())),
                                     self.ended_at, outcome, time.time()))

    def _heartbeat(self) -> None:
        while not self.finished.wait(R.HEARTBEAT_S):
            self.write_state()

    def _signal_exit(self) -> int | None:
        return None if self.signum is None else 128 + self.signum

    # -- one task

    def say(self, record: S.TaskRecord, text: str) -> None:
        who = f"task {record.index} " if self.tasks_mode else ""
        self.out.say(who + text)

    def run_task(self, k: int) -> None:
        record = self.records[k]
        prompt = self.prompts[k]
        model = self.first_model or self.configured  # the model this attempt runs
        resume: str | None = None
        wait_s = 0.0
        first_failure: float | None = None
        while True:
            record.state, record.until = "queued", None
            if not self.gate.acquire(self.stop):
                record.state, record.outcome = "aborted", "aborted"
                return
            try:
                attempt = S.Attempt(len(record.attempts) + 1, model, time.time(), wait_s, resume is not None)
                record.attempts.append(attempt)
                record.state = "running"
                flag = model if model != self.configured or self.first_model else None
                argv = self.command.resume(resume, flag) if resume else self.command.fresh(prompt, flag)
                how = f"resuming thread {resume}" if resume else "starting"
                self.say(record, f"attempt {attempt.n}: {how}" + (f" with model {model}" if model else ""))
                self.write_state()
                try:
                    child = Child(argv, self.env, self.stdin_bytes, self.out)
                except OSError as exc:
                    attempt.outcome, attempt.ended_at = "error", time.time()
                    record.outcome, record.exit_code, record.state = "failed", 127, "failed"
                    self.say(record, f"cannot start {argv[0]}: {exc.strerror or exc}")
                    return
                with self.lock:
                    self.children.add(child)
                if self.stop.is_set():  # a signal came while it was being started
                    child.signal(self.signum or signal.SIGTERM)
                status = child.wait()
                with self.lock:
                    self.children.discard(child)
            finally:
                self.gate.release()
            now = attempt.ended_at = time.time()
            attempt.session_id = child.thread_id
            path = R.find_rollout(self.settings.codex_home, child.thread_id) if child.thread_id else None
            turn = R.last_turn(path, now)
            if turn is not None and (turn.started_at or turn.at) < attempt.started_at - CLOCK_SKEW_S:
                turn = None  # a resumed thread's earlier turn: this attempt wrote none of its own
            if self.stop.is_set():
                attempt.outcome = record.outcome = record.state = "aborted"
                if turn is not None and turn.outcome == "ok":
                    attempt.outcome = "ok"
                return
            outcome = S.judge(status, child.thread_id, turn, child.printed, child.worked, now)
            if outcome.kind == "ok":
                attempt.outcome = record.outcome = record.state = "ok"
                record.exit_code = 0
                self.say(record, f"attempt {attempt.n}: ok")
                return
            if outcome.kind == "error":
                attempt.outcome = "error"
                record.outcome, record.state, record.exit_code = "failed", "failed", outcome.exit_status
                self.say(record, f"attempt {attempt.n}: codex exited {outcome.exit_status} without "
                                 "a failed turn (a usage or configuration error?): not retried")
                return
            f = outcome.failure
            attempt.outcome, attempt.error_class = "failed", f.error_class
            attempt.http_status, attempt.shape = f.http_status, f.shape
            if turn is not None and turn.outcome == "failed":
                self.failed_turns[k].append(_with_cause(turn, f))
            first_failure = f.at if first_failure is None else first_failure
            incident = self.incident(now) if f.error_class in ("capacity", "server_error") else False
            step = S.decide(f, record.attempts, self.policy, incident, first_failure, now,
                            self.rng, model)
            attempt.action = step.action
            cls = f.error_class + (f" ({f.http_status})" if f.http_status else "")
            shape = f", {f.shape}" if f.shape else ""
            if not step.retry:
                record.outcome, record.exit_code = "failed", step.exit_code
                record.state = "gave_up"
                self.say(record, f"attempt {attempt.n} failed: {cls}{shape} -> {step.action}: "
                                 f"{step.reason}; exit {step.exit_code}")
                return
            if step.serial_s and self.tasks_mode:
                self.gate.slow_down(step.serial_s)
            model, resume, wait_s = step.model, step.resume, step.wait_s
            if self.command.ephemeral:
                resume = None
            at = now + step.wait_s
            then = "resume the thread" if resume else "run again"
            self.say(record, f"attempt {attempt.n} failed: {cls}{shape} -> {step.action}: {step.reason}; "
                             f"will {then} in {span(step.wait_s) if step.wait_s >= 1 else f'{step.wait_s:.1f}s'}"
                             f" (at {local_time(at, fmt='%H:%M:%S')})")
            record.state, record.until, record.note = "backing_off", at, step.reason
            self.write_state()
            if not self._sleep(record, at):
                record.outcome = record.state = "aborted"
                return

    def _sleep(self, record: S.TaskRecord, until: float) -> bool:
        """Wait until `until`, saying what is left every minute of a long wait; False when
        interrupted."""
        last_said = time.time()
        while True:
            left = until - time.time()
            if left <= 0:
                return True
            if self.stop.wait(min(left, 1.0)):
                return False
            now = time.time()
            if until - now > 1 and now - last_said >= 60:
                last_said = now
                self.say(record, f"retrying in {span(until - now)}")

    # -- all tasks

    def run(self) -> int:
        self.finished = threading.Event()
        self.state.prune()
        self.write_state()
        beat = threading.Thread(target=self._heartbeat, daemon=True)
        beat.start()
        old = {s: signal.signal(s, self.on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            workers = [threading.Thread(target=self._task_guarded, args=(k,), daemon=True)
                       for k in range(len(self.prompts))]
            for w in workers:
                w.start()
            for w in workers:
                while w.is_alive():
                    w.join(0.2)  # short joins: the main thread must take the signals
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        self.ended_at = time.time()
        self.finished.set()
        outcome, code = S.overall(self.records, self._signal_exit())
        self.write_state()
        return code

    def _task_guarded(self, k: int) -> None:
        try:
            self.run_task(k)
        except Exception as exc:  # noqa: BLE001 - one task's bug must not hang the run
            r = self.records[k]
            r.outcome, r.state, r.exit_code = "failed", "failed", 1
            self.say(r, f"internal error: {type(exc).__name__}: {exc}")

    # -- what is left behind

    def summary(self) -> dict:
        outcome, code = S.overall(self.records, self._signal_exit())
        return S.summary_json(self.records, outcome, code)

    def write_archive(self, folder: Path) -> None:
        from codexwatch.core.report import build_report

        folder.mkdir(parents=True, exist_ok=True)
        failures = sorted((t for ts in self.failed_turns.values() for t in ts), key=lambda t: t.at)
        now = time.time()
        if failures:
            snapshot = self.snapshot
            if snapshot is None and self.settings.status_enabled:
                self.incident(now)
                snapshot = self.snapshot
            if snapshot is None:
                snapshot = StatusSnapshot.unknown("not checked: --no-status", now)
            episode = Episode(id="run", failures=failures, ongoing=True)
            report = build_report(episode, failures, snapshot, now, home=str(Path.home()))
            (folder / "report.md").write_text(report.markdown, encoding="utf-8")
            (folder / "report.json").write_text(report.to_json(), encoding="utf-8")
        _write_json(folder / "summary.json", self.summary())


def _with_cause(turn: Turn, f: S.Failure) -> Turn:
    """The turn with the cause the printed message gave, where the rollout recorded none."""
    if turn.error_class not in (None, "unrecorded"):
        return turn
    return replace(turn, error_class=f.error_class, http_status=f.http_status, message=f.message)


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")


def _piped_stdin() -> bytes | None:
    """What the user piped in (a pipe or a file), read once for every attempt; None for a
    terminal or nothing (Codex then gets /dev/null)."""
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return None
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    data = sys.stdin.buffer.read()
    return data or None


def _prompts(args, command: Command) -> list[str]:
    if not getattr(args, "tasks", None):
        return [command.prompt or ""]
    try:
        text = Path(args.tasks).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--tasks: cannot read {args.tasks}: {getattr(exc, 'strerror', None) or exc}") from None
    prompts = [line.strip() for line in text.splitlines() if line.strip()]
    if not prompts:
        raise ConfigError(f"--tasks: {args.tasks} holds no task (one prompt per non-empty line)")
    return prompts


def build_policy(args, settings, command: Command) -> tuple[S.Policy, str | None]:
    """The policy, and the model of the first attempt (None: Codex's configured one)."""
    backoff = _durations(args.backoff, "--backoff") if args.backoff else S.Policy().backoff
    quick = _durations(args.quick, "--quick") if args.quick else S.Policy().quick
    give_up = _duration(args.give_up_after, "--give-up-after")
    reset = _duration(args.wait_for_reset, "--wait-for-reset")
    if args.models:
        models = tuple(dict.fromkeys(m.strip() for m in args.models.split(",") if m.strip()))
        if not models:
            raise ConfigError("--models: give model names, e.g. gpt-5.5,gpt-5.4,gpt-5.4-mini")
    else:
        models = tuple(catalogue_models(settings.codex_home)) or tuple(history_models(settings, time.time()))
    first = command.model or (models[0] if args.models else None)
    if command.model and models and command.model not in models:
        models = (command.model,) + models
    policy = S.Policy(models=models, backoff=backoff, quick=quick,
                      give_up_after=S.Policy().give_up_after if give_up is None else give_up,
                      wait_for_reset=reset)
    return policy, first


def run(args, settings) -> int:
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        raise ConfigError("--jobs: at least 1")
    command = Command(args.codex or [], tasks_mode=bool(getattr(args, "tasks", None)))
    prompts = _prompts(args, command)
    policy, first = build_policy(args, settings, command)
    configured = None
    if first is None:  # Codex's configured model runs first: the list is walked down from it
        configured = configured_model(settings.codex_home)
        if configured and policy.models and configured not in policy.models:
            policy = replace(policy, models=(configured,) + policy.models)
    sup = Supervisor(args, settings, command, prompts, policy, first, _piped_stdin())
    sup.configured = configured
    code = sup.run()
    summary = sup.summary()
    if args.summary:
        _write_json(Path(args.summary), summary)
    if args.archive and summary["outcome"] == "failed":
        sup.write_archive(Path(args.archive))
    outcome = summary["outcome"]
    sup.out.say(f"{outcome}, exit {code}" + (f"; archive in {args.archive}" if args.archive and outcome == "failed" else ""))
    return code
