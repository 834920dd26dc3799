"""The lines under a standings or entrants table that keep a reader from a wrong
conclusion: two ratings ordering a pair differently, a policy whose results are largely
its fallback's, games one table counts and another leaves out."""

from __future__ import annotations

from typing import Any

from arena.results.ab import OWN_PLAY_FLOOR

__all__ = ["order_notes", "own_play_notes", "same_author_note"]


def order_notes(rows: list[dict[str, Any]], ratings: dict[str, Any]) -> list[str]:
    """One line under the table when the sequential Elo orders a pair of policies otherwise
    than Bradley-Terry: which of the two to read."""
    elo, bt = ratings["elo"], ratings["bt"]
    rated = [r["policy"] for r in rows if r["policy"] in elo and r["policy"] in bt]
    crossed = sum(
        1
        for i, a in enumerate(rated)
        for b in rated[i + 1 :]
        if (bt[a]["rating"] - bt[b]["rating"]) * (elo[a] - elo[b]) < 0
    )
    if not crossed:
        return []
    return [
        f"Elo K=24 orders {crossed} pair(s) otherwise than Bradley-Terry: read BT, which fits "
        "every game at once (the sequential Elo weighs the last games most)"
    ]


def own_play_notes(rows: list[dict[str, Any]]) -> list[str]:
    """One line under the table naming the policies whose own play is under the floor."""
    low = [r for r in rows if r["decisions"] and r["own_play"] < OWN_PLAY_FLOOR]
    if not low:
        return []
    shares = ", ".join(f"{r['policy']} {r['own_play']:.0%}" for r in low)
    return [
        f"own play under {OWN_PLAY_FLOOR:.0%} ({shares}): the rest was the fallback's, so "
        "these results compare fallbacks as much as models"
    ]


def same_author_note(entrants: list[dict[str, Any]]) -> list[str]:
    """Why an entrant's games can outnumber its games in the standings: same-author games."""
    authors = [e["author"] for e in entrants if e["author"]]
    if len(authors) == len(set(authors)):  # no author has two entrants: no such game
        return []
    return [
        "games counts every game played, same-author ones included (a model against its own "
        "program): they are shown, not rated, and the standings leave them out"
    ]
