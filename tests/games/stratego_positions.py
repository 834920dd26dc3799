"""Building Stratego test positions: a sparse board in Gravon letters, and moves played on it."""

from __future__ import annotations

from games.stratego import Stratego, StrategoState

G = Stratego()
FILES = "abcdefghij"
LAKES = ("c5", "d5", "c6", "d6", "g5", "h5", "g6", "h6")


def position(pieces: dict[str, str], to_move: int = 0) -> StrategoState:
    """A from_board position holding only `pieces` (square -> Gravon letter)."""
    letters = ["A"] * 100
    for name, letter in [(lake, "_") for lake in LAKES] + list(pieces.items()):
        letters[(int(name[1:]) - 1) * 10 + FILES.index(name[0])] = letter
    return G.from_board("".join(letters), to_move)


def play(s: StrategoState, *moves: str) -> StrategoState:
    """The position after the seats to move play `moves` (read through the game's reader)."""
    for move in moves:
        seat = G.to_act(s)[0]
        s = G.apply(s, {seat: G.parse(s, seat, move)})
    return s
