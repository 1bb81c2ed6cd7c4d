"""`codexwatch run`'s process side without a Codex: its arguments, the command lines it builds,
the model list it walks, the start gate."""

from __future__ import annotations

import random

import orjson
import pytest

from codexwatch.cli import main
from codexwatch.commands import run as R
from codexwatch.config import ConfigError
from codexwatch.core.supervise import RESUME_PROMPT


def test_the_codex_command_line_is_taken_apart():
    c = R.Command(["codex", "-c", "x=1", "exec", "--json", "-m", "gpt-6-sol", "--skip-git-repo-check",
                   "fix it"], tasks_mode=False)
    assert c.prompt == "fix it" and c.model == "gpt-6-sol" and c.json
    assert c.fresh("fix it", "gpt-6-terra") == ["codex", "-c", "x=1", "exec", "--json", "--skip-git-repo-check",
                                                "-m", "gpt-6-terra", "fix it"]
    # exec-level flags before `resume`, the model after it, then the short prompt
    assert c.resume("th-1", "gpt-6-terra") == ["codex", "-c", "x=1", "exec", "--json", "--skip-git-repo-check",
                                               "resume", "th-1", "-m", "gpt-6-terra", RESUME_PROMPT]
    assert R.Command(["codex", "exec", "--model=a", "p"], False).model == "a"
    assert R.Command(["codex", "exec", "-ma", "p"], False).model == "a"
    tasks = R.Command(["codex", "exec", "--json"], tasks_mode=True)
    assert tasks.prompt is None and tasks.flags == ["--json"]


@pytest.mark.parametrize("argv", [[], ["codex", "login"], ["codex", "exec"], ["codex", "exec", "resume", "id", "p"]])
def test_bad_codex_command_lines(argv):
    with pytest.raises(ConfigError):
        R.Command(argv, tasks_mode=False)


@pytest.mark.parametrize("args", [
    ["run", "--", "codex", "exec"],  # no prompt
    ["run", "codex", "exec", "p"],  # no `--`
    ["run", "--backoff", "soon", "--", "codex", "exec", "p"],
    ["run", "--give-up-after", "all", "--", "codex", "exec", "p"],
    ["run", "--jobs", "0", "--tasks", "t.txt", "--", "codex", "exec"],
    ["run", "--tasks", "/nonexistent/tasks.txt", "--", "codex", "exec"],
])
def test_bad_arguments_exit_2(args, capsys):
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == 2
    assert "codexwatch: " in capsys.readouterr().err


def test_an_empty_tasks_file_is_a_bad_argument(tmp_path, capsys):
    tasks = tmp_path / "t.txt"
    tasks.write_text("\n  \n")
    assert main(["run", "--tasks", str(tasks), "--", "codex", "exec"]) == 2
    assert "holds no task" in capsys.readouterr().err


def test_a_missing_codex_binary_exits_127(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CODEXWATCH_STATE_DIR", str(tmp_path / "state"))
    summary = tmp_path / "s.json"
    code = main(["run", "--no-status", "--models", "a", "--summary", str(summary), "--",
                 str(tmp_path / "no-codex"), "exec", "secret prompt"])
    assert code == 127
    assert "secret prompt" not in capsys.readouterr().err
    data = orjson.loads(summary.read_bytes())
    assert data["outcome"] == "failed" and data["exit_code"] == 127


def test_the_catalogue_is_walked_heavy_to_light(tmp_path):
    models = [
        {"slug": "gpt-6-mini", "priority": 1, "visibility": "list"},
        {"slug": "gpt-6-terra", "priority": 2, "visibility": "list"},
        {"slug": "gpt-6-sol", "priority": 3, "visibility": "list"},
        {"slug": "gpt-6-sol-pro", "priority": 0, "visibility": "list"},
        {"slug": "gpt-5-old", "priority": 0, "visibility": "hide"},
    ]
    (tmp_path / "models_cache.json").write_bytes(orjson.dumps({"models": models}))
    assert R.catalogue_models(tmp_path) == ["gpt-6-sol-pro", "gpt-6-sol", "gpt-6-terra", "gpt-6-mini"]
    assert R.catalogue_models(tmp_path / "nowhere") == []


def test_durations():
    assert R._durations("30s,2m,10m,30m", "--backoff") == (30, 120, 600, 1800)
    assert R._durations("0.1s", "--quick") == (0.1,)
    with pytest.raises(ConfigError):
        R._durations("30s,,2m", "--backoff")


def test_the_gate_drops_to_one_job_while_rate_limited():
    clock = [100.0]
    gate = R.Gate(3, random.Random(1), clock=lambda: clock[0])
    assert gate.limit(clock[0]) == 3
    gate.slow_down(10)
    assert gate.limit(clock[0]) == 1 and gate.limit(clock[0] + 9.9) == 1
    assert gate.limit(clock[0] + 10.1) == 3


def test_without_a_catalogue_the_models_that_worked_in_the_history(tmp_path):
    from codexwatch.config import load_settings
    from codexwatch.core.times import parse_iso
    from tests.conftest import REAL_CLI

    settings = load_settings({"codex_home": REAL_CLI / "exec-0.171.0", "use_cache": False,
                              "cache_dir": tmp_path})
    models = R.history_models(settings, parse_iso("2026-11-29T09:00:00Z"))
    assert models == ["gpt-6-sol"]  # the one model with a successful turn (it also failed)
    assert R.history_models(settings, parse_iso("2027-06-01T00:00:00Z")) == []  # nothing in 7 days
