"""Standings from finished games: W/D/L/NC, mean score, own play, fallbacks, latency, cost.

Per game the table ranks by mean game score; the overall table counts every
game's outcome as +1/0/-1 so the battle's larger scores do not outweigh the
other games. The league's tables put the rated policies first, by
Bradley-Terry (`arena.results.tables.ranked`), in this order where ratings tie.
Same-author pairs are played but left out of the standings.

How much of a policy's play was its own: the share of its decisions it made
itself (a reply or the retry), its fallbacks by cause and by side (its own
failures, the infrastructure's), the games its program forfeited, and latency percentiles over the decisions it
was actually asked (the battle's clock rule, `llm_off`, asks nobody). A game a
later play replaced (a no-contest played again, a game of a cut card) still counts
its decisions here and in `replayed`; it counts in NC if it ended a no-contest, as
every play that did, and never in W-D-L.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from arena.record.causes import FACTS, INFRASTRUCTURE, SEAT, side_of
from arena.record.replay import GameRecord, Replay

__all__ = ["GameSummary", "Row", "SeatStats", "Table", "by_game", "standings", "summarise"]


@dataclass(frozen=True, slots=True)
class SeatStats:
    """What one seat cost and how it fared in one game."""

    latencies_ms: tuple[int, ...]
    """One entry per decision the seat was asked (not `llm_off`), in milliseconds."""
    fallbacks: dict[str, int]
    """Fallback cause -> count."""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    """None when no reply had a price (a policy without a price table, or no model)."""
    decided: int | None = None
    """Decisions this seat made or had made for it; None: one per latency."""
    sides: dict[str, int] = field(default_factory=dict)
    """Fallbacks by side (`seat`, `infrastructure`), `llm_off` in neither."""
    forfeited: bool = False
    """The seat (a program) forfeited the game: it crashed, raised, timed out or replied
    with an illegal move."""

    @property
    def decisions(self) -> int:
        """Decisions this seat made or had made for it."""
        return len(self.latencies_ms) if self.decided is None else self.decided

    @property
    def own(self) -> int:
        """Decisions it made itself: every decision but the fallbacks."""
        return self.decisions - sum(self.fallbacks.values())

    def to_json(self, *, latencies: bool = True) -> dict[str, Any]:
        """JSON-able; without `latencies`, their count stands for the per-decision list."""
        timing: dict[str, Any] = {"latencies_ms": list(self.latencies_ms)} if latencies else {}
        return {
            **timing,
            "decisions": self.decisions,
            "fallbacks": self.fallbacks,
            "sides": self.sides,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd,
            "forfeited": self.forfeited,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SeatStats:
        """The inverse of `to_json`; a store written before sides were recorded reads its
        fallbacks as their causes' sides with the endpoint up."""
        fallbacks = {str(k): int(v) for k, v in data["fallbacks"].items()}
        sides = data.get("sides")
        if sides is None:
            sides = Counter()
            for cause, n in fallbacks.items():
                side = side_of(cause, False) if cause in FACTS else SEAT
                if side is not None:
                    sides[side] += n
        return cls(
            tuple(int(x) for x in data["latencies_ms"]),
            fallbacks,
            int(data["tokens_in"]),
            int(data["tokens_out"]),
            None if data["cost_usd"] is None else float(data["cost_usd"]),
            int(data["decisions"]) if "decisions" in data else None,
            {str(k): int(v) for k, v in sides.items()},
            bool(data.get("forfeited", False)),
        )


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
    session: int = 0
    """The run folder's session that played it (0: a replay from before sessions)."""
    detail: str = ""
    """What the result says beyond its ending: why a no-contest is one, how a game was won."""

    @property
    def fallback_count(self) -> int:
        """Fallbacks of both seats."""
        return sum(sum(s.fallbacks.values()) for s in self.seats)

    def to_json(self, *, latencies: bool = True) -> dict[str, Any]:
        """JSON-able, for the league store (whole) and summary.json (`latencies=False`)."""
        seats = [s.to_json(latencies=latencies) for s in self.seats]
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
            "seats": seats,
            "same_author": self.same_author,
            **({"session": self.session} if self.session else {}),
            **({"detail": self.detail} if self.detail else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameSummary:
        """The inverse of `to_json`."""
        scores = data["scores"]
        seats = data["seats"]
        return cls(
            data["episode"],
            int(data["match_index"]),
            data["game"],
            int(data["game_index"]),
            (data["policies"][0], data["policies"][1]),
            (int(scores[0]), int(scores[1])) if scores is not None else None,
            data["reason"],
            data["ending"],
            int(data["plies"]),
            (SeatStats.from_json(seats[0]), SeatStats.from_json(seats[1])),
            bool(data["same_author"]),
            int(data.get("session", 0)),
            str(data.get("detail", "")),
        )


def _seat_stats(record: GameRecord, seat: int) -> SeatStats:
    latencies: list[int] = []
    tokens_in = tokens_out = decided = 0
    cost: float | None = None
    unasked = {f.ply for f in record.fallbacks if f.seat == seat and f.cause == "llm_off"}
    for ply in record.plies:
        for d in ply.decisions:
            if d.seat != seat:
                continue
            decided += 1
            if ply.ply not in unasked:
                latencies.append(round(d.latency_s * 1000))
            for a in d.attempts:
                usage = a.usage or {}
                tokens_in += sum(
                    usage.get(k) or 0 for k in ("input_uncached", "cache_read", "cache_write")
                )
                tokens_out += usage.get("output") or 0
                if a.cost_usd is not None:
                    cost = (cost or 0.0) + a.cost_usd
    mine = [f for f in record.fallbacks if f.seat == seat]
    causes = Counter[str](f.cause for f in mine)
    sides = Counter(str(f.side) for f in mine if f.side is not None)
    result = record.result
    forfeited = (  # the forfeiting seat loses; both at once draw
        result is not None
        and result.ending == "forfeit"
        and result.scores is not None
        and result.scores[seat] <= result.scores[1 - seat]
    )
    return SeatStats(
        tuple(latencies),
        dict(causes),
        tokens_in,
        tokens_out,
        None if cost is None else round(cost, 8),
        decided,
        dict(sides),
        forfeited,
    )


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
        out.append(
            GameSummary(
                replay.episode,
                replay.match.index,
                replay.game,
                record.index,
                (first, second),
                (int(scores[0]), int(scores[1])) if scores is not None else None,
                result.reason,
                result.ending,
                result.plies,
                (_seat_stats(record, 0), _seat_stats(record, 1)),
                a is not None and a == b,
                replay.session,
                result.detail,
            )
        )
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
    """Plays that ended a no-contest, a later play of theirs or not."""
    replayed: int = 0
    """Plays a later play replaced (a no-contest played again, a game of a cut card)."""
    score_sum: float = 0.0
    decisions: int = 0
    """Decisions over all counted games."""
    latency_counts: Counter[int] = field(default_factory=Counter)
    """Latency in milliseconds of the decisions the seat was asked -> how many took it."""
    fallbacks: Counter[str] = field(default_factory=Counter)
    sides: Counter[str] = field(default_factory=Counter)
    """Fallbacks by side: the seat's own failures, the infrastructure's."""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    """None when none of its replies had a price: unknown, not free."""
    forfeits: int = 0
    """Games its program forfeited."""

    @property
    def mean_score(self) -> float:
        """Mean score over the games that count (no-contests and replaced plays excluded)."""
        scored = self.wins + self.draws + self.losses
        return self.score_sum / scored if scored else 0.0

    @property
    def fallback_rate(self) -> float:
        """Fallbacks per decision."""
        return sum(self.fallbacks.values()) / self.decisions if self.decisions else 0.0

    @property
    def own_play(self) -> float:
        """The share of its decisions it made itself (0 with no decisions)."""
        return 1 - self.fallback_rate if self.decisions else 0.0

    @property
    def asked(self) -> int:
        """Decisions the seat was asked (all but the battle's `llm_off`)."""
        return self.latency_counts.total()

    def latency_ms(self, percentile: float) -> float:
        """A percentile of the latency of the decisions the seat was asked (0 with none), as
        numpy's default (linear) method gives it over the list of every such decision."""
        asked = self.asked
        if not asked:
            return 0.0
        position = (asked - 1) * (percentile / 100)
        low = math.floor(position)
        a, b = self._nth(low), self._nth(min(low + 1, asked - 1))
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
        self.decisions += seat.decisions
        self.latency_counts.update(seat.latencies_ms)
        self.fallbacks.update(seat.fallbacks)
        self.sides.update(seat.sides)
        self.tokens_in += seat.tokens_in
        self.tokens_out += seat.tokens_out
        self.forfeits += seat.forfeited
        if seat.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + seat.cost_usd

    def to_json(self) -> dict[str, Any]:
        """JSON-able, for summary.json and `arena report`."""
        return {
            "policy": self.policy,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "no_contest": self.no_contest,
            "replayed": self.replayed,
            "mean_score": round(self.mean_score, 4),
            "decisions": self.decisions,
            "own_play": round(self.own_play, 4),
            "fallback_rate": round(self.fallback_rate, 4),
            "fallbacks": dict(self.fallbacks),
            "forfeits": self.forfeits,
            "fallbacks_by_side": {s: self.sides.get(s, 0) for s in (SEAT, INFRASTRUCTURE)},
            "asked": self.asked,
            "latency_p50_ms": self.latency_ms(50),
            "latency_p95_ms": self.latency_ms(95),
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


class Table:
    """A standings table built one game at a time: one game's (`game`) or overall (None)."""

    def __init__(self, policies: list[str], game: str | None = None) -> None:
        self.game = game
        self._rows = {name: Row(name) for name in policies}

    def add(self, g: GameSummary, *, counted: bool = True) -> None:
        """Count game `g` (same-author pairs and other games are left out); a game a later
        play replaced (`counted=False`) counts as `replayed`, its decisions counted, and in
        NC only if it ended a no-contest."""
        if g.same_author or (self.game is not None and g.game != self.game):
            return
        for seat in (0, 1):
            row = self._rows.setdefault(g.policies[seat], Row(g.policies[seat]))
            row.add(g.seats[seat])
            row.replayed += not counted
            if g.scores is None:
                row.no_contest += 1
            if g.scores is None or not counted:
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
