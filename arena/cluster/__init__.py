"""The executor seam: where a run's episodes are played, in this process or on a Ray cluster.

executor   the seam the run plays through: `Executor`, `LocalExecutor`, `open_executor`
errors     how an episode played elsewhere fails: `EpisodeLost`, `WorkerRefused`
remote     the driver's side of an episode played elsewhere: its hooks and ledger here
on_ray     each such episode one Ray task (imported only for `executor = "ray"`: Ray is
           an optional extra)
worker     what a worker does with one episode, once it has checked it runs the driver's
           code
messages   what passes between driver and worker: the run's plan, once, and each
           episode's messages back

Imports point one way: executor -> on_ray -> remote, worker -> messages, errors. The
run's plan is seen through `messages.Plan`, so nothing here imports `arena.league`,
which plays through this seam.
"""

from arena.cluster.errors import EpisodeLost, WorkerRefused
from arena.cluster.executor import Executor, LocalExecutor, open_executor

__all__ = ["EpisodeLost", "Executor", "LocalExecutor", "WorkerRefused", "open_executor"]
