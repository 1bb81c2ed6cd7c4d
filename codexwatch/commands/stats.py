"""`codexwatch stats`: failure rates per model, by hour of week, episodes, parser health."""

from __future__ import annotations

import sys
import time
from datetime import datetime
from typing import BinaryIO

import orjson

from codexwatch.commands.common import HomeUnreadable, fail, load, table
from codexwatch.core.models import Episode
from codexwatch.core.stats import StatsFold, episode_json

_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def run(args, settings) -> int:
    now = time.time()
    fold = StatsFold(now)
    try:
        load(settings, now, fold=fold)  # a file at a time, none of it kept but the statistics
    except HomeUnreadable as exc:
        return fail(str(exc))
    eps = fold.episodes()
    before, after = fold.result_around(eps)
    if args.json:
        write_json(before, eps, after, sys.stdout.buffer)
        sys.stdout.flush()
        return 0
    print(render({**before, "episodes": [episode_json(e) for e in eps[-10:]], **after}))
    return 0


def write_json(before: dict, eps: list[Episode], after: dict, out: BinaryIO) -> None:
    """StatsFold.result() as JSON, a line, its episodes made and written a few hundred
    at a time (as a whole, a large history's would take tens of megabytes)."""
    out.write(orjson.dumps(before)[:-1] + b',"episodes":[')
    for i in range(0, len(eps), 256):
        out.write((b"," if i else b"") + b",".join(orjson.dumps(episode_json(e)) for e in eps[i:i + 256]))
    out.write(b"]," + orjson.dumps(after)[1:] + b"\n")


def _rate(counts: dict) -> str:
    rate = counts["failure_rate"]
    return "-" if rate is None else f"{counts['failures']}/{counts['turns']} {rate:.0%}"


def render(stats: dict) -> str:
    parts = [f"{stats['turns']} turns: " + ", ".join(f"{k} {v}" for k, v in stats["outcomes"].items())]
    rows = [
        [m["model"], _rate(m["1h"]), _rate(m["24h"]), _rate(m["7d"]), _rate(m["all"]),
         ", ".join(f"{c} {n}" for c, n in m["all"]["by_class"].items()),
         f"{m['all']['lost_minutes']} min"]
        for m in stats["models"]
    ]
    parts.append(table(rows, ["model", "1h", "24h", "7d", "all", "failures by class", "lost"]))
    if stats["episodes"]:
        rows = [
            [e["id"], _short(e["first"]), str(e["failures"]),
             ", ".join(f"{c} {n}" for c, n in e["classes"].items()), ", ".join(e["models"]),
             "ongoing" if e["ongoing"] else ""]
            for e in stats["episodes"][-10:]
        ]
        parts.append(table(rows, ["episode", "first (local)", "n", "classes", "models", ""]))
    quiet = stats["hour_of_week"]["quietest"]
    if quiet:
        parts.append("Quietest hours: " + ", ".join(f"{_DAYS[d]} {h:02d}:00" for d, h in quiet))
    p = stats["parser"]
    understood = "-" if p["understood"] is None else f"{p['understood']:.2%}"
    parts.append(
        f"Parser: {p['files']} files, {p['lines']} lines, {understood} understood, "
        f"{p['malformed']} malformed, {p['unknown_lines']} of unknown types, "
        f"{p['unsupported_files']} in an unsupported (pre-0.40) format"
    )
    return "\n\n".join(parts)


def _short(text: str | None) -> str:
    if not text:
        return "-"
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone().strftime("%a %d %b %H:%M")
