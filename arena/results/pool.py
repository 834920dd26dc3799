"""A standing pool's tables: its entrants, and the ratings as they stood after each session.

Both come from the stored games (each records the session that played it) and
the store's entrants (name, fingerprint, author, when added, whether retired);
`summary.json` holds them under `entrants` and `history`, `arena report
--what entrants` shows the first, the viewer's pool page both. A closed
session's ratings are stored when it closes (`arena.results.history`) and read
from the store after that, never fitted again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from arena.results.ratings import bradley_terry
from arena.results.standings import GameSummary
from arena.results.tables import match_outcomes

__all__ = ["STATUSES", "author_rows", "entrant_rows", "rating_history"]

STATUSES = ("placement", "active", "retired")
"""An entrant's status: playing its placement, placed and active, or retired."""


def entrant_rows(
    entrants: Iterable[Mapping[str, Any]],
    games: Iterable[GameSummary],
    bt: Mapping[str, Mapping[str, float]],
    *,
    placement: int,
) -> list[dict[str, Any]]:
    """One row per entrant, in the order the pool first stored them: name, kind,
    fingerprint, author, status, first and last session it played in, games, Bradley-Terry rating and
    interval (None without a rated match). An active entrant is in `placement` while it
    has fewer than `placement` complete matches against some other active entrant."""
    rows = list(entrants)
    games_of: dict[str, int] = defaultdict(int)
    sessions: dict[str, set[int]] = defaultdict(set)
    halves: dict[int, set[int]] = defaultdict(set)
    pair_of: dict[int, frozenset[str]] = {}
    for g in games:
        for name in g.policies:
            games_of[name] += 1
            if g.session:
                sessions[name].add(g.session)
        halves[g.match_index].add(g.game_index)
        pair_of[g.match_index] = frozenset(g.policies)
    complete: dict[frozenset[str], int] = defaultdict(int)
    for index, played in halves.items():
        if {1, 2} <= played:
            complete[pair_of[index]] += 1
    active = [r["name"] for r in rows if r.get("retired") is None]
    out = []
    for r in rows:
        name = r["name"]
        if r.get("retired") is not None:
            status = "retired"
        elif any(complete[frozenset((name, o))] < placement for o in active if o != name):
            status = "placement"
        else:
            status = "active"
        rating = bt.get(name)
        seen = sorted(sessions[name])
        out.append(
            {
                "name": name,
                "kind": r.get("kind"),
                "fingerprint": r.get("fingerprint"),
                "author": r.get("author"),
                "status": status,
                "retired": (r.get("retired") or {}).get("why"),
                "first_session": seen[0] if seen else r.get("added"),
                "last_session": seen[-1] if seen else None,
                "games": games_of[name],
                "bt": dict(rating) if rating is not None else None,
            }
        )
    return out


def rating_history(
    games: Iterable[GameSummary],
    *,
    seed: int,
    resamples: int = 1000,
    kept: Mapping[int, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The Bradley-Terry ratings over the games of sessions 1..s, for each session s that
    played a game: `[{"session": s, "bt": {policy: {rating, low, high}}}]`, in session
    order (the last equals the tables' ratings). A session whose ratings are `kept`
    (session -> its stored snapshot, `arena.results.history.snapshot`) is read from
    there; only the others are fitted (a session still playing)."""
    by_session: dict[int, list[GameSummary]] = defaultdict(list)
    for g in games:
        by_session[g.session].append(g)
    kept = kept or {}
    out = []
    so_far: list[GameSummary] = []
    for session in sorted(by_session):
        so_far += by_session[session]
        if session in kept:
            bt = kept[session].get("bt", {})
            ratings = {p: {k: r[k] for k in ("rating", "low", "high")} for p, r in bt.items()}
        else:
            fitted = bradley_terry(match_outcomes(so_far), seed=seed, resamples=resamples)
            ratings = {
                p: {"rating": r.rating, "low": r.low, "high": r.high} for p, r in fitted.items()
            }
        out.append({"session": session, "bt": ratings})
    return out


_PLAYS = ("llm", "mock", "human", "scripted")
"""The kinds of policy that play for themselves; a program is its author's work."""


def author_rows(entrants: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each author with a program among the entrants, its two forms side by side: the
    policy that plays for itself and the program it wrote, each with its Bradley-Terry
    rating against everyone else (their games with each other are played, not rated)."""
    by_author: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for e in entrants:
        if e.get("author"):
            by_author[str(e["author"])].append(e)
    out = []
    for author, mine in by_author.items():
        players: list[Mapping[str, Any] | None] = [e for e in mine if e.get("kind") in _PLAYS]
        programs = [e for e in mine if e.get("kind") == "program"]
        for player in players or [None]:  # a program whose writer is not in the pool
            for program in programs:
                out.append(
                    {"author": author, **_form("player", player), **_form("program", program)}
                )
    return out


def _form(prefix: str, entrant: Mapping[str, Any] | None) -> dict[str, Any]:
    bt = (entrant or {}).get("bt") or {}
    return {
        prefix: (entrant or {}).get("name"),
        f"{prefix}_bt_rating": bt.get("rating"),
        f"{prefix}_bt_low": bt.get("low"),
        f"{prefix}_bt_high": bt.get("high"),
        f"{prefix}_games": (entrant or {}).get("games"),
    }
