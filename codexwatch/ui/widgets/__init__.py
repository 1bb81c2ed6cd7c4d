"""Widgets: each renders one part of the view the App computed."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


def show_content(static: Static, content) -> None:
    """`static.update(content)`, skipped when the text and styles are what it already shows.

    The App re-shows every widget once a second (ages, countdowns); an update lays out and
    repaints the screen, which is most of the dashboard's idle CPU when nothing changed.
    """
    if isinstance(content, str):
        key = content
    else:
        key = (content.plain, tuple(content.spans)) if isinstance(content, Content) else None
    if key is not None and key == getattr(static, "_shown_key", None):
        return
    static._shown_key = key
    static.update(content)
