"""What the package claims about Python is what CI proves."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def claimed() -> list[tuple[int, int]]:
    found = re.findall(r'"Programming Language :: Python :: 3\.(\d+)"', PYPROJECT)
    return [(3, int(minor)) for minor in found]


def test_the_claimed_versions_run_on_from_the_floor_without_a_gap():
    floor = re.search(r'requires-python = ">=3\.(\d+)"', PYPROJECT)
    versions = claimed()
    assert floor and versions, "pyproject.toml must name its floor and its versions"
    assert versions == [(3, m) for m in range(int(floor.group(1)), int(floor.group(1)) + len(versions))]


def test_ci_reads_the_same_claims():
    # .ci/run's own sed line, run here: a change of the classifiers' layout that it no longer
    # reads would make CI test nothing and say nothing.
    script = (ROOT / ".ci" / "run").read_text()
    sed = re.search(r"claimed=\$\(sed -n '([^']+)' pyproject.toml\)", script)
    assert sed, ".ci/run no longer reads the claims from pyproject.toml"
    out = subprocess.run(["sed", "-n", sed.group(1), str(ROOT / "pyproject.toml")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [f"{major}.{minor}" for major, minor in claimed()]


def test_this_python_is_one_the_package_claims():
    assert sys.version_info[:2] in claimed()
