"""The triage wizard and the report preview."""

from __future__ import annotations

from textual.widgets import TextArea

from codexwatch.ui.screens.report import ReportScreen
from codexwatch.ui.screens.wizard import WizardScreen

from .helpers import NOW, append, failing_home, history_shown, CodexWatchApp, config, failed_turn_lines, make_home, wait_until


async def test_wizard_walks_forward_and_back_and_ends_in_the_report(tmp_path):
    home, _, _ = failing_home(tmp_path)
    app = CodexWatchApp(config(home))
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_until(pilot, lambda: app.view and app.view.episode is not None)
        await pilot.press("w")
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        assert await wait_until(pilot, lambda: len(wizard.steps) >= 6)
        keys = [s.key for s in wizard.steps]
        assert keys[:2] == ["confirm_class", "status_page"] and "stop_and_report" in keys
        assert wizard.index == 0 and app.screen.check_action("back", ()) is False
        step_text = str(wizard.query_one("#step").render())
        assert "Step 1 of" in step_text and "Evidence" in step_text and "Type in Codex" in step_text
        await pilot.press("n")
        assert wizard.index == 1
        await pilot.press("b")
        assert wizard.index == 0
        for _ in range(len(wizard.steps)):
            await pilot.press("right")
        assert wizard.index == wizard.report_index
        assert wizard.check_action("next", ()) is False
        await pilot.pause()
        text = wizard.query_one("#wizard-report").query_one(TextArea).text
        assert "capacity" in text.lower() or "server_overloaded" in text
        await pilot.press("c")
        assert app.clipboard == text
        await pilot.press("left")
        assert wizard.index == wizard.report_index - 1
        await pilot.press("escape")
        assert not isinstance(app.screen, WizardScreen)


async def test_wizard_notices_a_model_switch_by_itself(tmp_path):
    home, session, sid = failing_home(tmp_path)
    app = CodexWatchApp(config(home, follow=True, hot_interval=0.05))
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_until(pilot, lambda: app.view and app.view.episode is not None)
        await pilot.press("w")
        wizard = app.screen
        assert await wait_until(pilot, lambda: bool(wizard.steps))
        switch = next(s for s in wizard.steps if s.key == "switch_model")
        assert switch.state != "done"
        append(session, failed_turn_lines("capacity", NOW - 60, sid, seed=4, model="gpt-6-terra"))

        def switched() -> bool:
            step = next(s for s in wizard.steps if s.key == "switch_model")
            return step.state == "done"

        assert await wait_until(pilot, switched)


async def test_report_screen_previews_copies_and_saves(tmp_path, monkeypatch):
    home, _, _ = failing_home(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    app = CodexWatchApp(config(home))
    async with app.run_test(size=(120, 36)) as pilot:
        assert await wait_until(pilot, lambda: app.view and app.view.episode is not None)
        await pilot.press("r")
        assert isinstance(app.screen, ReportScreen)
        assert await wait_until(pilot, lambda: app.screen.query_one(TextArea).text)  # built with the next view
        text = app.screen.query_one(TextArea).text
        assert text.startswith("#") or "Codex" in text
        await pilot.press("s")
        saved = list(out.glob("codexwatch-report-*.md"))
        assert len(saved) == 1 and saved[0].read_text() == text
        await pilot.press("j")
        assert app.screen.query_one(TextArea).text.lstrip().startswith("{")
        assert not list(home.rglob("codexwatch-report-*"))  # never into the Codex home


async def test_the_latest_episode_can_be_reported_after_it_ended(tmp_path):
    app = CodexWatchApp(config(make_home(tmp_path)))  # the recordings end with successful turns
    async with app.run_test(size=(120, 40)) as pilot:
        assert await history_shown(pilot)
        assert app.view.episode is None
        await pilot.press("r")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ReportScreen))
        title = app.screen.query_one("#report-title")
        assert await wait_until(pilot, lambda: "Writing" not in str(title.render()))
        assert "ended" in str(title.render())
