"""The ratings over time, in O(matches): per match what changed, per session a snapshot.

A league's history is kept in two forms, neither of which grows with the number
of entrants times the matches:

- `elo_events`: per applied match, its schedule index and the new Elo of its two
  policies (everyone else's is unchanged); folding the events in order gives any
  policy's Elo after any match, and the last value of each is today's Elo.
- a session's snapshot (`snapshot`): the ratings as the session left them (the
  Bradley-Terry fit with its intervals, the Elo, the A/B differences), stored when
  the session closes and never fitted again; `session_history` lists them as a
  pool's page draws them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.results.ratings import ELO_K, ELO_START, MatchOutcome

__all__ = ["EloEvent", "elo_events", "session_history", "snapshot"]

EloEvent = tuple[int, dict[str, float]]
"""One applied match: its schedule index, and its two policies' Elo after it."""


def elo_events(
    matches: Iterable[MatchOutcome], *, start: float = ELO_START, k: float = ELO_K
) -> tuple[dict[str, float], list[EloEvent]]:
    """Every policy's Elo after all rated matches, and the events that led there.

    The rules are `arena.results.ratings.elo_history`'s (schedule order, both games
    of a match scored against the ratings at its start, no-contest and same-author
    matches skipped), and so are the numbers, bit for bit; but an event holds only
    the two policies the match moved. The final ratings list every policy named by
    a match, in order of first appearance (one never rated keeps `start`).
    """
    ordered = sorted(matches, key=lambda match: match.index)
    ratings: dict[str, float] = {}
    for match in ordered:
        ratings.setdefault(match.first, start)
        ratings.setdefault(match.second, start)
    events: list[EloEvent] = []
    last = None
    for match in ordered:
        if match.index == last:
            raise ValueError(
                f"two matches share schedule index {match.index}: pass each match once, "
                "indexed by its position in the schedule"
            )
        last = match.index
        if not match.rated:
            continue
        mine, theirs = ratings[match.first], ratings[match.second]
        expected = 1.0 / (1.0 + math.pow(10.0, (theirs - mine) / 400.0))
        delta = sum(k * (score - expected) for score in match.first_scores())
        ratings[match.first] = mine + delta
        ratings[match.second] = theirs - delta
        events.append(
            (match.index, {match.first: ratings[match.first], match.second: ratings[match.second]})
        )
    return ratings, events


def snapshot(tables: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """What a session's end keeps of the league's tables (`league_tables`) so that no
    reader fits again: the Bradley-Terry ratings with intervals, the Elo, the rated
    matches, each A/B pair's Bradley-Terry difference, and the seed they were fitted with."""
    ratings = tables["ratings"]
    return {
        "seed": seed,
        "bt": ratings["bt"],
        "elo": ratings["elo"],
        "matches_rated": ratings["matches_rated"],
        "ab": {
            f"{ab['a']}|{ab['b']}": ab["bt_difference"]
            for ab in tables.get("ab", [])
            if "bt_difference" in ab
        },
    }


def session_history(
    snapshots: Iterable[tuple[int, Mapping[str, Any]]], played: Sequence[int]
) -> list[dict[str, Any]]:
    """The ratings as each session that played a game (`played`) left them, from the stored
    snapshots (session, snapshot): `[{"session": s, "bt": {policy: {rating, low, high}},
    "elo": {policy: elo}}]`, in session order."""
    out = []
    wanted = set(played)
    for session, kept in sorted(snapshots, key=lambda item: item[0]):
        if session not in wanted:
            continue
        out.append(
            {
                "session": session,
                "bt": {
                    p: {"rating": r["rating"], "low": r["low"], "high": r["high"]}
                    for p, r in kept.get("bt", {}).items()
                },
                "elo": dict(kept.get("elo", {})),
            }
        )
    return out
