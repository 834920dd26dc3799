"""`arena rebuild RUN`: a run's league store re-created from its replays and its ledger.

The replays are the truth. Two passes over `replays/`, one replay in memory at
a time, so the memory a rebuild takes does not grow with the games: the first
reads every file (one that is not a replay of this arena is refused, naming
it, before anything is written) and keeps of each only its place in the
schedule (match index, episode) and what it says of its policies; the second
stores them in schedule order. The new store is built in a folder beside the
old one and takes its name only once whole; the old one, damaged or not, is
kept as `league.db.damaged-<time>`.

Restored, because a resume and a pool's next session read them: each policy's
template hashes (matched by path: the config names each policy's template, the
replay maps each hash to its path), its fingerprint and, where the config
reproduces it, what decides its play (`played_as`); its author as the replays
name it; the sessions (every number up to the last a replay or a retirement
names, the last left unfinished if the old store said so); the retirements
(the ledger's `entrant_retired` lines); and a pool's schedule: every match
played, at its place, in the session that first played it, `placement` up to
`placement_matches` and `round` after, with a match of a pair missing below
one played (a killed session's) scheduled again at the end. Not restorable:
the template of a policy that never played a game (nothing records it), and a
scheduled match of which no game finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import games
from arena.config import Config, ConfigError, HumanPolicy
from arena.league.lock import hold_run_folder
from arena.league.store import DB_NAME, LeagueStore
from arena.play.fingerprint import fingerprint, played_as
from arena.play.match import Match
from arena.record.ledger import read_current
from arena.record.replay import Replay, ReplayUnreadable, load_replay

__all__ = ["KEPT_PREFIX", "rebuild_run", "rebuild_store"]

KEPT_PREFIX = f"{DB_NAME}.damaged-"
"""How the store a rebuild replaces is kept beside the new one: `league.db.damaged-<time>`."""


def rebuild_run(out: Path) -> int:
    """`arena rebuild`: the store re-created (`rebuild_store`), and `summary.json` and
    `games.jsonl` written anew from it; the episodes stored."""
    from arena.league.lineup import read_resolved
    from arena.league.plan import RunPlan
    from arena.league.summary import RunResult, history_tables, keep_ratings, write_summary
    from arena.results.tables import league_tables

    stored = rebuild_store(out)
    config, master, _ = read_resolved(out)
    plan = RunPlan(config, master, out, templates={})
    with hold_run_folder(out), closing(LeagueStore.open_for_run(out)) as store:
        result = RunResult()
        result.tables = league_tables(store.game_summaries(), config, master)
        # the ratings each session left, as its end stores them: reports read them after
        last = max(store.played_sessions(), default=1)
        keep_ratings(store, config, master, result.tables, last)
        result.tables |= history_tables(config, master, store, result.tables)
        write_summary(plan, result, store.game_summaries())
    return stored


def rebuild_store(out: Path) -> int:
    """Re-create `out/league.db` from `out/replays/` and the ledger (see the module
    docstring); the episodes stored. The digests the new store keeps are those of the
    replays as they are now: after a rebuild, only a run digest published earlier still
    tells whether a replay was edited."""
    from arena.league.lineup import read_resolved

    config, master, resolved = read_resolved(out)
    lineup = _Lineup(config)
    order = sorted(_headers(out, lineup))
    if not order:
        raise ConfigError(f"{out} has no replays to rebuild its store from")
    for event in read_current(out):
        if event.get("event") == "entrant_retired":
            lineup.last = max(lineup.last, int(event.get("session") or 1))
    with hold_run_folder(out):
        unfinished = _unfinished_session(out / DB_NAME)
        building = out / f".rebuild-{os.getpid()}"
        shutil.rmtree(building, ignore_errors=True)
        try:
            _build(building, out, config, master, resolved, lineup, order)
            _mark(out, building / DB_NAME, config, master, lineup, unfinished)
            _keep_old(out)
            os.replace(building / DB_NAME, out / DB_NAME)
        finally:
            shutil.rmtree(building, ignore_errors=True)
    return len(order)


def _refused(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"{path} cannot be read as a replay ({why}): move it out of replays/ to rebuild "
        "without it (nothing was changed)"
    )


def _each(out: Path, paths: Iterator[Path]) -> Iterator[tuple[Path, Replay]]:
    """The replays of `paths`, one at a time; a file that is not one is refused, named."""
    for path in paths:
        try:
            yield path, load_replay(path)
        except ReplayUnreadable as exc:
            raise _refused(path, exc.reason) from exc
        except OSError as exc:
            raise _refused(path, exc.strerror or str(exc)) from exc


def _headers(out: Path, lineup: _Lineup) -> Iterator[tuple[int, str, str]]:
    """The first pass: (match index, episode, file name) of every replay, in no order, and
    what each says of its policies noted in `lineup`."""
    for path, replay in _each(out, iter(sorted((out / "replays").glob("*.json")))):
        try:
            lineup.note(replay)
        except Exception as exc:  # content no play records (an unknown game, say)
            raise _refused(path, f"{type(exc).__name__}: {exc}") from exc
        yield replay.match.index, replay.episode, path.name


def _build(
    building: Path,
    out: Path,
    config: Config,
    master: int,
    resolved: dict[str, Any],
    lineup: _Lineup,
    order: list[tuple[int, str, str]],
) -> None:
    """The second pass: a new store in `building`, every replay stored in schedule order."""
    store = LeagueStore.open_for_run(building)
    try:
        store.begin_run(config.run.name, master, resolved, lineup.policies(), session=lineup.last)
        paths = (out / "replays" / name for _, _, name in order)
        for path, replay in _each(out, paths):
            try:
                store.record(replay, path, hashlib.sha256(path.read_bytes()).hexdigest())
            except Exception as exc:  # content the standings cannot sum up
                raise _refused(path, f"{type(exc).__name__}: {exc}") from exc
    finally:
        store.close()


def _mark(
    out: Path, db: Path, config: Config, master: int, lineup: _Lineup, unfinished: bool
) -> None:
    """The new store's sessions (every number to the last; the last unfinished if it was),
    its retirements (each `entrant_retired` line of the ledger, as it says it) and a pool's
    schedule as its games show it."""
    now = time.time()
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("DELETE FROM sessions")
        connection.executemany(
            "INSERT INTO sessions (number, started, ended) VALUES (?, ?, ?)",
            [
                (n, now, None if unfinished and n == lineup.last else now)
                for n in range(1, lineup.last + 1)
            ],
        )
        for event in read_current(out):  # the retirements, as the ledger wrote them
            if event.get("event") == "entrant_retired":
                retired = {k: v for k, v in event.items() if k not in ("event", "policy", "time")}
                connection.execute(
                    "UPDATE policies SET retired = ? WHERE name = ? AND retired IS NULL",
                    (json.dumps(retired), str(event.get("policy"))),
                )
        if config.run.pool:
            _schedule(connection, config, master, lineup.last)


def _schedule(connection: sqlite3.Connection, config: Config, master: int, last: int) -> None:
    """A pool's matches: each played one at its place, and each missing below a played one
    of its pair (scheduled, never finished) again at the end."""
    from arena.league.schedule import match_seed

    placement = min(config.run.placement_matches, config.run.matches)
    connection.execute(
        "INSERT INTO matches SELECT match_index, match_id, entry, game, k, seed, first, second, "
        "COALESCE(MIN(session), 1), CASE WHEN k <= ? THEN 'placement' ELSE 'round' END "
        "FROM episodes GROUP BY match_index",
        (placement,),
    )
    rows = connection.execute("SELECT entry, first, second, k FROM matches ORDER BY seq")
    played: dict[tuple[str, str, str], set[int]] = {}
    for entry, first, second, k in rows.fetchall():
        played.setdefault((entry, first, second), set()).add(int(k))
    seq = int(connection.execute("SELECT COALESCE(MAX(seq), -1) FROM matches").fetchone()[0])
    for (entry, first, second), ks in played.items():
        for k in sorted(set(range(1, max(ks))) - ks):
            seq, seed = seq + 1, match_seed(master, entry, k)
            m = Match(seq, entry, games.resolve_entry(entry, seed), k, seed, first, second)
            phase = "placement" if k <= placement else "round"
            connection.execute(
                "INSERT INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (m.index, m.id, m.entry, m.game, m.k, m.seed, m.first, m.second, last, phase),
            )


def _keep_old(out: Path) -> None:
    """The store being replaced (and its WAL) kept beside it, as `league.db.damaged-<time>`."""
    if not (out / DB_NAME).exists():
        return
    kept = f"{KEPT_PREFIX}{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    for suffix in ("", "-wal", "-shm"):
        if (out / f"{DB_NAME}{suffix}").exists():
            os.replace(out / f"{DB_NAME}{suffix}", out / f"{kept}{suffix}")


def _unfinished_session(db: Path) -> bool:
    """Whether the store being replaced says its last session never ended (False if it
    cannot say: missing, damaged, or from before sessions were ended)."""
    if not db.exists():
        return False
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            row = connection.execute(
                "SELECT ended FROM sessions ORDER BY number DESC LIMIT 1"
            ).fetchone()
    except sqlite3.Error:
        return False
    return row is not None and row[0] is None


@dataclass
class _Lineup:
    """What the replays say of the run's policies, noted one replay at a time (a few values
    per policy, whatever the games)."""

    config: Config
    templates: dict[str, dict[str, str]] = field(default_factory=dict)
    """Policy -> family -> SHA-256 of its template, as its latest session's replay has it."""
    fingerprints: dict[str, str] = field(default_factory=dict)
    authors: dict[str, str | None] = field(default_factory=dict)
    programs: dict[str, str] = field(default_factory=dict)
    """Program policy -> the SHA-256 it played last."""
    first: dict[str, int] = field(default_factory=dict)
    """Policy -> the first session it played in."""
    latest: dict[str, int] = field(default_factory=dict)
    last: int = 1
    """The highest session number a replay or a retirement names."""
    _families: dict[str, str] = field(default_factory=dict)

    def note(self, replay: Replay) -> None:
        """What `replay` says of its policies, kept where it is the latest word."""
        session = replay.session or 1
        self.last = max(self.last, session)
        family = self._families.get(replay.game)
        if family is None:
            family = self._families[replay.game] = games.load(replay.game).family
        names = {n for seats in replay.spectator.policies.values() for n in seats}
        for game in replay.games:
            for seat, block in game.programs.items():
                name = replay.spectator.policies[str(game.index)][int(seat)]
                if "sha256" in block and session >= self.latest.get(name, 0):
                    self.programs[name] = str(block["sha256"])
        for name in names:
            self.first[name] = min(self.first.get(name, session), session)
            if session < self.latest.get(name, 0):
                continue
            self.latest[name] = session
            if name in replay.spectator.fingerprints:
                self.fingerprints[name] = replay.spectator.fingerprints[name]
            if name in replay.spectator.authors:
                self.authors[name] = replay.spectator.authors[name]
            spec = self.config.policies.get(name)
            if spec is not None:
                path = spec.template_for(family)
                found = [sha for sha, at in replay.templates.items() if at == path]
                if len(found) == 1:
                    self.templates.setdefault(name, {})[family] = found[0]

    def policies(self) -> list[dict[str, Any]]:
        """Each policy of the config as the store keeps it (`RunPlan.policy_records`)."""
        out = []
        for name, spec in self.config.policies.items():
            templates = self.templates.get(name, {})
            stored = self.fingerprints.get(name)
            played: dict[str, Any] | None = played_as(
                spec,
                templates=templates,
                program_sha256=self.programs.get(name),
                node_budget=self.config.run.node_budget,
            )
            if stored is None or fingerprint(played or {}) != stored:
                played = None  # the config no longer tells what it played as: its hash stays
            author = self.authors.get(name, spec.author)
            if author is None and isinstance(spec, HumanPolicy):
                author = spec.name
            out.append(
                {
                    "name": name,
                    "kind": spec.kind,
                    "author": author,
                    "templates": templates,
                    "fingerprint": stored,
                    "played_as": played,
                    "added": self.first.get(name, self.last),
                }
            )
        return out
