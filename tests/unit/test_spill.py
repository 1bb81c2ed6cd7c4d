"""A large history's statistics on disk: the same figures as in memory."""

import marshal
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from codexwatch.core import stats
from codexwatch.core.models import Turn
from codexwatch.core.stats import StatsFold
from codexwatch.sources.spill import SpilledTurns, to_disk

T0 = 1_767_225_600.0
# Few distinct times and starts, so that ties (between failures and successes, and between
# files) are common; times an hour apart and days apart, so windows and quarters differ.
_turns = st.lists(
    st.tuples(st.sampled_from(["ok", "failed", "aborted"]),
              st.sampled_from([0, 60, 2000, 4000, 90_000, 700_000]),
              st.sampled_from([0, 1, 30]), st.sampled_from([None, "m1", "m2"]),
              st.sampled_from(["capacity", "unrecorded", None])),
    max_size=8,
)


def _files(files):
    built, n = [], 0
    for f in files:
        part = []
        for outcome, at, lead, model, cls in f:
            n += 1
            part.append(Turn(session_id=f"s{n % 3}", turn_id=f"t{n}", file=f"f{len(built)}", model=model,
                             started_at=T0 + at - lead, ended_at=T0 + at, outcome=outcome,
                             error_class=cls if outcome == "failed" else None, duration_ms=lead * 1000,
                             tokens=n))
        built.append(part)
    return built


@settings(max_examples=200, deadline=None)
@given(st.lists(_turns, max_size=5), st.sampled_from([0, 1, 3]), st.booleans())
def test_a_fold_spilled_to_disk_gives_the_figures_it_gives_in_memory(files, after, amend):
    built = _files(files)
    now = T0 + 3000
    memory, disk = StatsFold(now), StatsFold(now, spill=to_disk)
    with pytest.MonkeyPatch.context() as patch:
        for i, part in enumerate(built):
            memory.add(part)
            # Spilled as part `after` comes in: before it in memory, the rest on disk.
            patch.setattr(stats, "SPILL_BYTES", -1 if i >= after else 1 << 40)
            disk.add([Turn(**{k: getattr(t, k) for k in Turn.__slots__}) for t in part])
    assert isinstance(disk._finished, SpilledTurns) == (len(built) > after)
    # Stored and taken up again (as the index does: the turns on disk copied apart), the
    # fold is the same.
    state = marshal.loads(marshal.dumps(disk.export_state()))
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "turns"
        if disk.spilled is not None:
            disk.spilled.save_copy(copy, (now, 1))
        taken = StatsFold(now).restore(state, lambda n: SpilledTurns.from_copy(copy, (now, 1), n))
        assert taken.result() == StatsFold(now).restore(memory.export_state()).result()
        assert taken.on_disk == disk.on_disk
    if amend:  # causes found later, in Codex's log, given as failures are read
        causes = {f"t{n}": "unexpected status 401 Unauthorized" for n in range(7, 41, 10)}
        for fold in (memory, disk):
            fold.give_causes(causes)
    assert disk.result() == memory.result()


def test_where_no_database_can_be_made_the_turns_stay_in_memory(monkeypatch):
    from codexwatch.sources import spill

    def refuse(schema):
        raise OSError("no temporary folder")

    monkeypatch.setattr(spill, "temporary_database", refuse)
    monkeypatch.setattr(stats, "SPILL_BYTES", 0)
    fold = StatsFold(T0, spill=to_disk)
    fold.add([Turn(session_id="s", turn_id="t", file="f", outcome="ok", started_at=T0 - 1, ended_at=T0)])
    fold.add([Turn(session_id="s", turn_id="u", file="f", outcome="failed", error_class="capacity",
                   started_at=T0 + 1, ended_at=T0 + 2)])
    assert type(fold._finished) is stats.Finished and fold.result()["turns"] == 2
