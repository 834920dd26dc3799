"""What a session writes before its first game: the plan (`league.plan`) is a value, and
this is where it meets the run folder.

`open_session` readies the folder before a worker is sent the plan: with
`--force-new` earlier sessions' results are gone, the resolved config is written,
and the programs are committed to (their SHA-256 in the ledger, their bytes kept
privately), which gives the plan its commits. `begin` then stores the config and
the policies in the league's store, settles a pool's retirements
(`league.pool.settle_retirements`), and lets each game's hooks settle what a killed
session left (a cut card's finished games are stored).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import games
from arena.league.plan import RunPlan
from arena.league.pool import settle_retirements
from arena.league.store import LeagueStore
from arena.league.summary import start_over
from arena.record.ledger import commit_programs
from arena.record.replay import Replay, write_atomic

__all__ = ["begin", "open_session"]


def open_session(plan: RunPlan) -> RunPlan:
    """The run folder as a session starts: with `--force-new`, earlier sessions' results
    gone (`start_over`); the resolved config written, for readers and for a resume; the
    programs committed to before any of them plays. The plan with its commits, which its
    programs' games record."""
    if plan.resume == "new":
        start_over(plan.out)
    write_atomic(plan.out / "config.resolved.json", json.dumps(plan.resolved(), indent=2))
    return dataclasses.replace(plan, commits=commit_programs(plan.out, plan.programs))


def begin(plan: RunPlan, store: LeagueStore, keep: Callable[[Replay], object]) -> None:
    """What a session does in its store before its first game: the config and policies
    stored, a pool's retirements settled, and what a killed session left of each game
    settled by its hooks (a cut card's games stored with `keep`)."""
    store.begin_run(
        plan.config.run.name, plan.master_seed, plan.resolved(), plan.policy_records(),
        session=plan.session,
    )  # fmt: skip
    if plan.pool:
        settle_retirements(plan, store)
    finished = store.finished_episodes()
    for name in plan.games_played():
        plan.hooks(games.load(name)).resume(keep, finished)
