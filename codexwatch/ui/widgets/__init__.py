"""Widgets: each renders one part of the view the App computed."""

from __future__ import annotations

from typing import Callable

from textual.content import Content
from textual.widgets import DataTable, Static


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


def clear_table(table: DataTable, relayout: bool, add_columns: Callable[[], None]) -> None:
    """Empty a table for new rows; when its layout changed (a narrow pane), its columns too."""
    if relayout:
        table.clear(columns=True)
        add_columns()
    else:
        table.clear()


def hanging(bullet: tuple[str, str], text: str, width: int, style: str = "") -> list:
    """A bulleted (or labelled) line as Content parts, wrapped at `width` with its
    continuation lines under its text, not under its bullet; as one line (the widget wraps
    it) when `width` is not known yet (0)."""
    indent = len(bullet[0])
    if width <= 0 or not indent:
        return [bullet, (text, style), "\n"]
    out: list = [bullet]
    for i, row in enumerate(Content.assemble((text, style)).wrap(max(width - indent, 1))):
        out += [" " * indent] if i else []
        out += [row, "\n"]
    return out

