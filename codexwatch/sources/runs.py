"""`codexwatch run`'s files: the rollout an attempt wrote, and the state of running supervisors.

Run state lives in codexwatch's own state directory (the user state directory, or
`$CODEXWATCH_STATE_DIR` / `state_dir` in the config), never in the Codex home: one JSON file
per supervisor, `runs/run-<pid>-<start>.json`, replaced whole (written beside, then renamed)
so a reader never sees half of one. A run writes a heartbeat into it every few seconds; a
reader takes a run whose process is gone, or whose heartbeat stopped, as ended.
"""

from __future__ import annotations

import glob
import os
import sys
import time
from pathlib import Path

import orjson

from codexwatch.core.models import Turn
from codexwatch.sources.reader import RolloutReader

HEARTBEAT_S = 5.0
STALE_AFTER_S = 30.0  # no heartbeat for this long: the run is gone (killed, machine slept)
KEEP_ENDED_S = 7 * 86400  # ended runs' files are removed after a week, by the next run


def default_state_dir() -> Path:
    if sys.platform.startswith("linux"):  # platformdirs' answer, without importing it
        base = os.environ.get("XDG_STATE_HOME", "").strip()
        return Path(base or os.path.expanduser("~/.local/state")) / "codexwatch"
    import platformdirs

    return Path(platformdirs.user_state_dir("codexwatch", appauthor=False))


def runs_dir(state_dir: Path | None) -> Path:
    return (state_dir or default_state_dir()) / "runs"


# --- the rollout a run wrote -------------------------------------------------------------------


def find_rollout(home: Path, thread_id: str) -> Path | None:
    """The rollout of `thread_id`: its name ends with the id, in a date folder named in local
    time (so the date is not guessed: every folder is looked in)."""
    if not thread_id or any(c in thread_id for c in "/\\*?[]"):
        return None
    found = glob.glob(os.path.join(glob.escape(str(home)), "sessions", "*", "*", "*",
                                   f"rollout-*-{thread_id}.jsonl"))
    return Path(sorted(found)[-1]) if found else None


def last_turn(path: Path | None, now: float | None = None) -> Turn | None:
    """The last turn of a rollout (the one the attempt that ended just now ran)."""
    if path is None:
        return None
    reader = RolloutReader(str(path))
    reader.read_new()
    turns = reader.turns(time.time() if now is None else now)
    return turns[-1] if turns else None


def turns_of(path: Path | None, now: float | None = None) -> list[Turn]:
    if path is None:
        return []
    reader = RolloutReader(str(path))
    reader.read_new()
    return list(reader.turns(time.time() if now is None else now))


# --- run state -------------------------------------------------------------------------------


def run_state(records, cwd: str, ended_at: float | None, outcome: str | None, now: float) -> dict:
    """What a supervisor records of its tasks (`core.supervise.TaskRecord`s) for the
    dashboard: each task's state, attempt, model, class of the last failure and the end of
    its wait; the run's end and outcome once it ended. Plain values, a fresh dict each call."""
    tasks = []
    for r in records:
        last = r.attempts[-1] if r.attempts else None
        tasks.append({"task": r.index, "state": r.state, "attempt": len(r.attempts),
                      "model": last.model if last else None,
                      "error_class": last.error_class if last else None,
                      "until": r.until, "outcome": r.outcome})
    return {"cwd": cwd, "tasks": tasks, "ended_at": ended_at, "outcome": outcome, "updated_at": now}


class RunStateFile:
    """One supervisor's state file (written by that supervisor only)."""

    def __init__(self, state_dir: Path | None, pid: int | None = None, started_at: float | None = None):
        self.pid = os.getpid() if pid is None else pid
        self.started_at = time.time() if started_at is None else started_at
        self.dir = runs_dir(state_dir)
        self.path = self.dir / f"run-{self.pid}-{int(self.started_at * 1000)}.json"
        self.ok = True

    def write(self, state: dict) -> None:
        """Replace the file with `state` (plus pid and heartbeat); an unwritable state
        directory is told once and then left alone: the run itself goes on."""
        if not self.ok:
            return
        data = dict(state, pid=self.pid, started_at=self.started_at, heartbeat_at=time.time())
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(orjson.dumps(data))
            os.replace(tmp, self.path)
        except OSError as exc:
            self.ok = False
            print(f"codexwatch: cannot record the run's state in {self.dir}: {exc.strerror or exc}",
                  file=sys.stderr)

    def prune(self, now: float | None = None) -> None:
        """Remove other runs' files that ended (or went stale) more than a week ago."""
        now = time.time() if now is None else now
        for path in self.dir.glob("run-*.json"):
            try:
                if path != self.path and now - path.stat().st_mtime > KEEP_ENDED_S:
                    path.unlink()
            except OSError:
                pass


def pid_alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would end the process there: the heartbeat decides
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except (OSError, ValueError, OverflowError):
        return False
    return True


def read_runs(state_dir: Path | None, now: float | None = None, alive=pid_alive) -> list[dict]:
    """Every recorded run, newest first, each with `live`: False once it ended, its process is
    gone or its heartbeat stopped (a killed run shows as ended, not running forever)."""
    now = time.time() if now is None else now
    runs = []
    for path in runs_dir(state_dir).glob("run-*.json"):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue  # being replaced, or not ours
        if not isinstance(data, dict):
            continue
        ended = data.get("ended_at") is not None
        beat = data.get("heartbeat_at")
        pid = data.get("pid")
        data["live"] = bool(not ended and isinstance(pid, int) and alive(pid)
                            and isinstance(beat, (int, float)) and now - beat <= STALE_AFTER_S)
        runs.append(data)
    runs.sort(key=lambda r: r.get("started_at") or 0, reverse=True)
    return runs
