"""codexwatch never writes into the Codex home: the whole app and every command run over
one, and every file (and the folder listing) is the same before and after."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import httpx

from codexwatch.cli import main
from codexwatch.sources.demo_status import demo_payloads
from codexwatch.ui.app import AppConfig, CodexWatchApp
from tests.conftest import REAL_CLI


def fingerprint(home: Path) -> dict[str, tuple]:
    """Every entry under the home: content hash, size, mtime and mode."""
    out = {}
    for path in sorted(home.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        out[str(path.relative_to(home))] = (digest, st.st_size, st.st_mtime_ns, st.st_mode)
    return out


def make_home(tmp_path: Path) -> Path:
    home = tmp_path / "codex-home"
    for folder in ("tui-0.140.0", "tui-0.171.0", "exec-0.120.0"):
        shutil.copytree(REAL_CLI / folder, home, dirs_exist_ok=True)  # logs_2.sqlite included
    # Codex's model list, as a ChatGPT login caches it: read, never written.
    shutil.copy(REAL_CLI.parent / "codex-models" / "bundled-0.171.0.json", home / "models_cache.json")
    return home


def status_transport() -> httpx.MockTransport:
    payloads = demo_payloads(time.time())

    def answer(request: httpx.Request) -> httpx.Response:
        body = payloads.get(request.url.path)
        if body is None:
            return httpx.Response(404)
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    return httpx.MockTransport(answer)


async def test_the_dashboard_writes_nothing_into_the_codex_home(tmp_path, monkeypatch):
    home = make_home(tmp_path)
    monkeypatch.chdir(tmp_path)  # a saved report goes to the current folder, not the home
    before = fingerprint(home)
    app = CodexWatchApp(AppConfig(
        codex_home=home, since_seconds=None, status_url="https://status.test",
        status_transport=status_transport(), bell=False, notify=False, hot_interval=0.05,
        cache_dir=tmp_path / "cache",
    ))
    async with app.run_test(size=(120, 40)) as pilot:
        end = time.monotonic() + 10
        while not (app.loading.finished and app.view and app.view.now) and time.monotonic() < end:
            await pilot.pause(0.05)
        for key in ("2", "3", "4", "1", "w", "n", "n", "escape", "r", "s", "escape", "question_mark", "escape"):
            await pilot.press(key)
            await pilot.pause(0.05)
        await pilot.pause(0.5)  # the follower and the status poller have run meanwhile
    assert fingerprint(home) == before
    assert (tmp_path / "cache").exists()  # the index went where it belongs


def test_every_command_writes_nothing_into_the_codex_home(tmp_path, capsys):
    home = make_home(tmp_path)
    before = fingerprint(home)
    common = ["--codex-home", str(home), "--since", "all", "--no-status"]
    for argv in (["turns", "--json"], ["stats", "--json"], ["advise", "--json"],
                 ["report", "--output", str(tmp_path / "report.md")], ["turns", "--no-cache"]):
        main([argv[0], *common, *argv[1:]])
    capsys.readouterr()
    assert fingerprint(home) == before
    assert (tmp_path / "report.md").exists()
    assert not any(os.path.commonpath([str(home), str(p)]) == str(home)
                   for p in (tmp_path / "report.md",))
