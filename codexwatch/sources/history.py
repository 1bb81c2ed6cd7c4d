"""A Codex home's rollouts -> turns: the first full read, then whatever changes.

Files are found under `sessions/` and `archived_sessions/`. Forks and sub-agent files replay
their parent's turns, so turns are keyed on `turn_id` and the first file that has one (the
oldest, as files are read in path order) keeps it.
"""

from __future__ import annotations

import gc
import marshal
import os
import sqlite3
import sys
from collections import Counter
from contextlib import contextmanager, nullcontext
from itertools import chain, compress, islice
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Callable, Iterable, Iterator, NamedTuple

from codexwatch.core.classify import classify
from codexwatch.core.models import FileHealth, Turn
from codexwatch.core.stats import StatsFold
from codexwatch.sources import logdb, parallel
from codexwatch.sources.index import IndexCache, default_cache_dir, index_path
from codexwatch.sources.parallel import Crew
from codexwatch.sources.reader import ReadJob, RolloutReader, WholeFileBuffer, read_jobs
from codexwatch.sources.seen import TurnIds
from codexwatch.sources.spill import SpilledTurns

ROLLOUT_DIRS = ("sessions", "archived_sessions")
# Files written this recently are read line by line (every line checked, unknown line types
# counted: a new Codex format shows up the day it ships); older ones are skimmed.
HOT_SECONDS = 24 * 3600
Progress = Callable[[int, int], None]
PARALLEL_MIN_BYTES = 64 << 20  # below this, starting processes costs more than it saves


def home_problem(home: Path) -> str | None:
    """A sentence for the user when there is nothing to read, else None."""
    if not home.exists():
        return (
            f"No Codex home at {home}. Set CODEX_HOME or pass --codex-home DIR "
            "(or try codexwatch --demo)."
        )
    if not home.is_dir():
        return f"{home} is not a folder; --codex-home must name Codex's home folder."
    if not any((home / d).is_dir() for d in ROLLOUT_DIRS):
        return f"{home} has no sessions/ folder yet: Codex creates it with the first session."
    return None


class RolloutFile(NamedTuple):
    path: str
    size: int | None  # these three are None when the files were listed without looking
    mtime: float | None
    identity: tuple[int, int] | None


def find_rollouts(home: Path, modified_since: float | None = None, stat: bool = True) -> list[RolloutFile]:
    """Every rollout file under the home, oldest path first (date folders sort by time).
    `stat=False`: names only (size, time and identity None), a fifth of the time."""
    return list(iter_rollouts(home, modified_since, stat))


def iter_rollouts(home: Path, modified_since: float | None = None, stat: bool = True) -> Iterator[RolloutFile]:
    """find_rollouts, a folder at a time: in the same order, holding one folder's names."""
    seen_dirs: set[tuple[int, int]] = set()
    for sub in sorted(ROLLOUT_DIRS):
        yield from _walk(str(home / sub), modified_since if stat else None, seen_dirs, stat)


def _walk(folder: str, modified_since: float | None, seen: set, stat: bool) -> Iterator[RolloutFile]:
    try:
        st = os.stat(folder)
        if (st.st_dev, st.st_ino) in seen:
            return  # a symlink loop, or the same folder linked twice
        seen.add((st.st_dev, st.st_ino))
        entries = []
        for entry in os.scandir(folder):
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                continue  # vanished between listing and looking
            # Sorted as whole paths sort: every path below a folder "x" starts "x/".
            entries.append((entry.name + "/" if is_dir else entry.name, is_dir, entry))
    except OSError:
        return
    entries.sort(key=_FIRST)
    for _, is_dir, entry in entries:
        try:
            if is_dir:
                yield from _walk(entry.path, modified_since, seen, stat)
            elif entry.name.endswith(".jsonl") and entry.is_file():
                if not stat:
                    yield RolloutFile(entry.path, None, None, None)
                    continue
                st = entry.stat()
                if modified_since is None or st.st_mtime >= modified_since:
                    yield RolloutFile(entry.path, st.st_size, st.st_mtime, (st.st_dev, st.st_ino))
        except OSError:
            continue  # vanished between listing and looking


@dataclass
class History:
    home: Path
    since_seconds: float | None = None
    now: float = 0.0  # the clock reading of the last load or refresh
    readers: dict[str, RolloutReader] = field(default_factory=dict)
    _cached: list[Turn] | None = None
    _log_causes: dict[str, str] = field(default_factory=dict)
    _log_checked: set[str] = field(default_factory=set)
    index: IndexCache | None = None

    @property
    def home_problem(self) -> str | None:
        return home_problem(self.home)

    def cutoff(self, now: float) -> float | None:
        return None if self.since_seconds is None else now - self.since_seconds

    def load(self, now: float, progress: Progress | None = None, skim: bool = True,
             workers: int | None = None) -> None:
        """The first full read: every file's reader, kept to follow the files from here."""
        files, known = self._look(now)
        for reader in self._first_read(now, files, known, progress, skim, workers):
            self.readers[reader.path] = reader
        self._cached = None

    def fold(self, now: float, into: StatsFold, progress: Progress | None = None,
             workers: int | None = None) -> None:
        """The first full read, into statistics only: each file's turns are folded in and
        its reader let go, so memory follows what the statistics keep (failed turns, times
        of the others), not the bytes read nor the number of files (for `stats`).

        The index also keeps the fold as it stood after the longest run of files, from the
        oldest, whose turns are fixed (as good as all but today's) and all within the
        window (a window that leaves nothing out folds what `all` does): the next time, at
        a later time, those files are found as they were, the fold is taken up from there,
        for `all` or any window that reaches back past the oldest of them."""
        cutoff = self.cutoff(now)
        keeps = self.index is not None
        stored = self._stored(cutoff) if keeps else None
        self.now = now
        into.causes_wanted = logdb.present(self.home)
        window = _Window(cutoff)
        files, covered, seen, oldest = self._start_fold(now, into, stored, window)
        start, ended, blob = len(covered), False, None
        total = sum(1 for _ in self._listing(window=_Window(cutoff))) if progress is not None else 0
        part: list[Turn] = []
        for done, reader in enumerate(self._read_in_parts(now, files, workers), start + 1):
            turns = reader.turns(now)
            if keeps and not ended:
                first = min(map(_AT, turns), default=reader.mtime)
                if reader.fixed(now) and window.whole_before(reader.path) and window.holds(first):
                    covered.add(reader.path, reader.offset, reader.mtime, reader.identity)
                    oldest = min(oldest, first, reader.mtime)
                else:  # the run of files whose turns are fixed ends here
                    ended = True
                    into.add(_fresh(part, seen, cutoff))
                    part = []
                    blob = (_snapshot(into, seen, covered, now, self.index, oldest)
                            if len(covered) != start else None)
            part += turns
            into.add_health(reader.health())
            if reader.assembler.unknown_infos:
                into.add_unknown_infos(reader.assembler.unknown_infos)
            if len(part) >= _FOLD_TURNS:
                into.add(_fresh(part, seen, cutoff))
                part = []
            if progress is not None:
                progress(done, max(total, done))
        into.add(_fresh(part, seen, cutoff))
        if keeps and not ended and len(covered) != start:
            blob = _snapshot(into, seen, covered, now, self.index, oldest)
        seen.close()
        if blob is not None:
            _save_snapshot(self.index, blob)
        # Causes from Codex's log, looked up once for all, given as the failures are read.
        self._look_up_causes(into.unrecorded_sessions())
        if self._log_causes:
            into.amend_failures(self._give_cause)

    def _stored(self, cutoff: float | None) -> dict | None:
        """The stored fold, if it can serve this window: `all`, or one that reaches back
        past the oldest file and turn it covers (asked first: a small row)."""
        if cutoff is not None:
            oldest = self.index.snapshot("oldest")
            if not isinstance(oldest, float) or cutoff > oldest:
                return None
        return self.index.snapshot("stats")

    def _listing(self, stat: bool = False, window: "_Window | None" = None) -> Iterator[RolloutFile]:
        """The files a fold reads, in path order, found as they are read: with a window,
        looked at to leave out those not written within it (`window` notes the first left
        out); else by name only."""
        cutoff = self.cutoff(self.now)
        if cutoff is None:
            return iter_rollouts(self.home, None, stat=stat)
        return (window or _Window(cutoff)).within(iter_rollouts(self.home, None, stat=True))

    def _start_fold(self, now: float, into: StatsFold, stored: dict | None, window: "_Window") -> tuple:
        """Where a fold starts: -> (the files from there on, the files `into` already
        covers, the turn ids seen, the oldest time among those files and their turns). A
        stored fold that still holds is taken up into `into`."""
        if stored is not None:
            files = self._listing(stat=True, window=window)
            taken = _stored_fold(into, stored, files, now, self.index)
            if taken is not None:
                return taken
        return self._listing(window=window), _Covered(), TurnIds(), _LATEST

    def _read_in_parts(self, now: float, files: Iterator[RolloutFile],
                       workers: int | None) -> Iterator[RolloutReader]:
        """_first_read, some thousands of files (whole folders) at a time: what is held of
        the listing, and of what the index says of it, stays that small."""
        whole = WholeFileBuffer()  # one for all parts: each part's own would be megabytes more
        crew = parallel.Crew(_workers(workers))  # the same helpers for all parts, forked early
        try:
            for chunk in _whole_folders(files, _FOLD_FILES):
                known = self.index.catalog({os.path.dirname(f.path) for f in chunk}) if self.index else {}
                if known and chunk[0].size is None:  # compared with the index: looked at
                    chunk = [f for f in map(_looked_at, chunk) if f is not None]
                yield from self._first_read(now, chunk, known, None, True, workers, whole, crew)
        finally:
            crew.close()

    def _look(self, now: float) -> tuple[list[RolloutFile], dict[str, tuple]]:
        """The rollout files now, and what the index says each was when read."""
        self.now = now
        known = self.index.catalog() if self.index is not None else {}
        # With nothing indexed to compare with and no age to filter by, a file's size and
        # time are taken when it is opened: listing thousands of files is five times faster.
        cutoff = self.cutoff(now)
        return find_rollouts(self.home, cutoff, stat=cutoff is not None or bool(known)), known

    def _first_read(self, now: float, files: list[RolloutFile], known: dict[str, tuple],
                    progress: Progress | None, skim: bool, workers: int | None,
                    whole: WholeFileBuffer | None = None, crew: Crew | None = None) -> Iterator[RolloutReader]:
        """The reader of every file in `files`, as of `now`, in path order.
        What the index holds is taken from it, a folder at a time, and only appended bytes
        are read; other files are read whole (skimmed when quiet for a day), by several
        processes when there are many. The index learns each folder as soon as its last
        file is handed on."""
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
        fresh = self._read_new_files(jobs, workers, whole, crew)
        folders = _Folders(self.index, files)
        read = 0
        with _gc_paused(), (self.index.writing() if self.index is not None else nullcontext()):
            for f, folder in zip(files, folders.of):
                changed = True
                if f.path in new:
                    reader = next(fresh)
                    read += 1
                    if progress is not None:
                        progress(read, len(jobs))
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
            for _ in fresh:  # none is left: this lets helper processes end and be waited for
                pass
            if self.index is not None:
                found = {f.path for f in files}
                self.index.forget([p for p in known if p not in found and not os.path.exists(p)])

    def _read_new_files(self, jobs: list[ReadJob], workers: int | None, whole: WholeFileBuffer,
                        crew: Crew | None) -> Iterator[RolloutReader]:
        """`crew`: the helpers to read with, if they pay (else helpers just for these)."""
        workers = _workers(workers)
        if workers > 1 and sum(job.weight for job in jobs) >= PARALLEL_MIN_BYTES:
            if crew is not None:
                return crew.read_in_order(jobs, whole)
            return parallel.read_in_order(jobs, workers, whole)
        return read_jobs(jobs, whole)

    def refresh_file(self, path: str) -> bool:
        """Read what was appended to one file; True when anything changed."""
        reader = self.readers.get(path)
        if reader is None:
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
        return [p for p, r in self.readers.items() if _size(p) != r.offset]

    def discover(self, now: float) -> list[str]:
        """Files that appeared since the last look."""
        return [f.path for f in find_rollouts(self.home, self.cutoff(now)) if f.path not in self.readers]

    @property
    def turns(self) -> list[Turn]:
        """Every turn as of `self.now`, oldest first (recomputed only after a change)."""
        if self._cached is None:
            self._cached = self.turns_at(self.now)
        return self._cached

    def turns_at(self, now: float) -> list[Turn]:
        cutoff = self.cutoff(now)
        readers = self.readers
        turns = _fresh(list(chain.from_iterable(readers[p].turns(now) for p in sorted(readers))),
                       TurnIds(limit=sys.maxsize), cutoff)  # the turns are all kept anyway
        self._add_log_causes(turns)
        # By start; equal starts keep path order, then their order in the file (sorts are
        # stable). With a start for every turn, as good as always, the key is read in C.
        if all(map(_START, turns)):
            turns.sort(key=_START)
        else:
            turns.sort(key=lambda t: t.started_at or t.at)
        return turns

    def _add_log_causes(self, turns: list[Turn]) -> None:
        self._look_up_causes({t.session_id for t in turns if t.error_class == "unrecorded"})
        if self._log_causes:
            for turn in turns:
                self._give_cause(turn)

    def _look_up_causes(self, sessions: set[str]) -> None:
        """What Codex's log says of these sessions' failed turns, asked once a session."""
        new = sessions - self._log_checked
        if new:
            self._log_causes.update(logdb.turn_errors(self.home, new))
            self._log_checked |= new

    def _give_cause(self, turn: Turn) -> None:
        """An unrecorded failure's cause from Codex's log, if it has one for the turn."""
        message = self._log_causes.get(turn.turn_id)
        if turn.error_class == "unrecorded" and message:
            turn.message = message
            turn.error_class, turn.http_status, _ = classify(None, message)

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


class _Folders:
    """The index's rows, a folder at a time: a row is taken when its folder's first file is
    wanted, and let go (with the folder's changed files saved) once its last one is done."""

    def __init__(self, index: IndexCache | None, files: list[RolloutFile]) -> None:
        self.index = index
        names: dict[str, str] = {}  # one string per folder, not one per file
        self.of = [names.setdefault(d, d) for d in map(os.path.dirname, [f.path for f in files])]
        self.left = Counter(self.of)
        self.states: dict[str, dict] = {}
        self.changed: dict[str, list[RolloutReader]] = {}

    def reader(self, path: str, folder: str) -> RolloutReader | None:
        """The reader the index holds for `path`, None if its row did not load."""
        if self.index is None:
            return None
        if folder not in self.states:
            self.states[folder] = self.index.folder(folder)
        state = self.states[folder].pop(path, None)
        try:
            return RolloutReader.from_state(state) if state is not None else None
        except Exception:  # noqa: BLE001 - a bad state only costs a re-read of its file
            self.index.problem = "some index rows did not load; those files were read again"
            return None

    def done(self, folder: str, reader: RolloutReader, changed: bool) -> None:
        if changed and self.index is not None:
            self.changed.setdefault(folder, []).append(reader)
        self.left[folder] -= 1
        if not self.left[folder]:
            self.states.pop(folder, None)
            if folder in self.changed:
                self.index.save(self.changed.pop(folder))


_FOLD_TURNS = 4096  # turns folded at a time: fewer, larger parts cost less
_LATEST = float("inf")


class _Window:
    """A fold's window (`cutoff`: None for all) over the files listed in path order, and
    the first file it left out: a fold that left nothing out up to a file, nor any turn,
    is what `all` folds up to there."""

    def __init__(self, cutoff: float | None) -> None:
        self.cutoff = cutoff
        self.first_out: str | None = None

    def within(self, files: Iterator[RolloutFile]) -> Iterator[RolloutFile]:
        cutoff = self.cutoff
        for f in files:
            if f.mtime >= cutoff:
                yield f
            elif self.first_out is None:
                self.first_out = f.path

    def whole_before(self, path: str) -> bool:
        """No file before `path` was left out (files are listed ahead of their reading)."""
        return self.first_out is None or self.first_out > path

    def holds(self, at: float) -> bool:
        return self.cutoff is None or at >= self.cutoff


def _snapshot(fold: StatsFold, seen: TurnIds, covered: "_Covered", now: float,
              index: IndexCache, oldest: float) -> tuple[dict[str, bytes], dict[str, Path]] | None:
    """The fold as it stands, the files it covers and the turn ids seen so far, stored at
    once (the fold goes on changing) -> (the parts for the index, the files written beside
    it, under their new names). The ids are a part of their own, only needed when there are
    files beyond those covered; `made` ties the parts together.

    What went to disk (the finished turns, the ids) is copied to files beside the index, a
    page at a time: stored in the index, it would come back into memory whole. None when
    they cannot be written."""
    made = (now, len(covered))
    written: dict[str, Path] = {}
    ids: dict = {"made": made}
    try:
        if fold.spilled is not None:
            written["turns"] = _new(_spilled_path(index, "turns"))
            fold.spilled.save_copy(written["turns"], made)
        if seen.db is not None:
            written["ids"] = _new(_spilled_path(index, "ids"))
            seen.save_copy(written["ids"], made)
            ids["spilled"] = len(seen)
        else:
            ids["ids"] = list(seen)
    except (OSError, sqlite3.Error):  # a full or unwritable cache: no fold stored, no harm
        for path in written.values():
            path.unlink(missing_ok=True)
        return None
    return {
        "stats": marshal.dumps({"fold": fold.export_state(), "made": made, "files": covered.key(),
                                "oldest": float(oldest)}),
        "seen": marshal.dumps(ids),
        "oldest": marshal.dumps(float(oldest)),
    }, written


def _save_snapshot(index: IndexCache, snapshot: tuple[dict[str, bytes], dict[str, Path]]) -> None:
    parts, written = snapshot
    try:
        for what in ("turns", "ids"):  # this fold's files in place; an older fold's gone
            if what in written:
                os.replace(written[what], _spilled_path(index, what))
            else:
                _spilled_path(index, what).unlink(missing_ok=True)
    except OSError:
        return  # without its files the stored fold could not be taken up: none is stored
    index.save_snapshot(parts)


def _spilled_path(index: IndexCache, what: str) -> Path:
    return Path(f"{index.path}.fold-{what}")


def _new(path: Path) -> Path:
    """Where a file is written before it replaces `path` (this process's own name)."""
    return Path(f"{path}.{os.getpid()}.new")


class _Covered:
    """The files a fold covers, with the size, mtime and identity each had: counted, and
    taken into a digest, to compare and store (holding them would cost some 200 bytes a
    file)."""

    def __init__(self) -> None:
        self.count = 0
        self.digest = None  # made with the first file: a start's 3 ms (hashlib) otherwise

    def add(self, path: str, size: int, mtime: float, identity: tuple[int, int] | None) -> None:
        if self.digest is None:
            import hashlib

            self.digest = hashlib.blake2b(digest_size=20)
        self.count += 1
        dev, ino = identity or (-1, -1)
        self.digest.update(b"%s\0%d\0%r\0%d\0%d\n" % (
            path.encode("utf-8", "surrogateescape"), size, mtime, dev, ino))

    def __len__(self) -> int:
        return self.count

    def key(self) -> tuple:
        return self.count, self.digest.digest() if self.digest is not None else b""


def _stored_fold(fold: StatsFold, stored: dict, files: Iterator[RolloutFile], now: float,
                 index: IndexCache) -> tuple[Iterator[RolloutFile], "_Covered", TurnIds, float] | None:
    """Take a stored fold up in `fold` (a new one) if the files it covers are the first
    of `files`, unchanged, and it was made no later than `now` (a file idle then is idle
    now) -> (the files after those, those, the turn ids seen, the oldest time among
    them), else None."""
    try:
        made, count = stored["made"], stored["made"][1]
        oldest = stored["oldest"]
        if not made[0] <= now:
            return None
        covered = _Covered()
        for f in islice(files, count):
            covered.add(f.path, f.size, f.mtime, f.identity)
        if covered.key() != tuple(stored["files"]):
            return None
        seen = TurnIds()
        following = next(files, None)
        if following is not None:  # files to come, whose turns may repeat those seen
            ids = index.snapshot("seen")
            if ids["made"] != made:
                return None
            if "spilled" in ids:
                seen = TurnIds.from_copy(_spilled_path(index, "ids"), made, ids["spilled"])
            else:
                seen.add_all(ids["ids"])
        fold.restore(stored["fold"], lambda successes: SpilledTurns.from_copy(
            _spilled_path(index, "turns"), made, successes))
        return chain([following] if following is not None else [], files), covered, seen, oldest
    except Exception:  # noqa: BLE001 - a bad snapshot: the files are read
        return None


_FOLD_FILES = 8192  # files a fold lists and reads at a time (whole folders)


def _whole_folders(files: Iterator[RolloutFile], size: int) -> Iterator[list[RolloutFile]]:
    """`files` in lists of at least `size` (but the last), each ending where the folder
    changes: the index keeps a folder's files in one row, saved once its last file in the
    list is read. (Only an odd layout, with files beside subfolders, has a folder's files
    apart in path order; its row is then saved in parts.)"""
    chunk: list[RolloutFile] = []
    for f in files:
        if len(chunk) >= size and os.path.dirname(f.path) != os.path.dirname(chunk[-1].path):
            yield chunk
            chunk = []
        chunk.append(f)
    if chunk:
        yield chunk


def _looked_at(f: RolloutFile) -> RolloutFile | None:
    """A file listed by name, with its size, mtime and identity (None: gone since)."""
    try:
        st = os.stat(f.path)
    except OSError:
        return None
    return RolloutFile(f.path, st.st_size, st.st_mtime, (st.st_dev, st.st_ino))


def _fresh(turns: list[Turn], seen: TurnIds, cutoff: float | None) -> list[Turn]:
    """The turns not `seen` before, within the window. Forks and sub-agent files replay
    their parent's turns: the first file (in path order) to have a turn id keeps it."""
    keep = seen.new(list(map(_TURN_ID, turns)))
    if keep is not None:
        turns = list(compress(turns, keep))
    if cutoff is not None:
        turns = [t for t in turns if t.at >= cutoff or t.live]
    return turns


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
_FIRST = itemgetter(0)
_TURN_ID = attrgetter("turn_id")


def _workers(asked: int | None) -> int:
    return asked if asked is not None else min(2, os.cpu_count() or 1)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def load_history(
    home: Path,
    since_seconds: float | None,
    now: float,
    use_cache: bool = True,
    progress: Progress | None = None,
    cache_dir: Path | None = None,
    parallel: bool = False,
    fold: StatsFold | None = None,
) -> History:
    """`parallel`: read a large history with forked helper processes too. `fold`: take the
    history into these statistics only, keeping none of it (History.fold)."""
    history = History(home=Path(home), since_seconds=since_seconds)
    if history.home_problem is None:
        if use_cache:
            history.index = open_index(Path(home), cache_dir)
        workers = None if parallel else 1
        if fold is not None:
            history.fold(now, fold, progress, workers)
        else:
            history.load(now, progress, workers=workers)
    return history


def open_index(home: Path, cache_dir: Path | None = None) -> IndexCache | None:
    """The index for this home, or None where there can be none (e.g. a cache directory
    inside the Codex home, which codexwatch must never write to)."""
    try:
        return IndexCache(index_path(cache_dir or default_cache_dir(), home), home)
    except (ValueError, OSError):
        return None
