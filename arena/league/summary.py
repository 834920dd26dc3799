"""What a session produced (`RunResult`), and what it leaves for readers: `summary.json`
and `games.jsonl`; `start_over` removes what earlier sessions left (a session's start
is `league.run`'s).

`summary.json` is one plain JSON document: the run, the session's counts, the
stopping rules, the tables, and every stored game's result (its last key).
`games.jsonl` holds the same games, one JSON object per line, for readers that
take a game at a time (pandas, jq). Both are written atomically.

A session that ends by itself, or by Ctrl-C, writes its summary and marks
itself ended in the store; one killed (`kill -9`, a power cut, a crash) never
does, and its session row stays open. Either way what was played is kept and
the same command resumes it. `verify`, `report` and the league page say so
with `RunStatus.sentence` (`run_status`): "played 8 of at most 80; the last
session did not finish: run the same command to resume". A run that a
budget, the SPRT or a pool's target stopped is whole: it played what its
rules let it. `foreign_store` tells a league store that is not the one of the
folder's replays (copied from another run folder, say), whose standings would
not be these games'.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.config import ConfigError
from arena.league.lock import holder_of
from arena.league.store import DB_NAME, RESOLVED, LeagueStore
from arena.play.match import REPLAY_MARK
from arena.record.ledger import SOURCES, new_generation
from arena.record.replay import write_atomic_lines

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
    "RunStatus",
    "close_session",
    "foreign_store",
    "history_tables",
    "keep_ratings",
    "pool_tables",
    "read_summary_head",
    "run_status",
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
    store.end_session(plan.session)


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
        store.entrants(),
        store.game_summaries(),
        tables["ratings"]["bt"],
        placement=min(run.placement_matches, run.matches),
    )
    return {"entrants": entrants}


def write_summary(plan: RunPlan, result: RunResult, games: Iterable[GameSummary]) -> None:
    """`summary.json` and `games.jsonl` for the session that produced `result`, a game at a
    time: `games.jsonl` as `games` are read, then summary.json's `games` from it (a league of
    thousands of games is never one list in memory)."""
    lines = (json.dumps(g.to_json(latencies=False)) + "\n" for g in games)
    write_atomic_lines(plan.out / GAMES_NAME, lines)
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
        "games": [],
    }
    head = json.dumps(document, indent=2)[: -len("[]\n}")]  # reopened at its last key
    with (plan.out / GAMES_NAME).open(encoding="utf-8") as rows:
        write_atomic_lines(plan.out / SUMMARY_NAME, _with_rows(head, rows))


def _with_rows(head: str, rows: Iterable[str]) -> Iterator[str]:
    """summary.json as `json.dumps(document, indent=2)` writes it, its games list (the last
    key, `head` ends before it) filled from the JSON lines `rows`, one at a time."""
    yield head + "["
    n = 0
    for n, row in enumerate(rows, start=1):
        shown = json.dumps(json.loads(row), indent=2).replace("\n", "\n    ")
        yield ("," if n > 1 else "") + "\n    " + shown
    yield "\n  ]\n}\n" if n else "]\n}\n"


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


@dataclass(frozen=True)
class RunStatus:
    """How far a run folder's run went."""

    played: int
    """Episodes played (first plays: an episode played again after a no-contest is one)."""
    planned: int | None
    """The most episodes the run plans; None where its config cannot be read."""
    died: bool
    """Its last session began and never ended (killed, or crashed)."""
    stopped: bool
    """Its last session was stopped before the schedule's end (Ctrl-C, an endpoint)."""

    @property
    def partial(self) -> bool:
        """Cut short: the same command would play on."""
        return self.died or (self.stopped and not self.whole)

    @property
    def whole(self) -> bool:
        """Every planned episode played."""
        return self.planned is not None and self.played >= self.planned

    def sentence(self) -> str | None:
        """What to tell a reader of a run cut short; None for a run that is not."""
        if not self.partial:
            return None
        at_most = f" of at most {self.planned}" if self.planned is not None else ""
        why = "did not finish" if self.died else "was stopped before the schedule's end"
        return (
            f"played {self.played}{at_most}; the last session {why}: run the same command to resume"
        )


def run_status(out: Path) -> RunStatus:
    """How far the run in folder `out` went: its store's episodes (else its replays), its
    plan's count, and how its last session ended."""
    db = out / DB_NAME
    died, stored = False, None
    if db.exists():
        try:
            with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
                stored = [row[0] for row in connection.execute("SELECT id FROM episodes")]
                died = _open_session(connection) and holder_of(out) is None  # else: playing
        except sqlite3.Error:
            stored = None
    if stored is None:
        stored = [p.stem for p in (out / "replays").glob("*.json")]
    played = len({episode.partition(REPLAY_MARK)[0] for episode in stored})
    summary = read_summary_head(out / SUMMARY_NAME) or {}
    return RunStatus(played, _planned(out), died, bool(summary.get("interrupted")))


def _open_session(connection: sqlite3.Connection) -> bool:
    """Whether the store's last session never ended (a store from before sessions were
    marked ended cannot say: False)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(sessions)")}
    if "ended" not in columns:
        return False
    row = connection.execute("SELECT ended FROM sessions ORDER BY number DESC LIMIT 1").fetchone()
    return row is not None and row[0] is None


def _planned(out: Path) -> int | None:
    """The most episodes the run in `out` plans (as summary.json says it), or None."""
    from arena.league.lineup import read_resolved
    from arena.league.plan import RunPlan

    if not (out / RESOLVED).exists():
        return None
    try:
        config, master, _ = read_resolved(out)
        return RunPlan(config, master, out, templates={}).episode_count()
    except (ConfigError, ValueError, KeyError):
        return None


def foreign_store(out: Path, *, sample: int = 16) -> str | None:
    """Why the league store of `out` is not the store of its replays, or None: it names
    another run or seed than the folder's config, none of its episodes has its replay file
    there, or none of the files is the one it stored (checked on about `sample` episodes
    spread over the run; one edited replay is `arena verify`'s to find, not a foreign
    store)."""
    db = out / DB_NAME
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            run = connection.execute("SELECT name, master_seed FROM run").fetchone()
            rows = connection.execute("SELECT id, digest FROM episodes ORDER BY rowid").fetchall()
    except sqlite3.Error:
        return None  # a damaged store says so itself when it is opened
    fix = f"`arena rebuild {out}` re-creates it from the replays (the old one is kept beside it)"
    config = _resolved_run(out)
    if run is not None and config is not None and (run[0], run[1]) != config:
        return (
            f"{db} belongs to another run: run {run[0]!r}, seed {run[1]}, while "
            f"{out / RESOLVED} is run {config[0]!r}, seed {config[1]}; {fix}"
        )
    missing = [e for e, _ in rows if not (out / "replays" / f"{e}.json").exists()]
    if rows and len(missing) == len(rows):
        return (
            f"{db} does not belong to the replays in {out / 'replays'}: none of its "
            f"{len(rows)} episode(s) has a replay there (e.g. {missing[0]}); {fix}"
        )
    sampled = [(e, d) for e, d in rows[:: max(1, len(rows) // sample)] if d and e not in missing]
    differing = [e for e, digest in sampled if _digest(out / "replays" / f"{e}.json") != digest]
    if sampled and len(differing) == len(sampled):
        return (
            f"{db} does not belong to the replays in {out / 'replays'}: the replay files of "
            f"its episodes are not the ones it stored (e.g. {differing[0]}); {fix}"
        )
    return None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _resolved_run(out: Path) -> tuple[str, int] | None:
    """(run name, master seed) of the folder's resolved config, or None."""
    from arena.league.lineup import read_resolved

    try:
        config, master, _ = read_resolved(out)
    except ConfigError:
        return None
    return config.run.name, master
