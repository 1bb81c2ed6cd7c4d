"""The usage meter and the last misses, on rollouts recorded from released Codex CLIs for this
issue (tests/fixtures/own-cli/README.md): one test per release."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import orjson
import pytest

from codexwatch.core.stats import StatsFold
from codexwatch.core.times import parse_iso
from codexwatch.sources.history import load_history
from tests.conftest import FIXTURES

OWN = FIXTURES / "own-cli"
NOW = time.time()
RESETS = {"0.40.0": (None, None)}


def quiet_home(tmp_path: Path, version: str, quiet_s: float = 6 * 3600) -> Path:
    """A copy whose files went quiet `quiet_s` ago, as a user's history would be."""
    home = tmp_path / version
    shutil.copytree(OWN / f"exec-{version}", home)
    for f in home.rglob("*.jsonl"):
        os.utime(f, (NOW - quiet_s, NOW - quiet_s))
    return home


def read(home: Path):
    turns = load_history(home, None, NOW).turns
    return turns, StatsFold(NOW).add(turns).result_before()["usage"]


EXPECTED = {
    # version: [(outcome, class, shape) per turn, oldest first]
    "0.40.0": [("ok", None, None), ("failed", "unrecorded", "rejected"), ("failed", "unrecorded", "interrupted")],
    "0.59.0": [("ok", None, None), ("failed", "usage_limit", "rejected"), ("failed", "unrecorded", "interrupted")],
    "0.80.0": [("ok", None, None), ("failed", "usage_limit", "rejected"), ("failed", "unrecorded", "interrupted")],
    "0.140.0": [("ok", None, None), ("failed", "usage_limit", "rejected")],
    "0.171.0": [("ok", None, None), ("failed", "usage_limit", "rejected")],
}


@pytest.mark.parametrize("version", sorted(EXPECTED))
def test_turns_of_each_release(tmp_path, version):
    turns, _ = read(quiet_home(tmp_path, version))
    assert [(t.outcome, t.error_class, t.shape) for t in turns] == EXPECTED[version]


@pytest.mark.parametrize("version", sorted(EXPECTED))
def test_the_meter_of_each_release(tmp_path, version):
    turns, usage = read(quiet_home(tmp_path, version))
    healthy = turns[0].usage
    assert healthy[1][:2] == (34.0, 300) and healthy[2][:2] == (61.0, 10080)
    if version == "0.40.0":  # flat, no resets; the usage-limit turn recorded no figures
        assert healthy[1][2] is None and healthy[2][2] is None
        assert turns[1].usage is None
        assert usage["primary"] == {"used_percent": 34.0, "window_minutes": 300, "resets_at": None}
        assert usage["credits"] is None and usage["limit_id"] is None
        return
    # Newest by event time: the usage-limit turn's own window at 100 % (the mid-turn
    # recordings came later, with the server's 34 % again).
    newest = turns[-1].usage
    assert usage["as_of"].startswith("2026-12-01T05:0") and usage["primary"]["used_percent"] == newest[1][0]
    assert turns[1].usage[1][0] == 100.0 and turns[1].usage[2][0] == 61.0
    assert turns[1].rate_limit_resets_at == turns[1].usage[1][2]
    assert usage["primary"]["resets_at"].startswith("2026-12-01T06:4")
    assert usage["credits"] == (None if version == "0.59.0" else
                                {"has_credits": False, "unlimited": False, "balance": None})
    assert usage["limit_id"] == ("codex" if version in ("0.140.0", "0.171.0") else None)
    assert usage["plan_type"] is None and usage["reached"] is None


@pytest.mark.parametrize("version", ["0.40.0", "0.59.0", "0.80.0"])
def test_a_turn_still_being_written_is_not_failed(tmp_path, version):
    home = quiet_home(tmp_path, version)
    midturn = max(home.rglob("*.jsonl"))  # the newest file: tools, then nothing
    # Its last line written a minute ago, whenever the test runs (the recordings are of
    # 2026-12-01 05:0x: on the clock, a file's last line is no older than its mtime).
    last = parse_iso(orjson.loads(midturn.read_bytes().splitlines()[-1])["timestamp"])
    os.utime(midturn, (last, last))
    turns = load_history(home, None, last + 60).turns
    assert (turns[-1].outcome, turns[-1].live) == ("incomplete", True)


def test_skimming_and_reading_line_by_line_agree_on_the_era_c_and_d_recordings(tmp_path):
    from codexwatch.core.models import Turn
    from codexwatch.sources.history import History

    for version in ("0.140.0", "0.171.0"):
        home = quiet_home(tmp_path, version, quiet_s=2 * 86400)  # quiet for a day: skimmed
        rows = []
        for skim in (False, True):
            history = History(home=home)
            history.load(NOW, skim=skim)
            assert all(h.skimmed == skim for h in history.health())
            rows.append([tuple(getattr(t, n) for n in Turn.__slots__) for t in history.turns_at(NOW)])
        assert rows[0] == rows[1] and any(r[-1] is not None for r in rows[0])
