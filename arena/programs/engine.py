"""The engine behind a program's helper calls: the parent holds the states, the
program holds integer handles, and every answered call is one node.

Helpers must not tell a program what its view does not, and each game says
what that takes:

- a game with hidden chance (`Game.hidden_chance`, backgammon): a state made
  by `apply` has no roll yet (the real next roll comes from the card's secret
  seed); the program chooses one with the game's `with_dice` helper before
  asking for plays, so it explores chance, never the future dice;
- a game with hidden pieces (Stratego): the helpers run on the game's
  `sample_world`, the opponent's unrevealed pieces shuffled among its
  unrevealed squares by a seeded draw, never on the true board;
- a game's own helpers (`Game.program_helpers`, backgammon's `pip_count`)
  come after the common ones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import games

__all__ = [
    "BATCHES",
    "COMMON_HELPERS",
    "MAX_BATCH",
    "EngineHelpers",
    "HelperRefused",
    "helper_names",
]

COMMON_HELPERS = (
    "legal_moves",
    "apply",
    "standing",
    "outcome",
    "to_act",
    "apply_many",
    "standing_many",
)
BATCHES = {"apply_many": 1, "standing_many": 0}
"""The batched helpers, each with the position of its list argument: one node per item,
one message in all."""
MAX_BATCH = 10_000
"""The most items one batched call may carry."""


class HelperRefused(Exception):
    """A helper call the arena answers with an error (it still counts as a node)."""


def helper_names(game: games.Game[Any]) -> tuple[str, ...]:
    """The helpers a program of `game` may call: the common ones, then the game's own."""
    return COMMON_HELPERS + tuple(game.program_helpers())


@dataclass(frozen=True, slots=True)
class _Node:
    state: Any
    rolled: bool
    """False for a backgammon state whose roll the program has not chosen yet."""


class EngineHelpers:
    """One move's helper table: the handles a program made during that move.

    Handles are numbered from `first_handle` and never reused within a game,
    so a handle kept from an earlier move is refused, not mistaken.
    """

    def __init__(
        self, game: games.Game[Any], state: Any, seat: int, *, first_handle: int, world_seed: int
    ) -> None:
        self.game = game
        self.seat = seat
        self.nodes = 0
        self._table: dict[int, _Node] = {}
        self._next = first_handle
        self.root = self._store(_Node(game.sample_world(state, seat, world_seed), rolled=True))
        self._calls: dict[str, Callable[[list[Any]], Any]] = {
            "legal_moves": self._legal_moves,
            "apply": self._apply,
            "standing": self._standing,
            "outcome": self._outcome,
            "to_act": self._to_act,
            "apply_many": self._apply_many,
            "standing_many": self._standing_many,
        }
        for name, helper in game.program_helpers().items():
            self._calls[name] = functools.partial(self._game_helper, helper)

    @property
    def next_handle(self) -> int:
        """The first handle the next move may use."""
        return self._next

    @staticmethod
    def cost(fn: object, args: object) -> int:
        """The nodes a call costs: one, or for a batched helper one per item of its list."""
        at = BATCHES.get(fn) if isinstance(fn, str) else None
        if at is None or not isinstance(args, list) or len(args) <= at:
            return 1
        items = args[at]
        return max(1, len(items)) if isinstance(items, list) else 1

    def call(self, fn: object, args: object, *, cost: int | None = None) -> Any:
        """Answer one helper call (`cost` nodes, computed here unless the caller has);
        raise HelperRefused saying why not."""
        self.nodes += self.cost(fn, args) if cost is None else cost
        if not isinstance(fn, str) or fn not in self._calls:
            raise HelperRefused(f"unknown helper {fn!r} (known: {', '.join(sorted(self._calls))})")
        if not isinstance(args, list):
            raise HelperRefused(f"{fn}: arguments must come as a list")
        try:
            return self._calls[fn](args)
        except games.MoveError as exc:
            raise HelperRefused(f"{fn}: {exc}") from None
        except (TypeError, ValueError, IndexError) as exc:
            raise HelperRefused(f"{fn}: {exc}") from None

    # --- handles ----------------------------------------------------------------------

    def _store(self, node: _Node) -> int:
        handle = self._next
        self._next += 1
        self._table[handle] = node
        return handle

    def _node(self, args: list[Any], count: int) -> _Node:
        if len(args) != count:
            raise HelperRefused(f"expected {count} arguments, got {len(args)}")
        handle = args[0]
        node = self._table.get(handle) if type(handle) is int else None
        if node is None:
            raise HelperRefused(
                f"unknown state handle {handle!r}: handles are valid during the move that made them"
            )
        return node

    def _mover(self, node: _Node) -> int | None:
        seats = self.game.to_act(node.state)
        if not seats:
            return None
        if not node.rolled:
            raise HelperRefused("this state has no roll yet: choose one with ctx.with_dice")
        if len(seats) != 1:
            raise HelperRefused("both seats act at once here (the setup): no helper applies")
        return seats[0]

    # --- the helpers --------------------------------------------------------------------

    def _legal_moves(self, args: list[Any]) -> list[str]:
        node = self._node(args, 1)
        mover = self._mover(node)
        return [] if mover is None else list(self.game.legal_moves(node.state, mover))

    def _apply(self, args: list[Any]) -> int:
        node = self._node(args, 2)
        return self._apply_to(node, args[1])

    def _apply_to(self, node: _Node, move: object) -> int:
        mover = self._mover(node)
        if mover is None:
            raise HelperRefused("the game is over: no move can be applied")
        if not isinstance(move, str):
            raise HelperRefused(f"a move is text, got {type(move).__name__}")
        state = self.game.apply(node.state, {mover: move})
        return self._store(_Node(state, rolled=not self.game.hidden_chance))

    def _apply_many(self, args: list[Any]) -> list[int]:
        """`apply` of each move to one state: the handles, in the moves' order."""
        node = self._node(args, 2)
        moves = _batch(args[1], "moves")
        return [self._apply_to(node, move) for move in moves]

    def _standing(self, args: list[Any]) -> int:
        node = self._node(args, 2)
        return int(self.game.standing(node.state, _seat(args[1])))

    def _standing_many(self, args: list[Any]) -> list[int]:
        """`standing` of one seat in each state: the values, in the states' order."""
        if len(args) != 2:
            raise HelperRefused(f"expected 2 arguments, got {len(args)}")
        seat = _seat(args[1])
        table, nodes = self._table, []
        for handle in _batch(args[0], "state handles"):
            node = table.get(handle) if type(handle) is int else None
            nodes.append(self._node([handle], 1) if node is None else node)  # None: refused
        standing = self.game.standing
        return [int(standing(node.state, seat)) for node in nodes]

    def _outcome(self, args: list[Any]) -> dict[str, Any] | None:
        outcome = self.game.outcome(self._node(args, 1).state)
        return None if outcome is None else outcome.to_json()

    def _to_act(self, args: list[Any]) -> list[int]:
        return list(self.game.to_act(self._node(args, 1).state))

    def _game_helper(self, helper: games.ProgramHelper, args: list[Any]) -> Any:
        """One of the game's own helpers: a handle, then the helper's arguments."""
        if not args:
            raise HelperRefused("expected a state handle first")
        node = self._node(args[:1], 1)
        value = helper.call(node.state, args[1:])
        return self._store(_Node(value, rolled=True)) if helper.makes_state else value


def _seat(seat: object) -> int:
    if type(seat) is not int or seat not in (0, 1):
        raise HelperRefused(f"seat {seat!r} is not 0 or 1")
    return seat


def _batch(items: object, what: str) -> list[Any]:
    if not isinstance(items, list):
        raise HelperRefused(f"the {what} come as a list, got {type(items).__name__}")
    if len(items) > MAX_BATCH:
        raise HelperRefused(f"at most {MAX_BATCH:,} {what} in one call, got {len(items):,}")
    return items
