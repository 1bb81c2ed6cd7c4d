"""The layers of DEVELOPERS.md, as the contracts in pyproject.toml state them: core pure,
sources free of the UI and the settings, the headless commands free of Textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = ("import sys\nfrom importlinter.cli import lint_imports\n"
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))\n")


def test_every_import_keeps_to_its_layer():
    out = subprocess.run([sys.executable, "-c", LINT], cwd=ROOT, capture_output=True, text=True)
    assert "0 broken" in out.stdout and out.returncode == 0, out.stdout + out.stderr


def test_a_headless_command_loads_no_textual_when_it_runs():
    # What the contract says of the source, seen in a real run: `stats --help` parses its
    # flags and prints, and nothing on the way brings Textual in.
    code = ("import sys\nfrom codexwatch import cli\ntry:\n    cli.main(['stats', '--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
