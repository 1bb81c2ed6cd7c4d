"""The index cache: a warm start reads only what changed; a bad index is rebuilt."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from codexwatch.sources.history import load_history
from codexwatch.sources.index import IndexCache, index_path
from tests.conftest import REAL_CLI

NOW = time.time()


def fingerprint(history):
    return [(t.turn_id, t.outcome, t.error_class, t.shape, t.model, t.tokens) for t in history.turns]


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "codex"
    shutil.copytree(REAL_CLI / "tui-0.171.0" / "sessions", home / "sessions")
    shutil.copytree(REAL_CLI / "exec-0.171.0" / "sessions", home / "sessions", dirs_exist_ok=True)
    return home


def test_warm_start_gives_the_same_turns_without_reading_files(home, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cold = load_history(home, None, NOW, cache_dir=cache)
    reads = []
    from codexwatch.sources import reader

    original = reader.RolloutReader._read_fd
    monkeypatch.setattr(reader.RolloutReader, "_read_fd",
                        lambda self, *a: reads.append(self.path) or original(self, *a))
    warm = load_history(home, None, NOW, cache_dir=cache)
    assert fingerprint(warm) == fingerprint(cold) and len(warm.turns) == 13
    assert reads == []  # nothing changed, so nothing was opened


def test_appended_lines_are_read_on_the_next_start(home, tmp_path):
    cache = tmp_path / "cache"
    session = next((home / "sessions").rglob("rollout-2026-11-29T08-42-06-*.jsonl"))
    lines = session.read_bytes().splitlines(keepends=True)
    session.write_bytes(b"".join(lines[:-1]))  # the last turn's end is not written yet
    first = load_history(home, None, NOW, cache_dir=cache)
    assert [t.outcome for t in first.turns if t.file == str(session)][-1] == "incomplete"
    with open(session, "ab") as out:
        out.write(lines[-1])
    second = load_history(home, None, NOW, cache_dir=cache)
    assert [t.outcome for t in second.turns if t.file == str(session)][-1] == "ok"


def test_replaced_file_is_read_again(home, tmp_path):
    cache = tmp_path / "cache"
    load_history(home, None, NOW, cache_dir=cache)
    target = next((home / "sessions").rglob("rollout-2026-11-29T08-42-06-*.jsonl"))
    donor = next((REAL_CLI / "exec-0.120.0").rglob("rollout-*-bb05-*.jsonl"))
    shutil.copy(donor, target.with_suffix(".new"))
    target.with_suffix(".new").replace(target)  # same path, another file
    again = load_history(home, None, NOW, cache_dir=cache)
    mine = [t for t in again.turns if t.file == str(target)]
    assert [(t.outcome, t.error_class) for t in mine] == [("failed", "unrecorded")]


def test_corrupt_index_is_rebuilt_not_trusted(home, tmp_path):
    cache = tmp_path / "cache"
    cold = load_history(home, None, NOW, cache_dir=cache)
    path = index_path(cache, home)
    path.write_bytes(b"this is not a database" * 100)
    again = load_history(home, None, NOW, cache_dir=cache)
    assert fingerprint(again) == fingerprint(cold)
    assert "rebuilt" in (again.index.problem or "")


def test_bad_rows_and_old_versions_are_not_trusted(home, tmp_path):
    cache = tmp_path / "cache"
    cold = load_history(home, None, NOW, cache_dir=cache)
    conn = sqlite3.connect(index_path(cache, home))
    conn.execute("UPDATE packs SET states = x'00ff'")
    conn.commit()
    assert fingerprint(load_history(home, None, NOW, cache_dir=cache)) == fingerprint(cold)
    conn.execute("UPDATE meta SET value = 'an older engine' WHERE key = 'engine'")
    conn.commit()
    conn.close()
    again = load_history(home, None, NOW, cache_dir=cache)
    assert fingerprint(again) == fingerprint(cold)
    assert "another version" in again.index.problem


def test_index_never_lives_in_the_codex_home(home):
    with pytest.raises(ValueError):
        IndexCache(home / "cache" / "index.sqlite", home)
    history = load_history(home, None, NOW, cache_dir=home / "cache")
    assert history.index is None and not (home / "cache").exists()
    assert len(history.turns) == 13


def test_no_cache_writes_nothing(home, tmp_path):
    load_history(home, None, NOW, use_cache=False, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("xdg", [None, "", "/somewhere/cache"])
def test_default_cache_dir_is_what_platformdirs_says(monkeypatch, xdg):
    import platformdirs

    from codexwatch.sources.index import default_cache_dir

    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert default_cache_dir() == Path(platformdirs.user_cache_dir("codexwatch", appauthor=False))


def _recent_and_old_folders(tmp_path):
    """A Codex home with a recent date folder and one 40 days old; and a cache folder."""
    home, cache = tmp_path / "codex", tmp_path / "cache"
    recent, old = home / "sessions" / "2026" / "11" / "29", home / "sessions" / "2026" / "10" / "20"
    shutil.copytree(REAL_CLI / "tui-0.171.0" / "sessions" / "2026" / "11" / "29", recent)
    shutil.copytree(REAL_CLI / "exec-0.120.0" / "sessions" / "2026" / "11" / "29", old)
    for path in old.iterdir():
        os.utime(path, (NOW - 40 * 86400, NOW - 40 * 86400))
    return home, cache, recent, old


def test_a_windowed_start_keeps_the_other_folders_and_forgets_vanished_files(tmp_path, monkeypatch):
    # The index holds a row per date folder. A 7-day start sees only the recent folder; it
    # must rewrite that row alone and leave the old folder's files for the next full start.
    home, cache, recent, old = _recent_and_old_folders(tmp_path)
    session = next(recent.glob("rollout-*.jsonl"))
    lines = session.read_bytes().splitlines(keepends=True)
    session.write_bytes(b"".join(lines[:-1]))  # its last turn has not ended yet
    everything = load_history(home, None, NOW, cache_dir=cache)
    assert {t.file for t in everything.turns} >= {str(p) for p in old.iterdir()}

    with open(session, "ab") as out:
        out.write(lines[-1])
    resumed, *others = sorted(old.iterdir())  # an old session resumed today: in the window
    os.utime(resumed, (NOW - 60, NOW - 60))
    week = load_history(home, 7 * 86400, NOW, cache_dir=cache)
    assert {t.file for t in week.turns if t.file.startswith(str(old))} == {str(resumed)}

    reads = []
    from codexwatch.sources import reader

    original = reader.RolloutReader._read_fd
    monkeypatch.setattr(reader.RolloutReader, "_read_fd",
                        lambda self, *a: reads.append(self.path) or original(self, *a))
    again = load_history(home, None, NOW, cache_dir=cache)
    # The 7-day start rewrote both folders' rows with the files it saw, keeping the others.
    assert reads == [] and others
    assert [t.outcome for t in again.turns if t.file == str(session)][-1] == "ok"
    assert fingerprint(again) == fingerprint(load_history(home, None, NOW, use_cache=False))

    gone = others[0]
    gone.unlink()
    after = load_history(home, None, NOW, cache_dir=cache)
    assert str(gone) not in after.index.catalog() and not any(t.file == str(gone) for t in after.turns)


def test_an_index_says_when_it_holds_nothing(home, tmp_path):
    from codexwatch.sources.history import open_index

    index = open_index(home, tmp_path / "cache")
    assert not index.catalog()
    load_history(home, None, NOW, cache_dir=tmp_path / "cache")
    assert open_index(home, tmp_path / "cache").catalog()


# -- statistics taken up from the index (History.fold's snapshot) ---------------------------

def _add_fork(home):
    """A later file replaying every turn of the oldest one, as a fork does."""
    parent = sorted((home / "sessions").rglob("rollout-*.jsonl"))[0]
    fork = home / "sessions" / "2099" / "01" / "01" / "rollout-2099-01-01T00-00-00-fork.jsonl"
    fork.parent.mkdir(parents=True)
    shutil.copy(parent, fork)


def _stats(home, cache, now=NOW, since=None, **kw):
    from codexwatch.core.stats import StatsFold

    fold = StatsFold(now)
    load_history(home, since, now, cache_dir=cache, fold=fold, **kw)
    return fold.result()


def _opened(monkeypatch) -> list:
    """What a start opens from now on: files, and folders' readers in the index."""
    from codexwatch.sources import reader

    opened: list = []
    monkeypatch.setattr(IndexCache, "folder", lambda self, folder: opened.append(folder) or {})
    monkeypatch.setattr(reader.RolloutReader, "_read_fd", lambda self, *a: opened.append(self.path))
    return opened


DECADE = 3650 * 86400.0


def test_a_window_that_leaves_nothing_out_takes_the_stored_statistics_up(home, tmp_path, monkeypatch):
    """Any window reaching back past every file and turn folds what `all` does: a stored
    fold serves it, whichever of the two stored it."""
    fresh = _stats(home, tmp_path / "unused", use_cache=False)
    assert _stats(home, tmp_path / "unused", since=DECADE, use_cache=False) == fresh
    later = _stats(home, tmp_path / "unused", since=DECADE / 2, now=NOW + 60, use_cache=False)
    for first in (None, DECADE):
        cache = tmp_path / f"cache-{first}"
        assert _stats(home, cache, since=first) == fresh  # read, and the fold stored
        with monkeypatch.context() as patch:
            opened = _opened(patch)
            assert _stats(home, cache, since=DECADE) == fresh
            assert _stats(home, cache, since=DECADE / 2, now=NOW + 60) == later
            assert _stats(home, cache) == fresh
            assert opened == []


def test_a_window_that_leaves_turns_out_is_read_not_taken_up(home, tmp_path, monkeypatch):
    # The recordings' turns are days older than their files (written now): a window of an
    # hour holds the files but not their turns.
    for path in home.rglob("*.jsonl"):
        os.utime(path, (NOW, NOW))
    cache = tmp_path / "cache"
    _stats(home, cache)
    hour = _stats(home, cache, since=3600.0)
    assert hour == _stats(home, tmp_path / "unused", since=3600.0, use_cache=False)
    assert hour["turns"] == 0 and _stats(home, cache)["turns"] == 13
    with monkeypatch.context() as patch:
        opened = _opened(patch)
        _stats(home, cache, since=3600.0)
        assert opened  # the folders' readers, at least


def test_stats_taken_up_from_the_index_equal_stats_read_afresh(home, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    fresh = _stats(home, cache, use_cache=False)
    assert _stats(home, cache) == fresh  # read, and the fold stored
    from codexwatch.sources import reader

    opened = []
    monkeypatch.setattr(IndexCache, "folder", lambda self, folder: opened.append(folder) or {})
    monkeypatch.setattr(reader.RolloutReader, "_read_fd", lambda self, *a: opened.append(self.path))
    assert _stats(home, cache) == fresh
    assert opened == []  # neither a file nor a folder's readers were needed


def test_statistics_on_disk_are_stored_beside_the_index_and_taken_up(home, tmp_path, monkeypatch):
    from codexwatch.core import stats
    from codexwatch.core.stats import StatsFold
    from codexwatch.sources import reader, seen
    from codexwatch.sources.spill import to_disk

    monkeypatch.setattr(stats, "SPILL_BYTES", 0)  # the finished turns on disk at once
    monkeypatch.setattr(seen, "SPILL_IDS", 2)  # and the turn ids
    cache = tmp_path / "cache"
    fresh = _stats(home, cache, use_cache=False)

    def folded(now=NOW):
        fold = StatsFold(now, spill=to_disk)
        load_history(home, None, now, cache_dir=cache, fold=fold)
        assert fold.on_disk
        return fold.result()

    assert folded() == fresh  # read, and stored: the turns and ids copied beside the index
    path = index_path(cache, home)
    assert {p.name for p in cache.iterdir()} >= {path.name + ".fold-turns", path.name + ".fold-ids"}
    opened = []
    read_fd = reader.RolloutReader._read_fd
    with monkeypatch.context() as patch:
        patch.setattr(IndexCache, "folder", lambda self, folder: opened.append(folder) or {})
        patch.setattr(reader.RolloutReader, "_read_fd", lambda self, *a: opened.append(self.path))
        assert folded() == fresh
    assert opened == []  # taken up whole, from the copies
    assert reader.RolloutReader._read_fd is read_fd
    # A fork after them replays stored turns: the stored ids count them once.
    _add_fork(home)
    assert folded() == _stats(home, cache, use_cache=False)
    # Copies that do not match what the index holds are not trusted.
    (cache / (path.name + ".fold-turns")).write_bytes(b"not a database")
    assert folded(NOW + 60) == _stats(home, cache, now=NOW + 60, use_cache=False)


def test_files_counted_past_stored_statistics_end_at_the_number_of_files(home, tmp_path):
    cache = tmp_path / "cache"
    _stats(home, cache)
    _add_fork(home)
    counted = []
    _stats(home, cache, progress=lambda done, total: counted.append((done, total)))
    files = len(list((home / "sessions").rglob("rollout-*.jsonl")))
    assert counted == [(files, files)]  # only the new file read; the line can end


def test_a_changed_old_file_means_the_stored_statistics_are_not_used(home, tmp_path):
    cache = tmp_path / "cache"
    _stats(home, cache)
    oldest = sorted((home / "sessions").rglob("rollout-*.jsonl"))[0]
    with open(oldest, "ab") as out:
        out.write(b"not json at all\n")
    again = _stats(home, cache)
    assert again == _stats(home, cache, use_cache=False)
    assert again["parser"]["malformed"] == 1


def test_stored_statistics_answer_for_no_turn_that_can_still_change(home, tmp_path):
    # A turn without its end: over (incomplete) 20 minutes after its last line, still
    # running 5 minutes after. Stored at the later time, the fold must not answer for the
    # earlier one.
    session = next((home / "sessions").rglob("rollout-2026-11-29T08-42-06-*.jsonl"))
    lines = session.read_bytes().splitlines(keepends=True)
    session.write_bytes(b"".join(lines[:-1]))
    from codexwatch.sources.reader import RolloutReader

    probe = RolloutReader(str(session))
    probe.read_new()
    last = probe.assembler.last_ts
    cache = tmp_path / "cache"
    later = _stats(home, cache, now=last + 20 * 60)
    assert later == _stats(home, cache, now=last + 20 * 60, use_cache=False)
    earlier = _stats(home, cache, now=last + 5 * 60)
    assert earlier == _stats(home, cache, now=last + 5 * 60, use_cache=False)
    assert earlier["sessions_running"] and not later["sessions_running"]
    # Stored while the turn still ran, the fold must not cover its file: later, it is over.
    other = tmp_path / "other-cache"
    assert _stats(home, other, now=last + 5 * 60) == earlier
    assert _stats(home, other, now=last + 20 * 60) == later


def test_stored_statistics_that_do_not_load_are_not_trusted(home, tmp_path):
    cache = tmp_path / "cache"
    fresh = _stats(home, cache)
    conn = sqlite3.connect(index_path(cache, home))
    conn.execute("UPDATE snapshot SET blob = x'00ff'")
    conn.commit()
    conn.close()
    assert _stats(home, cache) == fresh


def test_a_fork_after_the_stored_statistics_counts_no_turn_twice(home, tmp_path):
    cache = tmp_path / "cache"
    before = _stats(home, cache)
    _add_fork(home)  # replays every turn of its parent, which the stored fold holds
    after = _stats(home, cache)
    assert after == _stats(home, cache, use_cache=False)
    assert after["turns"] == before["turns"]


def test_the_catalogue_says_what_each_file_was_and_can_be_asked_by_folder(home, tmp_path):
    from codexwatch.sources.history import open_index

    load_history(home, None, NOW, cache_dir=tmp_path / "cache")
    index = open_index(home, tmp_path / "cache")
    everything = index.catalog()
    files = sorted((home / "sessions").rglob("rollout-*.jsonl"))
    assert set(everything) == {str(f) for f in files}
    first = files[0]
    st = first.stat()
    assert everything[str(first)] == (st.st_size, st.st_mtime, (st.st_dev, st.st_ino))
    assert set(index.catalog({str(first.parent)})) == {str(f) for f in files if f.parent == first.parent}


@pytest.mark.parametrize("fold", [False, True], ids=["load", "stats"])
def test_an_index_another_process_holds_locked_is_left_alone_not_rebuilt(home, tmp_path, monkeypatch, fold):
    from codexwatch.core.stats import StatsFold
    from codexwatch.sources import index as index_module

    cache = tmp_path / "cache"
    load_history(home, None, NOW, cache_dir=cache)  # an index to keep
    path = index_path(cache, home)
    before = path.read_bytes()
    monkeypatch.setattr(index_module, "BUSY_WAIT_S", 0.05)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a process in the middle of writing it
    try:
        stats = StatsFold(NOW) if fold else None
        history = load_history(home, None, NOW, cache_dir=cache, fold=stats)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "busy" in history.index.problem
    assert path.read_bytes() == before  # neither rebuilt nor written
    if fold:
        assert stats.result() == _stats(home, cache, use_cache=False)
    else:
        assert fingerprint(history) == fingerprint(load_history(home, None, NOW, use_cache=False))


def test_a_windowed_start_looks_only_for_indexed_files_it_did_not_list(tmp_path, monkeypatch):
    # The files outside the window were listed (and stat-ed) to be left out: the index keeps
    # them without asking whether they exist; only a file gone from the listing is looked
    # for, and forgotten.
    home, cache, recent, old = _recent_and_old_folders(tmp_path)
    load_history(home, None, NOW, cache_dir=cache)
    gone, *kept = sorted(old.iterdir())
    assert kept
    gone.unlink()
    looked = []
    original = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda p: looked.append(str(p)) or original(p))
    week = load_history(home, 7 * 86400, NOW, cache_dir=cache)
    monkeypatch.undo()
    assert str(gone) in looked and not any(str(p) in looked for p in kept)
    catalog = week.index.catalog()
    assert str(gone) not in catalog and all(str(p) in catalog for p in kept)
    assert not any(t.file.startswith(str(old)) for t in week.turns)
