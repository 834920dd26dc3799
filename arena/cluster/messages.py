"""What passes between the driver and a worker: the run's plan, once per worker process
(`WorkerPlan`), and each episode's messages back (`Message`).

Both sides import this module, and it imports neither: the run's plan is seen through
`Plan`, what the cluster needs of `arena.league.plan.RunPlan`, so the cluster never
imports the league that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from arena.config import Config
    from arena.play.episode import EpisodeSetup

__all__ = ["Message", "Plan", "WorkerPlan"]


class Plan(Protocol):
    """A run's plan as the cluster uses it (`arena.league.plan.RunPlan` is one): the checked
    config, and what each game's episodes need. A worker is sent it (it pickles)."""

    @property
    def config(self) -> Config:
        """The run's validated config."""
        ...

    def setup_for(self, game_name: str) -> EpisodeSetup:
        """Everything an episode of `game_name` needs, on the process that plays it."""
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


Message = tuple[str, Any, list[str]]
"""What a worker sends back of an episode it plays: kind, payload and the events logged
before it (`arena.cluster.worker`)."""
