"""`codexwatch stats`: failure rates per model, by hour of week, episodes, parser health."""

from __future__ import annotations

import sqlite3
import sys
import time
from collections import deque
from datetime import datetime
from typing import BinaryIO

import orjson

from codexwatch.commands.common import HomeUnreadable, fail, load, table
from codexwatch.core.advice_wording import plural
from codexwatch.core.stats import StatsFold, episode_json
from codexwatch.core.times import WEEKDAYS, parse_iso
from codexwatch.sources.spill import to_disk


def run(args, settings) -> int:
    now = time.time()
    # A file at a time, none of it kept but the statistics; those of a very large history
    # on disk.
    fold = StatsFold(now, spill=to_disk)
    try:
        load(settings, now, fold=fold)
        if args.json:
            write_json(fold, sys.stdout.buffer)
            sys.stdout.flush()
            return 0
        latest = deque(fold.iter_episodes(), maxlen=10)
    except HomeUnreadable as exc:
        return fail(str(exc))
    except sqlite3.Error as exc:  # the temporary database: a full or unwritable disk
        import tempfile

        return fail(f"the statistics could not be kept on disk ({exc}): make room in "
                    f"{tempfile.gettempdir()} or point TMPDIR elsewhere")
    last = latest[-1] if latest else None
    print(render({**fold.result_before(), "episodes": [episode_json(e) for e in latest],
                  **fold.result_after(last)}))
    return 0


def write_json(fold: StatsFold, out: BinaryIO) -> None:
    """fold.result() as JSON, a line, its episodes written a few hundred at a time as they
    are found: a large history has tens of thousands, tens of megabytes made at once."""
    out.write(orjson.dumps(fold.result_before())[:-1] + b',"episodes":[')
    last, batch, sep = None, [], b""
    for last in fold.iter_episodes():
        batch.append(orjson.dumps(episode_json(last)))
        if len(batch) == 256:
            out.write(sep + b",".join(batch))
            batch, sep = [], b","
    if batch:
        out.write(sep + b",".join(batch))
    out.write(b"]," + orjson.dumps(fold.result_after(last))[1:] + b"\n")


def _rate(counts: dict) -> str:
    rate = counts["failure_rate"]
    return "-" if rate is None else f"{counts['failures']}/{counts['turns']} {rate:.0%}"


def render(stats: dict) -> str:
    parts = [f"{plural(stats['turns'], 'turn')}: " + ", ".join(f"{k} {v}" for k, v in stats["outcomes"].items())]
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
             "ongoing" if e["ongoing"] else "ended"]
            for e in stats["episodes"][-10:]
        ]
        parts.append(table(rows, ["episode", "first (local)", "n", "classes", "models", "state"]))
    quiet = stats["hour_of_week"]["quietest"]
    if quiet:
        parts.append("Quietest hours: " + ", ".join(f"{WEEKDAYS[d]} {h:02d}:00" for d, h in quiet))
    parts += _usage_and_context(stats)
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
    return datetime.fromtimestamp(parse_iso(text)).strftime("%a %d %b %H:%M")


def _usage_and_context(stats: dict) -> list[str]:
    out = []
    usage = stats.get("usage")
    if usage is not None:
        windows = [f"{name} {w['used_percent']:g}%" + (f" (resets {_short(w['resets_at'])})" if w["resets_at"] else "")
                   for name, w in (("5h", usage["primary"]), ("wk", usage["secondary"])) if w is not None]
        if windows:
            out.append(f"Plan usage as of {_short(usage['as_of'])}: " + ", ".join(windows))
    bands = [b for b in stats["context"]["bands"] if b["turns"]]
    if bands:
        rows = [[b["band"], str(b["turns"]), str(b["failures"]), f"{b['failure_rate']:.0%}"] for b in bands]
        out.append(table(rows, ["context fill", "turns", "failed", "rate"]))
        found = stats["context_threshold"]
        out.append(f"Context threshold: from {found['band']} ({found['failures']}/{found['turns']} failed, "
                   f"{found['failures_below']}/{found['turns_below']} below)" if found else
                   f"Context threshold: none (at least {stats['context']['min_turns']} turns each side)")
    return out
