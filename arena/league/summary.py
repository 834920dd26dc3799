"""What a session produced (`RunResult`), and what it leaves for readers: `summary.json`
and `games.jsonl`; `start_over` removes what earlier sessions left.

`summary.json` is one plain JSON document: the run, the session's counts, the
stopping rules, the tables, and every stored game's result (its last key).
`games.jsonl` holds the same games, one JSON object per line, for readers that
take a game at a time (pandas, jq). Both are written atomically.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.league.store import DB_NAME, LeagueStore
from arena.record.ledger import SOURCES, new_generation
from arena.record.replay import write_atomic, write_atomic_lines

if TYPE_CHECKING:
    from arena.config import Config
    from arena.league.plan import RunPlan
    from arena.results.standings import GameSummary

__all__ = [
    "GAMES_NAME",
    "SUMMARY_NAME",
    "EpisodeFailure",
    "Progress",
    "RunResult",
    "close_session",
    "open_session",
    "pool_tables",
    "read_summary_head",
    "start_over",
    "write_summary",
]

SUMMARY_NAME = "summary.json"
GAMES_NAME = "games.jsonl"


@dataclass(frozen=True)
class EpisodeFailure:
    """An episode that failed: its id and the error, as the summary lists it."""

    episode: str
    error: str

    def to_json(self) -> dict[str, str]:
        """As `summary.json`'s `failed` list holds it."""
        return {"episode": self.episode, "error": self.error}


@dataclass
class RunResult:
    """What a run produced in this session, and the league's tables as it now stands."""

    tables: dict[str, Any] = field(default_factory=dict)
    """The league's tables over every stored game, earlier sessions' included."""
    failed: list[EpisodeFailure] = field(default_factory=list)
    played: int = 0
    """Episodes finished in this session."""
    skipped: int = 0
    """Episodes a previous session had finished, skipped so far."""
    finished_before: int = 0
    """Episodes the store held when this session started (a resume when not 0)."""
    episodes: int = 0
    """Episodes the schedule plans (replays after a no-contest not counted)."""
    interrupted: bool = False
    wall_s: float = 0.0
    in_flight: int = 0
    """Episodes taken by a worker and not yet stored."""
    fallbacks: int = 0
    """Fallbacks in the games finished this session."""
    fallbacks_before: int = 0
    """Fallbacks in the games earlier sessions stored (the standings count both)."""
    replays: int = 0
    """Episodes queued this session to be played again after a no-contest."""
    stopped: str = ""
    """Why the run stopped before its end by itself (an endpoint down too long), or ''."""
    misconfigured: bool = False
    """The run stopped because a model's endpoint is set up wrong (`arena run` exits 3)."""
    stopped_by: str = ""
    """Why no new match started before the schedule's end (a budget, the SPRT), or ''."""
    stopping: dict[str, Any] = field(default_factory=dict)
    """The budgets' spending and the SPRT, as summary.json shows them."""


Progress = Callable[[RunResult], None]
"""Called when the session starts and whenever an episode starts or finishes, with the
run's counts so far."""


def open_session(plan: RunPlan) -> None:
    """The run folder as a session starts: with `--force-new`, earlier sessions' results
    gone (`start_over`); the resolved config written, for readers and for a resume; the
    programs committed to (`RunPlan.commit`)."""
    if plan.resume == "new":
        start_over(plan.out)
    write_atomic(plan.out / "config.resolved.json", json.dumps(plan.resolved(), indent=2))
    plan.commit()


def start_over(out: Path) -> None:
    """--force-new: remove the old results, replays, the viewer's pages and the cut cards'
    kept games; the ledger is append-only and stays, with a new generation begun."""
    from arena.record.cards import PARTIAL  # backgammon's cards: --force-new only

    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", SUMMARY_NAME, GAMES_NAME):
        (out / name).unlink(missing_ok=True)
    for folder in ("replays", "view", PARTIAL, SOURCES):
        shutil.rmtree(out / folder, ignore_errors=True)
    new_generation(out)


def close_session(
    plan: RunPlan, store: LeagueStore, result: RunResult, stopping: dict[str, Any], wall_s: float
) -> None:
    """The session's end: the stopping rules' state and the league's tables over every
    stored game in `result`, the Elo history stored, `summary.json` and `games.jsonl`."""
    from arena.results.tables import league_tables  # numpy's fits: not before the first move

    result.stopping = stopping
    result.tables = league_tables(store.game_summaries(), plan.config, plan.master_seed)
    if plan.pool:
        result.tables |= pool_tables(plan.config, plan.master_seed, store, result.tables)
    store.store_ratings([(i, r) for i, r in result.tables["ratings"]["elo_history"]])
    result.wall_s = wall_s
    write_summary(plan, result, store.game_summaries())
    store.end_session(plan.session)


def pool_tables(
    config: Config, master_seed: int, store: LeagueStore, tables: dict[str, Any]
) -> dict[str, Any]:
    """A pool's own tables beside the league's: its entrants (with status, sessions and
    ratings) and the Bradley-Terry ratings as they stood after each session."""
    from arena.results.pool import entrant_rows, rating_history  # numpy's fits: pools only

    run = config.run
    entrants = entrant_rows(
        store.entrants(), store.game_summaries(), tables["ratings"]["bt"],
        placement=min(run.placement_matches, run.matches),
    )  # fmt: skip
    return {
        "entrants": entrants,
        "history": rating_history(store.game_summaries(), seed=master_seed),
    }


def write_summary(plan: RunPlan, result: RunResult, games: Iterable[GameSummary]) -> None:
    """`summary.json` and `games.jsonl` for the session that produced `result`."""
    rows = [g.to_json(latencies=False) for g in games]
    write_atomic_lines(plan.out / GAMES_NAME, (json.dumps(row) + "\n" for row in rows))
    document = {
        "run": plan.config.run.name,
        "seed": plan.master_seed,
        "episodes": plan.episode_count(),
        "played_this_session": result.played,
        "failed": [failure.to_json() for failure in result.failed],
        "interrupted": result.interrupted,
        "stopped_by": result.stopped_by or None,
        **result.stopping,
        "wall_s": round(result.wall_s, 3),
        **result.tables,
        "games": rows,
    }
    write_atomic(plan.out / SUMMARY_NAME, json.dumps(document, indent=2) + "\n")


def read_summary_head(path: Path) -> dict[str, Any] | None:
    """`summary.json` without its games (None if there is none, or it cannot be read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    data.pop("games", None)
    return data
