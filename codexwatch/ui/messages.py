"""Messages workers post to the App. Workers never touch widgets; the App owns state."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from codexwatch.core.models import FileHealth, StatusSnapshot, Turn
from codexwatch.ui.view import DashboardView


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
    """New or changed turns from the live follower: every turn, replacing the older list
    (so a newer one waiting in the queue replaces this one), and the failed among them,
    picked out in the follower's thread so the table can show a new one at once."""

    turns: list[Turn]
    health: list[FileHealth] = field(default_factory=list)
    failures: tuple[Turn, ...] | None = None  # None: not picked out

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TurnsChanged)


@dataclass
class ViewBuilt(Message, bubble=False):
    """A worker built the view from the facts as they were at `now`."""

    view: DashboardView
    now: float
    seconds: float  # how long the build took


@dataclass
class ViewFailed(Message, bubble=False):
    """Building the view raised: shown, and the last view stays."""

    error: str


class ReloadHistory(Message, bubble=False):
    """Read the history again (the first-run screen, once Codex wrote something)."""


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
