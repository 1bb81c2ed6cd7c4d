"""Where a Codex home keeps its rollouts, and listing them in path order.

Files are found under `sessions/` and `archived_sessions/`; date folders sort by time, so
path order is the order sessions began.
"""

from __future__ import annotations

import os
from operator import itemgetter
from pathlib import Path
from typing import Iterator, NamedTuple

ROLLOUT_DIRS = ("sessions", "archived_sessions")


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


def whole_folders(files: Iterator[RolloutFile], size: int) -> Iterator[list[RolloutFile]]:
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


def looked_at(f: RolloutFile) -> RolloutFile | None:
    """A file listed by name, with its size, mtime and identity (None: gone since)."""
    try:
        st = os.stat(f.path)
    except OSError:
        return None
    return RolloutFile(f.path, st.st_size, st.st_mtime, (st.st_dev, st.st_ino))


def file_size(path: str) -> int | None:
    """A file's size now (None: gone, or not to be looked at)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return None


_FIRST = itemgetter(0)
