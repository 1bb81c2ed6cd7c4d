"""The functional core must be usable without Textual."""

import subprocess
import sys
from pathlib import Path

import codexwatch.core

CORE = Path(codexwatch.core.__file__).parent


def test_core_modules_do_not_import_textual():
    modules = sorted(f"codexwatch.core.{p.stem}" for p in CORE.glob("*.py") if p.stem != "__init__")
    assert modules, "no core modules found"
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'httpx', 'watchfiles')]\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"
