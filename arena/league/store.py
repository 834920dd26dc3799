"""The league's SQLite store: one file per run, written in transactions.

`runs/<name>/league.db`, WAL mode. Only the run's writer task writes; finished
episodes (games, fallback records, summaries) go in a group at a time, one
transaction after their replay files are on disk, so a kill at any moment loses
at most the episodes in flight, and a resumed run never plays a finished one
again. Readers (`arena report`, the viewer) open it read-only.

The replays hold everything the store holds: `arena rebuild RUN` re-creates a
damaged or deleted store from them (`league.rebuild`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.config import ConfigError
from arena.play.match import Match
from arena.record.crash import crash_point
from arena.record.replay import fsync_folder, write_atomic
from arena.record.validity import INFRASTRUCTURE_NC
from arena.results.rating_tables import RATING_SESSIONS, RatingTables

if TYPE_CHECKING:  # the standings are imported when the first result is stored or read
    from arena.record.replay import Replay
    from arena.results.standings import GameSummary  # not before the first move (see test_startup)

__all__ = [
    "DB_NAME",
    "RESOLVED",
    "LeagueStore",
    "StoreDamaged",
]

DB_NAME = "league.db"
RESOLVED = "config.resolved.json"
"""The config as played, written beside the store when a run starts."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS run (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL,
    master_seed INTEGER NOT NULL,
    config TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS policies (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    author TEXT,
    templates TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    id TEXT PRIMARY KEY,
    match_index INTEGER NOT NULL,
    match_id TEXT NOT NULL,
    entry TEXT NOT NULL,
    game TEXT NOT NULL,
    k INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    replay TEXT NOT NULL,
    integrity TEXT NOT NULL,
    finished REAL NOT NULL,
    digest TEXT
);
CREATE TABLE IF NOT EXISTS games (
    episode TEXT NOT NULL REFERENCES episodes(id),
    game_index INTEGER NOT NULL,
    match_index INTEGER NOT NULL,
    game TEXT NOT NULL,
    seat0 TEXT NOT NULL,
    seat1 TEXT NOT NULL,
    scores TEXT,
    reason TEXT NOT NULL,
    ending TEXT NOT NULL,
    detail TEXT NOT NULL,
    plies INTEGER NOT NULL,
    summary TEXT NOT NULL,
    PRIMARY KEY (episode, game_index)
);
CREATE TABLE IF NOT EXISTS fallbacks (
    episode TEXT NOT NULL REFERENCES episodes(id),
    game_index INTEGER NOT NULL,
    ply INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    alias TEXT NOT NULL,
    policy TEXT NOT NULL,
    cause TEXT NOT NULL,
    last_error TEXT NOT NULL,
    attempts TEXT NOT NULL,
    move TEXT NOT NULL,
    side TEXT
);
CREATE TABLE IF NOT EXISTS sessions (
    number INTEGER PRIMARY KEY,
    started REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    entry TEXT NOT NULL,
    game TEXT NOT NULL,
    k INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    session INTEGER NOT NULL,
    phase TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rating_events (
    match_index INTEGER NOT NULL,
    policy TEXT NOT NULL,
    elo REAL NOT NULL,
    PRIMARY KEY (match_index, policy)
);
"""


class StoreDamaged(ConfigError):
    """The league store cannot be read: damaged, truncated or not a store at all."""

    def __init__(self, path: Path, error: sqlite3.Error) -> None:
        super().__init__(
            f"{path} is damaged and cannot be read ({error}); the replays are the truth: "
            f"`arena rebuild {path.parent}` re-creates it from them"
        )


class LeagueStore(RatingTables):
    """One run's results; open it with `open_for_run` (the writer) or `open_readonly`.
    Its rating tables' reads and writes are `RatingTables`'."""

    def __init__(self, connection: sqlite3.Connection, path: Path, *, writer: bool) -> None:
        self._db = connection
        self.path = path
        self._writer = writer

    @classmethod
    def open_for_run(cls, out: Path) -> LeagueStore:
        """Open (creating if needed) the store of the run in `out`, for writing."""
        out.mkdir(parents=True, exist_ok=True)
        path = out / DB_NAME
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            # One transaction: in autocommit every CREATE would be a commit and an fsync.
            connection.executescript(f"BEGIN;\n{_SCHEMA}{RATING_SESSIONS}COMMIT;")
            for where, kind in _ADDED_LATER:  # a store from before digests, sides, pools
                table, column = where.split(".")
                if _add_column(connection, table, column, kind) and column == "ended":
                    connection.execute("UPDATE sessions SET ended = started")  # those were over
            _probe(connection)
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise StoreDamaged(path, exc) from exc
        return cls(connection, path, writer=True)

    @classmethod
    def open_readonly(cls, out: Path) -> LeagueStore:
        """Open an existing run's store without the right to change it."""
        path = out / DB_NAME
        if not path.exists():
            replays = out / "replays"
            fix = (
                f"`arena rebuild {out}` makes it again from the replays"
                if replays.is_dir() and any(replays.iterdir())
                else f"is {out} a run folder of `arena run`?"
            )
            raise FileNotFoundError(f"{path} does not exist: {fix}")
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            _probe(connection)
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise StoreDamaged(path, exc) from exc
        return cls(connection, path, writer=False)

    def close(self) -> None:
        """Close; a writer folds the WAL in and leaves WAL mode if no one else reads, so a
        finished run is one file that readers (who cannot checkpoint) leave as it is."""
        try:
            if self._writer:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._db.execute("PRAGMA journal_mode=DELETE")  # refused while others read
        except sqlite3.Error:
            pass  # a reader is connected: the WAL stays, for the next writer to fold in
        finally:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self._db.in_transaction:  # inside another: its commit is this one's
            yield self._db
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- the run ---------------------------------------------------------------------

    def stored_run(self) -> tuple[int, dict[str, Any]] | None:
        """The master seed and resolved config a previous session stored, if any."""
        row = self._db.execute("SELECT master_seed, config FROM run WHERE id = 1").fetchone()
        return (int(row[0]), json.loads(row[1])) if row else None

    def stored_templates(self) -> dict[str, dict[str, str]]:
        """The template each stored policy was asked with: policy -> family -> SHA-256
        (empty for a policy of a rebuilt store, whose replays keep the hashes)."""
        rows = self._db.execute("SELECT name, templates FROM policies")
        return {name: json.loads(templates) for name, templates in rows}

    def begin_run(
        self,
        name: str,
        master_seed: int,
        config: dict[str, Any],
        policies: list[dict[str, Any]],
        *,
        session: int = 1,
    ) -> None:
        """Record (or, resuming with a changed config, replace) the run's config and policies,
        and begin `session`. A policy first stored now is added in this session; one stored
        before keeps its session and its retirement."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO run (id, name, master_seed, config, created) VALUES (1, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET config = excluded.config",
                (name, master_seed, json.dumps(config, sort_keys=True), time.time()),
            )
            db.execute(
                "INSERT OR REPLACE INTO sessions (number, started) VALUES (?, ?)",
                (session, time.time()),
            )
            for p in policies:
                played = p.get("played_as")
                db.execute(
                    "INSERT INTO policies (name, kind, author, templates, fingerprint, played_as, "
                    "added) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                    "kind = excluded.kind, author = excluded.author, templates = excluded.templates, "
                    "fingerprint = COALESCE(excluded.fingerprint, fingerprint), "
                    "played_as = COALESCE(excluded.played_as, played_as)",
                    (
                        p["name"],
                        p["kind"],
                        p.get("author"),
                        json.dumps(p.get("templates", {})),
                        p.get("fingerprint"),
                        json.dumps(played) if played is not None else None,
                        p.get("added") or session,
                    ),
                )

    # -- a pool's entrants and schedule ------------------------------------------------

    def entrants(self) -> list[dict[str, Any]]:
        """Every stored policy in the order it was first stored: name, kind, author,
        fingerprint, played_as (what decides its play), added (the session that first
        stored it) and retired (None, or why and in which session)."""
        have = self._columns("policies")
        shown = ", ".join(c if c in have else f"NULL AS {c}" for c in _ENTRANT_COLUMNS)
        cursor = self._db.execute(f"SELECT {shown} FROM policies ORDER BY rowid")
        rows = [dict(zip(_ENTRANT_COLUMNS, row, strict=True)) for row in cursor]
        for row in rows:  # the JSON columns, parsed
            row["played_as"], row["retired"] = (
                json.loads(row[k]) if row[k] else None for k in ("played_as", "retired")
            )
        return rows

    def _columns(self, table: str) -> set[str]:
        """The columns `table` has (none when it does not exist)."""
        return {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}

    def retire(self, name: str, retirement: Mapping[str, Any]) -> bool:
        """Retire entrant `name` (`retirement`: `league.pool.Retirement` as JSON); False if it
        was retired already (a retirement is never undone nor rewritten)."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE policies SET retired = ? WHERE name = ? AND retired IS NULL",
                (json.dumps(dict(retirement)), name),
            )
            return cursor.rowcount == 1

    def scheduled_matches(self) -> list[Match]:
        """A pool's matches as they were scheduled, by sequence number (the match index)."""
        import games  # the engines' registry: a pool's schedule only

        if not self._columns("matches"):  # read-only, a store from before pools
            return []
        rows = self._db.execute(
            "SELECT seq, entry, game, k, seed, first, second FROM matches ORDER BY seq"
        )
        return [
            Match(
                seq,
                entry,
                game,
                k,
                seed,
                first,
                second,
                games.load(game).match_format.games_per_episode,
            )
            for seq, entry, game, k, seed, first, second in rows
        ]

    def schedule(self, matches: list[Match], session: int, phase: str) -> None:
        """Store newly scheduled pool matches (one transaction), before any of them starts:
        their sequence numbers are never computed again."""
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (m.index, m.id, m.entry, m.game, m.k, m.seed, m.first, m.second, session, phase)
                    for m in matches
                ],
            )

    def end_session(self, number: int) -> None:
        """Session `number` ended (its summary written): one never ended died."""
        with self._transaction() as db:
            db.execute("UPDATE sessions SET ended = ? WHERE number = ?", (time.time(), number))

    def adopt_league(self) -> int:
        """A league become a pool: its stored matches enter the pool's schedule at the places
        the league gave them; how many."""
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO matches SELECT match_index, match_id, entry, game, k, seed, first, "
                "second, COALESCE(MIN(session), 1), 'league' FROM episodes GROUP BY match_index"
            )
            return cursor.rowcount

    def sessions(self) -> list[int]:
        """The numbers of the sessions begun in this run folder."""
        if not self._columns("sessions"):  # read-only, a store from before sessions
            return []
        return [int(row[0]) for row in self._db.execute("SELECT number FROM sessions ORDER BY 1")]

    def rules_versions(self) -> dict[str, set[int]]:
        """Game -> the rules versions its stored games were played under (a store from before
        the column has none)."""
        out: dict[str, set[int]] = {}
        if "rules_version" not in self._columns("episodes"):
            return out
        rows = self._db.execute(
            "SELECT DISTINCT game, rules_version FROM episodes WHERE rules_version IS NOT NULL"
        )
        for game, version in rows:
            out.setdefault(game, set()).add(int(version))
        return out

    # -- results ---------------------------------------------------------------------

    def finished_episodes(self) -> set[str]:
        """Ids of the episodes whose results are stored."""
        return {row[0] for row in self._db.execute("SELECT id FROM episodes")}

    def fallback_total(self) -> int:
        """Fallbacks in every stored game, both seats (their summaries' `fallback_count`)."""
        return int(self._db.execute("SELECT COUNT(*) FROM fallbacks").fetchone()[0])

    def spoiled_episodes(self) -> set[str]:
        """Ids of the stored episodes with a game the infrastructure spoiled (a no-contest
        that did not measure a seat, `record.validity`)."""
        rows = self._db.execute(
            "SELECT DISTINCT episode FROM games WHERE ending = 'no-contest' "
            "AND substr(detail, 1, ?) = ?",
            (len(INFRASTRUCTURE_NC), INFRASTRUCTURE_NC),
        )
        return {row[0] for row in rows}

    def keep(self, replay: Replay, out: Path) -> list[GameSummary]:
        """A finished episode kept for good (`keep_all` of one); its game summaries."""
        return self.keep_all([replay], out)[0]

    def keep_all(self, replays: Sequence[Replay], out: Path) -> list[list[GameSummary]]:
        """Finished episodes kept for good as one group: each replay file written atomically to
        `out/replays/` and fsynced, one fsync of the folder, then one transaction for them all
        (none is stored before every file of the group is on the disk); each one's summaries."""
        folder, kept = out / "replays", []
        for replay in replays:
            path, text = folder / f"{replay.episode}.json", replay.model_dump_json()
            write_atomic(path, text, folder=False)
            crash_point("replay")
            kept.append((replay, path, hashlib.sha256(text.encode()).hexdigest()))
        fsync_folder(folder)
        with self._transaction():
            return [self.record(*entry) for entry in kept]

    def record(self, replay: Replay, replay_path: Path, digest: str) -> list[GameSummary]:
        """Store a finished episode in one transaction (or in the one open), with the SHA-256
        of its replay file (`digest`, which `arena verify` checks); its game summaries."""
        from arena.results.standings import summarise  # not before the first move (test_startup)

        summaries, match, seats = summarise(replay), replay.match, replay.spectator.policies
        details = {g.index: g.result.detail for g in replay.games if g.result is not None}
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO episodes (id, match_index, match_id, entry, game, k, seed, "
                "first, second, replay, integrity, finished, digest, session, rules_version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    replay.episode,
                    match.index,
                    match.id,
                    match.entry,
                    replay.game,
                    match.k,
                    match.seed,
                    match.first,
                    match.second,
                    str(replay_path),
                    json.dumps(replay.integrity),
                    time.time(),
                    digest,
                    replay.session or None,
                    replay.rules_version,
                ),
            )
            for s in summaries:
                db.execute(
                    "INSERT OR REPLACE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        s.episode,
                        s.game_index,
                        s.match_index,
                        s.game,
                        s.policies[0],
                        s.policies[1],
                        json.dumps(list(s.scores)) if s.scores is not None else None,
                        s.reason,
                        s.ending,
                        details.get(s.game_index, ""),
                        s.plies,
                        json.dumps(s.to_json()),
                    ),
                )
            for game in replay.games:
                for f in game.fallbacks:
                    db.execute(
                        "INSERT INTO fallbacks (episode, game_index, ply, seat, alias, policy, cause, "
                        "side, last_error, attempts, move) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            replay.episode,
                            game.index,
                            f.ply,
                            f.seat,
                            f.alias,
                            seats[str(game.index)][f.seat],
                            f.cause,
                            f.side,
                            f.last_error,
                            json.dumps([a.model_dump() for a in f.attempts]),
                            json.dumps(f.move),
                        ),
                    )
        return summaries

    def episode_rows(self) -> list[dict[str, Any]]:
        """Every stored episode (id, match index and id, replay path, digest, when stored)."""
        cursor = self._db.execute(
            "SELECT id, match_index, match_id, replay, digest, finished FROM episodes "
            "ORDER BY match_index, id"
        )
        return [dict(zip([d[0] for d in cursor.description], row, strict=True)) for row in cursor]

    def stored_results(self) -> dict[str, dict[int, tuple[object, ...]]]:
        """Episode -> game index -> (scores, reason, ending, plies), as stored."""
        out: dict[str, dict[int, tuple[object, ...]]] = {}
        query = "SELECT episode, game_index, scores, reason, ending, plies FROM games"
        for episode, index, scores, reason, ending, plies in self._db.execute(query):
            parsed = json.loads(scores) if scores is not None else None
            out.setdefault(episode, {})[int(index)] = (parsed, reason, ending, int(plies))
        return out

    def game_summaries(self, *, until_session: int | None = None) -> Iterator[GameSummary]:
        """Every stored game, in schedule order, read as it is iterated; with
        `until_session`, only those played in that session or before."""
        from arena.results.standings import GameSummary  # not before the first move (test_startup)

        if until_session is None or "session" not in self._columns("episodes"):
            rows = self._db.execute(
                "SELECT summary FROM games ORDER BY match_index, episode, game_index"
            )
        else:
            rows = self._db.execute(
                "SELECT g.summary FROM games g JOIN episodes e ON e.id = g.episode "
                "WHERE COALESCE(e.session, 1) <= ? ORDER BY g.match_index, g.episode, g.game_index",
                (until_session,),
            )
        for (row,) in rows:
            yield GameSummary.from_json(json.loads(row))

    def fallback_rows(self) -> Iterator[dict[str, Any]]:
        """Every fallback record, one dict each, in schedule order, read as it is iterated."""
        side = "f.side" if "side" in self._columns("fallbacks") else "NULL AS side"  # before sides
        cursor = self._db.execute(
            "SELECT f.episode, e.match_index, e.game, f.game_index, f.ply, f.seat, f.alias, f.policy, "
            f"f.cause, {side}, f.last_error, f.attempts, f.move "
            "FROM fallbacks f JOIN episodes e ON e.id = f.episode "
            "ORDER BY e.match_index, f.episode, f.game_index, f.ply, f.seat"
        )
        names = [d[0] for d in cursor.description]
        for row in cursor:
            yield dict(zip(names, row, strict=True))


_ENTRANT_COLUMNS = ("name", "kind", "author", "fingerprint", "played_as", "added", "retired")

_ADDED_LATER = (
    ("episodes.digest", "TEXT"),
    ("fallbacks.side", "TEXT"),
    ("episodes.session", "INTEGER"),
    ("episodes.rules_version", "INTEGER"),
    ("policies.fingerprint", "TEXT"),
    ("policies.played_as", "TEXT"),
    ("policies.added", "INTEGER"),
    ("policies.retired", "TEXT"),
    ("sessions.ended", "REAL"),
)
"""Nullable columns added since the first stores: (table.column, type)."""


def _add_column(connection: sqlite3.Connection, table: str, column: str, kind: str) -> bool:
    """Add a nullable column a store written by an older version lacks; whether it did."""
    if column in {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}:
        return False
    connection.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    return True


def _probe(connection: sqlite3.Connection) -> None:
    """Read every table once: a damaged or truncated file fails here, not mid-report."""
    for table in ("run", "episodes", "games", "fallbacks", "rating_events"):
        connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
