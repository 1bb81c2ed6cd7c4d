"""Causes Codex's own log names for failures the rollouts do not record (era C's TUI).

Codex 0.140's TUI writes `logs_2.sqlite` (`sources/logdb.py`): a failed turn whose rollout
says nothing of its cause (`unrecorded`) can be matched there by turn id. Each session is
asked about once, whichever reading needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from codexwatch.core.classify import classify
from codexwatch.core.models import Turn
from codexwatch.sources import logdb


class LogCauses:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.causes: dict[str, str] = {}  # turn id -> the log's message
        self.checked: set[str] = set()  # sessions asked about

    def look_up(self, sessions: set[str]) -> None:
        """What Codex's log says of these sessions' failed turns, asked once a session."""
        new = sessions - self.checked
        if new:
            self.causes.update(logdb.turn_errors(self.home, new))
            self.checked |= new

    def add_to(self, turns: Iterable[Turn]) -> None:
        """Every unrecorded failure among `turns` given its cause, where the log has one."""
        turns = list(turns)
        self.look_up({t.session_id for t in turns if t.error_class == "unrecorded"})
        if self.causes:
            for turn in turns:
                self.give(turn)

    def give(self, turn: Turn) -> None:
        """An unrecorded failure's cause from Codex's log, if it has one for the turn."""
        message = self.causes.get(turn.turn_id)
        if turn.error_class == "unrecorded" and message:
            turn.message = message
            turn.error_class, turn.http_status, _ = classify(None, message)
