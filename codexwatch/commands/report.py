"""`codexwatch report`: a redacted report of one failure episode, ready to paste.

Markdown by default, JSON with --json; --output FILE writes it there instead of stdout (the
file is created by the user's request, never inside the Codex home). Exit 0 when a report was
made, 1 when there is no such episode, 2 for a bad argument or no Codex home.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codexwatch.commands.advise import clock_and_turns, status_snapshot
from codexwatch.commands.common import HomeUnreadable, fail
from codexwatch.core.models import Episode
from codexwatch.core.report import build_report
from codexwatch.core.stats import episodes


def choose(found: list[Episode], wanted: str | None) -> Episode | None:
    if not found:
        return None
    if wanted in (None, "", "latest"):
        return found[-1]
    return next((e for e in found if e.id == wanted), None)


def run(args, settings) -> int:
    try:
        now, turns = clock_and_turns(args, settings)
    except HomeUnreadable as exc:
        return fail(str(exc))
    wanted = getattr(args, "episode", "latest")
    episode = choose(episodes(turns), wanted)
    if episode is None:
        which = "no failure episode" if wanted in (None, "", "latest") else f"no episode {wanted!r}"
        return fail(f"{which} in the history read (--since {settings.since}); "
                    "`codexwatch stats` lists the episodes", 1)
    report = build_report(episode, turns, status_snapshot(settings, now), now,
                          home=str(Path.home()))
    text = report.to_json() + "\n" if getattr(args, "json", False) else report.markdown
    output = getattr(args, "output", None)
    if output:
        try:
            Path(output).expanduser().write_text(text, encoding="utf-8")
        except OSError as exc:
            return fail(f"cannot write {output}: {exc.strerror or exc}")
        print(f"codexwatch: report written to {output}; read it before you share it",
              file=sys.stderr)
        return 0
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0
