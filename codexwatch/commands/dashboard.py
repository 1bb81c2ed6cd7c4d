"""`codexwatch` with no command: the live dashboard (and `--demo`)."""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import signal
import sys
import threading
from typing import Callable

from codexwatch.config import Settings, parse_duration

# A dashboard told to end by a signal that is not gone after this long (a thread stuck
# writing to a terminal that went away, say) is ended at once, its cleanups done first.
FORCE_EXIT_AFTER_S = 5.0


def app_config(args: argparse.Namespace, settings: Settings, crew=None, listing=None):
    from codexwatch.sources.history import home_problem
    from codexwatch.sources.runs import default_state_dir
    from codexwatch.ui.app import AppConfig

    return AppConfig(
        codex_home=settings.codex_home,
        since_seconds=parse_duration(settings.since),
        status_url=settings.status_url,
        status_enabled=settings.status_enabled,
        status_interval=settings.status_interval,
        bell=settings.bell,
        notify=settings.notify,
        theme=settings.theme,
        use_cache=settings.use_cache,
        cache_dir=settings.cache_dir,
        home_problem=home_problem(settings.codex_home) if not settings.codex_home.exists() else None,
        runs_state_dir=settings.state_dir or default_state_dir(),
        crew=crew,
        listing=listing,
    )


def _indexed(settings: Settings) -> bool | None:
    """Whether the first read will find an index for this home (None: cannot tell)."""
    from codexwatch.sources.index import default_cache_dir, index_path

    if not settings.use_cache:
        return False
    try:
        return index_path(settings.cache_dir or default_cache_dir(), settings.codex_home).exists()
    except (OSError, ValueError):
        return None


def first_read_helpers(settings: Settings) -> tuple:
    """(listing, crew): the processes forked now for the first read, before Textual is
    imported and while this process has no other thread (a threaded process is never
    forked, see `sources/parallel.py`). The listing: the home listed meanwhile, on the
    other core (the first read begins with it: a stat of every file where there is an
    index or a window, 0.2 s at 31,000 files). The crew: a helper that shares the read
    with the app's reading thread, only where the read is likely a full one (no index
    yet, or none kept). (None, None) where there is nothing to read or no second core;
    either may be None. The app closes them (`CodexWatchApp`)."""
    from codexwatch.sources import parallel
    from codexwatch.sources.listing import home_problem

    if parallel.default_workers() < 2 or home_problem(settings.codex_home) is not None:
        return None, None
    indexed = _indexed(settings)
    listing = parallel.Listing(settings.codex_home,
                               stat=bool(indexed) or parse_duration(settings.since) is not None)
    # warm (the index holds what a helper would read), or cannot tell: no helper
    crew = parallel.Crew.forked_now(parallel.default_workers()) if indexed is False else None
    return listing, crew


class Hangup:
    """SIGHUP (the tmux pane closed, `tmux kill-session`, the terminal window shut) and
    SIGTERM end the dashboard the way `q` does: the app exits through Textual's driver
    (which puts the terminal back as it was), and whatever was set up for the run (the
    demo's temporary Codex home) is removed. Without this, both signals killed the process
    on the spot. A signal before the app runs unwinds with SystemExit (the `with` blocks
    clean up); if the process is still there `FORCE_EXIT_AFTER_S` after a signal the app
    was given (the app stuck, or a thread worker still reading that keeps the interpreter
    from ending), the cleanups are done and the process ends. The exit code is 128 + the
    signal's number, as a shell reports it."""

    SIGNALS = tuple(getattr(signal, name) for name in ("SIGHUP", "SIGTERM") if hasattr(signal, name))

    def __init__(self, force_after: float = FORCE_EXIT_AFTER_S) -> None:
        self.force_after = force_after
        self.app = None
        self.signum: int | None = None
        self.cleanups: list[Callable[[], None]] = []
        self.timer: threading.Timer | None = None  # left running past __exit__: see above
        self._before: dict[int, object] = {}

    def __enter__(self) -> "Hangup":
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._before[signum] = signal.signal(signum, self._handle)
            if self._before and hasattr(select, "poll") and _isatty(0):
                threading.Thread(target=self._watch_terminal, args=(0,), daemon=True,
                                 name="codexwatch-hangup").start()
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._before.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._before.clear()

    def _watch_terminal(self, fd: int) -> None:
        """The terminal hung up, and no SIGHUP came (it goes to the session's leader: a
        shell that ran `codexwatch; …` in a tmux pane does not pass it on): as if it had.
        Else Textual's input thread spins on the dead terminal's end of file (a third of a
        core) and the process lingers. Blocks in poll() until then: no cost."""
        try:
            poller = select.poll()
            poller.register(fd, 0)  # a hang-up is reported whatever is asked for
            events = poller.poll()
        except (OSError, ValueError):
            return
        # POLLNVAL (macOS polls no terminal; the descriptor closed at exit) is not a hang-up.
        if any(ev & select.POLLHUP for _, ev in events) and self._before:
            os.kill(os.getpid(), signal.SIGHUP)

    @property
    def code(self) -> int | None:
        return None if self.signum is None else 128 + self.signum

    def _handle(self, signum: int, frame) -> None:
        first = self.signum is None
        self.signum = signum
        app = self.app
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if app is None or loop is None:
            raise SystemExit(self.code)
        if first:
            self.timer = threading.Timer(self.force_after, self._force)
            self.timer.daemon = True
            self.timer.start()
        # The handler runs between two steps of the event loop's thread: hand the exit to
        # the loop (thread-safe, and it wakes the loop) rather than doing it here.
        loop.call_soon_threadsafe(lambda: app.exit(return_code=self.code or 1))

    def _force(self) -> None:
        for cleanup in self.cleanups:
            try:
                cleanup()
            except Exception:  # noqa: BLE001 - ending anyway
                pass
        os._exit(self.code or 1)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def run(args: argparse.Namespace, settings: Settings) -> int:
    demo_mode = bool(getattr(args, "demo", False))
    # Forked before Hangup's thread, and before Textual is imported (the listing is made
    # meanwhile).
    listing, crew = (None, None) if demo_mode else first_read_helpers(settings)
    from codexwatch.ui.app import CodexWatchApp

    with Hangup() as hangup:
        while True:
            if demo_mode:
                from codexwatch.demo import Demo

                with Demo() as demo:
                    hangup.cleanups.append(demo.cleanup)
                    config = demo.app_config(settings)
                    hangup.app = app = CodexWatchApp(config)
                    result = app.run()
                    hangup.app = None
            else:
                hangup.app = app = CodexWatchApp(app_config(args, settings, crew, listing))
                crew = listing = None  # the app's now: it closes them
                result = app.run()
                hangup.app = None
            if hangup.code is not None:
                return hangup.code
            if result == "demo" and not demo_mode:
                demo_mode = True
                continue
            break
    if isinstance(result, int):
        return result
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(argparse.Namespace(), Settings()))
