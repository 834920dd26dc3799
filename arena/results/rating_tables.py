"""The league store's rating tables (`arena.league.store.LeagueStore` mixes them in): the Elo
events and each session's ratings.

`rating_events` holds, per applied match, the new Elo of its two policies (two
rows a match, however many entrants); `rating_sessions` holds the ratings as
each session left them (`arena.results.history.snapshot`) with the stamp of the
stored results they were fitted to, so a report reads them instead of fitting
again while nothing has been stored since. A store from before the snapshots
gets the table when a session opens it for writing; read-only, it has none.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

__all__ = ["RATING_SESSIONS", "RatingTables"]

RATING_SESSIONS = """
CREATE TABLE IF NOT EXISTS rating_sessions (
    session INTEGER PRIMARY KEY,
    stamp TEXT NOT NULL,
    ratings TEXT NOT NULL
);
"""
"""The table of the sessions' ratings (created with the store's other tables)."""


class RatingTables:
    """The rating tables' reads and writes, mixed into `LeagueStore`."""

    _db: sqlite3.Connection

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # LeagueStore's

    def _columns(self, table: str) -> set[str]:
        raise NotImplementedError  # LeagueStore's

    def store_ratings(self, events: list[tuple[int, dict[str, float]]]) -> None:
        """Replace the Elo events: one row per applied match and policy it moved
        (`arena.results.history.elo_events`)."""
        with self._transaction() as db:
            db.execute("DELETE FROM rating_events")
            rows = [(i, policy, elo) for i, moved in events for policy, elo in moved.items()]
            db.executemany("INSERT INTO rating_events VALUES (?, ?, ?)", rows)

    def rating_events(self) -> Iterator[tuple[int, str, float]]:
        """The stored Elo events (match index, policy, its Elo after the match), in schedule
        order, read as they are iterated."""
        rows = self._db.execute(
            "SELECT match_index, policy, elo FROM rating_events ORDER BY match_index, rowid"
        )
        for index, policy, elo in rows:
            yield int(index), str(policy), float(elo)

    def results_stamp(self) -> str:
        """What the stored results are now, in a few numbers: any episode or game stored
        (or stored again) since changes it."""
        games = self._db.execute("SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM games")
        episodes = self._db.execute("SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM episodes")
        return ":".join(str(n) for n in (*games.fetchone(), *episodes.fetchone()))

    def store_snapshot(self, session: int, stamp: str, ratings: dict[str, Any]) -> None:
        """Keep the ratings as session `session` left them, fitted to the results `stamp`
        (`results_stamp`) names; a session's snapshot is replaced if it closes again."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO rating_sessions VALUES (?, ?, ?)",
                (session, stamp, json.dumps(ratings, sort_keys=True)),
            )

    def snapshots(self) -> list[tuple[int, str, dict[str, Any]]]:
        """Every stored session's ratings: (session, stamp, ratings), in session order (none
        in a store from before the snapshots)."""
        if not self._columns("rating_sessions"):
            return []
        rows = self._db.execute("SELECT session, stamp, ratings FROM rating_sessions ORDER BY 1")
        return [(int(s), str(stamp), json.loads(text)) for s, stamp, text in rows]

    def latest_snapshot(self) -> tuple[str, dict[str, Any]] | None:
        """The stamp and ratings of the last session that stored them, or None."""
        kept = self.snapshots()
        return (kept[-1][1], kept[-1][2]) if kept else None

    def played_sessions(self) -> list[int]:
        """The sessions that stored a game (a replay from before sessions counts as 1)."""
        if "session" not in self._columns("episodes"):
            return [1] if self._db.execute("SELECT 1 FROM episodes LIMIT 1").fetchone() else []
        rows = self._db.execute("SELECT DISTINCT COALESCE(session, 1) FROM episodes ORDER BY 1")
        return [int(row[0]) for row in rows]
