"""Screens: each subscribes to the App's `view_changed` signal and renders what it gets."""

from __future__ import annotations

from dataclasses import replace

from textual.screen import Screen

from codexwatch.ui.view import ViewUpdate


class ViewScreen(Screen):
    """A screen that shows the App's view: the newest at mount, then every one published.

    `show` renders a rebuilt view; `show_clock` only what moves with the clock (ages,
    countdowns), and by default nothing."""

    def on_mount(self) -> None:
        # Textual calls this for a subclass's mount too, after the subclass's own on_mount
        # (its handlers run for every class that defines one): a subclass does not call it.
        self.app.view_changed.subscribe(self, self._on_view)
        if self.app.last_update is not None:  # what the other screens show now
            self.show(replace(self.app.last_update, rebuilt=True))

    def _on_view(self, update: ViewUpdate) -> None:
        if update.rebuilt:
            self.show(update)
        else:
            self.show_clock(update)

    def show(self, update: ViewUpdate) -> None:
        raise NotImplementedError

    def show_clock(self, update: ViewUpdate) -> None:
        pass


class TriageScreen(ViewScreen):
    """The wizard and the report: while one is open, views are built with the triage steps
    and the report (`DashboardView.wizard_steps`, `.report`)."""
