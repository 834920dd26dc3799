"""Standings from finished games: W/D/L/NC, mean score, fallbacks by cause (SPEC 8).

Per game the table ranks by mean game score; the overall table counts every
game's outcome as +1/0/-1 so the battle's larger scores do not outweigh the
other games. Same-author pairs are played but left out of the standings.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from arena.replay import Replay

__all__ = ["GameSummary", "Row", "standings", "summarise"]


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One finished game, as the standings need it."""

    episode: str
    match_index: int
    game: str
    game_index: int
    policies: tuple[str, str]
    scores: tuple[int, int] | None
    reason: str
    ending: str
    plies: int
    decisions: tuple[int, int]
    fallbacks: tuple[dict[str, int], dict[str, int]]
    latency_s: tuple[float, float]
    same_author: bool

    def to_json(self) -> dict[str, Any]:
        """JSON-able, for summary.json and the league store."""
        return {
            "episode": self.episode,
            "match_index": self.match_index,
            "game": self.game,
            "game_index": self.game_index,
            "policies": list(self.policies),
            "scores": list(self.scores) if self.scores is not None else None,
            "reason": self.reason,
            "ending": self.ending,
            "plies": self.plies,
            "decisions": list(self.decisions),
            "fallbacks": list(self.fallbacks),
            "latency_s": list(self.latency_s),
            "same_author": self.same_author,
        }


def summarise(replay: Replay) -> list[GameSummary]:
    """The finished games of a replay."""
    authors = replay.spectator.authors
    out = []
    for record in replay.games:
        if record.result is None:
            continue
        first, second = replay.spectator.policies[str(record.index)]
        decisions = [0, 0]
        latency = [0.0, 0.0]
        for ply in record.plies:
            for d in ply.decisions:
                decisions[d.seat] += 1
                latency[d.seat] += d.latency_s
        fallbacks: list[Counter[str]] = [Counter(), Counter()]
        for f in record.fallbacks:
            fallbacks[f.seat][f.cause] += 1
        scores = record.result["scores"]
        a, b = authors.get(first), authors.get(second)
        out.append(
            GameSummary(
                replay.episode,
                int(replay.match["index"]),
                replay.game,
                record.index,
                (first, second),
                (int(scores[0]), int(scores[1])) if scores is not None else None,
                record.result["reason"],
                record.result["ending"],
                int(record.result["plies"]),
                (decisions[0], decisions[1]),
                (dict(fallbacks[0]), dict(fallbacks[1])),
                (latency[0], latency[1]),
                a is not None and a == b,
            )
        )
    return out


@dataclass
class Row:
    """One policy's line in a standings table."""

    policy: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    no_contest: int = 0
    score_sum: float = 0.0
    decisions: int = 0
    latency_s: float = 0.0
    fallbacks: Counter[str] = field(default_factory=Counter)

    @property
    def mean_score(self) -> float:
        """Mean score over scored games (no-contests excluded)."""
        scored = self.games - self.no_contest
        return self.score_sum / scored if scored else 0.0

    @property
    def fallback_rate(self) -> float:
        """Fallbacks per decision."""
        return sum(self.fallbacks.values()) / self.decisions if self.decisions else 0.0

    @property
    def mean_latency_s(self) -> float:
        """Mean decision latency."""
        return self.latency_s / self.decisions if self.decisions else 0.0

    def to_json(self) -> dict[str, Any]:
        """JSON-able, for summary.json."""
        return {
            "policy": self.policy,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "no_contest": self.no_contest,
            "mean_score": round(self.mean_score, 4),
            "decisions": self.decisions,
            "fallback_rate": round(self.fallback_rate, 4),
            "fallbacks": dict(self.fallbacks),
            "mean_latency_s": round(self.mean_latency_s, 6),
        }


def standings(
    games: list[GameSummary], policies: list[str], *, game: str | None = None
) -> list[Row]:
    """Rows ranked by mean score, for one game or overall (outcomes as +1/0/-1)."""
    rows = {name: Row(name) for name in policies}
    for g in games:
        if g.same_author or (game is not None and g.game != game):
            continue
        for seat in (0, 1):
            row = rows[g.policies[seat]]
            row.games += 1
            row.decisions += g.decisions[seat]
            row.latency_s += g.latency_s[seat]
            row.fallbacks.update(g.fallbacks[seat])
            if g.scores is None:
                row.no_contest += 1
                continue
            mine, theirs = g.scores[seat], g.scores[1 - seat]
            row.wins += mine > theirs
            row.draws += mine == theirs
            row.losses += mine < theirs
            row.score_sum += mine if game is not None else (mine > theirs) - (mine < theirs)
    ranked = sorted(rows.values(), key=lambda r: (-r.mean_score, -r.wins, r.policy))
    return [r for r in ranked if r.games] + [r for r in ranked if not r.games]


def by_game(games: list[GameSummary]) -> dict[str, list[GameSummary]]:
    """The games grouped by resolved game name, in first-seen order."""
    grouped: dict[str, list[GameSummary]] = defaultdict(list)
    for g in games:
        grouped[g.game].append(g)
    return dict(grouped)
