"""The pool page's data: a standing pool's entrants, their cards and their rating history.

A pool's summary.json holds `entrants` (one row per entrant: fingerprint,
author, status, the sessions it played in, games, Bradley-Terry rating) and
`history` (the ratings over the games of sessions 1..s, for each session s),
both made by `arena.results.pool`. The page shows them as given: the entrants
in the standings' order (by Bradley-Terry, those without a rated match last),
each with its own play from the standings; each entrant's history from the
session it joined, a retired one's up to the last session it played in.

While a pool's first session runs there is no summary.json yet: `pool_so_far`
makes the same two tables from the games of the replays drawn so far and the
entrants the store holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from arena.league.store import LeagueStore, StoreDamaged
from arena.results.standings import GameSummary

__all__ = ["is_pool", "pool_data", "pool_so_far", "revealed_sources"]


def revealed_sources(run: Path) -> dict[str, str]:
    """Policy -> the source the run's ledger revealed for it (its last reveal)."""
    from arena.record.ledger import read_current  # a pool's page only

    return {
        str(e["policy"]): str(e["source"])
        for e in read_current(run)
        if e.get("event") == "program_reveal"
    }


def is_pool(summary: Mapping[str, Any] | None, config: Mapping[str, Any]) -> bool:
    """Whether a run folder is a standing pool: its summary lists entrants, or its resolved
    config (`config.resolved.json`) says `[run] pool = true`."""
    return "entrants" in (summary or {}) or bool(config.get("run", {}).get("pool"))


def pool_data(
    summary: Mapping[str, Any], revealed: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The pool's part of the page: `entrants` in the standings' order, each with its
    `own_play`; `stored`, their names in the order the pool first stored them (which
    gives each its colour, the same as the pool grows); `sessions`, those the history
    has; `lines`, entrant -> its rating and interval after each session it belongs in;
    `settings`, summary.json's `pool` (target, probability, matches, placement_matches,
    retired_by_roster) or None. A retired program's card carries its `source`, as the
    ledger revealed it (`revealed`: policy -> source); an active one's never."""
    overall = summary.get("standings", {}).get("overall", [])
    own_play = {row["policy"]: row.get("own_play") for row in overall}
    order = {row["policy"]: n for n, row in enumerate(overall)}
    stored = summary.get("entrants", [])
    revealed = revealed or {}
    entrants = [
        {**row, "own_play": own_play.get(row["name"]), "source": revealed.get(row["name"])}
        for row in stored
    ]
    entrants.sort(
        key=lambda row: (row["name"] not in order, order.get(row["name"], 0), _minus(row))
    )
    history = summary.get("history", [])
    return {
        "entrants": entrants,
        "stored": [row["name"] for row in stored],
        "sessions": [entry["session"] for entry in history],
        "lines": {row["name"]: _line(row, history) for row in entrants},
        "settings": summary.get("pool"),
    }


def _minus(entrant: Mapping[str, Any]) -> float:
    """Minus the entrant's rating (0 without one): an entrant the standings do not list
    goes after those they do, by rating."""
    return -float(entrant["bt"]["rating"]) if entrant.get("bt") else 0.0


def _line(entrant: Mapping[str, Any], history: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The entrant's rating after each session from the first it played in; a retired
    entrant's up to the last it played in (later fits still move it, but it plays no more)."""
    name, first, last = entrant["name"], entrant.get("first_session"), entrant.get("last_session")
    if first is None or (entrant.get("status") == "retired" and last is None):
        return []
    until = last if entrant.get("status") == "retired" else None
    return [
        {"session": entry["session"], **entry["bt"][name]}
        for entry in history
        if name in entry["bt"]
        and entry["session"] >= first
        and (until is None or entry["session"] <= until)
    ]


def pool_so_far(run: Path, finished: list[GameSummary]) -> dict[str, Any]:
    """`entrants` and `history` as summary.json will hold them, from the games `finished`
    so far (in schedule order): the entrants as the store holds them, or as the resolved
    config names them when the store cannot be read. Raises ConfigError when the run
    folder's `config.resolved.json` cannot be read."""
    from arena.league.lineup import read_resolved  # a pool in its first session only
    from arena.results.pool import entrant_rows, rating_history
    from arena.results.tables import league_tables

    config, master, _ = read_resolved(run)
    bt = league_tables(finished, config, master)["ratings"]["bt"]
    placement = min(config.run.placement_matches, config.run.matches)
    entrants = entrant_rows(_entrants(run, config.policies), finished, bt, placement=placement)
    history = rating_history(finished, seed=master, kept=_kept_ratings(run))
    return {"entrants": entrants, "history": history}


def _kept_ratings(run: Path) -> dict[int, dict[str, Any]]:
    """Session -> the ratings the store kept as it closed (none without a store)."""
    try:
        store = LeagueStore.open_readonly(run)
    except (FileNotFoundError, StoreDamaged):
        return {}
    try:
        return {session: kept for session, _, kept in store.snapshots()}
    finally:
        store.close()


def _entrants(run: Path, policies: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The store's entrants (`LeagueStore.entrants`), or the config's policies without a
    fingerprint when there is no store to read."""
    try:
        store = LeagueStore.open_readonly(run)
    except (FileNotFoundError, StoreDamaged):
        from arena.league.pool import Retirement  # a pool with no store yet only

        return [
            {
                "name": name,
                "fingerprint": None,
                "author": spec.author,
                "added": None,
                "retired": Retirement.by_config(None).to_json() if spec.retired else None,
            }
            for name, spec in policies.items()
        ]
    try:
        return store.entrants()
    finally:
        store.close()
