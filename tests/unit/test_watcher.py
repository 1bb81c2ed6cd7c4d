"""The live follower's polling stays bounded, whatever the home holds (issue 14): a fake
clock and a fake `stat`, no timing."""

from __future__ import annotations

import asyncio
import os

import pytest

from codexwatch.sources import watcher
from codexwatch.sources.watcher import SessionFollower

T0 = 2_000_000_000.0


class FakeFiles:
    """path -> (size, mtime); a `stat` that counts its calls."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, float]] = {}
        self.calls = 0

    def stat(self, path: str) -> os.stat_result:
        self.calls += 1
        if path not in self.files:
            raise FileNotFoundError(path)
        size, mtime = self.files[path]
        return os.stat_result((0o100644, 1, 1, 1, 0, 0, size, mtime, mtime, mtime))

    def grow(self, path: str, by: int = 100) -> None:
        size, mtime = self.files[path]
        self.files[path] = (size + by, mtime)


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def bulk_copied(n: int, fake: FakeFiles, clock: Clock, age_s: float = 60.0) -> dict[str, tuple[int, float]]:
    """`n` files that all carry a fresh mtime (a restored backup): the newest is the last."""
    for i in range(n):
        fake.files[f"/home/sessions/2026/09/{i % 30:02d}/rollout-{i:05d}.jsonl"] = (
            10_000 + i, clock() - age_s + i * 0.001)
    return dict(fake.files)


def follower(known, fake: FakeFiles, clock: Clock, **kw) -> SessionFollower:
    return SessionFollower("/home", known=known, clock=clock, monotonic=clock, stat=fake.stat,
                           use_events=False, **kw)


def test_after_a_bulk_copy_only_the_few_newest_are_hot_and_a_tick_stats_a_bounded_number():
    fake, clock = FakeFiles(), Clock()
    known = bulk_copied(5_000, fake, clock)
    f = follower(known, fake, clock)
    assert fake.calls == 0  # the sizes and mtimes read are trusted: nothing stat-ed to start
    newest = sorted(known, key=lambda p: known[p][1])[-watcher.NEWEST_AT_START:]
    assert sorted(f.hot) == sorted(newest)
    for _ in range(50):
        fake.calls = 0
        assert f.poll_once() == []
        assert fake.calls <= watcher.NEWEST_AT_START + f.rotate <= 4 + 16
        clock.now += 0.25


def test_files_seen_to_grow_become_hot_and_the_set_never_passes_its_bound():
    fake, clock = FakeFiles(), Clock()
    known = bulk_copied(400, fake, clock)
    f = follower(known, fake, clock, hot_max=8, rotate=50)
    grown_order = []
    for path in list(known)[:100]:  # 100 files are written to, one after another
        fake.grow(path)
        grown_order.append(path)
        for _ in range(400 // 50 + 1):  # a whole turn of the rotation finds it
            for p, size in f.poll_once():
                f._add(p, size)
            clock.now += 0.25
            assert len(f.hot) <= 8
        assert path in f.hot
    assert set(grown_order[-8:]) == set(f.hot)  # the most recently grown are kept
    fake.calls = 0
    f.poll_once()
    assert fake.calls <= 8 + 50


def test_a_hot_file_is_polled_every_tick_and_reported_once_per_growth():
    fake, clock = FakeFiles(), Clock()
    known = bulk_copied(100, fake, clock)
    f = follower(known, fake, clock, rotate=0)
    newest = f.hot[-1]
    fake.grow(newest)
    assert f.poll_once() == [(newest, known[newest][0] + 100)]
    f._add(newest, known[newest][0] + 100)
    assert f.poll_once() == []


def test_quiet_hot_files_go_cold_and_the_rotation_still_finds_them_written_again():
    fake, clock = FakeFiles(), Clock()
    known = bulk_copied(64, fake, clock)
    f = follower(known, fake, clock, rotate=16, hot_window=600)
    assert len(f.hot) == watcher.NEWEST_AT_START
    clock.now += 601
    f.poll_once()
    assert f.hot == []
    was_hot = max(known, key=lambda p: known[p][1])
    fake.grow(was_hot)
    found = []
    for _ in range(64 // 16 + 1):
        found += [p for p, _ in f.poll_once()]
    assert found == [was_hot]


def test_files_older_than_the_hot_window_are_not_hot_at_start():
    fake, clock = FakeFiles(), Clock()
    known = bulk_copied(10, fake, clock, age_s=watcher.HOT_WINDOW_S + 100)
    assert follower(known, fake, clock).hot == []


def test_a_vanished_file_leaves_every_set():
    fake, clock = FakeFiles(), Clock()
    known = bulk_copied(10, fake, clock)
    f = follower(known, fake, clock, rotate=10)
    gone = f.hot[0]
    del fake.files[gone]
    f.poll_once()
    assert gone not in f.hot and gone not in f._sizes and gone not in f._known


async def test_known_as_paths_are_stat_ed_once_in_a_thread_then_bounded(tmp_path):
    day = tmp_path / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    paths = []
    for i in range(40):
        path = day / f"rollout-2026-11-30T00-00-{i:02d}-x.jsonl"
        path.write_bytes(b"{}\n")
        paths.append(str(path))
    f = SessionFollower(tmp_path, known=paths, use_events=False, hot_interval=0.01, scan_interval=3600)
    stop = asyncio.Event()
    gen = f.changes(stop)
    task = asyncio.ensure_future(gen.__anext__())
    await asyncio.sleep(0.05)
    assert len(f.hot) == watcher.NEWEST_AT_START  # all fresh: only the newest few
    stop.set()
    task.cancel()
    with pytest.raises((asyncio.CancelledError, StopAsyncIteration)):
        await task
    await gen.aclose()


def test_the_scan_finds_a_file_written_in_the_newest_folder_that_is_not_hot(tmp_path):
    day = tmp_path / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    known = {}
    for i in range(20):
        path = day / f"rollout-2026-11-30T00-00-{i:02d}-x.jsonl"
        path.write_bytes(b"{}\n")
        known[str(path)] = (3, os.stat(path).st_mtime)
    f = SessionFollower(tmp_path, known=known, use_events=False, rotate=0)
    quiet = next(p for p in known if p not in f.hot)
    with open(quiet, "ab") as fh:
        fh.write(b"{}\n")
    new = day / "rollout-2026-11-30T00-01-00-y.jsonl"
    new.write_bytes(b"{}\n")
    found = f.scan_once()
    assert sorted(found) == sorted([(quiet, 6), (str(new), None)])
    for path, size in found:
        f._add(path, size)  # as the stream does: reported, and hot from now
    assert quiet in f.hot and str(new) in f.hot
    assert f.scan_once() == []


@pytest.mark.parametrize("value,polls", [("1", True), ("true", True), ("false", False), ("disabled", False)])
def test_where_watchfiles_would_poll_the_whole_tree_the_follower_uses_no_events(monkeypatch, value, polls):
    monkeypatch.setenv("WATCHFILES_FORCE_POLLING", value)
    assert SessionFollower("/nowhere").use_events is (not polls)
    assert SessionFollower("/nowhere", use_events=True).use_events is True


def test_the_tick_is_shorter_where_only_the_tick_finds_an_append(monkeypatch):
    monkeypatch.delenv("WATCHFILES_FORCE_POLLING", raising=False)
    monkeypatch.setattr(watcher.sys, "platform", "linux")
    monkeypatch.setattr(watcher, "force_polling", lambda: False)
    with_events = SessionFollower("/nowhere")
    without = SessionFollower("/nowhere", use_events=False)
    assert with_events.hot_interval == watcher.HOT_INTERVAL_S
    assert without.hot_interval == watcher.POLL_INTERVAL_S
    # the rotation keeps its pace per second whatever the tick
    assert with_events.rotate / with_events.hot_interval == without.rotate / without.hot_interval
    monkeypatch.setattr(watcher.sys, "platform", "darwin")  # events, but not for appends
    assert SessionFollower("/nowhere").hot_interval == watcher.POLL_INTERVAL_S
