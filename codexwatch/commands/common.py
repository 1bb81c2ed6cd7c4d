"""What every headless command does first: read the Codex home the settings name."""

from __future__ import annotations

import sys
import time
from typing import Callable

from codexwatch.config import Settings, parse_duration
from codexwatch.core.stats import StatsFold
from codexwatch.sources.history import History, load_history


class HomeUnreadable(Exception):
    """The Codex home cannot be read; the message says where we looked and what to do."""


# Every history a command loads stays referenced until the process ends: the headless
# commands exit right after their output, and freeing a large history one object at a
# time when the command returns would cost more than the rest of a warm `stats` run's tail.
_LOADED: list[History] = []


def load(settings: Settings, now: float | None = None, progress: Callable | None = None,
         fold: StatsFold | None = None) -> History:
    """`fold`: take the history into these statistics only (History.fold). Without a
    `progress`, the files read are counted on stderr when it is a terminal."""
    now = time.time() if now is None else now
    history = load_history(
        settings.codex_home,
        parse_duration(settings.since),
        now,
        use_cache=settings.use_cache,
        progress=progress or terminal_progress(),
        cache_dir=settings.cache_dir,
        parallel=True,
        fold=fold,
    )
    if history.home_problem is not None:
        raise HomeUnreadable(history.home_problem)
    _LOADED.append(history)
    return history


def terminal_progress(stream=None, clock: Callable[[], float] = time.monotonic) -> Callable | None:
    """`codexwatch: reading 1,234/4,732 files` on `stream` (stderr), rewritten in place,
    once a first read has taken half a second (a large history takes seconds), and wiped
    when it ends; None when the stream is not a terminal (output for scripts stays clean)."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return None
    began, shown = clock(), [0.0, False]

    def show(done: int, total: int) -> None:
        now = clock()
        if done < total and (now - began < 0.5 or now - shown[0] < 0.1):
            return
        if done >= total:
            if shown[1]:
                stream.write("\r\033[K")  # the line wiped: the command's output follows
                stream.flush()
            return
        shown[:] = [now, True]
        stream.write(f"\rcodexwatch: reading {done:,}/{total:,} files")
        stream.flush()

    return show


def fail(message: str, code: int = 2) -> int:
    print(f"codexwatch: {message}", file=sys.stderr)
    return code


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain text table: the headless commands' human output."""
    cells = [header] + rows
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
