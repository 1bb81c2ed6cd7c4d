"""A Codex home's rollouts -> turns: the first full read, then whatever changes.

History is what the dashboard and the commands hold: the files' readers, the index, the
turn list. The rest of reading a home lives beside it: where the files are and their order
(`listing`), reading one file (`reader`), many at once in forked helpers (`parallel`), the
index of what was read (`index`), the statistics' fold stored beside it (`stored`), the turn
ids counted once across forks (`seen`), the causes Codex's log names (`causes`).

Forks and sub-agent files replay their parent's turns, so turns are keyed on `turn_id` and
the first file that has one (the oldest, as files are read in path order) keeps it.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Callable, Iterable, Iterator

from codexwatch.core.models import FileHealth, Turn
from codexwatch.core.stats import StatsFold
from codexwatch.sources import logdb, parallel, stored as stored_fold
from codexwatch.sources.causes import LogCauses
from codexwatch.sources.index import FolderRows, IndexCache, default_cache_dir, index_path
from codexwatch.sources.listing import (  # noqa: F401 - also this module's names, as before
    ROLLOUT_DIRS, RolloutFile, file_size, find_rollouts, home_problem, iter_rollouts,
    looked_at, whole_folders,
)
from codexwatch.sources.parallel import Crew, Listing, default_workers
from codexwatch.sources.reader import ReadJob, RolloutReader, WholeFileBuffer, read_jobs
from codexwatch.sources.seen import TurnIds, fresh
from codexwatch.sources.stored import LATEST, Covered, Window

# Files written this recently are read line by line (every line checked, unknown line types
# counted: a new Codex format shows up the day it ships); older ones are skimmed.
HOT_SECONDS = 24 * 3600
Progress = Callable[[int, int], None]
_FOLD_TURNS = 4096  # turns folded at a time: fewer, larger parts cost less
_FOLD_FILES = 8192  # files a fold lists and reads at a time (whole folders)


@dataclass
class History:
    home: Path
    since_seconds: float | None = None
    now: float = 0.0  # the clock reading of the last load or refresh
    readers: dict[str, RolloutReader] = field(default_factory=dict)
    _cached: list[Turn] | None = None
    # The files left out of the window at the load, as they were (size, mtime): not new to
    # whoever follows the home; one written again is read then.
    outside: dict[str, tuple[int, float]] = field(default_factory=dict)
    index: IndexCache | None = None
    # Processes that read a large first read: 1, this one only (the default wherever a
    # History is made, and always in a process with other threads running); load_history
    # gives codexwatch's own commands parallel.default_workers(), fixed there.
    workers: int = 1
    causes: LogCauses | None = None
    # Helpers forked by the caller, for the first read (`load`); the caller closes them.
    crew: Crew | None = field(default=None, repr=False)
    # The home listed by a process the caller forked earlier, for the first read (`load`).
    listing: Listing | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.causes = self.causes or LogCauses(self.home)

    @property
    def home_problem(self) -> str | None:
        return home_problem(self.home)

    def cutoff(self, now: float) -> float | None:
        return None if self.since_seconds is None else now - self.since_seconds

    def load(self, now: float, progress: Progress | None = None, skim: bool = True) -> None:
        """The first full read: every file's reader, kept to follow the files from here."""
        with _gc_paused():  # what the index says of every file, too, is thousands of objects
            files, known, listed = self._look(now)
            for reader in self._first_read(now, files, known, progress, skim, crew=self.crew, listed=listed):
                self.readers[reader.path] = reader
        self._cached = None

    def fold(self, now: float, into: StatsFold, progress: Progress | None = None) -> None:
        """The first full read, into statistics only: each file's turns are folded in and
        its reader let go, so memory follows what the statistics keep (failed turns, times
        of the others), not the bytes read nor the number of files (for `stats`).

        The index also keeps the fold as it stood after the longest run of files, from the
        oldest, whose turns are fixed (as good as all but today's) and all within the
        window (a window that leaves nothing out folds what `all` does): the next time, at
        a later time, those files are found as they were, the fold is taken up from there,
        for `all` or any window that reaches back past the oldest of them."""
        with _gc_paused():  # the stored fold and what the index says are many objects too
            self._fold(now, into, progress)

    def _fold(self, now: float, into: StatsFold, progress: Progress | None) -> None:
        cutoff = self.cutoff(now)
        keeps = self.index is not None
        stored = self._stored(cutoff) if keeps else None
        self.now = now
        into.causes_wanted = logdb.present(self.home)
        window = Window(cutoff)
        files, covered, seen, oldest = self._start_fold(now, into, stored, window)
        start, ended, blob = len(covered), False, None
        total = sum(1 for _ in self._listing(window=Window(cutoff))) if progress is not None else 0
        part: list[Turn] = []
        for done, reader in enumerate(self._read_in_parts(now, files), start + 1):
            turns = reader.turns(now)
            if keeps and not ended:
                first = min(map(_AT, turns), default=reader.mtime)
                if reader.fixed(now) and window.whole_before(reader.path) and window.holds(first):
                    covered.add(reader.path, reader.offset, reader.mtime, reader.identity)
                    oldest = min(oldest, first, reader.mtime)
                else:  # the run of files whose turns are fixed ends here
                    ended = True
                    into.add(fresh(part, seen, cutoff))
                    part = []
                    blob = (stored_fold.snapshot(into, seen, covered, now, self.index, oldest)
                            if len(covered) != start else None)
            part += turns
            into.add_health(reader.health())
            if reader.assembler.unknown_infos:
                into.add_unknown_infos(reader.assembler.unknown_infos)
            if len(part) >= _FOLD_TURNS:
                into.add(fresh(part, seen, cutoff))
                part = []
            if progress is not None:
                progress(done, max(total, done))
        into.add(fresh(part, seen, cutoff))
        if keeps and not ended and len(covered) != start:
            blob = stored_fold.snapshot(into, seen, covered, now, self.index, oldest)
        seen.close()
        if blob is not None:
            stored_fold.save_snapshot(self.index, blob)
        # Causes from Codex's log, looked up once for all, given as the failures are read.
        self.causes.look_up(into.unrecorded_sessions())
        if self.causes.causes:
            into.give_causes(self.causes.causes)

    def _stored(self, cutoff: float | None) -> dict | None:
        """The stored fold, if it can serve this window: `all`, or one that reaches back
        past the oldest file and turn it covers (asked first: a small row)."""
        if cutoff is not None:
            oldest = self.index.snapshot("oldest")
            if not isinstance(oldest, float) or cutoff > oldest:
                return None
        return self.index.snapshot("stats")

    def _listing(self, stat: bool = False, window: "Window | None" = None) -> Iterator[RolloutFile]:
        """The files a fold reads, in path order, found as they are read: with a window,
        looked at to leave out those not written within it (`window` notes the first left
        out); else by name only."""
        cutoff = self.cutoff(self.now)
        if cutoff is None:
            return iter_rollouts(self.home, None, stat=stat)
        return (window or Window(cutoff)).within(iter_rollouts(self.home, None, stat=True))

    def _start_fold(self, now: float, into: StatsFold, stored: dict | None, window: "Window") -> tuple:
        """Where a fold starts: -> (the files from there on, the files `into` already
        covers, the turn ids seen, the oldest time among those files and their turns). A
        stored fold that still holds is taken up into `into`."""
        if stored is not None:
            files = self._listing(stat=True, window=window)
            taken = stored_fold.stored_fold(into, stored, files, now, self.index)
            if taken is not None:
                return taken
        return self._listing(window=window), Covered(), TurnIds(), LATEST

    def _read_in_parts(self, now: float, files: Iterator[RolloutFile]) -> Iterator[RolloutReader]:
        """_first_read, some thousands of files (whole folders) at a time: what is held of
        the listing, and of what the index says of it, stays that small."""
        whole = WholeFileBuffer()  # one for all parts: each part's own would be megabytes more
        crew = parallel.Crew(self.workers)  # the same helpers for all parts, forked early
        try:
            for chunk in whole_folders(files, _FOLD_FILES):
                known = self.index.catalog({os.path.dirname(f.path) for f in chunk}) if self.index else {}
                if known and chunk[0].size is None:  # compared with the index: looked at
                    chunk = [f for f in map(looked_at, chunk) if f is not None]
                yield from self._first_read(now, chunk, known, None, True, whole, crew)
        finally:
            crew.close()

    def _look(self, now: float) -> tuple[list[RolloutFile], dict[str, tuple], set[str]]:
        """The rollout files now (those written within the window), what the index says
        each was when read, and the path of every rollout listed (outside the window too:
        those the index may keep)."""
        self.now = now
        known = self.index.catalog() if self.index is not None else {}
        # With nothing indexed to compare with and no age to filter by, a file's size and
        # time are taken when it is opened: listing thousands of files is five times faster.
        cutoff = self.cutoff(now)
        stat = cutoff is not None or bool(known)
        every = self._listed_before(stat)
        if every is None:
            every = find_rollouts(self.home, None, stat=stat)
        listed = {f.path for f in every}
        if cutoff is not None:  # find_rollouts' own test of the mtime, on the same listing
            self.outside = {f.path: (f.size, f.mtime) for f in every if f.mtime < cutoff}
            every = [f for f in every if f.mtime >= cutoff]
        return every, known, listed

    def _listed_before(self, stat: bool) -> list[RolloutFile] | None:
        """The listing made beforehand (`listing`), if there is one that looked at the
        files when that is needed. A file that changed since is found by the follower
        (grown since the read), a new one by its scan."""
        listing, self.listing = self.listing, None
        if listing is None:
            return None
        if stat and not listing.stat:
            listing.close()
            return None
        return listing.files()

    def _first_read(self, now: float, files: list[RolloutFile], known: dict[str, tuple],
                    progress: Progress | None, skim: bool, whole: WholeFileBuffer | None = None,
                    crew: Crew | None = None, listed: set[str] | None = None) -> Iterator[RolloutReader]:
        """The reader of every file in `files`, as of `now`, in path order.
        What the index holds is taken from it, a folder at a time, and only appended bytes
        are read; other files are read whole (skimmed when quiet for a day), by several
        processes when there are many. The index learns each folder as soon as its last
        file is handed on, and forgets the files that are gone (`listed`: the paths listed
        just now, outside the window too; only what is in neither is looked for)."""
        def job(f: RolloutFile) -> ReadJob:
            return ReadJob(f.path, skim, f.size, now - HOT_SECONDS)

        jobs, grown = [], set()
        for f in files:
            was = known.get(f.path)
            if was is not None and was[2] == f.identity and f.size >= was[0]:
                if f.size != was[0] or f.mtime != was[1]:
                    grown.add(f.path)
            else:
                jobs.append(job(f))
        new = {job.path for job in jobs}
        whole = whole or WholeFileBuffer()
        read = parallel.read_new(jobs, self.workers, whole, crew)
        folders = FolderRows(self.index, [f.path for f in files])
        count = 0
        with _gc_paused(), (self.index.writing() if self.index is not None else nullcontext()):
            for f, folder in zip(files, folders.of):
                changed = True
                if f.path in new:
                    reader = next(read)
                    count += 1
                    if progress is not None:
                        progress(count, len(jobs))
                elif (reader := folders.reader(f.path, folder)) is None:  # its row did not load
                    reader = next(read_jobs([job(f)], whole))
                elif f.path in grown:
                    reader.read_new()
                else:
                    changed = False
                yield reader
                # Grown or only touched (a new mtime, nothing appended): either way the
                # index learns the file as it is now, or every later start would look again.
                folders.done(folder, reader, changed)
            for _ in read:  # none is left: this lets helper processes end and be waited for
                pass
            if self.index is not None:
                found = listed if listed is not None else {f.path for f in files}
                self.index.forget([p for p in known if p not in found and not os.path.exists(p)])

    def refresh_file(self, path: str) -> bool:
        """Read what was appended to one file; True when anything changed."""
        reader = self.readers.get(path)
        if reader is None:
            self.outside.pop(path, None)
            reader = self.readers[path] = RolloutReader(path)
        changed = reader.read_new().changed
        if changed:
            self._cached = None
        return changed

    def refresh(self, paths: Iterable[str], now: float | None = None) -> list[str]:
        """Read the given files (new ones included); -> the paths that changed."""
        if now is not None and now != self.now:
            self.now = now
            self._cached = None  # liveness and the --since window move with the clock
        return [p for p in paths if self.refresh_file(p)]

    def grown_since_read(self) -> list[str]:
        """Files whose size differs from what was read: written to while nobody watched
        (between the first read and the start of following, say)."""
        return [p for p, r in self.readers.items() if (file_size(p) or 0) != r.offset]

    def as_read(self) -> dict[str, tuple[int, float]]:
        """Every file listed at the load, as it was then (size, mtime): those read, and
        those left out of the window. For the follower, to which none of them is new."""
        return {**self.outside, **{p: (r.offset, r.mtime) for p, r in self.readers.items()}}

    @property
    def turns(self) -> list[Turn]:
        """Every turn as of `self.now`, oldest first (recomputed only after a change)."""
        if self._cached is None:
            self._cached = self.turns_at(self.now)
        return self._cached

    def turns_at(self, now: float) -> list[Turn]:
        cutoff = self.cutoff(now)
        readers = self.readers
        turns = fresh(list(chain.from_iterable(readers[p].turns(now) for p in sorted(readers))),
                       TurnIds(limit=sys.maxsize), cutoff)  # the turns are all kept anyway
        turns = self.causes.given(turns)
        # By start; equal starts keep path order, then their order in the file (sorts are
        # stable). With a start for every turn, as good as always, the key is read in C.
        if all(map(_START, turns)):
            turns.sort(key=_START)
        else:
            turns.sort(key=lambda t: t.started_at or t.at)
        return turns

    def health(self) -> list[FileHealth]:
        return [r.health() for _, r in sorted(self.readers.items())]

    def unknown_error_infos(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for reader in self.readers.values():
            if not reader.assembler.unknown_infos:  # as for nearly every file
                continue
            for key, n in reader.assembler.unknown_infos.items():
                counts[key] = counts.get(key, 0) + n
        return counts


@contextmanager
def _gc_paused():
    """A first read makes a great many objects that live as long as the history: collecting
    while they are made only walks them again and again (7 % of a cold 1 GiB read), and so
    would every collection after it. So they are frozen: later collections skip them (those
    that become garbage are still freed when their last reference goes)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


_START = attrgetter("started_at")
_AT = attrgetter("at")


def load_history(
    home: Path,
    since_seconds: float | None,
    now: float,
    use_cache: bool = True,
    progress: Progress | None = None,
    cache_dir: Path | None = None,
    parallel: bool = False,
    fold: StatsFold | None = None,
    crew: Crew | None = None,
    listing: Listing | None = None,
) -> History:
    """`parallel`: read a large history with forked helper processes too. `fold`: take the
    history into these statistics only, keeping none of it (History.fold). `crew`: helpers
    the caller forked earlier (a caller reading in a thread can fork none then), for a
    large first read; the caller closes it. `listing`: the home listed by a process the
    caller forked earlier (parallel.Listing), used by the first read, else ended."""
    workers = default_workers() if parallel else 1
    history = History(home=Path(home), since_seconds=since_seconds,
                      workers=max(workers, crew.workers) if crew is not None else workers, crew=crew,
                      listing=listing)
    if history.home_problem is None:
        if use_cache:
            history.index = open_index(Path(home), cache_dir)
        if fold is not None:
            history.fold(now, fold, progress)
        else:
            history.load(now, progress)
    if history.listing is not None:  # not wanted after all
        history.listing.close()
        history.listing = None
    return history


def open_index(home: Path, cache_dir: Path | None = None) -> IndexCache | None:
    """The index for this home, or None where there can be none (e.g. a cache directory
    inside the Codex home, which codexwatch must never write to)."""
    try:
        return IndexCache(index_path(cache_dir or default_cache_dir(), home), home)
    except (ValueError, OSError):
        return None
