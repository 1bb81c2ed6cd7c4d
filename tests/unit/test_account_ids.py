"""0.171 writes `creator_user_id` and `creator_account_id` into `session_meta` under a ChatGPT
login: account identifiers that no report, JSON output or screen may carry."""

from __future__ import annotations

import json

import pytest

from codexwatch import cli
from tests.conftest import REAL_CLI

USER_ID = "user-Zq7ACCOUNTSECRET1"
ACCOUNT_ID = "acct-9f3e-ACCOUNTSECRET2"


@pytest.fixture
def home(tmp_path):
    for f in (REAL_CLI / "tui-0.171.0").glob("sessions/**/*.jsonl"):
        lines = f.read_text().splitlines()
        meta = json.loads(lines[0])
        meta["payload"]["creator_user_id"] = USER_ID
        meta["payload"]["creator_account_id"] = ACCOUNT_ID
        lines[0] = json.dumps(meta, separators=(",", ":"))
        target = tmp_path / f.relative_to(REAL_CLI / "tui-0.171.0")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n")
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["stats", "--json"], ["stats"], ["turns", "--json"], ["turns"],
    ["advise", "--json", "--at", "2026-11-29T08:42:50Z"], ["advise", "--at", "2026-11-29T08:42:50Z"],
    ["report", "--at", "2026-11-29T08:42:50Z"], ["report", "--json", "--at", "2026-11-29T08:42:50Z"],
])
def test_no_output_carries_the_account_ids(home, capsys, argv):
    cli.main(argv[:1] + ["--codex-home", str(home), "--since", "all", "--no-status", "--no-cache"] + argv[1:])
    out = capsys.readouterr()
    text = out.out + out.err
    assert text.strip()
    assert "ACCOUNTSECRET" not in text and "creator_" not in text
