"""The live follower: which rollout files changed, as soon as Codex writes them.

Two sources, merged:

- `watchfiles.awatch` on the sessions folder (recursive, short debounce), so new date
  folders and new session files are seen at once;
- a size check of the "hot" files (written in the last half hour) a few times a second,
  because on macOS appends through a file Codex keeps open are not always reported.

It only says *which* files changed; reading them is the engine's incremental reader's job
(`codexwatch.sources.history.History.refresh`). Nothing here writes anywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path
from typing import AsyncIterator, Iterable

from codexwatch.core.models import Clock

HOT_WINDOW_S = 30 * 60  # a file written in the last 30 min is checked every tick
SCAN_INTERVAL_S = 2.0  # how often the newest date folders are listed for new files


class SessionFollower:
    def __init__(
        self,
        home: Path,
        known: Iterable[str] = (),
        clock: Clock = time.time,
        hot_interval: float = 0.25,
        hot_window: float = HOT_WINDOW_S,
        debounce_ms: int = 50,
        scan_interval: float = SCAN_INTERVAL_S,
        use_events: bool = True,
    ) -> None:
        self.home = Path(home)
        self.sessions = self.home / "sessions"
        self.clock = clock
        self.hot_interval = hot_interval
        self.hot_window = hot_window
        self.debounce_ms = debounce_ms
        self.scan_interval = scan_interval
        self.use_events = use_events
        self.note: str | None = None  # a sentence for the user when events are unavailable
        self._sizes: dict[str, int] = {}
        self._touched: dict[str, float] = {}  # path -> when we last saw it grow (our clock)
        self._known: set[str] = set(known)
        now = time.monotonic()
        for path in self._known:
            st = _stat(path)
            if st is not None and time.time() - st.st_mtime < hot_window:
                self._sizes[path] = st.st_size
                self._touched[path] = now
        self._pending: set[str] = set()
        self._wake = asyncio.Event()

    # --- the merged stream ----------------------------------------------------------

    async def changes(self, stop: asyncio.Event | None = None) -> AsyncIterator[set[str]]:
        """Yield sets of rollout paths that changed or appeared, until `stop` is set."""
        stop = stop or asyncio.Event()
        tasks = [asyncio.create_task(self._poll(stop))]
        if self.use_events:
            tasks.append(asyncio.create_task(self._events(stop)))
        try:
            while not stop.is_set():
                waiter = asyncio.create_task(self._wake.wait())
                stopper = asyncio.create_task(stop.wait())
                try:
                    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
                    stopper.cancel()
                self._wake.clear()
                if self._pending:
                    batch, self._pending = self._pending, set()
                    yield batch
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _add(self, path: str) -> None:
        self._known.add(path)
        self._pending.add(path)
        self._touched[path] = time.monotonic()
        st = _stat(path)
        if st is not None:
            self._sizes[path] = st.st_size
        self._wake.set()

    # --- file events ----------------------------------------------------------------

    async def _events(self, stop: asyncio.Event) -> None:
        from watchfiles import Change, awatch

        while not self.sessions.is_dir():  # Codex creates it with the first session
            if stop.is_set():
                return
            await asyncio.sleep(self.scan_interval)
        try:
            async for changes in awatch(
                self.sessions,
                debounce=self.debounce_ms,
                step=50,
                stop_event=stop,
                recursive=True,
                watch_filter=lambda change, path: path.endswith(".jsonl"),
            ):
                for change, path in changes:
                    if change != Change.deleted:
                        self._add(path)
        except Exception as exc:  # noqa: BLE001 - e.g. the OS file watch limit
            self.note = (
                f"file events unavailable ({type(exc).__name__}: {exc}); "
                f"checking for changes every {self.scan_interval:g} s instead"
            )
            self._wake.set()

    # --- size polling (the macOS backstop) and discovery ----------------------------

    async def _poll(self, stop: asyncio.Event) -> None:
        last_scan = 0.0
        while not stop.is_set():
            now = time.monotonic()
            if now - last_scan >= self.scan_interval:
                last_scan = now
                for path in await asyncio.to_thread(self._scan_newest):
                    self._add(path)
            for path in list(self._sizes):
                st = _stat(path)
                if st is None:
                    self._sizes.pop(path, None)
                    self._touched.pop(path, None)
                    continue
                if st.st_size != self._sizes[path]:
                    self._add(path)
                elif now - self._touched.get(path, now) > self.hot_window:
                    self._sizes.pop(path, None)  # gone cold; an event or a scan brings it back
                    self._touched.pop(path, None)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.hot_interval)

    def _scan_newest(self) -> list[str]:
        """Rollout files in the two newest date folders that we have not seen yet."""
        found: list[str] = []
        for folder in _newest_day_folders(self.sessions, 2):
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name.endswith(".jsonl") and entry.path not in self._known:
                    self._known.add(entry.path)
                    found.append(entry.path)
        return found


def _stat(path: str):
    try:
        return os.stat(path)
    except OSError:
        return None


def _newest_day_folders(root: Path, n: int) -> list[str]:
    """sessions/YYYY/MM/DD folders, newest first (by name), at most n."""
    out: list[str] = []

    def children(folder: str) -> list[str]:
        try:
            return sorted((e.path for e in os.scandir(folder) if e.is_dir()), reverse=True)
        except OSError:
            return []

    for year in children(str(root)):
        for month in children(year):
            for day in children(month):
                out.append(day)
                if len(out) >= n:
                    return out
    return out
