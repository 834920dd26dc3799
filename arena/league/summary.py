"""What a session produced (`RunResult`), and what it leaves for readers: `summary.json`
and `games.jsonl`; `start_over` removes what earlier sessions left (a session's start
is `league.run`'s).

`summary.json` is one plain JSON document: the run, the session's counts, the
stopping rules, the tables, and every stored game's result (its last key).
`games.jsonl` holds the same games, one JSON object per line, for readers that
take a game at a time (pandas, jq). Both are written atomically.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.config import ConfigError
from arena.league.lock import hold_run_folder
from arena.league.store import DB_NAME, LeagueStore
from arena.record.ledger import SOURCES, new_generation
from arena.record.replay import write_atomic, write_atomic_lines

if TYPE_CHECKING:
    from arena.config import Config
    from arena.league.plan import RunPlan
    from arena.record.replay import Replay
    from arena.results.standings import GameSummary

__all__ = [
    "GAMES_NAME",
    "SUMMARY_NAME",
    "EpisodeFailure",
    "Progress",
    "RunResult",
    "close_session",
    "history_tables",
    "keep_ratings",
    "pool_tables",
    "read_summary_head",
    "rebuild_run",
    "rebuild_store",
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
    stored game in `result` (fitted once, here), the Elo events and this session's ratings
    stored (`keep_ratings`), `summary.json` and `games.jsonl`."""
    from arena.results.tables import league_tables  # numpy's fits: not before the first move

    result.stopping = stopping
    result.tables = league_tables(store.game_summaries(), plan.config, plan.master_seed)
    keep_ratings(store, plan.config, plan.master_seed, result.tables, plan.session)
    result.tables |= history_tables(plan.config, plan.master_seed, store, result.tables)
    result.wall_s = wall_s
    write_summary(plan, result, store.game_summaries())


def keep_ratings(
    store: LeagueStore, config: Config, master_seed: int, tables: dict[str, Any], session: int
) -> None:
    """Store the Elo events and the ratings as session `session` leaves them (`tables`,
    over every stored game). A session that stored games and no ratings (a store from
    before the snapshots, a session killed before its end) gets its own now, fitted
    once to the games up to it; no session's is ever fitted again."""
    from arena.results.history import snapshot
    from arena.results.tables import league_tables

    store.store_ratings([(i, moved) for i, moved in tables["ratings"]["elo_events"]])
    kept = {s for s, _, _ in store.snapshots()}
    for earlier in store.played_sessions():
        if earlier < session and earlier not in kept:
            fitted = league_tables(store.game_summaries(until_session=earlier), config, master_seed)
            store.store_snapshot(earlier, "", snapshot(fitted, master_seed))
    store.store_snapshot(session, store.results_stamp(), snapshot(tables, master_seed))


def history_tables(
    config: Config, master_seed: int, store: LeagueStore, tables: dict[str, Any]
) -> dict[str, Any]:
    """`history`, the ratings as each session that played a game left them (read from the
    store, never fitted again); a pool's entrants besides (`pool_tables`)."""
    from arena.results.history import session_history

    out: dict[str, Any] = {
        "history": session_history(
            ((s, kept) for s, _, kept in store.snapshots()), store.played_sessions()
        )
    }
    if config.run.pool:
        out |= pool_tables(config, master_seed, store, tables)
    return out


def pool_tables(
    config: Config, master_seed: int, store: LeagueStore, tables: dict[str, Any]
) -> dict[str, Any]:
    """A pool's own tables beside the league's: its entrants, with status, sessions and
    ratings (`tables`' Bradley-Terry; `master_seed` is the seed they were fitted with)."""
    from arena.results.pool import entrant_rows  # pools only

    run = config.run
    entrants = entrant_rows(
        store.entrants(), store.game_summaries(), tables["ratings"]["bt"],
        placement=min(run.placement_matches, run.matches),
    )  # fmt: skip
    return {"entrants": entrants}


def rebuild_run(out: Path) -> int:
    """`arena rebuild`: the store re-created from the replays (`league.store.rebuild_store`),
    and `summary.json` and `games.jsonl` written anew from it; the episodes stored."""
    from arena.league.lineup import read_resolved  # a rebuild only
    from arena.league.plan import RunPlan
    from arena.results.tables import league_tables

    stored = rebuild_store(out)
    config, master, _ = read_resolved(out)
    plan = RunPlan(config, master, out, templates={})
    store = LeagueStore.open_readonly(out)
    try:
        result = RunResult()
        latest = store.latest_snapshot()  # stored by the rebuild: read, not fitted again
        kept = latest[1] if latest is not None else None
        result.tables = league_tables(store.game_summaries(), config, master, stored=kept)
        result.tables |= history_tables(config, master, store, result.tables)
        write_summary(plan, result, store.game_summaries())
    finally:
        store.close()
    return stored


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


def _first_sessions(replays: Iterable[Replay]) -> dict[str, int]:
    """Policy -> the first session a replay shows it playing in."""
    first: dict[str, int] = {}
    for replay in replays:
        for seats in replay.spectator.policies.values():
            for name in seats:
                first[name] = min(first.get(name, replay.session or 1), replay.session or 1)
    return first


def _restore_retirements(out: Path, store: LeagueStore) -> None:
    """A rebuilt pool's retirements, from the ledger's `entrant_retired` lines."""
    from arena.league.pool import Retirement  # a pool's rebuild only
    from arena.record.ledger import read_current

    for event in read_current(out):
        if event.get("event") == "entrant_retired":
            store.retire(str(event["policy"]), Retirement.from_json(event).to_json())


def rebuild_store(out: Path) -> int:
    """Re-create `out/league.db` from `out/replays/`, storing every replay again in schedule
    order and working the ratings out anew; the episodes stored. The digests the new store
    keeps are those of the replays as they are now: after a rebuild, only a run digest
    published earlier still tells whether a replay was edited."""
    from arena.league.lineup import read_resolved  # a rebuild only
    from arena.record.replay import load_replay
    from arena.results.tables import league_tables

    config, master, resolved = read_resolved(out)
    paths = sorted((out / "replays").glob("*.json"))
    if not paths:
        raise ConfigError(f"{out} has no replays to rebuild its store from")
    replays = []
    for path in paths:
        try:
            replays.append((load_replay(path), path))
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"{path} cannot be read as a replay ({exc}): move it out of replays/ to rebuild "
                "without it"
            ) from exc
    replays.sort(key=lambda item: (item[0].match.index, item[0].episode))
    with hold_run_folder(out):
        for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
            (out / name).unlink(missing_ok=True)
        store = LeagueStore.open_for_run(out)
        try:
            fingerprints = {
                name: value for r, _ in replays for name, value in r.spectator.fingerprints.items()
            }
            added = _first_sessions(r for r, _ in replays)
            policies: list[dict[str, Any]] = [
                {"name": n, "kind": p.kind, "author": p.author, "templates": {},
                 "fingerprint": fingerprints.get(n), "added": added.get(n)}
                for n, p in config.policies.items()
            ]  # fmt: skip
            store.begin_run(config.run.name, master, resolved, policies)
            store.restore_sessions({r.session or 1 for r, _ in replays})
            for replay, path in replays:
                store.record(replay, path, hashlib.sha256(path.read_bytes()).hexdigest())
            if config.run.pool:
                store.adopt_league()
                _restore_retirements(out, store)
            tables = league_tables(store.game_summaries(), config, master)
            keep_ratings(store, config, master, tables, max(store.played_sessions(), default=1))
        finally:
            store.close()
    return len(replays)
