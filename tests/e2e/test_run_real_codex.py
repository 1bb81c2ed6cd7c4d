"""`codexwatch run` against the real `codex exec` (npm `@openai/codex` 0.171.0 and 0.140.0),
driven by a loopback mock of the Responses API (tests/e2e/mockapi.py).

The binaries are installed from the npm registry once per version into a cache outside the
repository (`$CODEXWATCH_TEST_CODEX_CACHE`, else `$XDG_CACHE_HOME/codexwatch-tests`, else
`~/.cache/codexwatch-tests`), and these tests skip, saying why, only when npm cannot install
them. Codex talks to 127.0.0.1 only (a custom provider with its own retries off); back-off
schedules are shrunk through flags, never slept through.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.mockapi import MockResponses, codex_config

pytestmark = pytest.mark.slow

VERSIONS = ("0.171.0", "0.140.0")
# Taken at import, before the test isolation points HOME and XDG_CACHE_HOME into tmp.
_REAL_ENV = dict(os.environ)
CACHE = Path(os.environ.get("CODEXWATCH_TEST_CODEX_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "codexwatch-tests")
FAST = ["--no-status", "--backoff", "0.1s,0.2s", "--quick", "0.1s"]


def _install(version: str) -> Path:
    target = CACHE / f"codex-{version}"
    binary = target / "node_modules" / ".bin" / "codex"
    if binary.exists():
        return binary
    npm = shutil.which("npm", path=_REAL_ENV.get("PATH"))
    if npm is None:
        pytest.skip(f"npm is not installed: cannot install @openai/codex@{version}")
    staging = CACHE / f".codex-{version}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(staging), f"@openai/codex@{version}"],
            env=_REAL_ENV, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"npm could not install @openai/codex@{version}: {exc}")
    if done.returncode != 0 or not (staging / "node_modules" / ".bin" / "codex").exists():
        shutil.rmtree(staging, ignore_errors=True)
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"npm could not install @openai/codex@{version}: {tail[0]}")
    try:
        staging.rename(target)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return binary


@pytest.fixture(scope="session")
def codex_bins() -> dict[str, Path]:
    return {v: _install(v) for v in VERSIONS}


@pytest.fixture(scope="module")
def mock():
    server = MockResponses().start()
    yield server
    server.stop()


class Env:
    def __init__(self, tmp: Path, mock: MockResponses, codex: Path):
        self.home = tmp / "codex-home"
        self.home.mkdir()
        (self.home / "config.toml").write_text(codex_config(mock.base_url))
        self.work = tmp / "work"
        self.work.mkdir()
        self.state = tmp / "state"
        self.codex = str(codex)
        self.tmp = tmp
        self.env = dict(os.environ, CODEX_HOME=str(self.home), MOCK_API_KEY="test-key",
                        CODEXWATCH_STATE_DIR=str(self.state))

    def argv(self, run_args, codex_args) -> list[str]:
        return ([sys.executable, "-m", "codexwatch", "run", *run_args, "--summary", str(self.tmp / "summary.json"),
                 "--", self.codex, "exec", "--skip-git-repo-check", *codex_args])

    def run(self, run_args, codex_args, timeout=120, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(run_args, codex_args), cwd=self.work, env=self.env,
                              stdin=subprocess.DEVNULL if stdin is None else None, input=stdin,
                              capture_output=True, text=True, timeout=timeout)

    def summary(self) -> dict:
        return json.loads((self.tmp / "summary.json").read_text())


@pytest.fixture(params=VERSIONS)
def env(request, tmp_path, mock, codex_bins) -> Env:
    e = Env(tmp_path, mock, codex_bins[request.param])
    e.version = request.param
    return e


def own_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("codexwatch:")]


def _task(request) -> str:
    return request.node.name.replace("[", "-").replace("]", "").replace(".", "_")


def test_capacity_backs_off_and_walks_down_the_models(env, mock, request):
    name = _task(request)
    mock.script(name, "overloaded", "overloaded_stream", "ok")
    done = env.run([*FAST, "--models", "gpt-6-sol,gpt-6-terra,gpt-6-mini"], [f"task:{name} fix the bug"])
    assert done.returncode == 0, done.stderr
    assert [r["model"] for r in mock.for_task(name)] == ["gpt-6-sol", "gpt-6-terra", "gpt-6-mini"]
    task = env.summary()["tasks"][0]
    assert [a["error_class"] for a in task["attempts"]] == ["capacity", "capacity", None]
    assert [a["action"] for a in task["attempts"]] == ["switch_model", "switch_model", None]
    assert [a["outcome"] for a in task["attempts"]] == ["failed", "failed", "ok"]
    assert task["attempts"][0]["wait_s"] == 0 and 0.07 <= task["attempts"][1]["wait_s"] <= 0.5
    assert "Done." in done.stdout  # codex's stdout passed through
    lines = own_lines(done.stderr)
    assert any("capacity" in line and "switch_model" in line for line in lines)
    assert not any(name in line for line in lines)  # the prompt never in codexwatch's lines
    assert name not in json.dumps(env.summary())


def test_failure_after_tool_calls_resumes_the_thread_with_the_new_model(env, mock, request):
    name = _task(request)
    mock.script(name, "tool", "overloaded_stream", "ok")
    codex_args = ["--json"] if env.version == "0.171.0" else []
    done = env.run([*FAST, "--models", "gpt-6-sol,gpt-6-terra"], [*codex_args, f"task:{name} refactor"])
    assert done.returncode == 0, done.stderr
    attempts = env.summary()["tasks"][0]["attempts"]
    assert attempts[0]["shape"] == "interrupted" and attempts[0]["error_class"] == "capacity"
    assert attempts[1]["resumed"] and attempts[1]["session_id"] == attempts[0]["session_id"]
    reqs = mock.for_task(name)
    # the resumed request carries the tool output of the failed turn, then the short prompt
    assert reqs[-1]["model"] == "gpt-6-terra" and reqs[-1]["tool_output"] and reqs[-1]["continue"]
    rollouts = list(env.home.glob(f"sessions/*/*/*/rollout-*-{attempts[0]['session_id']}.jsonl"))
    assert len(rollouts) == 1  # the same thread, the same file


def test_rate_limit_backs_off_on_the_same_model(env, mock, request):
    name = _task(request)
    mock.script(name, "rate429", "ok")
    done = env.run([*FAST, "--models", "gpt-6-sol,gpt-6-terra"], [f"task:{name} go"])
    assert done.returncode == 0, done.stderr
    a = env.summary()["tasks"][0]["attempts"]
    assert (a[0]["error_class"], a[0]["http_status"], a[0]["action"]) == ("rate_limit", 429, "slow_down")
    assert [r["model"] for r in mock.for_task(name)] == ["gpt-6-sol", "gpt-6-sol"]


def test_usage_limit_stops_with_17_and_writes_the_archive(env, mock, request):
    name = _task(request)
    mock.script(name, "usage_limit")
    archive = env.tmp / "archive"
    done = env.run([*FAST, "--archive", str(archive)], [f"task:{name} secret prompt"])
    assert done.returncode == 17, done.stderr
    assert len(mock.for_task(name)) == 1
    summary = env.summary()
    assert summary["outcome"] == "failed" and summary["exit_code"] == 17
    assert summary["tasks"][0]["attempts"][0]["error_class"] == "usage_limit"
    assert {p.name for p in archive.iterdir()} == {"report.md", "report.json", "summary.json"}
    for p in archive.iterdir():
        assert "secret prompt" not in p.read_text() and name not in p.read_text()
    assert "usage_limit" in (archive / "report.md").read_text()


def test_usage_limit_reset_read_from_codexs_message(env, mock, request):
    """Codex prints the reset in local time ("try again at 5:42 AM"): it is read, and being
    past --wait-for-reset, the run stops at once. (Waiting through it is tested with a fake
    clock: the message gives the minute, so a real wait would take up to two.)"""
    name = _task(request)
    mock.reset_in_s = 90
    mock.script(name, "usage_limit", "ok")
    try:
        done = env.run([*FAST, "--wait-for-reset", "1s"], [f"task:{name} go"])
    finally:
        mock.reset_in_s = 3600
    assert done.returncode == 17
    assert any("usage limit resets in" in line and "past --wait-for-reset" in line
               for line in own_lines(done.stderr)), done.stderr


def test_auth_stops_at_once_with_18(env, mock, request):
    name = _task(request)
    mock.script(name, "auth401")
    done = env.run([*FAST, "--models", "gpt-6-sol,gpt-6-terra"], [f"task:{name} go"])
    assert done.returncode == 18, done.stderr
    assert len(mock.for_task(name)) == 1
    assert env.summary()["tasks"][0]["attempts"][0]["action"] == "relogin"


def test_disconnect_retries_quickly_on_the_same_model(env, mock, request):
    name = _task(request)
    mock.script(name, "disconnect", "disconnect", "ok")
    done = env.run([*FAST, "--models", "gpt-6-sol,gpt-6-terra"], [f"task:{name} go"])
    assert done.returncode == 0, done.stderr
    a = env.summary()["tasks"][0]["attempts"]
    assert [x["error_class"] for x in a] == ["stream_disconnected", "stream_disconnected", None]
    assert {r["model"] for r in mock.for_task(name)} == {"gpt-6-sol"}


def test_model_unavailable_takes_the_next_model_then_stops_with_19(env, mock, request):
    name = _task(request)
    mock.script(name, "model404")
    done = env.run([*FAST, "--models", "gpt-6-sol,gpt-6-terra"], [f"task:{name} go"])
    assert done.returncode == 19, done.stderr
    assert [r["model"] for r in mock.for_task(name)] == ["gpt-6-sol", "gpt-6-terra"]


def test_gives_up_after_the_limit_with_15(env, mock, request):
    name = _task(request)
    mock.script(name, "overloaded")
    archive = env.tmp / "archive"
    done = env.run(["--no-status", "--backoff", "0.3s", "--give-up-after", "1s", "--archive", str(archive)],
                   [f"task:{name} go"])
    assert done.returncode == 15, done.stderr
    a = env.summary()["tasks"][0]["attempts"]
    assert a[-1]["action"] == "stop_and_report" and 2 <= len(a) <= 6
    assert (archive / "report.md").exists()


def test_a_codex_usage_error_is_passed_through_without_retry(env, mock):
    done = env.run(FAST, ["--no-such-flag", "task:x go"])
    assert done.returncode == 2
    a = env.summary()["tasks"][0]["attempts"]
    assert len(a) == 1 and a[0]["outcome"] == "failed" and a[0]["error_class"] is None


def test_a_queue_of_tasks(tmp_path, mock, codex_bins, request):
    env = Env(tmp_path, mock, codex_bins["0.171.0"])
    name = _task(request)
    names = [f"{name}-{k}" for k in range(4)]
    mock.script(names[0], "ok")
    mock.script(names[1], "overloaded", "ok")
    mock.script(names[2], "tool", "disconnect", "ok")
    mock.script(names[3], "rate429", "ok")
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("".join(f"task:{n} do part {k}\n\n" for k, n in enumerate(names)))
    done = env.run([*FAST, "--tasks", str(tasks), "--jobs", "2", "--models", "gpt-6-sol,gpt-6-terra"], ["--json"])
    assert done.returncode == 0, done.stderr
    summary = env.summary()
    assert [t["task"] for t in summary["tasks"]] == [1, 2, 3, 4]
    assert all(t["outcome"] == "ok" for t in summary["tasks"])
    assert [len(t["attempts"]) for t in summary["tasks"]] == [1, 2, 2, 2]
    assert summary["tasks"][2]["attempts"][1]["resumed"]
    assert summary["tasks"][3]["attempts"][0]["action"] == "slow_down"
    first_starts = sorted(t["attempts"][0]["started_at"] for t in summary["tasks"])
    assert len(set(first_starts)) == 4
    assert all(line.startswith("codexwatch: task ") for line in own_lines(done.stderr)[:-1])


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["TERM", "INT"])
def test_a_signal_is_forwarded_and_the_summary_says_aborted(tmp_path, mock, codex_bins, request, signum, code):
    env = Env(tmp_path, mock, codex_bins["0.171.0"])
    name = _task(request)
    mock.script(name, "slow")
    proc = subprocess.Popen(env.argv(FAST, ["--json", f"task:{name} go"]), cwd=env.work, env=env.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not mock.for_task(name) and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    summary = env.summary()
    assert summary["outcome"] == "aborted" and summary["exit_code"] == code
    assert summary["tasks"][0]["attempts"][0]["outcome"] == "aborted"
    from codexwatch.sources.runs import read_runs

    runs = read_runs(env.state)
    assert len(runs) == 1 and not runs[0]["live"] and runs[0]["outcome"] == "aborted"


def test_a_killed_run_reads_as_ended(tmp_path, mock, codex_bins, request):
    env = Env(tmp_path, mock, codex_bins["0.171.0"])
    name = _task(request)
    mock.script(name, "slow")
    proc = subprocess.Popen(env.argv(FAST, ["--json", f"task:{name} go"]), cwd=env.work, env=env.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from codexwatch.sources.runs import read_runs

    deadline = time.time() + 30
    while not mock.for_task(name) and time.time() < deadline:
        time.sleep(0.05)
    runs = read_runs(env.state)
    assert len(runs) == 1 and runs[0]["live"] and runs[0]["tasks"][0]["state"] == "running"
    proc.kill()
    proc.wait(timeout=30)
    runs = read_runs(env.state)
    assert len(runs) == 1 and not runs[0]["live"] and runs[0]["ended_at"] is None


def test_capacity_during_a_codex_incident_waits_without_switching(tmp_path, mock, codex_bins, request):
    from codexwatch.sources.demo_status import demo_payloads

    env = Env(tmp_path, mock, codex_bins["0.171.0"])
    name = _task(request)
    mock.script(name, "overloaded", "overloaded", "ok")
    mock.pages = demo_payloads(time.time())  # the bundled page: an ongoing Codex incident
    try:
        done = env.run(["--status-url", mock.root_url, "--backoff", "0.1s", "--models", "gpt-6-sol,gpt-6-terra"],
                       [f"task:{name} go"])
    finally:
        mock.pages = {}
    assert done.returncode == 0, done.stderr
    assert [r["model"] for r in mock.for_task(name)] == ["gpt-6-sol"] * 3
    assert [a["action"] for a in env.summary()["tasks"][0]["attempts"]] == ["wait", "wait", None]


def test_a_resume_that_fails_outside_a_turn_passes_codexs_status_through(tmp_path, mock, codex_bins, request):
    """The thread's rollout is gone before the resume: Codex exits 1 ("no rollout found for
    thread id") without a failed turn, and that status is passed through, unretried."""
    env = Env(tmp_path, mock, codex_bins["0.171.0"])
    name = _task(request)
    mock.script(name, "tool", "overloaded_stream", "ok")
    # the first attempt fails after work; then the rollout is moved away before the resume
    proc = subprocess.Popen(env.argv([*FAST[:1], "--backoff", "2s", "--models", "gpt-6-sol,gpt-6-terra"],
                                     ["--json", f"task:{name} go"]),
                            cwd=env.work, env=env.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while len(mock.for_task(name)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    for f in env.home.glob("sessions/*/*/*/rollout-*.jsonl"):
        f.rename(tmp_path / f.name)
    out, err = proc.communicate(timeout=60)
    attempts = env.summary()["tasks"][0]["attempts"]
    assert attempts[1]["resumed"] and attempts[1]["outcome"] == "failed" and attempts[1]["error_class"] is None
    assert proc.returncode == 1, err  # codex: "no rollout found for thread id"


def test_piped_stdin_reaches_every_attempt(env, mock, request):
    name = _task(request)
    mock.script(name, "overloaded", "ok")
    done = env.run([*FAST, "--models", "gpt-6-sol,gpt-6-terra"], [f"task:{name} go"], stdin="PIPED-CONTEXT-42\n")
    assert done.returncode == 0, done.stderr
    reqs = mock.for_task(name)
    assert len(reqs) == 2 and all("PIPED-CONTEXT-42" in r["input"] for r in reqs)


def test_two_supervisors_side_by_side_share_one_home_and_folder(tmp_path, mock, codex_bins, request):
    env = Env(tmp_path, mock, codex_bins["0.171.0"])
    name = _task(request)
    mock.script(f"{name}-a", "tool", "overloaded_stream", "ok")
    mock.script(f"{name}-b", "overloaded", "ok")
    procs = []
    for part in ("a", "b"):
        argv = env.argv([*FAST, "--models", "gpt-6-sol,gpt-6-terra"], [f"task:{name}-{part} go"])
        argv[argv.index("--summary") + 1] = str(tmp_path / f"summary-{part}.json")
        procs.append(subprocess.Popen(argv, cwd=env.work, env=env.env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    a = json.loads((tmp_path / "summary-a.json").read_text())["tasks"][0]["attempts"]
    b = json.loads((tmp_path / "summary-b.json").read_text())["tasks"][0]["attempts"]
    assert a[0]["shape"] == "interrupted" and a[1]["resumed"] and a[1]["session_id"] == a[0]["session_id"]
    assert b[0]["shape"] == "rejected" and not b[1]["resumed"] and b[1]["session_id"] != b[0]["session_id"]
    from codexwatch.sources.runs import read_runs

    runs = read_runs(env.state)
    assert len(runs) == 2 and not any(r["live"] for r in runs) and {r["outcome"] for r in runs} == {"ok"}


def test_an_ephemeral_run_is_run_again_not_resumed(tmp_path, mock, codex_bins, request):
    env = Env(tmp_path, mock, codex_bins["0.171.0"])
    name = _task(request)
    mock.script(name, "tool", "overloaded_stream", "ok")
    done = env.run([*FAST, "--models", "gpt-6-sol,gpt-6-terra"], ["--ephemeral", "--json", f"task:{name} go"])
    assert done.returncode == 0, done.stderr
    attempts = env.summary()["tasks"][0]["attempts"]
    assert [a["error_class"] for a in attempts] == ["capacity", None]
    assert not attempts[1]["resumed"]
    assert not list(env.home.glob("sessions/**/*.jsonl"))
