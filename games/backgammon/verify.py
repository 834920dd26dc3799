"""Verifying a backgammon card from its records, in the four steps the rules give.

Rules: `docs/rules.md#backgammon`.

1. the commitment was recorded before play: it must be a sha256 hex digest;
2. the revealed card seed hashes to it: sha256(utf8(seed)) == commitment;
3. every recorded roll (ply, nonce, dice) equals the derivation from the seed
   (the opening roll by its own re-roll rule, not the raw first block);
4. every ply's board_before + dice + play gives its board_after, starting from
   the opening position, each ply starting where the last ended.

`verify_card` runs the steps in that order and returns the first failure, or
None when the card checks out. It is pure: the arena's `verify` command reads
the ledger and the replay and hands their contents here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games.backgammon import dice as dice_rules
from games.backgammon.moves import legal_plays
from games.backgammon.rules import Backgammon
from games.backgammon.state import (
    COLOURS,
    OPENING,
    BackgammonState,
    Side,
    board_json,
    sides_from_board,
)

__all__ = ["CardPly", "VerifyFailure", "card_ply", "verify_card"]

_DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class CardPly:
    """What a replay keeps of one ply of a card, for the card's verification."""

    game: int
    ply: int
    nonce: int
    dice: tuple[int, int]
    board_before: Mapping[str, Any]
    """`Backgammon.board` of the state before the ply (absolute points, bar, off, to_move)."""
    play: str
    """The canonical play applied (`NONE` included)."""
    board_after: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class VerifyFailure:
    """The first step (1-4, numbered as in the module docstring) that failed, where, and why."""

    step: int
    message: str
    game: int | None = None
    ply: int | None = None


def card_ply(
    game: Backgammon, before: BackgammonState, play: str, after: BackgammonState
) -> CardPly:
    """The record of the ply that took `before` to `after` by `play`."""
    if before.roll is None:
        raise ValueError("the state before the ply has no roll: the game was already over")
    return CardPly(
        before.game,
        before.roll.ply,
        before.roll.nonce,
        before.roll.dice,
        game.board(before),
        play,
        game.board(after),
    )


def _check_dice(card_seed: str, record: CardPly) -> VerifyFailure | None:
    if record.game not in (1, 2) or record.ply < 1:
        return VerifyFailure(3, f"game {record.game}, ply {record.ply} names no ply of a card")
    derived = dice_rules.roll_for_ply(dice_rules.game_seed(card_seed, record.game), record.ply)
    if (record.nonce, tuple(record.dice)) != (derived.nonce, derived.dice):
        return VerifyFailure(
            3,
            f"recorded roll {tuple(record.dice)} at nonce {record.nonce}, but the seed gives "
            f"{derived.dice} at nonce {derived.nonce}",
            record.game,
            record.ply,
        )
    return None


def _read(board: Mapping[str, Any], what: str) -> tuple[Side, Side] | str:
    try:
        return sides_from_board(board)
    except ValueError as exc:
        return f"{what} is not a board: {exc}"


def _replay_ply(
    record: CardPly, ply: int, expected: tuple[Side, Side], turn: int
) -> tuple[Side, Side] | str:
    """The (BLACK, WHITE) sides after the recorded ply, or why it does not check out."""
    if record.ply != ply:
        return f"the record of ply {ply} says ply {record.ply}: a ply is missing or extra"
    before = _read(record.board_before, "board_before")
    if isinstance(before, str):
        return before
    if before != expected:
        return f"board_before {board_json(*before)} is not the board the plays so far give"
    if record.board_before.get("to_move") != COLOURS[turn]:
        said = record.board_before.get("to_move")
        return f"board_before says {said!r} is to move, but it is {COLOURS[turn]}'s turn"
    mover, opponent = before if turn == 0 else (before[1], before[0])
    dice = (int(record.dice[0]), int(record.dice[1]))
    play = legal_plays(mover, opponent, dice).play(record.play)
    if play is None:
        return f"{record.play!r} is not a legal play of {COLOURS[turn]} with {dice}"
    after = (play.mover, play.opponent) if turn == 0 else (play.opponent, play.mover)
    if _read(record.board_after, "board_after") != after:
        return (
            f"board_after {dict(record.board_after)} is not what {record.play!r} gives: "
            f"{board_json(*after)}"
        )
    return after


def _check_game(card_seed: str, game: int, records: Sequence[CardPly]) -> VerifyFailure | None:
    """Step 4 for one game's records, in ply order, from the opening position."""
    opening = dice_rules.roll_for_ply(dice_rules.game_seed(card_seed, game), 1)
    sides: tuple[Side, Side] = (OPENING, OPENING)
    turn = dice_rules.opener(opening)
    for ply, record in enumerate(records, start=1):
        result = _replay_ply(record, ply, sides, turn)
        if isinstance(result, str):
            return VerifyFailure(4, result, game, ply)
        sides, turn = result, 1 - turn
    return None


def verify_card(
    commitment: str, card_seed: str, records: Sequence[CardPly]
) -> VerifyFailure | None:
    """Run steps 1-4 over a card's records (both games, each in ply order); None if all pass."""
    if not isinstance(commitment, str) or _DIGEST.fullmatch(commitment) is None:
        return VerifyFailure(1, f"commitment {commitment!r} is not a sha256 digest (64 hex digits)")
    revealed = dice_rules.commitment(card_seed)
    if revealed != commitment:
        return VerifyFailure(
            2, f"sha256 of the revealed seed is {revealed}, not the commitment {commitment}"
        )
    for record in records:
        failure = _check_dice(card_seed, record)
        if failure is not None:
            return failure
    for game in (1, 2):
        failure = _check_game(card_seed, game, [r for r in records if r.game == game])
        if failure is not None:
            return failure
    return None
