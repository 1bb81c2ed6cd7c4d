"""End to end: the real `codexwatch` command in tmux on a temporary Codex home; a failure
appended to a session shows up on the captured screen."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from codexwatch.demo import fresh_ids, load_recording, retime, rollout_path

from .helpers import failed_turn_lines

pytestmark = pytest.mark.slow


def capture(socket: str) -> str:
    out = subprocess.run(["tmux", "-L", socket, "capture-pane", "-p", "-t", "cw"], capture_output=True, text=True)
    return out.stdout


def wait_for(socket: str, *needles: str, timeout: float = 30.0) -> str:
    end = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < end:
        screen = capture(socket)
        if all(n in screen for n in needles):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{needles} not on screen:\n{screen}")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_codexwatch_in_tmux_shows_an_appended_failure(tmp_path):
    home = tmp_path / "codex-home"
    now = time.time()
    lines = load_recording("healthy")
    rng = random.Random(5)
    ids = fresh_ids(lines, rng)
    healthy = retime(lines, now - 600, ids)
    session_id = ids[next(iter(ids))]
    path = rollout_path(home, now - 600, session_id)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(healthy))

    socket = f"cw-{uuid.uuid4().hex[:8]}"
    cmd = (f"{sys.executable} -m codexwatch --codex-home {home} --no-status --no-bell --no-notify "
           f"--theme codexwatch-cb-dark")
    env = dict(os.environ, TERM="xterm-256color")
    subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "cw", "-x", "120", "-y", "40", cmd],
                   check=True, env=env)
    try:
        wait_for(socket, "No ongoing trouble", "Failures")
        with open(path, "ab") as fh:
            for line in failed_turn_lines("capacity", time.time(), session_id, seed=9, model="gpt-6-sol"):
                fh.write(line)
                fh.flush()
        screen = wait_for(socket, "FAILING", "capacity", "Selected model is at capacity")
        assert "gpt-6-sol" in screen
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
