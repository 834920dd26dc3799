"""What passes between the driver and a worker: the run's plan, once per worker process
(`WorkerPlan`), and each episode's messages back (`Message`), typed records that pickle
(Ray carries them) and are told apart by their type:

- `Kept`: after each game but the last, the games so far (a card cut later keeps
  them, as in a local run);
- `Played`: the episode's replay, its integrity block empty: the driver adds it;
  or `Failed`, the traceback of what went wrong on the worker;
- `Logged`: while a game goes on, the events logged so far.

Each message carries the events logged before it (JSON lines, for the driver's events
file), so a short episode is one message.

Both sides import this module, and it imports neither: the run's plan is seen through
`Plan`, what the cluster needs of `arena.league.plan.RunPlan`, so the cluster never
imports the league that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from arena.config import Config
    from arena.play.episode import EpisodeSetup
    from arena.play.protocol import MakesSeats
    from arena.programs import ProgramInfo

__all__ = ["Failed", "Kept", "Logged", "Message", "Plan", "Played", "WorkerPlan"]


class Plan(Protocol):
    """A run's plan as the cluster uses it (`arena.league.plan.RunPlan` is one): the checked
    config, its seats, and what each game's episodes need. A worker is sent it (it
    pickles)."""

    @property
    def config(self) -> Config:
        """The run's validated config."""
        ...

    @property
    def programs(self) -> Mapping[str, ProgramInfo]:
        """Program policies' registrations, each with whether it is trusted outside bwrap."""
        ...

    def seat_maker(self) -> MakesSeats:
        """The maker of the seats a worker plays (neither models' nor people's: the driver
        plays the episodes that have them)."""
        ...

    def setup_for(self, game_name: str, seat_maker: MakesSeats | None = None) -> EpisodeSetup:
        """Everything an episode of `game_name` needs, on the process that plays it, its
        seats made by `seat_maker`."""
        ...


@dataclass(frozen=True)
class WorkerPlan:
    """What every worker needs of the run, sent once per worker process."""

    key: str
    """Unique per session: a worker caches the plan under it."""
    build: str
    """The driver's `code_build()`: a worker running other code is refused."""
    plan: Plan
    verbose: bool


@dataclass(frozen=True)
class Kept:
    """The games of the episode so far, after each game but the last."""

    replay_json: str
    """The replay of the games played, as JSON."""
    events: tuple[str, ...] = ()
    """The events logged before it, as JSON lines."""


@dataclass(frozen=True)
class Played:
    """The episode's replay, its integrity block empty (the driver adds it)."""

    replay_json: str
    """The replay, as JSON."""
    events: tuple[str, ...] = ()
    """The events logged before it, as JSON lines."""


@dataclass(frozen=True)
class Failed:
    """The episode failed on the worker: the driver logs it as the episode's failure."""

    traceback: str
    """What went wrong, as the worker's traceback."""
    events: tuple[str, ...] = ()
    """The events logged before it, as JSON lines."""


@dataclass(frozen=True)
class Logged:
    """Events logged while a game goes on, sent at most `arena.cluster.worker.FLUSH_S`
    apart."""

    events: tuple[str, ...]
    """The events, as JSON lines."""


Message = Kept | Played | Failed | Logged
"""What a worker sends back of an episode it plays (`arena.cluster.worker`)."""
