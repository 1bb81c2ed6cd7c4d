"""The Now panel's text for each density and width: what is left out, and what never is."""

from __future__ import annotations

from codexwatch.ui.view import NowView
from codexwatch.ui.widgets.decision import COMPACT, FULL, SHORT, body_content, fitted

NOW = 1_800_000_000.0
FILLER = "words enough to wrap once in a pane eighty columns wide, and more words after them"


def view(evidence: int = 6, side: int = 3) -> NowView:
    return NowView(
        action="wait", title="Wait: OpenAI is working on a Codex incident",
        evidence=tuple(f"evidence {i}: {FILLER} (end of evidence {i})" for i in range(evidence)),
        side=tuple(f"side {i}: {FILLER} (end of side {i})" for i in range(side)),
        commands=("/model",), backoff_until=NOW + 30,
        backoff_label="Back off: wait 30 s after failure 1; next try", wizard_available=True,
    )


def rows(content, width: int) -> int:
    return len(content.wrap(width))


def shown_at(v: NowView, density: str, width: int):
    return body_content(v, NOW, None, density, fitted(v, NOW, density, width))


def unwrapped(content) -> str:
    return " ".join(line.strip() for line in content.plain.splitlines())


def test_without_a_width_each_density_shows_its_own_number_of_lines():
    for density, evidence, side in ((FULL, 4, 2), (SHORT, 2, 1), (COMPACT, 1, 0)):
        text = body_content(view(), NOW, None, density).plain
        assert sum(f"evidence {i}:" in text for i in range(6)) == evidence
        assert sum(f"side {i}:" in text for i in range(3)) == side
        assert "next try in 0:30" in text and "[w] triage wizard" in text


def test_a_narrow_width_leaves_out_whole_lines_of_evidence_and_side_advice_never_the_keys():
    for density, room in ((FULL, 15 - 2 - 3), (SHORT, 11 - 2 - 1)):
        for width in (60, 76, 116):
            content = shown_at(view(), density, width)
            text = unwrapped(content)
            assert rows(content, width) <= room, (density, width)
            assert "evidence 0:" in text and "next try in 0:30" in text and "[c] copy" in text
            for kind, limit in (("evidence", 6), ("side", 3)):
                shown = [i for i in range(limit) if f"{kind} {i}:" in text]
                assert shown == list(range(len(shown)))  # the first ones, in order
                assert all(f"(end of {kind} {i})" in text for i in shown)  # each one whole


def test_side_advice_comes_after_the_keys_and_fills_the_rows_left():
    wide = shown_at(view(evidence=1, side=2), FULL, 200).plain
    assert wide.index("[w] triage wizard") < wide.index("side 0:") < wide.index("side 1:")
    assert rows(shown_at(view(evidence=1, side=0), FULL, 200), 200) == 4


def test_a_wrapped_line_continues_under_its_text_not_under_its_bullet():
    lines = shown_at(view(evidence=1, side=1), FULL, 60).plain.splitlines()
    assert all(len(line) <= 60 for line in lines)
    for bullet in ("▸ evidence 0:", "+ side 0:"):
        first = next(i for i, line in enumerate(lines) if line.startswith(bullet))
        assert lines[first + 1].startswith("  ") and lines[first + 1][2] != " "


def test_the_back_off_counts_down_from_the_view_it_was_given_and_ends_in_now():
    shown = [body_content(view(), NOW + dt, None, FULL).plain for dt in (0, 5, 31)]
    assert "next try in 0:30" in shown[0] and "next try in 0:25" in shown[1]
    assert "Back off: wait 30 s after failure 1; next try: now" in shown[2]


def test_hanging_wraps_under_the_text_and_leaves_a_line_whole_until_the_width_is_known():
    from textual.content import Content

    from codexwatch.ui.widgets import hanging

    text = "gpt-6-luna (light): in Codex's own model list; 79% of 14 turns succeeded"
    lines = Content.assemble(*hanging(("  ▸ ", "$text-muted"), text, 30)).plain.splitlines()
    assert len(lines) > 2 and all(len(line) <= 30 for line in lines)
    assert lines[0].startswith("  ▸ gpt-6-luna") and all(line.startswith("    ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines).replace("▸ ", "") == text
    assert hanging(("  ▸ ", ""), text, 0) == [("  ▸ ", ""), (text, ""), "\n"]
