"""Reading with helper processes gives the same readers as reading in one process."""

from __future__ import annotations

import os
import time

import pytest

from codexwatch.sources import parallel
from codexwatch.sources.history import find_rollouts
from codexwatch.sources.reader import ReadJob, read_jobs
from tests.conftest import REAL_CLI

NOW = time.time()


def jobs() -> list[ReadJob]:
    files = [f for folder in ("exec-0.171.0", "tui-0.171.0", "tui-0.120.0", "exec-0.80.0")
             for f in find_rollouts(REAL_CLI / folder)]
    return [ReadJob(f.path, i % 2 == 0, f.size) for i, f in enumerate(files)]


def turns_of(readers) -> list:
    return [(r.path, [(t.turn_id, t.outcome, t.error_class, t.tokens) for t in r.turns(NOW)])
            for r in readers]


def alone() -> list:
    return turns_of(read_jobs(jobs()))


@pytest.mark.parametrize("workers", [2, 3])
def test_helpers_and_one_process_read_the_same(monkeypatch, workers):
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)  # a batch per file: every path is taken
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    assert turns_of(parallel.read_in_order(jobs(), workers)) == alone()


def test_no_helper_processes_means_reading_here(monkeypatch):
    monkeypatch.setattr(parallel, "_can_fork", lambda: False)
    assert turns_of(parallel.read_in_order(jobs(), 2)) == alone()


def test_helpers_slower_than_this_process_still_hand_readers_on_in_order(monkeypatch):
    parent = os.getpid()

    def slow(jobs, whole=None):
        if os.getpid() != parent:  # in a helper: this process claims and reads ahead meanwhile
            time.sleep(0.1)
        return read_jobs(jobs, whole)

    held = []
    step = parallel._Round._step

    def counted(self, number):
        step(self, number)
        held.append(len(self.done))

    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    monkeypatch.setattr(parallel, "read_jobs", slow)
    monkeypatch.setattr(parallel, "_AHEAD", 2)
    monkeypatch.setattr(parallel._Round, "_step", counted)
    assert turns_of(parallel.read_in_order(jobs(), 3)) == alone()
    # What waits for its turn stays bounded: this process stops reading ahead at _AHEAD,
    # and each of the 2 helpers may have sent what it held (_IN_FLIGHT) meanwhile.
    assert max(held) <= 2 + 2 * parallel._IN_FLIGHT


def _die_after_taking_a_batch(inbox, out) -> None:
    parallel._receive(inbox)  # takes a batch, never delivers it
    os._exit(1)


def _send_garbage(inbox, out) -> None:
    parallel._receive(inbox)
    os.write(out, (5).to_bytes(parallel._LENGTH, "little") + b"\x00junk")


@pytest.mark.parametrize("helper", [_die_after_taking_a_batch, _send_garbage], ids=["dies", "sends garbage"])
def test_a_helper_that_fails_loses_nothing(monkeypatch, helper):
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    monkeypatch.setattr(parallel, "_help", helper)
    assert turns_of(parallel.read_in_order(jobs(), 2)) == alone()


def test_no_fork_while_other_threads_run(monkeypatch):
    import threading

    def refuse():
        raise AssertionError("forked while a thread ran")

    monkeypatch.setattr(os, "fork", refuse)
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        read = turns_of(parallel.read_in_order(jobs(), 2))
    finally:
        release.set()
        other.join()
    assert read == alone()


def test_a_crew_forks_its_helpers_once_for_every_list_it_reads(monkeypatch):
    forks = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    crew = parallel.Crew(3)
    whole = parallel.WholeFileBuffer()
    try:
        lists = [jobs()[:3], jobs()[3:], jobs()]
        read = [turns_of(crew.read_in_order(part, whole)) for part in lists]
    finally:
        crew.close()
    assert read == [turns_of(read_jobs(part)) for part in lists]
    assert len(forks) == 2 and crew.helpers == []


def test_batches_and_readers_larger_than_a_pipe_do_not_leave_both_sides_waiting(monkeypatch, tmp_path):
    # Thousands of small files to a batch: what is given to a helper, and what it sends
    # back, each outgrow a pipe's buffer while the other side may be writing too.
    small = min((job for job in jobs()), key=lambda job: job.size)
    data = open(small.path, "rb").read()
    many = []
    for i in range(3000):
        path = tmp_path / f"rollout-2026-01-01T00-00-00-{i:05d}-{'x' * 60}.jsonl"
        path.write_bytes(data)
        many.append(ReadJob(str(path), True, 1))
    monkeypatch.setattr(parallel, "BATCH_BYTES", len(many) // 3)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    assert turns_of(parallel.read_in_order(many, 2)) == turns_of(read_jobs(many))


def test_a_crew_forked_early_reads_for_a_history_loaded_in_a_thread(monkeypatch, tmp_path):
    # The dashboard forks its helper before its threads start and hands it to the read in
    # its worker thread: the helper reads there (no fork in the thread), with the same
    # turns and index as one process; the crew stays open until its owner closes it.
    import threading

    from codexwatch.sources.history import load_history
    from codexwatch.sources.reader import RolloutReader

    home = tmp_path / "home"
    for folder in ("exec-0.171.0", "tui-0.171.0", "tui-0.120.0"):
        import shutil
        shutil.copytree(REAL_CLI / folder / "sessions", home / "sessions", dirs_exist_ok=True)
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    crew = parallel.Crew.forked_now(2)
    assert len(crew.helpers) == 1
    from_helper = []
    from_state = RolloutReader.from_state.__func__
    monkeypatch.setattr(RolloutReader, "from_state",
                        classmethod(lambda cls, state: from_helper.append(1) or from_state(cls, state)))
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked in the thread"))
    got = {}
    release = threading.Event()
    idle = threading.Thread(target=release.wait)  # another thread runs, as in the app
    idle.start()
    try:
        reader = threading.Thread(target=lambda: got.update(h=load_history(
            home, None, NOW, cache_dir=tmp_path / "cache", crew=crew)))
        reader.start()
        reader.join()
    finally:
        release.set()
        idle.join()
    monkeypatch.undo()
    assert from_helper and len(crew.helpers) == 1  # read by the helper too; not closed
    crew.close()
    assert crew.helpers == []
    alone = load_history(home, None, NOW, use_cache=False)
    assert [(t.turn_id, t.outcome, t.file) for t in got["h"].turns] == \
        [(t.turn_id, t.outcome, t.file) for t in alone.turns]
    again = load_history(home, None, NOW, cache_dir=tmp_path / "cache")  # the index it wrote
    assert [t.turn_id for t in again.turns] == [t.turn_id for t in alone.turns]


def test_the_dashboard_forks_a_helper_only_for_a_first_read_without_an_index(tmp_path, monkeypatch):
    import shutil

    from codexwatch.commands.dashboard import first_read_helpers
    from codexwatch.config import Settings
    from codexwatch.sources.history import load_history

    def helpers(**kw) -> tuple:
        """(whether a listing was forked, whether it looks at the files, the crew's size),
        all closed."""
        listing, crew = first_read_helpers(Settings(**{"codex_home": home, "cache_dir": cache, **kw}))
        try:
            return (listing is not None, listing is not None and listing.stat,
                    len(crew.helpers) if crew is not None else 0)
        finally:
            for process in (listing, crew):
                if process is not None:
                    process.close()

    home, cache = tmp_path / "home", tmp_path / "cache"
    shutil.copytree(REAL_CLI / "exec-0.171.0" / "sessions", home / "sessions")
    monkeypatch.setattr(parallel, "default_workers", lambda: 2)
    assert helpers(since="all") == (True, False, 1)  # no index yet: a full read, listed by name
    assert helpers() == (True, True, 1)  # the default window: the files' times are looked at
    load_history(home, None, NOW, cache_dir=cache)
    assert helpers(since="all") == (True, True, 0)  # warm: compared with the index, no helper
    assert helpers(since="all", use_cache=False) == (True, False, 1)  # every start reads it all
    assert helpers(codex_home=tmp_path / "nothing") == (False, False, 0)
    monkeypatch.setattr(parallel, "default_workers", lambda: 1)
    assert helpers(since="all", use_cache=False) == (False, False, 0)
    assert _no_child_left()


def _no_child_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.parametrize("stat", [True, False])
def test_a_listing_made_by_a_forked_process_is_the_one_made_here(stat):
    home = REAL_CLI / "tui-0.171.0"
    listing = parallel.Listing(home, stat=stat)
    assert listing.files() == find_rollouts(home, stat=stat)
    assert listing.files() is None and _no_child_left()  # once; the helper is gone


def test_the_first_read_takes_the_listing_made_before_and_ends_one_it_cannot_use(tmp_path, monkeypatch):
    import shutil

    from codexwatch.sources import history as history_module
    from codexwatch.sources.history import load_history

    shutil.copytree(REAL_CLI / "exec-0.171.0" / "sessions", tmp_path / "sessions")
    listed_here = []
    real = history_module.find_rollouts
    monkeypatch.setattr(history_module, "find_rollouts",
                        lambda *a, **k: listed_here.append(k.get("stat")) or real(*a, **k))
    want = load_history(tmp_path, 7 * 86400, NOW, use_cache=False).turns
    listed_here.clear()
    got = load_history(tmp_path, 7 * 86400, NOW, use_cache=False,
                       listing=parallel.Listing(tmp_path, stat=True))
    assert listed_here == [] and got.turns == want and got.listing is None
    # A window needs each file's time: a listing by name only is not enough, and is ended.
    got = load_history(tmp_path, 7 * 86400, NOW, use_cache=False,
                       listing=parallel.Listing(tmp_path, stat=False))
    assert listed_here == [True] and got.turns == want and _no_child_left()
    # Not wanted at all (the statistics fold lists as it goes): ended too.
    from codexwatch.core.stats import StatsFold

    load_history(tmp_path, None, NOW, use_cache=False, fold=StatsFold(NOW),
                 listing=parallel.Listing(tmp_path, stat=False))
    assert _no_child_left()


def _large_file(tmp_path) -> ReadJob:
    """A TUI thread kept open for days: a real 0.171 session's turns over and over, with
    lines that are blank, broken or of an unknown type among them."""
    lines = next((REAL_CLI / "tui-0.171.0").rglob("rollout-*.jsonl")).read_bytes().splitlines(keepends=True)
    odd = [b"\n", b'{"timestamp":"2026-01-01T00:00:00.000Z","type":"brand_new_kind","payload":{}}\n',
           b'{"broken\n']
    body = b"".join(lines[1:])
    path = tmp_path / "rollout-2026-01-01T00-00-00-large.jsonl"
    path.write_bytes(lines[0] + b"".join(body + odd[i % 3] for i in range(40)))
    return ReadJob(str(path), True, path.stat().st_size)


def _as_one_reads_it(job: ReadJob):
    from codexwatch.sources.reader import RolloutReader

    reader = RolloutReader(job.path)
    reader.read_new()
    return reader


def _everything(reader) -> tuple:
    from codexwatch.core.turns import turn_to_row

    return reader.offset, reader.pending, reader.health(), [turn_to_row(t) for t in reader.turns(NOW)]


@pytest.mark.parametrize("workers", [2, 3])
def test_a_large_file_read_in_parts_by_the_crew_is_the_file_read_by_one(monkeypatch, tmp_path, workers):
    job = _large_file(tmp_path)
    monkeypatch.setattr(parallel, "PART_BYTES", job.size // 11)
    given = []
    give = parallel._Helper.give
    monkeypatch.setattr(parallel._Helper, "give", lambda self, ticket, work: given.append(work[0]) or give(self, ticket, work))
    [reader] = parallel.read_in_order([job], workers, parallel.WholeFileBuffer(limit=job.size // 2))
    assert given.count(parallel._PART) >= 5  # of the 11 parts, this process reads 6 at most
    assert reader.counts.unknown_types == {"brand_new_kind": 13}
    assert _everything(reader) == _everything(_as_one_reads_it(job))


@pytest.mark.parametrize("helper", [_die_after_taking_a_batch, _send_garbage], ids=["dies", "sends garbage"])
def test_a_helper_that_fails_on_a_part_of_a_large_file_loses_nothing(monkeypatch, tmp_path, helper):
    job = _large_file(tmp_path)
    monkeypatch.setattr(parallel, "PART_BYTES", job.size // 7)
    monkeypatch.setattr(parallel, "_help", helper)
    [reader] = parallel.read_in_order([job], 2, parallel.WholeFileBuffer(limit=job.size // 2))
    assert _everything(reader) == _everything(_as_one_reads_it(job))


def test_a_part_a_helper_did_not_read_to_its_end_is_read_here(monkeypatch, tmp_path):
    # As when the file was cut short, or replaced, between the two processes' looks.
    job = _large_file(tmp_path)
    monkeypatch.setattr(parallel, "PART_BYTES", job.size // 7)
    read_part = parallel._read_part
    monkeypatch.setattr(parallel, "_read_part", lambda whole, path, start, stop: read_part(whole, path, start, stop - 1))
    [reader] = parallel.read_in_order([job], 2, parallel.WholeFileBuffer(limit=job.size // 2))
    assert _everything(reader) == _everything(_as_one_reads_it(job))


def test_a_large_file_among_few_is_found_without_its_size_known(monkeypatch, tmp_path):
    job = _large_file(tmp_path)._replace(size=None)  # a cold `all` does not look at files before reading
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "PART_BYTES", os.path.getsize(job.path) // 5)
    parts = []
    monkeypatch.setattr(parallel._Parts, "read", lambda self: parts.append(len(self.parts)) or self.reader)
    whole = parallel.WholeFileBuffer(limit=os.path.getsize(job.path) // 2)
    list(parallel.read_new([job], 2, whole))
    assert parts and parts[0] >= 4
