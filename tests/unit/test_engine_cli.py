"""The headless commands, run as a user would run them."""

import json
import subprocess
import sys

import pytest

from codexwatch.cli import main
from codexwatch.core.models import TURN_JSON_KEYS
from tests.conftest import REAL_CLI


def test_turns_json_lines_have_exactly_the_contract_keys(capsysbinary):
    assert main(["turns", "--json", "--codex-home", str(REAL_CLI / "exec-0.171.0"), "--since", "all"]) == 0
    lines = capsysbinary.readouterr().out.decode().splitlines()
    assert len(lines) == 8
    for line in lines:
        obj = json.loads(line)
        assert tuple(obj) == TURN_JSON_KEYS
        assert obj["outcome"] in ("ok", "failed", "aborted", "incomplete")
        assert (obj["error_class"] is None) == (obj["outcome"] != "failed")
        assert obj["started_at"].endswith("Z")


def test_stats_json_has_models_episodes_and_parser(capsysbinary):
    assert main(["stats", "--json", "--codex-home", str(REAL_CLI / "tui-0.171.0"), "--since", "all"]) == 0
    stats = json.loads(capsysbinary.readouterr().out)
    assert stats["models"][0]["model"] == "gpt-6-sol"
    assert stats["models"][0]["all"]["failures"] == 3
    assert stats["episodes"][0]["classes"] == {"capacity": 2, "rate_limit": 1}
    assert stats["parser"]["files"] == 1 and stats["parser"]["understood"] == 1.0


def test_stats_text_names_every_column_and_says_each_episode_s_state(capsys):
    assert main(["stats", "--no-status", "--codex-home", str(REAL_CLI / "tui-0.171.0"), "--since", "all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("episode "))
    assert lines[header].split()[-1] == "state"
    assert lines[header + 2].split()[-1] == "ended"  # the recording's episode is long over
    assert lines[0] == "5 turns: ok 2, failed 3"


def test_since_filters_old_turns(capsysbinary):
    assert main(["turns", "--json", "--codex-home", str(REAL_CLI / "tui-0.171.0"), "--since", "1m"]) == 0
    assert capsysbinary.readouterr().out == b""


@pytest.mark.parametrize("argv", [["stats", "--since", "7x"], ["turns", "--codex-home", "/does/not/exist"]])
def test_bad_input_is_one_line_and_nonzero(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("codexwatch: ")


def test_human_tables_and_version_from_the_installed_command():
    out = subprocess.run([sys.executable, "-m", "codexwatch", "stats", "--codex-home",
                          str(REAL_CLI / "tui-0.140.0"), "--since", "all"], capture_output=True, text=True)
    assert out.returncode == 0 and "gpt-6-sol" in out.stdout and "Parser:" in out.stdout
    version = subprocess.run([sys.executable, "-m", "codexwatch", "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("codexwatch ")


def test_codex_home_comes_from_the_environment(monkeypatch, capsysbinary):
    monkeypatch.setenv("CODEX_HOME", str(REAL_CLI / "exec-0.80.0"))
    assert main(["turns", "--json", "--since", "all"]) == 0
    assert len(capsysbinary.readouterr().out.splitlines()) == 2


def test_the_program_ends_with_all_its_output_and_its_exit_code(tmp_path, capsysbinary):
    # Headless commands skip the interpreter's teardown (os._exit): nothing may be cut off.
    home = REAL_CLI / "tui-0.171.0"
    assert main(["turns", "--json", "--codex-home", str(home), "--since", "all", "--no-cache"]) == 0
    expected = capsysbinary.readouterr().out
    done = subprocess.run([sys.executable, "-m", "codexwatch", "turns", "--json", "--codex-home",
                           str(home), "--since", "all", "--no-cache"], capture_output=True)
    assert done.returncode == 0 and done.stdout == expected and expected.count(b"\n") > 1
    missing = subprocess.run([sys.executable, "-m", "codexwatch", "stats", "--codex-home",
                              str(tmp_path / "nowhere")], capture_output=True)
    assert missing.returncode == 2 and missing.stderr.startswith(b"codexwatch: No Codex home")


def test_a_long_first_read_counts_its_files_on_a_terminal_and_wipes_the_line():
    import io

    from codexwatch.commands.common import terminal_progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    clock = iter([0.0, 0.1, 0.6, 0.65, 0.8, 0.9]).__next__
    out = Terminal()
    show = terminal_progress(out, clock)
    show(1, 100)  # 0.1 s in: too soon to say anything
    show(50, 100)  # 0.6 s
    show(51, 100)  # 0.65 s: too soon after the last
    show(80, 100)  # 0.8 s
    show(100, 100)  # done: the line goes
    assert out.getvalue() == ("\rcodexwatch: reading 50/100 files\rcodexwatch: reading 80/100 files"
                              "\r\x1b[K")
    assert terminal_progress(io.StringIO()) is None  # not a terminal: scripts see nothing
    quick = Terminal()
    show = terminal_progress(quick, iter([0.0, 0.2, 0.3]).__next__)
    show(1, 2)
    show(2, 2)
    assert quick.getvalue() == ""  # over before half a second: nothing shown, nothing wiped


@pytest.mark.parametrize("many", [0, 1, 600])
def test_stats_json_written_an_episode_at_a_time_is_the_whole_result(many):
    import io

    import orjson

    from codexwatch.commands.stats import write_json
    from codexwatch.core.models import Turn
    from codexwatch.core.stats import StatsFold

    now = 1_800_000_000.0
    turns = []
    for i in range(many):  # failures an hour apart, a success between some: `many` episodes
        at = now - 3600 * (many - i)
        turns.append(Turn(session_id=f"s{i % 7}", turn_id=f"f{i}", file="f", outcome="failed",
                          error_class="capacity", started_at=at - 5, ended_at=at, model="m"))
        if i % 3 == 0:
            turns.append(Turn(session_id="s", turn_id=f"o{i}", file="f", outcome="ok",
                              started_at=at + 1, ended_at=at + 2, model="m"))
    fold = StatsFold(now).add(turns)
    assert len(fold.episodes()) == many
    out = io.BytesIO()
    write_json(fold, out)
    assert out.getvalue() == orjson.dumps(fold.result()) + b"\n"
