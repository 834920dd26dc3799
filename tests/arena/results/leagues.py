"""Small leagues written by hand: a config of named policies and a match's two games."""

from __future__ import annotations

from arena.config import Config, parse_config
from arena.results.standings import GameSummary, SeatStats

_SCORES = {1.0: (1, -1), 0.5: (0, 0), 0.0: (-1, 1)}


def lineup(names: list[str], games: tuple[str, ...] = ("connect-four",)) -> Config:
    """A config of scripted policies with these names (only their names and order matter)."""
    return parse_config(
        {
            "run": {"name": "t", "seed": 1, "games": list(games), "matches": 1},
            "policies": {name: {"kind": "scripted", "baseline": "random"} for name in names},
        }
    )


def match_games(
    index: int, first: str, second: str, results: tuple[float | None, float | None],
    game: str = "connect-four", seat: SeatStats | None = None,
) -> list[GameSummary]:  # fmt: skip
    """A match's two games, `results` from `first`'s side (1 win, 0.5 draw, 0 loss, None a
    no-contest); the seats swap for game 2, and each seat plays as `seat` (10 decisions)."""
    stats = seat or SeatStats((100,) * 10, {})
    out = []
    for n, result in enumerate(results, start=1):
        seats = (first, second) if n == 1 else (second, first)
        scores = None if result is None else _SCORES[result]
        if scores is not None and n == 2:
            scores = (scores[1], scores[0])
        ending = "no-contest" if scores is None else "win"
        out.append(GameSummary(
            f"m{index}-g{n}", index, game, n, seats, scores, "complete", ending, 10,
            (stats, stats), False,
        ))  # fmt: skip
    return out
