"""The battle's orders: their schema, the tolerant reader and its repairs.

A commander's reply carries `"orders"`: a JSON list of objects, one per squad
it wants to re-task. Squads are named by army letter and number, `A1`..`A9`
or `B1`..`B9` (which letter is yours: `squad_prefix`); cells are 1-based
`[x, y]`, `[1, 1]` the bottom-left cell, y growing upward::

    {"squad": "A3", "do": "advance"}                  # target: the living enemy's centroid
    {"squad": "A3", "do": "attack", "enemy": "B5"}    # target: B5's centroid (advance once B5 is gone)
    {"squad": "A3", "do": "move", "to": [30, 22]}     # target: that cell; attacks on the way
    {"squad": "A3", "do": "hold"}                     # stays put, attacks neighbours
    {"squad": "A3", "do": "retreat"}                  # target: own back edge at the squad's y; no attacks

Reading (`docs/rules.md#battle`): squad names and verbs ignore case and spaces,
other keys are ignored. A squad not mentioned keeps its order; turn 1's order
of every squad is `advance`; `[]` is a valid reply. An entry is **dropped**
when it is not an object, names no squad of either army, names a squad of the
other army or one with no living soldiers, has an unknown verb, or moves to
an off-board cell. An entry naming a living squad of one's own whose fields do
not validate (no verb, `attack` without an enemy squad, `move` without a
two-number cell) is **repaired** to that squad's previous order. A squad named
twice takes its last entry. Every drop and repair is recorded in
`Orders.repairs`; only a value that is not a list at all is unreadable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from games.core import Unreadable, placeholder_refusal

__all__ = ["DEFAULT_VERB", "VERBS", "Orders", "SquadOrder", "read_orders", "squad_prefix"]

VERBS = ("advance", "attack", "move", "hold", "retreat")
"""Every verb an order may use."""
DEFAULT_VERB = "advance"
"""Every squad's order on turn 1."""

_NAME = re.compile(r"^([AB])([1-9])$")


def squad_prefix(game: int, seat: int) -> str:
    """`A` for the match's first policy (seat 0 in game 1, seat 1 in game 2), else `B`."""
    if game not in (1, 2) or seat not in (0, 1):
        raise ValueError(f"game {game} / seat {seat}: games are 1 or 2 and seats 0 or 1")
    return "A" if (seat == 0) == (game == 1) else "B"


@dataclass(frozen=True, slots=True)
class SquadOrder:
    """One squad's standing order: `squad` ("A3"), verb `do`, and its one field.

    `enemy` names the enemy squad of an `attack`; `to` is the 1-based cell of
    a `move`; both are None for the other verbs.
    """

    squad: str
    do: str
    enemy: str | None = None
    to: tuple[int, int] | None = None

    @property
    def number(self) -> int:
        """The squad's number within its army, 1..9."""
        return int(self.squad[1:])

    def to_json(self) -> dict[str, Any]:
        """The order as the schema writes it."""
        entry: dict[str, Any] = {"squad": self.squad, "do": self.do}
        if self.enemy is not None:
            entry["enemy"] = self.enemy
        if self.to is not None:
            entry["to"] = list(self.to)
        return entry

    def describe(self) -> str:
        """Short text: `advance`, `attack B5`, `move to (30, 22)`."""
        if self.enemy is not None:
            return f"{self.do} {self.enemy}"
        if self.to is not None:
            return f"{self.do} to ({self.to[0]}, {self.to[1]})"
        return self.do


@dataclass(frozen=True, slots=True)
class Orders:
    """A commander's canonical orders for one turn and what reading them repaired.

    `entries` hold at most one order per squad, by squad number; squads not in
    it keep their order. `repairs` says, per entry, what was dropped or
    repaired and why (empty for a clean reply and for the baseline).
    """

    entries: tuple[SquadOrder, ...]
    repairs: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        """The canonical orders list; reading it back gives the same entries."""
        return [entry.to_json() for entry in self.entries]


@dataclass(frozen=True, slots=True)
class _Army:
    """What the reader needs to know about the commanding seat."""

    own: str
    enemy: str
    living: frozenset[int]
    map_size: int
    previous: Sequence[SquadOrder]


def read_orders(
    raw: object,
    *,
    own: str,
    living: frozenset[int],
    map_size: int,
    previous: Sequence[SquadOrder],
) -> Orders:
    """Read a decoded `orders` value for the army whose squads are `own` + 1..9.

    `living` holds the numbers of that army's squads with living soldiers and
    `previous` its nine current orders (the repairs fall back to them).
    Raises Unreadable when `raw` is not a list.
    """
    if not isinstance(raw, list):
        placeholder = isinstance(raw, str) and placeholder_refusal(
            raw, "your orders (a JSON list of objects, one per squad to re-task)"
        )
        raise Unreadable(
            placeholder
            or f"expected `orders` as a JSON list of objects, got {type(raw).__name__} "
            f"{_clip(raw)}; send [] to keep every squad's order."
        )
    army = _Army(own, "B" if own == "A" else "A", living, map_size, previous)
    chosen: dict[int, SquadOrder | None] = {}
    named_in: dict[int, int] = {}
    repairs: list[str] = []
    for index, entry in enumerate(raw, 1):
        number, order, note = _read_entry(entry, index, army)
        if note:
            repairs.append(note)
        if number is None:
            continue
        if number in named_in:
            repairs.append(
                f"{own}{number} is named in entries {named_in[number]} and {index}: "
                f"entry {index} counts"
            )
        named_in[number] = index
        chosen[number] = order
    entries = tuple(order for _, order in sorted(chosen.items()) if order is not None)
    return Orders(entries, tuple(repairs))


class _Reading(NamedTuple):
    """One entry read: its squad number (None: dropped), its order (None: keep the old one)."""

    number: int | None
    order: SquadOrder | None
    note: str


def _drop(note: str) -> _Reading:
    return _Reading(None, None, note)


def _read_entry(entry: object, index: int, army: _Army) -> _Reading:
    """Read entry `index` (1-based) of the list."""
    where = f"entry {index}"
    if not isinstance(entry, dict):
        return _drop(
            f"{where} ({_clip(entry)}) dropped: each entry must be an object like "
            f'{{"squad": "{army.own}1", "do": "advance"}}'
        )
    name = _name(entry.get("squad"))
    if name is None or name[0] != army.own:
        why = (
            f"{name[0]}{name[1]} is a squad of the enemy army"
            if name
            else f"'squad' is {_clip(entry.get('squad'))}, not a squad name"
        )
        return _drop(f"{where} dropped: {why}; yours are {army.own}1..{army.own}9")
    number = name[1]
    squad = f"{army.own}{number}"
    if number not in army.living:
        return _drop(f"{where} dropped: {squad} has no living soldiers")
    verb = entry.get("do")
    if isinstance(verb, str) and verb.strip().lower() not in VERBS:
        return _drop(
            f"{where} dropped: unknown verb {verb!r} for {squad} (known: {', '.join(VERBS)})"
        )
    return _read_fields(entry, f"{where} ({squad})", number, army)


def _read_fields(entry: dict[Any, Any], where: str, number: int, army: _Army) -> _Reading:
    """The fields of an entry that names living squad `number` of one's own."""
    squad = f"{army.own}{number}"
    keep = army.previous[number - 1].describe()
    verb = entry.get("do")
    if not isinstance(verb, str):
        return _Reading(number, None, f"{where} has no 'do' verb: {squad} keeps its order ({keep})")
    do = verb.strip().lower()
    if do == "attack":
        target = _name(entry.get("enemy"))
        if target is None or target[0] != army.enemy:
            why = f"'enemy' is {_clip(entry.get('enemy'))}, not {army.enemy}1..{army.enemy}9"
            return _Reading(number, None, f"{where}: {why}: {squad} keeps its order ({keep})")
        return _Reading(number, SquadOrder(squad, do, enemy=f"{army.enemy}{target[1]}"), "")
    if do == "move":
        cell = _cell(entry.get("to"))
        if cell is None:
            why = f"'to' is {_clip(entry.get('to'))}, not [x, y]"
            return _Reading(number, None, f"{where}: {why}: {squad} keeps its order ({keep})")
        if not all(1 <= v <= army.map_size for v in cell):
            off = f"cell ({cell[0]}, {cell[1]}) is off the board (x and y run 1..{army.map_size})"
            return _drop(f"{where} dropped: {off}")
        return _Reading(number, SquadOrder(squad, do, to=cell), "")
    return _Reading(number, SquadOrder(squad, do), "")


def _name(value: object) -> tuple[str, int] | None:
    """('A', 3) for "a3" / " A3 "; None for anything that is not a squad name."""
    if not isinstance(value, str):
        return None
    match = _NAME.match(value.strip().upper())
    return (match.group(1), int(match.group(2))) if match else None


def _cell(value: object) -> tuple[int, int] | None:
    """(x, y) from a two-number list; floats must be whole, booleans are not numbers."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    numbers: list[int] = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return None
        if isinstance(v, float) and not v.is_integer():
            return None
        numbers.append(int(v))
    return numbers[0], numbers[1]


def _clip(value: object, limit: int = 60) -> str:
    """A short repr of a foreign value for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
