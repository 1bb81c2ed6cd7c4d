"""Closing the dashboard without `q` (issue 14): SIGHUP (a closed tmux pane, `tmux
kill-session`, a closed terminal) and SIGTERM end it the ordinary way, the terminal put
back and the demo's temporary Codex home removed."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from codexwatch.commands.dashboard import Hangup

REPO = Path(__file__).resolve().parents[2]
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class FakeApp:
    def __init__(self) -> None:
        self.codes: list[int] = []

    def exit(self, return_code: int = 0) -> None:
        self.codes.append(return_code)


def test_a_signal_while_the_app_runs_is_handed_to_its_loop_as_an_exit():
    async def main(hangup: Hangup, app: FakeApp) -> None:
        hangup.app = app
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100):
            if app.codes:
                return
            await asyncio.sleep(0.01)

    app = FakeApp()
    with Hangup(force_after=3600) as hangup:
        asyncio.run(main(hangup, app))
    hangup.timer.cancel()
    assert app.codes == [128 + signal.SIGTERM] and hangup.code == 143
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back


def test_a_signal_before_the_app_runs_unwinds_so_with_blocks_clean_up():
    cleaned = []
    with pytest.raises(SystemExit) as ended:
        with Hangup(force_after=3600) as hangup:
            try:
                os.kill(os.getpid(), signal.SIGHUP)
                time.sleep(1)  # the handler raises in here
            finally:
                cleaned.append(True)
    assert ended.value.code == 129 and cleaned == [True] and hangup.timer is None


# --- the real program ------------------------------------------------------------------


def _demo_env(tmp: Path) -> dict:
    tmp.mkdir()
    return dict(os.environ, TMPDIR=str(tmp), TERM="xterm-256color", PYTHONPATH=str(REPO))


def _wait(predicate, timeout: float = 30.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out: {what}")


def _header_painted(screen: str) -> bool:
    """The dashboard's header is on the screen: its parser badge, or, while one of the demo's
    runs backs off (from 6 s in), the count of runs backing off that takes the badge's place."""
    return "parser" in screen or "backing off" in screen


def _demo_homes(tmp: Path) -> list[str]:
    return [p.name for p in tmp.glob("codexwatch-demo-*")]


class _Tmux:
    """A tmux server of its own running `command` in a 120x40 session "t"; killed on leaving."""

    def __init__(self, prefix: str, command: str, env: dict, cwd: Path) -> None:
        self.base = ["tmux", "-L", f"{prefix}-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
        self.command, self.env, self.cwd = command, env, cwd

    def __enter__(self) -> "_Tmux":
        self.run("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "sh", "-c", self.command,
                 env=self.env, cwd=self.cwd)
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True)

    def run(self, *args: str, **kwargs) -> None:
        subprocess.run([*self.base, *args], check=True, **kwargs)

    def screen(self) -> str:
        return subprocess.run([*self.base, "capture-pane", "-p", "-t", "t"], capture_output=True,
                              text=True).stdout


@pytest.mark.slow
@needs_tmux
@pytest.mark.parametrize("how", ["kill-session", "kill-pane"])
def test_closing_the_tmux_session_removes_the_demo_home(tmp_path, how):
    tmp = tmp_path / "tmp"
    env = _demo_env(tmp)
    status = tmp_path / "status"
    # The shell around it says how codexwatch ended (it survives a kill-session only long
    # enough when it ignores SIGHUP itself: trap).
    script = (f"trap '' HUP; {sys.executable} -m codexwatch --demo --no-bell --no-notify; "
              f"echo $? > {status}")
    with _Tmux("cw-hup", script, env, tmp_path) as tmux:
        _wait(lambda: _header_painted(tmux.screen()) and bool(_demo_homes(tmp)), what="the demo painted")
        tmux.run("kill-session" if how == "kill-session" else "kill-pane", "-t", "t")
        _wait(lambda: status.exists() and status.read_text().strip() != "", 15, "codexwatch ended")
        assert status.read_text().strip() == str(128 + signal.SIGHUP)
        assert _demo_homes(tmp) == []


@pytest.mark.slow
@needs_tmux
def test_sigterm_in_tmux_restores_the_terminal_and_removes_the_demo_home(tmp_path):
    tmp = tmp_path / "tmp"
    env = _demo_env(tmp)
    after = tmp_path / "after"
    pidfile = tmp_path / "pid"
    script = (f"echo $$ > {pidfile}; exec {sys.executable} -c 'import os, sys; "
              f"sys.argv = [\"codexwatch\", \"--demo\", \"--no-bell\", \"--no-notify\"]; "
              f"from codexwatch.cli import entry; entry()'")
    outer = f"sh -c {_quote(script)}; echo code=$? > {after}; stty -a >> {after}; sleep 60"
    with _Tmux("cw-term", outer, env, tmp_path) as tmux:
        _wait(lambda: _header_painted(tmux.screen()) and pidfile.exists(), what="the demo painted")
        os.kill(int(pidfile.read_text()), signal.SIGTERM)
        _wait(lambda: after.exists() and "speed" in after.read_text(), 15, "codexwatch ended")
        text = after.read_text()
        assert "code=143" in text
        assert " icanon" in text and " echo " in text  # cooked mode again, echo on
        assert not _header_painted(tmux.screen())  # the shell's own screen again, not the app's alternate one
        assert _demo_homes(tmp) == []


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_a_signal_under_a_pty_ends_the_demo_and_removes_its_home(tmp_path, signum):
    tmp = tmp_path / "tmp"
    env = _demo_env(tmp)
    env.update(COLUMNS="120", LINES="40")
    pid, master = pty.fork()
    if pid == 0:  # the child: codexwatch on the pty
        os.execvpe(sys.executable, [sys.executable, "-m", "codexwatch", "--demo", "--no-bell", "--no-notify"], env)
    seen = bytearray()
    try:
        def drained_until_painted() -> bool:
            while select.select([master], [], [], 0.05)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    return False
                if not chunk:
                    return False
                seen.extend(chunk)
            return _header_painted(seen.decode("utf-8", "replace")) and bool(_demo_homes(tmp))

        _wait(drained_until_painted, what="the demo painted")
        os.kill(pid, signum)
        end = time.monotonic() + 15
        status = None
        while time.monotonic() < end:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            drained_until_painted()  # keep reading: a full pty would block its writes
            time.sleep(0.05)
        else:
            raise AssertionError("codexwatch did not end")
        drained_until_painted()  # what it wrote last, before it ended
        assert os.waitstatus_to_exitcode(status) == 128 + signum
        assert _demo_homes(tmp) == []
        assert b"\x1b[?1049l" in seen  # the driver left the alternate screen
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(master)
