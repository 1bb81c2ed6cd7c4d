"""`codexwatch advise` and `codexwatch report` end to end, on a copy of a real 0.171 TUI home.

The recorded session: ok (08:42:09), capacity rejected (08:42:25), capacity interrupted after
two tool calls (08:42:44), rate limit 429 (08:42:47), ok (08:42:59). `--at` walks through it.
"""

from __future__ import annotations

import shutil

import orjson
import pytest

from codexwatch.cli import main
from codexwatch.core.advice import ACTION_EXIT_CODES
from tests.conftest import REAL_CLI

ADVISE_KEYS = {"action", "evidence", "side", "tried", "candidates", "confidence", "episode",
               "status"}
EPISODE_KEYS = {"id", "first", "last", "failures", "classes", "models", "sessions"}


@pytest.fixture
def home(tmp_path):
    dest = tmp_path / "codex-home"
    shutil.copytree(REAL_CLI / "tui-0.171.0", dest)
    return dest


@pytest.fixture
def home_still_failing(home):
    """The same session cut before its last (successful) turn: the episode is ongoing."""
    path = next((home / "sessions").rglob("*.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    last_ok = max(i for i, line in enumerate(lines) if '"prompt 5: ok"' in line)
    start = max(i for i in range(last_ok) if '"thread_settings_applied"' in lines[i])
    path.write_text("".join(lines[:start]), encoding="utf-8")
    return home


def advise(capsys, home, *extra):
    code = main(["advise", "--codex-home", str(home), "--no-status", "--json", *extra])
    out = capsys.readouterr().out
    return code, orjson.loads(out)


def test_after_the_successful_turn_there_is_nothing_to_do(capsys, home):
    code, data = advise(capsys, home, "--at", "2026-11-29T08:43:10Z")
    assert code == 0 and data["action"] == "none"
    assert ADVISE_KEYS <= set(data)
    assert data["episode"] is None and data["status"] == "unknown"
    assert any("not checked" in e for e in data["evidence"])


def test_first_capacity_failure_means_switch_model(capsys, home):
    code, data = advise(capsys, home, "--at", "2026-11-29T08:42:30Z")
    assert code == ACTION_EXIT_CODES["switch_model"] == 12
    assert data["action"] == "switch_model" and data["status"] == "unknown"
    assert set(data["episode"]) >= EPISODE_KEYS
    ep = data["episode"]
    assert ep["failures"] == 1 and ep["classes"] == {"capacity": 1}
    assert ep["models"] == ["gpt-6-sol"]
    assert ep["sessions"] == ["01a22677-fa5d-7172-925b-dcb719d2880b"]
    assert ep["first"].startswith("2026-11-29T08:42:25")
    assert data["tried"] == [] and data["candidates"] == []
    assert data["confidence"] == "medium"
    assert all(isinstance(s, str) for s in data["evidence"] + data["side"])


def test_rate_limit_after_capacity_means_slow_down_with_side_advice(capsys, home):
    code, data = advise(capsys, home, "--at", "2026-11-29T08:42:50Z")
    assert code == 16 and data["action"] == "slow_down"
    assert data["episode"]["classes"] == {"capacity": 2, "rate_limit": 1}
    side = " ".join(data["side"])
    assert "git status --short" in side and "~/src/shop-api" in side
    assert "Provider mock is a custom provider or relay" in side
    assert data["backoff"]["step"] == 3


def test_ongoing_episode_later_on(capsys, home_still_failing):
    code, data = advise(capsys, home_still_failing, "--at", "2026-11-29T09:20:00Z")
    assert code == 16 and data["episode"]["ongoing"] is True
    assert data["backoff"]["next_retry_at"].startswith("2026-11-29T08:52:47")
    assert any("the 10 min wait is over; one try now, then wait 30 min" in s for s in data["side"])


def test_at_accepts_offsets_and_z_alike(capsys, home):
    _, a = advise(capsys, home, "--at", "2026-11-29T08:42:30Z")
    _, b = advise(capsys, home, "--at", "2026-11-29T10:42:30+02:00")
    assert a == b


def test_unreadable_status_page_is_unknown_not_all_clear(capsys, home):
    code = main(["advise", "--codex-home", str(home), "--status-url", "http://127.0.0.1:9",
                 "--json", "--at", "2026-11-29T08:42:30Z"])
    data = orjson.loads(capsys.readouterr().out)
    assert code == 12 and data["status"] == "unknown"
    assert any(e.startswith("Status page: unknown (") for e in data["evidence"])


def test_human_output_is_readable(capsys, home):
    code = main(["advise", "--codex-home", str(home), "--no-status", "--at",
                 "2026-11-29T08:42:30Z"])
    out = capsys.readouterr().out
    assert code == 12
    assert out.startswith("SWITCH MODEL ONCE  (exit 12: switch_model)")
    assert "Why:" in out and "  - 1 capacity failure on gpt-6-sol" in out and "/model" in out


def test_missing_home_is_one_line_on_stderr_and_exit_2(capsys, tmp_path):
    code = main(["advise", "--codex-home", str(tmp_path / "nope"), "--no-status"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "No Codex home" in err


def test_bad_at_is_exit_2(capsys, home):
    assert main(["advise", "--codex-home", str(home), "--no-status", "--at", "soon"]) == 2
    assert "--at" in capsys.readouterr().err


# --- report ------------------------------------------------------------------------------


def test_report_latest_markdown(capsys, home):
    code = main(["report", "--codex-home", str(home), "--no-status", "--at",
                 "2026-11-29T08:43:10Z"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("## Codex: 3 failed turns on gpt-6-sol")
    assert "`server_overloaded` × 2" in out and "/feedback" in out
    assert "/home/dev" not in out and "shop-api" not in out


def test_report_json_to_a_file_by_episode_id(capsys, home, tmp_path):
    target = tmp_path / "report.json"
    code = main(["report", "--codex-home", str(home), "--no-status", "--json",
                 "--episode", "20261129T084225-98587e", "--output", str(target)])
    captured = capsys.readouterr()
    assert code == 0 and captured.out == "" and "written to" in captured.err
    data = orjson.loads(target.read_text(encoding="utf-8"))
    assert data["episode"]["id"] == "20261129T084225-98587e"
    assert data["status"]["state"] == "unknown"


def test_report_unknown_episode_or_none_yet(capsys, home):
    assert main(["report", "--codex-home", str(home), "--no-status", "--episode", "nope"]) == 1
    assert "no episode 'nope'" in capsys.readouterr().err
    assert main(["report", "--codex-home", str(home), "--no-status",
                 "--at", "2026-11-29T08:42:15Z"]) == 1
    assert "no failure episode" in capsys.readouterr().err
