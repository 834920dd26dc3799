"""Backgammon for the viewer: the board in absolute points, and each play one checker step at a time.

The engine names a play (`13/7*/5`, `6/3(2)`) and gives the position after
it, but not the single-die steps a person would watch. `play_steps` finds
them: it moves one checker one die at a time under the rules of docs/rules.md#backgammon
(bar first, no landing on two or more, bearing off only with every checker
home, a larger die only from the highest point) until it reaches exactly the
position the engine produced, so every step shown is a step of that play.
Points are BLACK's numbering (absolute 1-24), as replays record them.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import games
from games.backgammon import colour_of, pip_count

__all__ = ["BackgammonDrawer", "Step", "play_steps"]

_OFF, _BAR = 0, 25

Step = tuple[int, int, int, bool]
"""(from, to, die, hit) in the mover's own numbering: bar 25, off 0."""


def _single(me: list[int], opp: list[int], src: int, die: int) -> tuple[int, bool] | None:
    """Where one checker from `src` lands with `die`, and whether it hits; None if it may not."""
    if me[src] == 0 or (me[_BAR] and src != _BAR):
        return None
    dst = src - die
    if dst >= 1:
        blockers = opp[25 - dst]
        return None if blockers >= 2 else (dst, blockers == 1)
    if any(me[p] for p in range(7, 26)):
        return None  # bearing off needs every checker home
    if dst < 0 and any(me[p] for p in range(src + 1, 7)):
        return None  # a larger die bears off only from the highest occupied point
    return _OFF, False


def play_steps(
    mover: bytes, opponent: bytes, dice: tuple[int, ...], after: tuple[bytes, bytes]
) -> list[Step] | None:
    """Single-die steps from (mover, opponent) to `after` (the same two sides), or None."""
    rolls = [dice[0]] * 4 if len(dice) == 2 and dice[0] == dice[1] else list(dice)
    target = (list(after[0]), list(after[1]))
    for order in dict.fromkeys(permutations(rolls)):
        found = _search(list(mover), list(opponent), list(order), target, [])
        if found is not None:
            return found
    return None


def _search(
    me: list[int],
    opp: list[int],
    dice: list[int],
    target: tuple[list[int], list[int]],
    steps: list[Step],
) -> list[Step] | None:
    if (me, opp) == target:
        return list(steps)
    if not dice:
        return None
    die = dice[0]
    for src in range(25, 0, -1):
        landing = _single(me, opp, src, die)
        if landing is None:
            continue
        dst, hit = landing
        me[src] -= 1
        me[dst] += 1
        if hit:
            opp[25 - dst] -= 1
            opp[_BAR] += 1
        steps.append((src, dst, die, hit))
        found = _search(me, opp, dice[1:], target, steps)
        steps.pop()
        if hit:
            opp[_BAR] -= 1
            opp[25 - dst] += 1
        me[dst] -= 1
        me[src] += 1
        if found is not None:
            return found
    return None


def _absolute(point: int, colour: str) -> str:
    """A mover's point as the board shows it: BLACK's numbering, `bar` or `off`."""
    if point == _BAR:
        return "bar"
    if point == _OFF:
        return "off"
    return str(point if colour == "BLACK" else 25 - point)


def _board(black: list[int] | bytes, white: list[int] | bytes) -> dict[str, Any]:
    return {
        "points": [black[p] - white[25 - p] for p in range(1, 25)],
        "bar": [black[_BAR], white[_BAR]],
        "off": [black[_OFF], white[_OFF]],
    }


class BackgammonDrawer:
    """Backgammon: 24 points in absolute numbering, the dice, and the steps of each play."""

    def move_text(self, move: Any) -> str:
        """The play in the mover's notation (`13/7*/5`, `NONE`)."""
        return str(move)

    def seat_frame(
        self, game: games.Game[Any], before: Any | None, after: Any, seat: int
    ) -> dict[str, Any]:
        """The frame itself: the board and the dice played are public."""
        return self.frame(game, before, after)

    def static(self, game: games.Game[Any], initial: Any) -> dict[str, Any]:
        """The seats' colours in this game."""
        colours = [colour_of(initial.game, 0), colour_of(initial.game, 1)]
        return {"colours": colours, "seat_colours": [_SWATCH[c] for c in colours]}

    def frame(self, game: games.Game[Any], before: Any | None, after: Any) -> dict[str, Any]:
        """The points after the ply, its dice, and each checker step of the play."""
        board = _board(after.black, after.white)
        out: dict[str, Any] = {
            **board,
            "pips": [pip_count(after.black), pip_count(after.white)],
            "next_dice": list(after.dice),
            "to_move": None if not game.to_act(after) else game.to_act(after)[0],
            "steps": [],
        }
        if before is None:
            out.update(mover=None, dice=list(after.dice), opening=True)
            return out
        colour = before.colour
        mover, opponent = (
            (before.black, before.white) if colour == "BLACK" else (before.white, before.black)
        )
        wanted = (after.black, after.white) if colour == "BLACK" else (after.white, after.black)
        steps = play_steps(mover, opponent, tuple(before.dice), wanted)
        out.update(mover=colour, dice=list(before.dice), opening=False)
        if steps is None:  # cannot happen for an engine position; show the play whole
            out["steps"] = []
            return out
        me, them = list(mover), list(opponent)
        for src, dst, die, hit in steps:
            me[src] -= 1
            me[dst] += 1
            if hit:
                them[25 - dst] -= 1
                them[_BAR] += 1
            black, white = (me, them) if colour == "BLACK" else (them, me)
            out["steps"].append(
                {
                    "from": _absolute(src, colour),
                    "to": _absolute(dst, colour),
                    "die": die,
                    "hit": hit,
                    **_board(black, white),
                }
            )
        return out


_SWATCH = {"BLACK": "#26282c", "WHITE": "#ece6d6"}
