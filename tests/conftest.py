"""Test isolation: no real ~/.codex, no user config, no network beyond loopback."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REAL_CLI = FIXTURES / "real-cli"
SHARED = Path(__file__).resolve().parents[2] / "shared"
SHARED_FIXTURES = SHARED / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("CODEX_HOME", str(home / "no-codex-home"))
    for var in list(__import__("os").environ):
        if var.startswith("CODEXWATCH_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    yield


_real_connect = socket.socket.connect


def _guarded_connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and self.family in (socket.AF_INET, socket.AF_INET6):
        try:
            if not ipaddress.ip_address(host).is_loopback:
                raise RuntimeError(f"tests must not touch the network (tried {host})")
        except ValueError:
            if host != "localhost":
                raise RuntimeError(f"tests must not touch the network (tried {host})")
    return _real_connect(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]


def shared_or_skip(*parts: str) -> Path:
    path = SHARED_FIXTURES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not here (no ../shared beside the repository)")
    return path


def unread(history, now: float) -> list[str]:
    """The rollout files a history has no reader for yet, as a look at the home finds them
    (the live follower is told of them by its watcher; `History.refresh` reads them)."""
    from codexwatch.sources.listing import find_rollouts

    return [f.path for f in find_rollouts(history.home, history.cutoff(now))
            if f.path not in history.readers]
