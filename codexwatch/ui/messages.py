"""Messages workers post to the App. Workers never touch widgets; the App owns state."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from codexwatch.core.models import FileHealth, StatusSnapshot, Turn


@dataclass
class HistoryProgress(Message, bubble=False):
    """Loading the history: `done` of `total` files read."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, HistoryProgress)


@dataclass
class HistoryLoaded(Message, bubble=False):
    turns: list[Turn]
    health: list[FileHealth]
    home_problem: str | None = None


@dataclass
class HistoryFailed(Message, bubble=False):
    error: str


@dataclass
class TurnsChanged(Message, bubble=False):
    """New or changed turns from the live follower (whole turns, replacing older versions)."""

    turns: list[Turn]
    health: list[FileHealth] = field(default_factory=list)


@dataclass
class FollowerProblem(Message, bubble=False):
    """The live follower fell back or hit something the user should know."""

    text: str


@dataclass
class StatusUpdated(Message, bubble=False):
    snapshot: StatusSnapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StatusUpdated)


@dataclass
class RunsUpdated(Message, bubble=False):
    """The `codexwatch run` supervisors recorded in the state directory (sources.runs.read_runs)."""

    runs: list[dict]

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunsUpdated)
