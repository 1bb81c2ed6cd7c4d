"""The turn ids seen: a set in memory that moves to a temporary database past a limit."""

from hypothesis import given, settings, strategies as st

from codexwatch.sources.seen import TurnIds

PARTS = st.lists(st.lists(st.sampled_from([f"t{i}" for i in range(40)]), max_size=12), max_size=12)


def reference(parts):
    seen, flags = set(), []
    for part in parts:
        keep = []
        for turn_id in part:
            keep.append(turn_id not in seen)
            seen.add(turn_id)
        flags.append(None if all(keep) else keep)
    return flags, seen


@settings(max_examples=150, deadline=None)
@given(PARTS, st.sampled_from([0, 1, 3, 1000]))
def test_new_ids_are_told_apart_as_a_set_would(parts, limit):
    ids = TurnIds(limit=limit)
    try:
        expected, everything = reference(parts)
        assert [ids.new(part) for part in parts] == expected
        assert len(ids) == len(everything) and sorted(ids) == sorted(everything)
        if len(everything) > limit:
            assert ids.db is not None and len(ids.memory) <= limit  # the rest is on disk
    finally:
        ids.close()


def test_ids_given_at_the_start_count_as_seen_and_spill_too():
    ids = TurnIds(["a", "b", "c"], limit=2)
    assert ids.db is not None and not ids.memory
    assert ids.new(["c", "d", "d", "a"]) == [False, True, False, False]
    assert sorted(ids) == ["a", "b", "c", "d"]
    ids.close()


def test_without_a_database_to_spill_into_the_ids_stay_in_memory(monkeypatch):
    import sqlite3

    from codexwatch.sources import seen

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(seen.sqlite3, "connect", refuse)
    ids = TurnIds(limit=1)
    assert ids.new(["a", "b"]) is None and ids.new(["b", "c"]) == [False, True]
    assert ids.db is None and ids.memory == {"a", "b", "c"}
