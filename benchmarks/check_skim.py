"""Skimming against reading every line, on a whole generated history.

    python benchmarks/check_skim.py [--history DIR]

The unit tests check that skimming gives the same turns as the line-by-line reader on every
real recording; a generated history has far more turns, in more combinations (settings
toggled between turns, long bodies, failures of every kind). This reads the history both
ways, in one process and without the index, and compares every field of every turn.
Exit 0 when they are identical, 1 otherwise (the differing fields are listed).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import harness
from harness import OUT

sys.path.insert(0, str(harness.REPO))  # the working tree's codexwatch

from codexwatch.core.models import Turn  # noqa: E402
from codexwatch.sources.history import History  # noqa: E402


def read(home: Path, now: float, skim: bool) -> dict[str, tuple]:
    history = History(home=home)
    history.load(now, skim=skim)  # in this process: History reads in one unless told
    return {t.turn_id: tuple(getattr(t, name) for name in Turn.__slots__)
            for t in history.turns_at(now)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", type=Path, default=OUT / "history-1g")
    args = ap.parse_args(argv)
    now = time.time()
    skimmed, exact = read(args.history, now, True), read(args.history, now, False)
    fields: Counter = Counter()
    for turn_id in skimmed.keys() | exact.keys():
        a, b = skimmed.get(turn_id), exact.get(turn_id)
        if a is None or b is None:
            fields["(turn missing on one side)"] += 1
            continue
        fields.update(name for name, x, y in zip(Turn.__slots__, a, b) if x != y)
    print(f"{len(exact)} turns read line by line, {len(skimmed)} skimmed")
    if not fields:
        print("identical: every field of every turn")
        return 0
    for name, n in fields.most_common():
        print(f"  {name}: differs in {n} turns")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
