"""Standings from finished games: W/D/L/NC, mean score, fallbacks, latency, tokens, cost.

Per game the table ranks by mean game score; the overall table counts every
game's outcome as +1/0/-1 so the battle's larger scores do not outweigh the
other games. Same-author pairs are played but left out of the standings.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from arena.record.replay import GameRecord, Replay

__all__ = ["GameSummary", "Row", "SeatStats", "Table", "by_game", "standings", "summarise"]


@dataclass(frozen=True, slots=True)
class SeatStats:
    """What one seat cost and how it fared in one game."""

    latencies_ms: tuple[int, ...]
    """One entry per decision, in milliseconds."""
    fallbacks: dict[str, int]
    """Fallback cause -> count."""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    @property
    def decisions(self) -> int:
        """Decisions this seat made or had made for it."""
        return len(self.latencies_ms)

    def to_json(self, *, latencies: bool = True) -> dict[str, Any]:
        """JSON-able; without `latencies`, their count stands for the per-decision list."""
        timing: dict[str, Any] = (
            {"latencies_ms": list(self.latencies_ms)}
            if latencies
            else {"decisions": self.decisions}
        )
        return {
            **timing, "fallbacks": self.fallbacks,
            "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "cost_usd": self.cost_usd,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SeatStats:
        """The inverse of `to_json`."""
        return cls(
            tuple(int(x) for x in data["latencies_ms"]), {str(k): int(v) for k, v in data["fallbacks"].items()},
            int(data["tokens_in"]), int(data["tokens_out"]), float(data["cost_usd"]),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One finished game, as the standings need it."""

    episode: str
    match_index: int
    game: str
    game_index: int
    policies: tuple[str, str]
    """The policy names at seats 0 and 1."""
    scores: tuple[int, int] | None
    reason: str
    ending: str
    plies: int
    seats: tuple[SeatStats, SeatStats]
    same_author: bool

    @property
    def fallback_count(self) -> int:
        """Fallbacks of both seats."""
        return sum(sum(s.fallbacks.values()) for s in self.seats)

    def to_json(self, *, latencies: bool = True) -> dict[str, Any]:
        """JSON-able, for the league store (whole) and summary.json (`latencies=False`)."""
        seats = [s.to_json(latencies=latencies) for s in self.seats]
        return {
            "episode": self.episode, "match_index": self.match_index, "game": self.game,
            "game_index": self.game_index, "policies": list(self.policies),
            "scores": list(self.scores) if self.scores is not None else None, "reason": self.reason,
            "ending": self.ending, "plies": self.plies, "seats": seats,
            "same_author": self.same_author,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameSummary:
        """The inverse of `to_json`."""
        scores = data["scores"]
        seats = data["seats"]
        return cls(
            data["episode"], int(data["match_index"]), data["game"], int(data["game_index"]),
            (data["policies"][0], data["policies"][1]),
            (int(scores[0]), int(scores[1])) if scores is not None else None,
            data["reason"], data["ending"], int(data["plies"]),
            (SeatStats.from_json(seats[0]), SeatStats.from_json(seats[1])), bool(data["same_author"]),
        )  # fmt: skip


def _seat_stats(record: GameRecord, seat: int) -> SeatStats:
    latencies: list[int] = []
    tokens_in = tokens_out = 0
    cost = 0.0
    for ply in record.plies:
        for d in ply.decisions:
            if d.seat != seat:
                continue
            latencies.append(round(d.latency_s * 1000))
            for a in d.attempts:
                usage = a.usage or {}
                tokens_in += sum(
                    usage.get(k) or 0 for k in ("input_uncached", "cache_read", "cache_write")
                )
                tokens_out += usage.get("output") or 0
                cost += a.cost_usd or 0.0
    causes = Counter(f.cause for f in record.fallbacks if f.seat == seat)
    return SeatStats(tuple(latencies), dict(causes), tokens_in, tokens_out, round(cost, 8))


def summarise(replay: Replay) -> list[GameSummary]:
    """The finished games of a replay."""
    authors = replay.spectator.authors
    out = []
    for record in replay.games:
        if record.result is None:
            continue
        first, second = replay.spectator.policies[str(record.index)]
        result = record.result
        scores = result.scores
        a, b = authors.get(first), authors.get(second)
        out.append(GameSummary(
            replay.episode, replay.match.index, replay.game, record.index, (first, second),
            (int(scores[0]), int(scores[1])) if scores is not None else None,
            result.reason, result.ending, result.plies,
            (_seat_stats(record, 0), _seat_stats(record, 1)), a is not None and a == b,
        ))  # fmt: skip
    return out


@dataclass
class Row:
    """One policy's line in a standings table.

    Latencies are kept as a histogram of whole milliseconds: a table over
    thousands of games holds a few hundred counts, not every decision, and its
    percentiles are exactly those of the list of every decision.
    """

    policy: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    no_contest: int = 0
    score_sum: float = 0.0
    decisions: int = 0
    """Decisions over all counted games."""
    latency_counts: Counter[int] = field(default_factory=Counter)
    """Decision latency in milliseconds -> how many decisions took it."""
    fallbacks: Counter[str] = field(default_factory=Counter)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    @property
    def mean_score(self) -> float:
        """Mean score over scored games (no-contests excluded)."""
        scored = self.games - self.no_contest
        return self.score_sum / scored if scored else 0.0

    @property
    def fallback_rate(self) -> float:
        """Fallbacks per decision."""
        return sum(self.fallbacks.values()) / self.decisions if self.decisions else 0.0

    def latency_ms(self, percentile: float) -> float:
        """A percentile of decision latency (0 with no decisions), as numpy's default
        (linear) method gives it over the list of every decision."""
        if not self.decisions:
            return 0.0
        position = (self.decisions - 1) * (percentile / 100)
        low = math.floor(position)
        a, b = self._nth(low), self._nth(min(low + 1, self.decisions - 1))
        t = position - low
        # numpy's own lerp, so both ways agree to the last bit
        return float(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)

    def _nth(self, n: int) -> int:
        """The n-th smallest latency (from 0)."""
        seen = 0
        for value in sorted(self.latency_counts):
            seen += self.latency_counts[value]
            if n < seen:
                return value
        raise IndexError(n)

    def add(self, seat: SeatStats) -> None:
        """Count one game's seat statistics."""
        self.games += 1
        self.decisions += len(seat.latencies_ms)
        self.latency_counts.update(seat.latencies_ms)
        self.fallbacks.update(seat.fallbacks)
        self.tokens_in += seat.tokens_in
        self.tokens_out += seat.tokens_out
        self.cost_usd += seat.cost_usd

    def to_json(self) -> dict[str, Any]:
        """JSON-able, for summary.json and `arena report`."""
        return {
            "policy": self.policy, "games": self.games, "wins": self.wins, "draws": self.draws,
            "losses": self.losses, "no_contest": self.no_contest, "mean_score": round(self.mean_score, 4),
            "decisions": self.decisions, "fallback_rate": round(self.fallback_rate, 4),
            "fallbacks": dict(self.fallbacks), "latency_p50_ms": self.latency_ms(50),
            "latency_p95_ms": self.latency_ms(95), "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out, "cost_usd": round(self.cost_usd, 6),
        }  # fmt: skip


class Table:
    """A standings table built one game at a time: one game's (`game`) or overall (None)."""

    def __init__(self, policies: list[str], game: str | None = None) -> None:
        self.game = game
        self._rows = {name: Row(name) for name in policies}

    def add(self, g: GameSummary) -> None:
        """Count game `g` (same-author pairs and other games are left out)."""
        if g.same_author or (self.game is not None and g.game != self.game):
            return
        for seat in (0, 1):
            row = self._rows.setdefault(g.policies[seat], Row(g.policies[seat]))
            row.add(g.seats[seat])
            if g.scores is None:
                row.no_contest += 1
                continue
            mine, theirs = g.scores[seat], g.scores[1 - seat]
            row.wins += mine > theirs
            row.draws += mine == theirs
            row.losses += mine < theirs
            row.score_sum += mine if self.game is not None else (mine > theirs) - (mine < theirs)

    def rows(self) -> list[Row]:
        """Rows ranked by mean score, then wins, then name; policies without games last."""
        ranked = sorted(self._rows.values(), key=lambda r: (-r.mean_score, -r.wins, r.policy))
        return [r for r in ranked if r.games] + [r for r in ranked if not r.games]


def standings(
    games: Iterable[GameSummary], policies: list[str], *, game: str | None = None
) -> list[Row]:
    """Rows ranked by mean score, for one game or overall (outcomes as +1/0/-1)."""
    table = Table(policies, game)
    for g in games:
        table.add(g)
    return table.rows()


def by_game(games: list[GameSummary]) -> dict[str, list[GameSummary]]:
    """The games grouped by resolved game name, in first-seen order."""
    grouped: dict[str, list[GameSummary]] = defaultdict(list)
    for g in games:
        grouped[g.game].append(g)
    return dict(grouped)
