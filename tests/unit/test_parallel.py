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
    step = parallel._Crew._step

    def counted(self, number):
        step(self, number)
        held.append(len(self.done))

    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "read_jobs", slow)
    monkeypatch.setattr(parallel, "_AHEAD", 2)
    monkeypatch.setattr(parallel._Crew, "_step", counted)
    assert turns_of(parallel.read_in_order(jobs(), 3)) == alone()
    # What waits for its turn stays bounded: this process stops reading ahead at _AHEAD,
    # and each of the 2 helpers may have sent one batch more meanwhile.
    assert max(held) <= 2 + 2


def _die_after_claiming(batches, claims, out) -> None:
    parallel._claim(claims)  # claims a batch, never delivers it
    os._exit(1)


def _send_garbage(batches, claims, out) -> None:
    parallel._claim(claims)
    parallel._write_all(out, (5).to_bytes(parallel._LENGTH, "little") + b"\x00junk")


@pytest.mark.parametrize("helper", [_die_after_claiming, _send_garbage], ids=["dies", "sends garbage"])
def test_a_helper_that_fails_loses_nothing(monkeypatch, helper):
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "_help", helper)
    assert turns_of(parallel.read_in_order(jobs(), 2)) == alone()


def test_no_fork_while_other_threads_run(monkeypatch):
    import threading

    def refuse():
        raise AssertionError("forked while a thread ran")

    monkeypatch.setattr(os, "fork", refuse)
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        read = turns_of(parallel.read_in_order(jobs(), 2))
    finally:
        release.set()
        other.join()
    assert read == alone()


def test_batch_numbers_fit_in_the_claims_pipe():
    many = [ReadJob(f"/x/{i}.jsonl", True, 4 << 20) for i in range(40_000)]
    assert len(parallel._batches(many)) <= parallel._MAX_BATCHES
    assert sum(map(len, parallel._batches(many))) == len(many)
