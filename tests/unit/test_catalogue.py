"""Codex's model catalogue (`models_cache.json`) deciding the switch, and the plan's windows
and the user's context threshold in the advice."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from codexwatch.commands.advise import advice_json
from codexwatch.core.advice import advise, catalogue_candidates
from codexwatch.core.catalogue import parse_catalogue
from codexwatch.core.triage import wizard_steps
from codexwatch.core.usage import read_limits
from codexwatch.sources.catalogue import load_catalogue
from tests.unit._advice_builders import T0, UTC, episode, snapshot, turn

BUNDLED = Path(__file__).resolve().parents[1] / "fixtures" / "codex-models" / "bundled-0.171.0.json"
MODELS = json.loads(BUNDLED.read_text())["models"]
OK = snapshot()
NOW = T0 + 10
VISIBLE_ORDER = ["gpt-6.2-sol", "gpt-6.2-astra", "gpt-6.1-terra", "gpt-6.1-sol", "gpt-6-astra",
                 "gpt-6-sol", "gpt-6-luna", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.5"]

# models_cache.json as each release writes it (fixtures/codex-models/README.md).
CACHES = {
    "0.80": {"fetched_at": "2026-11-29T08:00:00Z", "etag": "W/1", "models": MODELS},
    "0.120": {"fetched_at": "2026-11-29T08:00:00Z", "etag": "W/1", "client_version": "0.120.0",
              "models": MODELS},
    "0.171": {"fetched_at": "2026-11-29T08:00:00Z", "etag": "W/1", "client_version": "0.171.0",
              "identity": "acct-hash", "models": MODELS},
}


def home_with(tmp_path: Path, content: bytes | None) -> Path:
    if content is not None:
        (tmp_path / "models_cache.json").write_bytes(content)
    return tmp_path


@pytest.mark.parametrize("version", sorted(CACHES))
def test_every_release_cache_reads_in_codex_order(tmp_path, version):
    cat = load_catalogue(home_with(tmp_path, orjson.dumps(CACHES[version])))
    assert [m.slug for m in cat.visible] == VISIBLE_ORDER
    assert [m.slug for m in cat.models if not m.visible] == [
        "gpt-daybreak-blue-latest", "gpt-daybreak-red-latest", "codex-auto-review"]
    assert cat.get("gpt-6-luna").efforts == ("low", "medium", "high", "xhigh", "max")
    assert cat.get("gpt-6.2-sol").context_window == 500000


@pytest.mark.parametrize("content", [
    None, b"", b"{", orjson.dumps(CACHES["0.171"])[:4000], b"[]", b"null", b'{"models": "x"}',
    b'{"models": [1, "a", {"display_name": "no slug"}]}', b"[" * 100000, b"\xff\xfe",
])
def test_absent_partial_or_strange_cache_is_no_catalogue(tmp_path, content):
    assert load_catalogue(home_with(tmp_path, content)) is None


def test_odd_entries_are_skipped_and_missing_priorities_go_last():
    cat = parse_catalogue({"models": [{"slug": "b"}, {"slug": "a", "priority": 2}, 7,
                                      {"slug": "c", "priority": "1", "visibility": "soon"}]})
    assert [m.slug for m in cat.models] == ["a", "b", "c"] and cat.skipped == 1
    assert [m.slug for m in cat.visible] == ["a", "b"]


def capacity_episode(model="gpt-6-sol"):
    return episode(turn(T0, model=model))


def test_candidates_follow_codex_order_step_down_first_with_the_users_record():
    cat = parse_catalogue(CACHES["0.171"])
    history = [turn(T0 - 3600 * i, "ok", None, model="gpt-6.1-terra", index=i) for i in range(1, 4)]
    history += [turn(T0 - 7200, "failed", "capacity", model="gpt-6.1-terra", index=9),
                turn(T0 - 5000, "ok", None, model="my-own-model", index=10)]
    ep = capacity_episode()
    cands = catalogue_candidates(ep, history + ep.failures, NOW, cat)
    assert [c.model for c in cands] == (
        ["gpt-6-luna"] + [m for m in VISIBLE_ORDER if m not in ("gpt-6-sol", "gpt-6-luna")] + ["my-own-model"])
    assert [c.source for c in cands][-2:] == ["catalogue", "history"]
    terra = next(c for c in cands if c.model == "gpt-6.1-terra")
    assert (terra.turns, terra.success_rate) == (4, 0.75)
    assert cands[0].success_rate is None and cands[0].turns == 0


def test_with_a_catalogue_the_advice_and_the_wizard_name_a_concrete_model():
    cat = parse_catalogue(CACHES["0.171"])
    ep = capacity_episode()
    adv = advise(ep, ep.failures, OK, NOW, tz=UTC, catalogue=cat)
    assert adv.action == "switch_model" and adv.title == "Switch model once: try gpt-6-luna"
    assert adv.commands == ["/model", "codex -m gpt-6-luna", 'model = "gpt-6-luna"  (in config.toml)']
    out = advice_json(adv, NOW)
    assert [c["source"] for c in out["candidates"]][:2] == ["catalogue", "catalogue"]
    assert out["candidates"][0] == {"model": "gpt-6-luna", "success_rate": None, "turns": 0,
                                    "tier": "light", "command": "codex -m gpt-6-luna", "source": "catalogue"}
    switch = next(s for s in wizard_steps(adv, ep, OK, tz=UTC) if s.key == "switch_model")
    assert "codex -m gpt-6-luna" in switch.type_in_codex
    # Without one: today's behaviour (no model succeeded recently: only /model).
    bare = advise(ep, ep.failures, OK, NOW, tz=UTC)
    assert bare.commands == ["/model"] and bare.candidates == []


def test_a_model_missing_from_the_catalogue_starts_from_its_top():
    cat = parse_catalogue(CACHES["0.80"])
    cands = catalogue_candidates(capacity_episode("gpt-9"), [], NOW, cat)
    assert [c.model for c in cands] == VISIBLE_ORDER


def test_a_broken_cache_changes_nothing(tmp_path):
    ep = capacity_episode()
    history = [turn(T0 - 3600, "ok", None, model="gpt-6-terra", index=1)] + ep.failures
    plain = advise(ep, history, OK, NOW, tz=UTC)
    broken = advise(ep, history, OK, NOW, tz=UTC, catalogue=load_catalogue(home_with(tmp_path, b'{"mod')))
    assert advice_json(plain, NOW) == advice_json(broken, NOW)
    assert [c["source"] for c in advice_json(plain, NOW)["candidates"]] == ["history"]


# --- the plan's windows in the advice ------------------------------------------------------

def reading(primary, secondary, at=T0 - 60, reset5=T0 + 3600, resetwk=T0 + 4 * 86400):
    return read_limits({"primary": {"used_percent": primary, "window_minutes": 300, "resets_at": reset5},
                        "secondary": {"used_percent": secondary, "window_minutes": 10080,
                                      "resets_at": resetwk}}, at)


def test_capacity_below_the_quota_says_it_is_not_the_quota():
    ep = episode(turn(T0, usage=reading(34.0, 61.0)))
    adv = advise(ep, ep.failures, OK, NOW, tz=UTC)
    assert "Not your quota: 5-hour window 34 % used, weekly window 61 %, as of 19:59." in adv.evidence
    assert advice_json(adv, NOW)["usage"]["primary"] == {
        "used_percent": 34.0, "window_minutes": 300, "resets_at": "2026-11-25T21:00:00.000Z"}


def test_a_window_over_90_is_side_advice_before_it_fails():
    ok = [turn(T0 - 100, "ok", None, usage=reading(92.0, 40.0), index=1)]
    adv = advise(None, ok, OK, NOW, tz=UTC)
    assert adv.action == "none"
    assert adv.side == ["Your 5-hour window is at 92 %, resets 21:00: long runs may hit the limit."]
    assert advice_json(adv, NOW)["usage"]["secondary"]["used_percent"] == 40.0
    # A window whose reset has passed no longer stands where the figure says.
    assert advise(None, ok, OK, T0 + 7200, tz=UTC).side == []


def test_wait_for_reset_counts_down_to_the_recorded_reset():
    full = reading(100.0, 70.0)
    ep = episode(turn(T0, cls="usage_limit", usage=full))
    adv = advise(ep, ep.failures, OK, NOW, tz=UTC)
    assert adv.action == "wait_for_reset"
    assert "Your plan's window resets at 21:00 (in 59 min)." in adv.evidence
    assert not any("Not your quota" in e for e in adv.evidence)


def test_new_thread_and_compact_cite_the_users_own_threshold():
    window = 200_000
    history = []
    for i in range(40):  # below 75 %: 2 of 40 failed
        failed = i < 2
        history.append(turn(T0 - 86400 + i * 60, "failed" if failed else "ok", "capacity" if failed else None,
                            session=f"a{i}", index=i, context_used=40_000, context_window=window))
    for i in range(20):  # from 75 %: 8 of 20 failed
        failed = i < 8
        history.append(turn(T0 - 43200 + i * 60, "failed" if failed else "ok", "capacity" if failed else None,
                            session=f"b{i}", index=i, context_used=170_000, context_window=window))
    ep = episode(turn(T0, session="big", index=3, context_used=180_000, context_window=window))
    adv = advise(ep, sorted(history + ep.failures, key=lambda t: t.started_at), OK, NOW, tz=UTC)
    assert adv.action == "new_thread"
    line = ("Your turns from 75 % of the context window up failed 8.6× as often as below it "
            "(9 of 21, against 2 of 40); this thread is at 90 %.")
    assert line in adv.evidence
    ctx = episode(turn(T0, cls="context_window", session="big", index=3, context_used=180_000,
                       context_window=window))
    adv = advise(ctx, sorted(history + ctx.failures, key=lambda t: t.started_at), OK, NOW, tz=UTC)
    assert adv.action == "compact" and any("from 75 % of the context window up" in e for e in adv.evidence)


def test_incidents_unknown_is_not_all_clear():
    from dataclasses import replace

    snap = replace(OK, incidents_error="proxy: HTTP 500; compat incidents: HTTP 502; feed: HTTP 404")
    ep = episode(turn(T0))
    adv = advise(ep, ep.failures, snap, NOW, tz=UTC)
    assert adv.status == "unknown"
    assert any(e.startswith("Status page: incidents unknown (proxy: HTTP 500") for e in adv.evidence)
