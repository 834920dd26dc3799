"""Every family's default template shows a reply the arena's reader and the game accept.

For every game, at real positions, the rendered prompt's own example reply
(`{"<key>": <your key>, "say": ..., "notes": ...}`) is filled with a move as a
seat would fill it: the placeholder stands for the contents of the JSON value
around it, a string's text or a list's items. The filled reply must go through
`extract` and the game's `parse` to the same move the game reads directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import games
from arena.play.extract import extract
from arena.play.prompts import SeatContext, load_template, render

EXAMPLE = re.compile(
    r'^\{"(?P<key>\w+)": .*, "say": "<[^"]*>", "notes": "<[^"]*>"\}$', re.MULTILINE
)
"""The example reply line of `$reply_format`."""
HELP_ORDER = re.compile(r'^\s+(\{"squad": .*\})\s+- ', re.MULTILINE)
"""An order entry the battle's move help shows."""
PLIES = 4
"""Positions per game: the start and the next three, played by the baseline (Stratego's
setup and its first moves, the battle's first command turns)."""
KEYS = {"battle": {"orders"}, "stratego": {"setup", "move"}}
"""The reply keys those positions ask for, where not just `move`."""


def _seed(name: str) -> int | str:
    # Backgammon's chance comes from a card seed string; every other game takes an int.
    return f"{7:064x}" if name == "backgammon" else 7


def _prompts(name: str, game_index: int) -> Iterator[tuple[games.Game[Any], Any, int, str]]:
    """(game, state, seat, prompt) for every seat to act in the first `PLIES` positions."""
    game = games.load(name)
    template = load_template(f"{game.family}/default.md")
    state = game.initial(_seed(name), game=game_index)
    history: list[str] = []
    for _ in range(PLIES):
        seats = game.to_act(state)
        if not seats:
            return
        for seat in seats:
            context = SeatContext.of(
                game, state, seat, game_index=game_index,
                aliases=game.match_format.aliases(7, game_index),
                history=tuple(history), notes="",
            )  # fmt: skip
            yield game, state, seat, render(template, context)
        moves = {seat: game.baseline(state, seat) for seat in seats}
        state = game.apply(state, moves)
        history.append(" ".join(str(m) for m in moves.values()))


def _example(prompt: str, key: str) -> str:
    examples = EXAMPLE.findall(prompt)
    assert examples == [key], f"expected one example reply with key {key!r}, got {examples}"
    assert f"\nREPLY KEY: {key}\n" in prompt
    match = EXAMPLE.search(prompt)
    assert match is not None
    return match.group(0)


def _fill(example: str, key: str, move: str | list[Any]) -> str:
    """The example with its placeholder standing for `move`: the text of a JSON string, or
    the items of a JSON list; a move of the other JSON type cannot fill it."""
    placeholder = f"<your {key}>"
    if f'"{placeholder}"' in example:
        assert isinstance(move, str), f"the example shows {key} as a JSON string: {example}"
        return example.replace(placeholder, json.dumps(move)[1:-1])
    if f"[{placeholder}]" in example:
        assert isinstance(move, list), f"the example shows {key} as a JSON list: {example}"
        return example.replace(placeholder, ", ".join(json.dumps(item) for item in move))
    raise AssertionError(f"{placeholder} stands in neither a JSON string nor a list: {example}")


def _help_orders(prompt: str, own: str, enemy: str) -> list[dict[str, Any]]:
    """The move help's orders, one per verb, filled as a seat fills their placeholders:
    squads 1, 2, ... of `own`, enemy squad 1, cell (1, 1)."""
    filled = [
        line.replace("<your squad>", f"{own}{n}")
        .replace("<enemy squad>", f"{enemy}1")
        .replace("[<x>, <y>]", "[1, 1]")
        for n, line in enumerate(HELP_ORDER.findall(prompt), 1)
    ]
    assert len(filled) == 5, f"the move help shows {len(filled)} orders, not one per verb"
    return [json.loads(line) for line in filled]


def _moves(game: games.Game[Any], state: Any, seat: int, prompt: str) -> list[str | list[Any]]:
    """Moves to fill the example with: every legal move, the battle's orders as its move help
    writes them, a setup where the game starts with one."""
    key = game.reply_key(state)
    if key == "orders":
        view = game.view(state, seat)
        return [_help_orders(prompt, view["squad_letter"], view["enemy_letter"]), []]
    if key == "setup":
        return [game.baseline(state, seat)]
    legal = list(game.legal_moves(state, seat))
    assert legal, f"{game.name}: a seat asked for a {key!r} has no legal moves to list"
    return list(legal)


@pytest.mark.parametrize("game_index", [1, 2])
@pytest.mark.parametrize("name", games.names())
def test_the_example_reply_filled_with_a_move_reads_as_that_move(
    name: str, game_index: int
) -> None:
    keys: set[str] = set()
    for game, state, seat, prompt in _prompts(name, game_index):
        key = game.reply_key(state)
        keys.add(key)
        example = _example(prompt, key)
        for move in _moves(game, state, seat, prompt):
            reply = "I have looked at the position.\n" + _fill(example, key, move)
            extracted = extract(reply, key)
            assert extracted.via == "json", reply
            read = game.parse(state, seat, extracted.move)
            assert read == game.parse(state, seat, move), reply
            if key == "orders":
                assert read.repairs == (), (reply, read.repairs)
                assert read.to_json() == move
    assert keys == KEYS.get(name, {"move"}), f"{name}: the positions asked for {keys}"


@pytest.mark.parametrize(("text", "lists"), [
    ("moves: $legal_moves\n", True),
    ("$board\n", False),
    ("$board\n{stable_end}\n$legal_moves\n", True),  # after the stable part's end too
    ("costs $$legal_moves\n", False),  # an escaped dollar is text, not the placeholder
])  # fmt: skip
def test_a_template_says_once_whether_it_lists_the_moves(
    tmp_path: Path, text: str, lists: bool
) -> None:
    from arena.play.prompts import STABLE_END

    (tmp_path / "t.md").write_text(text.replace("{stable_end}", STABLE_END))
    assert load_template("./t.md", folder=tmp_path).lists_moves is lists
