"""The live follower: which rollout files changed, as soon as Codex writes them.

Three sources, merged:

- `watchfiles.awatch` on the sessions folder (recursive, short debounce), so new date
  folders and new session files are seen at once, and on Linux every append too;
- a size check of the *hot* files a few times a second, because on macOS appends through a
  file Codex keeps open are not always reported. The hot set is bounded (`HOT_MAX`): the few
  newest files at the start (`NEWEST_AT_START`, if written in the last half hour) and every
  file seen to grow or appear since, the most recently grown kept; a file quiet for
  `HOT_WINDOW_S` leaves it. A home with thousands of fresh mtimes (a restored backup, an
  `rsync` without `-t`) costs no more than one with a few;
- every `SCAN_INTERVAL_S`, a listing of the two newest date folders with their sizes (at
  most `SCAN_MAX` files, newest names first): new files, and files written there that are
  not hot; plus, every tick, the next few of all other known files in turn
  (`ROTATE_PER_S` a second), a slow backstop for an older session written again when no
  event says so.

The tick is `HOT_INTERVAL_S` where file events report appends (Linux), and
`POLL_INTERVAL_S` where they do not (macOS, no events at all): there the tick alone finds an
appended line, and it must reach the screen within a quarter second.

Where watchfiles would poll (`WATCHFILES_FORCE_POLLING` set because file events do not work
there, or WSL 2), it is not started: its polling stats every file of the tree three times a
second; the bounded checks above stand in for it, as on macOS.

It only says *which* files changed; reading them is the engine's incremental reader's job
(`codexwatch.sources.history.History.refresh`). Nothing here writes anywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import os
import sys
import time
from pathlib import Path
from typing import AsyncIterator, Callable, Iterable, Mapping

from codexwatch.core.models import Clock

HOT_WINDOW_S = 30 * 60  # a hot file quiet this long is no longer checked every tick
HOT_MAX = 32  # files checked every tick, at most
NEWEST_AT_START = 4  # the newest files at the start are hot (if written in the hot window)
ROTATE_PER_S = 60  # other known files checked a second, in turn
# The tick where file events report appends (Linux): they bring appended lines at once,
# the tick is only a backstop there, and every wake-up of an idle dashboard is CPU.
HOT_INTERVAL_S = 1.0
POLL_INTERVAL_S = 0.1  # the tick, where nothing but the tick finds an append
SCAN_INTERVAL_S = 2.0  # how often the newest date folders are listed for new files
SCAN_FOLDERS = 2  # the newest date folders that scan lists
SCAN_MAX = 256  # files of those folders whose size the scan compares, newest names first


def force_polling() -> bool:
    """Whether watchfiles would poll rather than use the OS's events: the user set
    `WATCHFILES_FORCE_POLLING` (watchfiles' own switch, read as watchfiles reads it), or this
    is WSL 2, where watchfiles polls by default."""
    value = os.environ.get("WATCHFILES_FORCE_POLLING")
    if value:
        return value.lower() not in {"false", "disable", "disabled"}
    import platform

    uname = platform.uname()
    return "microsoft-standard" in uname.release.lower() and uname.system.lower() == "linux"


class SessionFollower:
    """`known`: the files already read, as paths, or as a mapping path -> (size read,
    mtime) (the history's readers: then nothing is stat-ed to start). `clock`: the wall
    clock the files' mtimes are compared with; `monotonic`: how long a file has been quiet
    (both injectable, for tests)."""

    def __init__(
        self,
        home: Path,
        known: Iterable[str] | Mapping[str, tuple[int, float]] = (),
        clock: Clock = time.time,
        hot_interval: float | None = None,
        hot_window: float = HOT_WINDOW_S,
        debounce_ms: int = 50,
        scan_interval: float = SCAN_INTERVAL_S,
        use_events: bool | None = None,
        hot_max: int = HOT_MAX,
        newest: int = NEWEST_AT_START,
        rotate: int | None = None,
        scan_max: int = SCAN_MAX,
        monotonic: Callable[[], float] = time.monotonic,
        stat: Callable[[str], os.stat_result] = os.stat,
    ) -> None:
        self.home = Path(home)
        self.sessions = self.home / "sessions"
        self.clock = clock
        self.monotonic = monotonic
        self._stat_fn = stat
        self.use_events = not force_polling() if use_events is None else use_events
        if hot_interval is None:
            appends_reported = self.use_events and sys.platform != "darwin"
            hot_interval = HOT_INTERVAL_S if appends_reported else POLL_INTERVAL_S
        self.hot_interval = hot_interval
        self.hot_window = hot_window
        self.debounce_ms = debounce_ms
        self.scan_interval = scan_interval
        self.hot_max = max(1, hot_max)
        self.newest = newest
        self.rotate = rotate if rotate is not None else max(1, round(ROTATE_PER_S * hot_interval))
        self.scan_max = scan_max
        self.note: str | None = None  # a sentence for the user when events are unavailable
        # hot: path -> size last seen; _touched: path -> when it last grew (monotonic)
        self._hot: dict[str, int] = {}
        self._touched: dict[str, float] = {}
        # every other known file: path -> size last seen (None: not looked at yet)
        self._sizes: dict[str, int | None] = {}
        self._ring: list[str] = []
        self._cursor = 0
        self._ring_dirty = False
        if isinstance(known, Mapping):
            self._known: set[str] = set(known)
            self._primed = True
            self._prime({p: (int(size), float(mtime)) for p, (size, mtime) in known.items()})
        else:
            self._known = set(known)
            self._primed = not self._known
        self._pending: set[str] = set()
        self._wake = asyncio.Event()

    @property
    def hot(self) -> list[str]:
        """The files checked every tick, least recently grown first."""
        return list(self._hot)

    def _prime(self, seen: Mapping[str, tuple[int, float] | None]) -> None:
        """The known files' sizes; the newest few that were written lately are hot."""
        now, mono = self.clock(), self.monotonic()
        for path, got in seen.items():
            self._sizes[path] = got[0] if got is not None else None
        recent = [(got[1], path) for path, got in seen.items()
                  if got is not None and now - got[1] < self.hot_window]
        for _, path in sorted(heapq.nlargest(self.newest, recent)):
            size = self._sizes.pop(path)
            self._heat(path, size, mono)
        self._ring_dirty = True

    def _stat_known(self) -> dict[str, tuple[int, float] | None]:
        out: dict[str, tuple[int, float] | None] = {}
        for path in list(self._known):
            st = self._stat(path)
            out[path] = (st.st_size, st.st_mtime) if st is not None else None
        return out

    def _heat(self, path: str, size: int | None, mono: float) -> None:
        """`path` grew (or is new, or among the newest): checked every tick from now."""
        self._sizes.pop(path, None)
        self._hot.pop(path, None)
        self._hot[path] = size if size is not None else -1
        self._touched[path] = mono
        while len(self._hot) > self.hot_max:  # the least recently grown goes back to the ring
            coldest = next(iter(self._hot))
            self._cool(coldest)

    def _cool(self, path: str) -> None:
        size = self._hot.pop(path, None)
        self._touched.pop(path, None)
        if path in self._known:
            self._sizes[path] = size if size is not None and size >= 0 else None
            self._ring_dirty = True

    # --- the merged stream ----------------------------------------------------------

    async def changes(self, stop: asyncio.Event | None = None) -> AsyncIterator[set[str]]:
        """Yield sets of rollout paths that changed or appeared, until `stop` is set."""
        stop = stop or asyncio.Event()
        if not self._primed:
            self._primed = True
            self._prime(await asyncio.to_thread(self._stat_known))
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

    def _add(self, path: str, size: int | None = None) -> None:
        """`path` changed or appeared: reported, and hot from now."""
        self._known.add(path)
        self._pending.add(path)
        if size is None:
            st = self._stat(path)
            size = st.st_size if st is not None else None
        self._heat(path, size, self.monotonic())
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
        last_scan: float | None = None
        while not stop.is_set():
            now = self.monotonic()
            if last_scan is None or now - last_scan >= self.scan_interval:
                last_scan = now
                for path, size in await asyncio.to_thread(self.scan_once):
                    self._add(path, size)
            for path, size in self.poll_once():
                self._add(path, size)
            # A plain sleep: `changes` cancels this task when it stops (a wait_for on `stop`
            # made a task and a timer at every tick).
            await asyncio.sleep(self.hot_interval)

    def poll_once(self) -> list[tuple[str, int]]:
        """One tick: the hot files' sizes, and the next few other known files' in turn;
        -> (path, size) of those that changed. Hot files quiet too long go cold."""
        grown: list[tuple[str, int]] = []
        now = self.monotonic()
        for path, size in list(self._hot.items()):
            st = self._stat(path)
            if st is None:  # gone (an event or a scan brings a new one back)
                self._hot.pop(path, None)
                self._touched.pop(path, None)
                self._known.discard(path)
                continue
            if st.st_size != size:
                grown.append((path, st.st_size))
            elif now - self._touched.get(path, now) > self.hot_window:
                self._cool(path)
        for path in self._next_in_turn():
            old = self._sizes.get(path)
            st = self._stat(path)
            if st is None:
                self._sizes.pop(path, None)
                self._known.discard(path)
                self._ring_dirty = True
            elif old is None:
                self._sizes[path] = st.st_size  # first look: what it is now
            elif st.st_size != old:
                grown.append((path, st.st_size))
        return grown

    def _next_in_turn(self) -> list[str]:
        if self.rotate <= 0:
            return []
        if self._ring_dirty:
            self._ring = list(self._sizes)
            self._ring_dirty = False
            self._cursor = 0
        ring = self._ring
        if not ring:
            return []
        if len(ring) <= self.rotate:
            return [p for p in ring if p in self._sizes]
        if self._cursor >= len(ring):
            self._cursor = 0
        picked = ring[self._cursor:self._cursor + self.rotate]
        self._cursor += self.rotate
        return [p for p in picked if p in self._sizes]

    def scan_once(self) -> list[tuple[str, int | None]]:
        """The newest date folders: files not seen yet, and files written there that are
        not hot (compared with the size last seen); -> (path, size)."""
        found: list[tuple[str, int | None]] = []
        for folder in _newest_day_folders(self.sessions, SCAN_FOLDERS):
            try:
                names = sorted((e.name for e in os.scandir(folder) if e.name.endswith(".jsonl")),
                               reverse=True)
            except OSError:
                continue
            for i, name in enumerate(names):
                path = os.path.join(folder, name)
                if path not in self._known:
                    self._known.add(path)
                    found.append((path, None))
                elif i < self.scan_max and path not in self._hot:
                    st = self._stat(path)
                    if st is None:
                        continue
                    old = self._sizes.get(path)
                    if old is not None and st.st_size != old:
                        found.append((path, st.st_size))
                    elif old is None:
                        self._sizes[path] = st.st_size
        return found

    def _stat(self, path: str):
        try:
            return self._stat_fn(path)
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
