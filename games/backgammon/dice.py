"""Backgammon's verifiable dice: card seed, commitment and the roll of every ply.

Rules: `docs/rules.md#backgammon`, which fixes the scheme below bit for bit.

A card seed is 64 hex digits drawn when the card starts; the ledger gets
`commitment(seed)` before the first roll and the seed itself when the card
ends. Each game of the card has its own seed, and each ply's dice come from
an HMAC keyed by it, so anyone holding the revealed card seed can re-derive
every roll:

    game_seed(seed, g) = hex(HMAC-SHA256(key=utf8(seed), msg=utf8(f"game:{g}")))
    block(p, n)        = HMAC-SHA256(key=utf8(game_seed), msg=utf8(f"{p}:0:{n}"))

The block's bytes are read in order; a byte v < 252 gives the die v % 6 + 1
(252 = 42 * 6, so every face is equally likely) and larger bytes are skipped.
The first two dice are the roll; should a block run out first, the roll
continues in block n + 1. Ply 1 is the opening roll: the first die is
BLACK's, the second WHITE's, and equal dice roll again with the next unused
nonce; the higher die moves first, playing both numbers. Every later ply
rolls with nonce 0.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from games.core import is_card_seed

__all__ = [
    "GAME_SEED_MARK",
    "Roll",
    "commitment",
    "derived_card_seed",
    "draw_dice",
    "game_seed",
    "is_card_seed",
    "marked_game_seed",
    "opener",
    "roll_for_ply",
]

_ACCEPT_BELOW = 252


@dataclass(frozen=True, slots=True)
class Roll:
    """The dice of one ply and the nonce they were drawn with, as a verifier re-derives them.

    For ply 1 (the opening roll) `dice` is (BLACK's die, WHITE's die) and
    `nonce` is the nonce of the first unequal pair.
    """

    ply: int
    nonce: int
    dice: tuple[int, int]

    def to_json(self) -> dict[str, object]:
        """A JSON-able copy, as a replay records it."""
        return {"ply": self.ply, "nonce": self.nonce, "dice": list(self.dice)}


def commitment(card_seed: str) -> str:
    """sha256(utf8(card_seed)) in hex: what the ledger holds before the first roll."""
    return hashlib.sha256(card_seed.encode("utf-8")).hexdigest()


def game_seed(card_seed: str, game: int) -> str:
    """The seed of game `game` (1 or 2) of the card, in hex."""
    if game not in (1, 2):
        raise ValueError(f"game index {game!r} is not 1 or 2 (a card has two games)")
    message = f"game:{game}".encode()
    return hmac.new(card_seed.encode("utf-8"), message, hashlib.sha256).hexdigest()


GAME_SEED_MARK = "game-seed:"
"""How a game's own seed is written where a card seed could stand: `game-seed:<64 hex>`."""


def marked_game_seed(card_seed: str, game: int) -> str:
    """Game `game`'s seed, marked so that `Backgammon.initial` takes it for what it is."""
    return GAME_SEED_MARK + game_seed(card_seed, game)


def derived_card_seed(master: int | str, k: int, attempt: int) -> str:
    """The card seed of `dice = "derived"` runs: card k, attempt 1 (then 2, ... for replacements)."""
    return hashlib.sha256(f"{master}:backgammon:{k}:{attempt}".encode()).hexdigest()


def draw_dice(seed_of_game: str, ply: int, nonce: int) -> tuple[tuple[int, int], int]:
    """The two dice drawn for `ply` from `nonce` on, and the next nonce left unused."""
    key = seed_of_game.encode("utf-8")
    dice: list[int] = []
    while True:
        block = hmac.new(key, f"{ply}:0:{nonce}".encode(), hashlib.sha256).digest()
        nonce += 1
        for value in block:
            if value < _ACCEPT_BELOW:
                dice.append(value % 6 + 1)
                if len(dice) == 2:
                    return (dice[0], dice[1]), nonce


def roll_for_ply(seed_of_game: str, ply: int) -> Roll:
    """The roll of `ply` (1-based; ply 1 is the opening roll, re-rolled while the dice are equal)."""
    if ply < 1:
        raise ValueError(f"ply {ply} is not a ply: plies count from 1 (the opening roll)")
    if ply > 1:
        dice, _ = draw_dice(seed_of_game, ply, 0)
        return Roll(ply, 0, dice)
    nonce = 0
    while True:
        dice, after = draw_dice(seed_of_game, 1, nonce)
        if dice[0] != dice[1]:
            return Roll(1, nonce, dice)
        nonce = after


def opener(opening: Roll) -> int:
    """The colour that plays first after the opening roll: 0 (BLACK) or 1 (WHITE), the higher die."""
    black, white = opening.dice
    if black == white:
        raise ValueError(
            f"opening dice {opening.dice} are equal: an opening roll is never a double"
        )
    return 0 if black > white else 1
