"""Tidy records for `arena report --format csv|json`: one row per record, flat typed columns.

Every row of one report has the same columns, each a number, a string, a
boolean or empty (null), so that `pandas.read_csv` and `pandas.read_json` load
a report as it is. Where a record has two seats, each seat's value has its own
column, suffixed `_0` and `_1` (seat 0 moves first in the match's first game).

- standings: one row per game table (`overall` and each game) and policy;
  fallbacks by side and by cause get a column each, for every cause, so that
  two runs' reports have the same columns. Ratings (Elo, Bradley-Terry) are
  computed over the whole league: they are on the `overall` rows only, with
  `bt_on_prior` true where the policy won every rated game, lost every one or
  played none (its rating and interval rest on the fit's prior). The rows
  come in the tables' order: the overall table by Bradley-Terry.
- entrants: one row per policy as the store keeps it: fingerprint, author,
  status (placement, active, retired), first and last session, games and the
  Bradley-Terry rating; a standing pool's leaderboard (docs/pool.md).
- h2h: one row per ordered pair: the row's policy against the opponent.
- fallbacks: one row per fallback, its attempts side by side (`attempt1_...`,
  `attempt2_...`: the reply and the retry).
- games: one row per stored game, a replaced play (a no-contest played again, a
  cut card) included; seat statistics per seat, latency as percentiles.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from arena.record.causes import CAUSES, INFRASTRUCTURE, SEAT
from arena.results.standings import GameSummary, Row, SeatStats

__all__ = [
    "ATTEMPTS",
    "entrant_export_rows",
    "fallback_rows",
    "game_rows",
    "h2h_rows",
    "move_text",
    "standings_rows",
]

ATTEMPTS = 2
"""Attempts a decision gets (the reply and the one retry): columns per fallback row."""

_ATTEMPT_FIELDS = ("cause", "error", "status", "reply", "latency_s")


def standings_rows(
    tables: dict[str, Any], fingerprints: dict[str, str | None] | None = None
) -> list[dict[str, Any]]:
    """The standings of `league_tables`, one flat row per game table and policy, with each
    policy's fingerprint (`fingerprints`; null where the store has none)."""
    ratings = tables["ratings"]
    fingerprints = fingerprints or {}
    out = []
    for name, rows in tables["standings"].items():
        for row in rows:
            rated = name == "overall"
            bt = ratings["bt"].get(row["policy"]) if rated else None
            elo = ratings["elo"].get(row["policy"]) if rated else None
            out.append(
                {
                    "game": name,
                    **_standing(row),
                    "elo": elo,
                    "bt_rating": bt["rating"] if bt else None,
                    "bt_low": bt["low"] if bt else None,
                    "bt_high": bt["high"] if bt else None,
                    "bt_on_prior": bool(bt.get("on_prior")) if bt else None,
                    "fingerprint": fingerprints.get(row["policy"]),
                }
            )
    return out


def entrant_export_rows(entrants: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """A pool's entrants (`arena.results.pool.entrant_rows`), one flat row each."""
    return [
        {k: e.get(k) for k in ("name", "kind", "fingerprint", "author", "status", "retired")}
        | {k: e[k] for k in ("first_session", "last_session", "games")}
        | {f"bt_{k}": (e["bt"] or {}).get(k) for k in ("rating", "low", "high")}
        for e in entrants
    ]


def _standing(row: dict[str, Any]) -> dict[str, Any]:
    sides = row.get("fallbacks_by_side", {})
    return {
        "policy": row["policy"],
        "games": row["games"],
        "wins": row["wins"],
        "draws": row["draws"],
        "losses": row["losses"],
        "no_contest": row["no_contest"],
        "replayed": row.get("replayed", 0),
        "mean_score": row["mean_score"],
        "decisions": row["decisions"],
        "own_play": row["own_play"],
        "fallback_rate": row["fallback_rate"],
        "fallbacks": sum(row["fallbacks"].values()),
        "fallbacks_seat": sides.get(SEAT, 0),
        "fallbacks_infrastructure": sides.get(INFRASTRUCTURE, 0),
        **{f"fallbacks_{cause}": row["fallbacks"].get(cause, 0) for cause in CAUSES},
        "forfeits": row.get("forfeits", 0),
        "asked": row["asked"],
        "latency_p50_ms": _ms(row["latency_p50_ms"]),
        "latency_p95_ms": _ms(row["latency_p95_ms"]),
        "tokens_in": row["tokens_in"],
        "tokens_out": row["tokens_out"],
        "cost_usd": row["cost_usd"],
        "decoding": row.get("decoding"),
    }


def _ms(value: float) -> float:
    """A latency in milliseconds as the exports write it: a float with one decimal."""
    return round(float(value), 1)


def h2h_rows(tables: dict[str, Any]) -> list[dict[str, Any]]:
    """Head to head, one row per ordered pair of policies that met."""
    return [
        {
            "policy": a,
            "opponent": b,
            "wins": v[0],
            "draws": v[1],
            "losses": v[2],
            "no_contest": v[3],
        }
        for key, v in tables["h2h"].items()
        for a, b in [key.split("|", 1)]
    ]


def fallback_rows(stored: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The store's fallback records, flat: the move as text, the attempts side by side."""
    for r in stored:
        attempts = json.loads(r["attempts"]) if isinstance(r["attempts"], str) else r["attempts"]
        row = {k: r[k] for k in ("episode", "match_index", "game", "game_index", "ply", "seat")}
        row |= {k: r[k] for k in ("alias", "policy", "cause", "side", "last_error")}
        row["move"] = move_text(r["move"])
        row["attempts"] = len(attempts)
        for n in range(1, ATTEMPTS + 1):
            attempt = attempts[n - 1] if n <= len(attempts) else {}
            row |= {f"attempt{n}_{k}": attempt.get(k) for k in _ATTEMPT_FIELDS}
        yield row


def move_text(stored: str) -> str:
    """A stored move (JSON) as text: a move that is text as it is (`a4-a3`, not `"a4-a3"`),
    a structured one (a battle's orders, a Stratego setup) as compact JSON."""
    try:
        move = json.loads(stored)
    except ValueError:
        return stored
    return move if isinstance(move, str) else json.dumps(move, separators=(",", ":"))


def game_rows(games: Iterable[GameSummary]) -> Iterator[dict[str, Any]]:
    """One flat row per stored game."""
    for g in games:
        row: dict[str, Any] = {
            "episode": g.episode,
            "match_index": g.match_index,
            "game": g.game,
            "game_index": g.game_index,
            "policy_0": g.policies[0],
            "policy_1": g.policies[1],
            "score_0": g.scores[0] if g.scores else None,
            "score_1": g.scores[1] if g.scores else None,
            # a no-contest's stored reason is how its play stopped; the row says what counts
            "no_contest": g.scores is None,
            "reason": "no-contest" if g.scores is None else g.reason,
            "ending": g.ending,
            "detail": g.detail or None,
            "plies": g.plies,
            "same_author": g.same_author,
        }
        for seat, stats in enumerate(g.seats):
            row |= {f"{k}_{seat}": v for k, v in _seat(stats).items()}
        yield row


def _seat(stats: SeatStats) -> dict[str, Any]:
    latency = Row("")
    latency.latency_counts.update(stats.latencies_ms)
    return {
        "decisions": stats.decisions,
        "own": stats.own,
        "fallbacks": sum(stats.fallbacks.values()),
        "fallbacks_seat": stats.sides.get(SEAT, 0),
        "fallbacks_infrastructure": stats.sides.get(INFRASTRUCTURE, 0),
        "forfeited": stats.forfeited,
        "latency_p50_ms": _ms(latency.latency_ms(50)),
        "latency_p95_ms": _ms(latency.latency_ms(95)),
        "tokens_in": stats.tokens_in,
        "tokens_out": stats.tokens_out,
        "cost_usd": stats.cost_usd,
    }
