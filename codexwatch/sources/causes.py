"""Causes Codex's own log names for failures the rollouts do not record (era C's TUI).

Codex 0.140's TUI writes `logs_2.sqlite` (`sources/logdb.py`): a failed turn whose rollout
says nothing of its cause (`unrecorded`) can be matched there by turn id. Each session is
asked about once, whichever reading needs it.
"""

from __future__ import annotations

from pathlib import Path

from codexwatch.core.classify import with_logged_cause
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

    def given(self, turns: list[Turn]) -> list[Turn]:
        """`turns`, each unrecorded failure with its cause where the log has one (a new
        Turn: core.classify.with_logged_cause)."""
        self.look_up({t.session_id for t in turns if t.error_class == "unrecorded"})
        causes = self.causes
        if not causes:
            return turns
        return [with_logged_cause(t, causes.get(t.turn_id)) if t.error_class == "unrecorded" else t
                for t in turns]
