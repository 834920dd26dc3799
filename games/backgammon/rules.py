"""Backgammon, as the AI CUP (a programming competition for game-playing bots) plays it: 15 checkers a side, no doubling cube.

A card is two games on one card seed; seat 0 is BLACK in game 1 and WHITE in
game 2, and the colour is the seat's alias. The side that bears off all 15
checkers wins, +1 / -1; the ending is `single` (the loser has borne off a
checker), `gammon` (none) or `backgammon` (none, and a checker still on the
bar or in the winner's home board), worth 1, 2 or 3 points, recorded in
`Outcome.detail` for display only. At 1,000 plies the game is a `no-contest`
without scores; there is no wall-clock adjudication.

Rules source:
    `docs/rules.md#backgammon`: the AI CUP rules (the view, the notation,
    scoring, the 1,000-ply no-contest), with the legal plays, the canonical
    notation, the verifiable dice, the seats, the standing and the baseline.

Parameters:
    None. `initial(card_seed, game=g)` derives the game's seed from the
    64-hex card seed, and every roll follows from it (`dice`), so a state
    carries its game seed and `apply` is pure.

State:
    `BackgammonState` (`state`): both sides in their own numbering (`Side`),
    the colour to move, the roll of the ply to play (None once the game is
    over), the plies played (the opening roll belongs to ply 1; a `NONE` ply
    counts), the game index and its seed. Legal plays come from `moves`.

Notation:
    A play is its checkers' moves in the mover's own point numbers, `24/18
    13/11`, `6/3(2)`, `13/7*/5` (`notation`), or `NONE` when no checker can
    move; the reader takes any case and spacing, chains, repeats, `bar` and
    `off`. Legal plays are listed in the order `notation` fixes.

Standing:
    1000 - pips - 6 x blots + 8 x home-board points made (`standing_of`), for
    the seat's own side.

Baseline:
    The legal play maximising the mover's standing minus the opponent's after
    it, ties to the first listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from games.backgammon import dice as dice_rules
from games.backgammon.dice import Roll
from games.backgammon.moves import PlayTable, find_play, legal_plays
from games.backgammon.notation import NONE, read_play
from games.backgammon.state import (
    CHECKERS,
    COLOURS,
    OPENING,
    BackgammonState,
    Side,
    board_json,
    check_apart,
    colour_index,
    pip_count,
    side_from_points,
)
from games.core import (
    COMPLETE,
    Game,
    Illegal,
    MatchFormat,
    MoveError,
    Outcome,
    ProgramHelper,
    Unreadable,
    move_pieces,
    placeholder_refusal,
    reads_as_several,
    several_refusal,
)

__all__ = ["PLY_CAP", "Backgammon", "colour_of", "seat_of", "standing_of"]

# -- parameters ---------------------------------------------------------------

PLY_CAP = 1000
_ENDINGS = ("single", "gammon", "backgammon")
_OFF, _BAR = 0, 25
_WANTED = "one play from the legal list exactly as listed"
"""What belongs where a reply wrote a placeholder."""
_ONE_PLAY = " A play is every move of this one roll, written together."

# -- rules --------------------------------------------------------------------


def colour_of(game: int, seat: int) -> str:
    """The colour (and alias) of `seat` in game `game` of a card: seat 0 is BLACK in game 1."""
    if game not in (1, 2) or seat not in (0, 1):
        raise ValueError(f"game {game!r}, seat {seat!r}: games are 1 or 2, seats 0 or 1")
    return COLOURS[seat if game == 1 else 1 - seat]


def seat_of(game: int, colour: str) -> int:
    """The seat playing `colour` in game `game` of a card."""
    index = colour_index(colour)
    return index if game == 1 else 1 - index


def _ending(loser: Side) -> int:
    """0 single, 1 gammon, 2 backgammon, from the loser's side."""
    if loser[_OFF]:
        return 0
    # The winner's home board (its points 1-6) is the loser's points 19-24.
    return 2 if loser[_BAR] or any(loser[19:25]) else 1


def _pip_count(s: BackgammonState, args: list[Any]) -> int:
    if len(args) != 1 or args[0] not in COLOURS:
        raise ValueError(f"colour {args[0] if args else None!r} is not 'BLACK' or 'WHITE'")
    return pip_count(s.black if args[0] == "BLACK" else s.white)


_PIP_COUNT = ProgramHelper(_pip_count)

# -- standing -----------------------------------------------------------------


def standing_of(side: Side) -> int:
    """1000 - pips - 6 x blots + 8 x home-board points made, for one side."""
    blots = sum(1 for count in side[1:25] if count == 1)
    made = sum(1 for count in side[1:7] if count >= 2)
    return 1000 - pip_count(side) - 6 * blots + 8 * made


# -- the game -----------------------------------------------------------------


class Backgammon(Game[BackgammonState]):
    """Backgammon with verifiable dice; see the module docstring."""

    name: ClassVar[str] = "backgammon"
    family: ClassVar[str] = "backgammon"
    rules_version: ClassVar[int] = 1
    match_format: ClassVar[MatchFormat] = MatchFormat(
        games_per_episode=2,
        seat_names=(("BLACK", "WHITE"), ("WHITE", "BLACK")),
        deadlines=(40.0, 20.0, 60.0),
        run_deadlines=False,
        wall_s=None,
        program_timeout_s=60.0,
        chance="card",
    )
    hidden_chance: ClassVar[bool] = True
    ply_cap: ClassVar[int | None] = PLY_CAP

    # -- state ----------------------------------------------------------------

    def initial(self, seed: int | str, game: int = 1) -> BackgammonState:
        """The opening position of game `game` (1 or 2) of the card with seed `seed`, or of
        the game whose own seed `seed` is (`game_chance`)."""
        mark = dice_rules.GAME_SEED_MARK
        if (
            isinstance(seed, str)
            and seed.startswith(mark)
            and dice_rules.is_card_seed(seed[len(mark) :])
        ):
            seed_of_game = seed[len(mark) :]
        elif isinstance(seed, str) and dice_rules.is_card_seed(seed):
            seed_of_game = dice_rules.game_seed(seed, game)
        else:
            raise ValueError(
                f"backgammon's seed {seed!r} is not a card seed: pass the card's 64 hex digits "
                "e.g. dice.derived_card_seed(master, k, attempt)"
            )
        opening = dice_rules.roll_for_ply(seed_of_game, 1)
        turn = dice_rules.opener(opening)
        return BackgammonState(OPENING, OPENING, turn, opening, 0, game, seed_of_game)

    def derived_chance(self, seed: int, card: int = 1, attempt: int = 1) -> int | str:
        """The card seed of card `card`, deal `attempt`, in a `dice = "derived"` run with
        master seed `seed`."""
        return dice_rules.derived_card_seed(seed, card, attempt)

    def game_chance(self, chance: int | str, game: int) -> int | str:
        """The game's own seed: the card seed stays with whoever holds the ledger."""
        if not isinstance(chance, str) or not dice_rules.is_card_seed(chance):
            raise ValueError(f"backgammon's chance {chance!r} is not a card seed")
        return dice_rules.marked_game_seed(chance, game)

    def position(
        self,
        black: Mapping[int, int],
        white: Mapping[int, int],
        bar: tuple[int, int] = (0, 0),
        to_move: str = "BLACK",
        dice: tuple[int, int] = (3, 1),
        *,
        card_seed: str = "0" * 64,
        game: int = 1,
        ply: int = 0,
    ) -> BackgammonState:
        """A set-up position: checkers keyed by each side's own points, the rest borne off.

        `dice` are the roll of the ply to play; later rolls derive from
        `card_seed` and `game` as in a real card.
        """
        black_side = side_from_points(black, bar[0], "BLACK")
        white_side = side_from_points(white, bar[1], "WHITE")
        check_apart(black_side, white_side)
        if ply < 0:
            raise ValueError(f"ply {ply} is negative: it counts the plies already played")
        state = BackgammonState(
            black_side,
            white_side,
            colour_index(to_move),
            None,
            ply,
            game,
            dice_rules.game_seed(card_seed, game),
        )
        return self.with_dice(state, dice)

    def with_dice(self, s: BackgammonState, dice: tuple[int, int]) -> BackgammonState:
        """The same position with `dice` rolled for the side to move."""
        if len(dice) != 2 or not all(isinstance(d, int) and 1 <= d <= 6 for d in dice):
            raise ValueError(f"dice {dice!r} are not two numbers 1-6")
        return replace(s, roll=Roll(s.ply + 1, 0, (dice[0], dice[1])))

    def integrity(self, s: BackgammonState) -> dict[str, Any]:
        """The board and the roll drawn for the next ply, so a verifier can run steps
        3 and 4 of `verify` (dice from the seed; board_before + dice + play = board_after)."""
        roll = s.roll
        return {
            "board": self.board(s),
            "roll": [roll.ply, roll.nonce, *roll.dice] if roll is not None else None,
        }

    def board(self, s: BackgammonState) -> dict[str, Any]:
        """The board in absolute points and the colour to move, as a replay records it."""
        return {**board_json(s.black, s.white), "to_move": s.colour}

    # -- rules ----------------------------------------------------------------

    def to_act(self, s: BackgammonState) -> tuple[int, ...]:
        """The seat of the colour to move (the opening roll chose the first).

        Asked several times a ply, so it tests the ends `outcome` knows directly
        and finds the seat as `seat_of` does, from the colour's index.
        """
        if s.black[_OFF] == CHECKERS or s.white[_OFF] == CHECKERS or s.ply >= PLY_CAP:
            return ()
        return (s.turn if s.game == 1 else 1 - s.turn,)

    def outcome(self, s: BackgammonState) -> Outcome | None:
        """A `single`, `gammon` or `backgammon` once a side is off; `no-contest` at the ply cap."""
        for winner, (side, loser) in enumerate(((s.black, s.white), (s.white, s.black))):
            if side[_OFF] == CHECKERS:
                ending = _ending(loser)
                scores = (1, -1) if seat_of(s.game, COLOURS[winner]) == 0 else (-1, 1)
                return Outcome(scores, COMPLETE, _ENDINGS[ending], f"points={ending + 1}")
        if s.ply >= PLY_CAP:
            return Outcome(None, COMPLETE, "no-contest", f"ply-cap={PLY_CAP}")
        return None

    def adjudicate(self, s: BackgammonState) -> Outcome:
        """Backgammon has no wall-clock adjudication: a stopped game is a no-contest."""
        return Outcome(None, COMPLETE, "no-contest")

    def _table(self, s: BackgammonState) -> PlayTable:
        mover, opponent = s.sides()
        d1, d2 = s.dice
        return legal_plays(mover, opponent, (d1, d2))

    def _check_turn(self, s: BackgammonState, seat: int) -> None:
        if self.to_act(s) != (seat,):
            raise Illegal(f"it is not seat {seat}'s turn")

    def legal_moves(self, s: BackgammonState, seat: int) -> tuple[str, ...]:
        """The canonical plays of the roll, highest first; `NONE` when there is none."""
        if self.to_act(s) != (seat,):
            return ()
        return self._table(s).names

    def apply(self, s: BackgammonState, moves: Mapping[int, Any]) -> BackgammonState:
        """The position after the play, with the next ply's roll from the game seed."""
        seats = self.to_act(s)
        if not seats:
            raise Illegal("the game is over: no play can be applied")
        if set(moves) != {seats[0]}:
            raise Illegal(f"expected one play, by seat {seats[0]}; got seats {sorted(moves)}")
        move = moves[seats[0]]
        play = self._table(s).play(move) if isinstance(move, str) else None
        if play is None:
            raise Illegal(
                f"{move!r} is not a canonical legal play of seat {seats[0]} here: "
                "read replies with parse() first"
            )
        black, white = (play.mover, play.opponent) if s.turn == 0 else (play.opponent, play.mover)
        return self._next(s, black, white)

    def _next(self, s: BackgammonState, black: Side, white: Side) -> BackgammonState:
        """The state after the mover's play: next colour, next ply, and its roll."""
        ply = s.ply + 1
        over = black[_OFF] == CHECKERS or white[_OFF] == CHECKERS or ply >= PLY_CAP
        roll = None if over else dice_rules.roll_for_ply(s.game_seed, ply + 1)
        return BackgammonState(black, white, 1 - s.turn, roll, ply, s.game, s.game_seed)

    def program_helpers(self) -> dict[str, ProgramHelper]:
        """`pip_count(state, colour)`, and `with_dice(state, d1, d2)`: a state made by
        `apply` has no roll a program may see, so it chooses one to explore."""
        return {"pip_count": _PIP_COUNT, "with_dice": ProgramHelper(self._with_dice, True)}

    def _with_dice(self, s: BackgammonState, args: list[Any]) -> BackgammonState:
        if len(args) != 2 or not all(type(d) is int and 1 <= d <= 6 for d in args):
            raise ValueError(f"dice {list(args)!r} are not two numbers 1-6")
        return self.with_dice(s, (args[0], args[1]))

    # -- notation -------------------------------------------------------------

    def parse(self, s: BackgammonState, seat: int, move: object) -> str:
        """The canonical legal play a written one reaches (matched by resulting position).

        A refused reply that is a placeholder of the arena's texts (`<from>/<to>`), or a
        list of several legal plays (`13/7 8/7, 24/18 13/11`: a pasted legal list), is told
        so in place of what its moves did wrong."""
        if not isinstance(move, str):
            raise Unreadable(f"expected the play as text, got {type(move).__name__}.")
        try:
            return self._read(s, seat, move)
        except MoveError as exc:
            refusal = placeholder_refusal(move, _WANTED) if isinstance(exc, Unreadable) else None
            if refusal is None and self._several(s, seat, move):
                refusal = several_refusal(move, "plays") + _ONE_PLAY
            if refusal is None:
                raise
            raise Unreadable(refusal) from exc

    def _several(self, s: BackgammonState, seat: int, move: str) -> bool:
        """Whether `move` lists two or more plays, each of them legal here."""
        return reads_as_several(
            move_pieces(move, spaces=False), lambda piece: self._read(s, seat, piece)
        )

    def _read(self, s: BackgammonState, seat: int, move: str) -> str:
        written = read_play(move)
        self._check_turn(s, seat)
        table = self._table(s)
        nothing = table.names == (NONE,)
        dice = "-".join(map(str, s.dice))
        if written is None:
            if nothing:
                return NONE
            raise Illegal(f"{move!r}: NONE is refused, {len(table.plays)} plays move with {dice}.")
        if nothing:
            raise Illegal(f"{move!r}: no checker can move with {dice}; the only reply is NONE.")
        mover, opponent = s.sides()
        try:
            return find_play(table, mover, opponent, written).name
        except Illegal as exc:
            raise Illegal(f"{move!r} with {dice}: {exc}") from exc

    # -- standing -------------------------------------------------------------

    def standing(self, s: BackgammonState, seat: int) -> int:
        """1000 - pips - 6 x blots + 8 x home-board points made, for `seat`'s colour."""
        return standing_of((s.black, s.white)[colour_index(colour_of(s.game, seat))])

    # -- baseline -------------------------------------------------------------

    def baseline(self, s: BackgammonState, seat: int) -> str:
        """The play maximising standing(mover) - standing(opponent) after it, ties to the first."""
        self._check_turn(s, seat)
        best_name, best = NONE, None
        for play in self._table(s).plays:
            value = standing_of(play.mover) - standing_of(play.opponent)
            if best is None or value > best:
                best_name, best = play.name, value
        return best_name

    # -- view -----------------------------------------------------------------

    def view(self, s: BackgammonState, seat: int) -> dict[str, Any]:
        """The per-ply information the rules give a seat, from its side (its own point numbers).

        `ply` is the ply being decided (1: the play after the opening roll);
        `board` runs from the seat's 24 down to its 1; `legal_plays` is the
        full list while it is the seat's turn, else empty. The program seats'
        remaining node budget is the arena's to add.
        """
        colour = colour_of(s.game, seat)
        index = colour_index(colour)
        own, other = (s.black, s.white)[index], (s.black, s.white)[1 - index]
        your_turn = self.to_act(s) == (seat,)
        return {
            "game": s.game,
            "you": colour,
            "colour": colour,
            "to_move": s.colour if s.roll is not None else None,
            "your_turn": your_turn,
            "ply": s.ply + 1,
            "dice": list(s.dice),
            "four_moves": len(s.dice) == 2 and s.dice[0] == s.dice[1],
            "pips": {"you": pip_count(own), "opponent": pip_count(other)},
            "bar": {"you": own[_BAR], "opponent": other[_BAR]},
            "off": {"you": own[_OFF], "opponent": other[_OFF]},
            "board": [
                {"point": p, "you": own[p], "opponent": other[25 - p]} for p in range(24, 0, -1)
            ],
            "legal_plays": list(self._table(s).names) if your_turn else [],
        }
