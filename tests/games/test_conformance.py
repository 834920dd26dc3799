"""One conformance test over every registered game (DESIGN.md, the games/ contract)."""

from __future__ import annotations

import importlib
import json
import pickle
import pkgutil
import random
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import games

MAX_PLIES = 5000


def _seed(name: str, n: int) -> int | str:
    # A game dealt in cards (backgammon) takes a card seed string; every other game an int.
    return f"{n:064x}" if games.load(name).match_format.dealt_in_cards else n


def _choose(game: games.Game[Any], state: Any, seat: int, rng: random.Random) -> Any:
    return game.random_move(state, seat, rng)


def _playout(
    game: games.Game[Any], seed: int | str, rng_seed: int
) -> tuple[list[Any], list[dict[int, Any]]]:
    rng = random.Random(rng_seed)
    state = game.initial(seed, game=1)
    states, moves = [state], []
    while seats := game.to_act(state):
        assert len(states) < MAX_PLIES, f"{game.name}: a random playout did not end"
        chosen = {seat: _choose(game, state, seat, rng) for seat in seats}
        before = pickle.dumps(state)
        state = game.apply(state, chosen)
        assert pickle.dumps(states[-1]) == before, f"{game.name}: apply mutated its input state"
        moves.append(chosen)
        states.append(state)
    return states, moves


NAMES = games.names()


@pytest.mark.parametrize("name", NAMES)
def test_random_playouts_end_with_zero_sum_outcome(name: str) -> None:
    game = games.load(name)
    for n in range(1, 4):
        states, _ = _playout(game, _seed(name, n), n)
        outcome = game.outcome(states[-1])
        assert outcome is not None
        assert outcome.reason in (games.COMPLETE, games.DEADLINE)
        assert outcome.scores is None or sum(outcome.scores) == 0
        for state in states[:-1]:
            assert game.outcome(state) is None


@pytest.mark.parametrize("name", NAMES)
def test_random_and_every_named_baseline_play_moves_apply_takes(name: str) -> None:
    game = games.load(name)
    assert game.baseline_name == next(iter(game.baselines), None)
    states, _ = _playout(game, _seed(name, 4), 4)
    for state in states[:-1][:: max(1, len(states) // 12)]:
        seats = game.to_act(state)
        draws = [{seat: game.random_move(state, seat, random.Random(n)) for seat in seats}
                 for n in (1, 1, 2)]  # fmt: skip
        assert draws[0] == draws[1], f"{name}: random_move does not follow its generator"
        for seat in seats:
            legal = game.legal_moves(state, seat)
            assert not legal or draws[0][seat] in legal
        named = [
            {seat: game.named_baseline(state, seat, b) for seat in seats} for b in game.baselines
        ]
        for moves in (*draws, *named):
            game.apply(state, moves)  # raises if the rules refuse a move
        if game.baseline_name is not None:
            assert named[0] == {seat: game.baseline(state, seat) for seat in seats}
    with pytest.raises(ValueError, match=f"{name} has no baseline 'nonesuch'"):
        game.named_baseline(states[0], game.to_act(states[0])[0], "nonesuch")


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_and_moves_give_identical_states(name: str) -> None:
    game = games.load(name)
    states, moves = _playout(game, _seed(name, 7), 7)
    again = games.load(name)
    state = again.initial(_seed(name, 7), game=1)
    for expected, chosen in zip(states[1:], moves, strict=True):
        state = again.apply(state, chosen)
        assert state == expected
        assert [again.standing(state, s) for s in (0, 1)] == [
            game.standing(expected, s) for s in (0, 1)
        ]
    assert again.outcome(state) == game.outcome(states[-1])


@pytest.mark.parametrize("name", NAMES)
def test_a_derived_chance_is_the_seed_or_a_card_seed_and_starts_the_game(name: str) -> None:
    game = games.load(name)
    chance = game.derived_chance(5)
    if game.match_format.dealt_in_cards:
        assert games.is_card_seed(chance)
        others = {game.derived_chance(5, card=2), game.derived_chance(5, attempt=2)}
        assert chance not in others
        assert len(others) == 2
    else:
        assert chance == 5
    assert game.initial(chance, game=1) == game.initial(game.derived_chance(5), game=1)


@pytest.mark.parametrize("name", NAMES)
def test_legal_moves_read_back_and_views_are_json(name: str) -> None:
    game = games.load(name)
    states, _ = _playout(game, _seed(name, 3), 3)
    for state in states[:: max(1, len(states) // 25)]:
        for seat in game.to_act(state):
            legal = game.legal_moves(state, seat)
            if game.enumerable and legal:
                assert len(set(legal)) == len(legal), f"{name}: duplicate legal moves"
                for move in legal[:40]:
                    assert game.parse(state, seat, move) == move
                assert game.baseline(state, seat) in legal
            view = game.view(state, seat)
            assert json.loads(json.dumps(view)) == view
            assert isinstance(games.board_text(name, view), str)


@pytest.mark.parametrize("name", [n for n in NAMES if games.load(n).enumerable])
def test_enumerable_games_list_moves_while_a_seat_must_act(name: str) -> None:
    game = games.load(name)
    states, _ = _playout(game, _seed(name, 5), 5)
    for state in states[:-1]:
        seats = game.to_act(state)
        if name == "stratego" and state.ply == 0:
            continue  # Stratego's setup phase takes free-form setups
        for seat in seats:
            assert game.legal_moves(state, seat), (
                f"{name}: seat {seat} must act but has no legal move"
            )


def _square(move: str) -> tuple[int, int]:
    return ord(move[0]) - ord("a"), int("".join(ch for ch in move[1:] if ch.isdigit()))


ORDER_KEYS = {
    "connect-four": lambda m: ord(m),
    "hex": _square,
    "breakthrough": lambda m: (*_square(m.split("-")[0]), *_square(m.split("-")[1])),
    # Pawn moves first by (file, rank), then walls by (file, rank, h before v).
    "quoridor": lambda m: (m[-1] in "hv", *_square(m.rstrip("hv")), m[-1] == "v"),
}


@pytest.mark.parametrize("name", sorted(ORDER_KEYS))
def test_board_games_list_moves_in_spec_order(name: str) -> None:
    game = games.load(name)
    states, _ = _playout(game, 11, 11)
    for state in states[:-1]:
        (seat,) = game.to_act(state)
        legal = list(game.legal_moves(state, seat))
        assert legal == sorted(legal, key=ORDER_KEYS[name])


BOARD_GAMES = sorted(games.ROTATION)


@pytest.mark.parametrize("name", BOARD_GAMES)
def test_board_baselines_are_the_tactician_of_spec(name: str) -> None:
    """Every board engine may replace TurnGame's tactician with a faster one (docs/rules.md#connect-four): it must
    choose exactly what the generic definition chooses, ties to the first in legal order."""
    game = games.load(name)
    assert isinstance(game, games.TurnGame)
    for n in range(12):
        states, _ = _playout(game, n, 100 + n)
        for state in states[:-1]:
            (seat,) = game.to_act(state)
            assert game.baseline(state, seat) == games.TurnGame.baseline(game, state, seat)


@pytest.mark.parametrize("name", BOARD_GAMES)
def test_turn_states_carry_their_turn_and_result(name: str) -> None:
    """A TurnGame state's `to_act` and `result` agree, and the ply cap is the last ply."""
    game = games.load(name)
    assert isinstance(game, games.TurnGame)
    for n in range(4):
        states, _ = _playout(game, n, 200 + n)
        for state in states:
            assert (state.to_act == ()) == (state.result is not None)
            assert state.to_act in ((), (0,), (1,))
            assert game.ply(state) == state.ply
            if game.ply_cap is not None:
                assert state.ply <= game.ply_cap
                assert state.ply < game.ply_cap or state.result is not None


def test_rotation_follows_the_seed() -> None:
    assert [games.resolve_rotation(s) for s in (4, 5, 6, 7, -1)] == [
        "connect-four",
        "breakthrough",
        "hex",
        "quoridor",
        "quoridor",
    ]
    with pytest.raises(ValueError, match="seed 0"):
        games.resolve_rotation(0)


def test_unknown_game_and_parameters_are_named() -> None:
    with pytest.raises(ValueError, match=r"unknown game 'hexx' \(known: .*hex"):
        games.load("hexx")
    with pytest.raises(ValueError, match="does not take parameters"):
        games.load("hex", size=9)


# --- the shape of every game's files -------------------------------------------------

HEADINGS = ("Rules source:", "Parameters:", "State:", "Notation:", "Standing:", "Baseline:")
"""The headings of every rules module's docstring, in their order."""
SECTIONS = ("parameters", "state", "rules", "notation", "standing", "baseline", "view", "the game")
"""The section markers a rules module may use, in their order (in the module and in its class)."""
MARKER = re.compile(r"(?P<indent> *)# -- (?P<name>\S.*?) -+")
MARKER_WIDTH = 79
CITATION = re.compile(r"\bSPEC\b|seeds/|DESIGN\.md|STYLE\.md|/work/|/home/")
"""What a file of games/ must not cite: documents its users do not have, absolute paths."""

MODULES = ["games", *sorted(info.name for info in pkgutil.walk_packages(games.__path__, "games."))]
"""Every module of the games package, the package itself and its subpackages included."""


def _rules_module(name: str) -> types.ModuleType:
    return sys.modules[type(games.load(name)).__module__]


def _sections(doc: str) -> dict[str, list[str]]:
    """Each heading of `doc` with the lines under it, up to the next heading."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in doc.splitlines():
        if line in HEADINGS:
            current = found.setdefault(line, [])
        elif current is not None:
            current.append(line)
    return found


def _headings_in_order(doc: str) -> list[str]:
    return [line for line in doc.splitlines() if line in HEADINGS]


@pytest.mark.parametrize("name", NAMES)
def test_rules_docstring_has_every_heading_in_order(name: str) -> None:
    module = _rules_module(name)
    doc = module.__doc__ or ""
    assert _headings_in_order(doc) == list(HEADINGS), (
        f"{module.__name__}: the docstring's headings are {_headings_in_order(doc)}; "
        f"write each of {list(HEADINGS)} once, in that order, on a line of its own"
    )
    for heading, lines in _sections(doc).items():
        assert lines, f"{module.__name__}: {heading!r} must be followed by its text"
        assert lines[0].startswith("    "), f"{module.__name__}: {heading!r}'s text is indented"
        assert lines[0].strip(), f"{module.__name__}: {heading!r} must be followed by its text"
    source = " ".join(_sections(doc)["Rules source:"])
    assert f"docs/rules.md#{name}" in source, (
        f"{module.__name__}: 'Rules source:' must point to docs/rules.md#{name}"
    )


def test_the_heading_check_sees_a_missing_or_misplaced_heading() -> None:
    good = "\n".join(f"{h}\n    text" for h in HEADINGS)
    assert _headings_in_order(good) == list(HEADINGS)
    missing = good.replace("Notation:", "Notes:")
    assert _headings_in_order(missing) != list(HEADINGS)
    swapped = good.replace("State:", "@").replace("Standing:", "State:").replace("@", "Standing:")
    assert _headings_in_order(swapped) != list(HEADINGS)


def _markers(text: str) -> list[tuple[int, str, int]]:
    """(indent, section name, line length) of every marker-like comment of `text`."""
    found = []
    for line in text.splitlines():
        if line.lstrip().startswith("# --"):
            match = MARKER.fullmatch(line)
            assert match is not None, f"{line!r} is not a marker like '# -- name ----'"
            found.append((len(match["indent"]), match["name"], len(line)))
    return found


@pytest.mark.parametrize("name", NAMES)
def test_rules_sections_are_marked_alike_and_in_order(name: str) -> None:
    module = _rules_module(name)
    by_indent: dict[int, list[str]] = {}
    for indent, section, _ in _markers(Path(str(module.__file__)).read_text(encoding="utf-8")):
        assert section in SECTIONS, f"{module.__name__}: unknown section {section!r}"
        by_indent.setdefault(indent, []).append(section)
    assert by_indent, f"{module.__name__} marks no sections"
    for indent, sections in by_indent.items():
        order = [SECTIONS.index(s) for s in sections]
        assert order == sorted(set(order)), (
            f"{module.__name__}: sections at indent {indent} run {sections}; "
            f"use each once, in the order {list(SECTIONS)}"
        )


@pytest.mark.parametrize("module_name", MODULES)
def test_every_module_marks_sections_one_way_and_cites_nothing_private(module_name: str) -> None:
    path = Path(str(importlib.import_module(module_name).__file__))
    text = path.read_text(encoding="utf-8")
    for _, section, width in _markers(text):
        assert width == MARKER_WIDTH, (
            f"{module_name}: the marker of {section!r} is {width} wide, not {MARKER_WIDTH}"
        )
    cited = sorted({m.group(0) for m in CITATION.finditer(text)})
    assert not cited, f"{module_name} cites {cited}: say the rule, or point to docs/rules.md"


def _all_faults(module: types.ModuleType) -> list[str]:
    """What is wrong with `module.__all__`: missing, not a list, naming what is not there."""
    exported = getattr(module, "__all__", None)
    if not isinstance(exported, list):
        return [f"{module.__name__} has no __all__ list"]
    faults = [
        f"{module.__name__}.__all__ names {n!r}, which it lacks"
        for n in exported
        if not hasattr(module, n)
    ]
    if len(set(exported)) != len(exported):
        faults.append(f"{module.__name__}.__all__ repeats a name")
    return faults


@pytest.mark.parametrize("module_name", MODULES)
def test_every_module_has_an_all_of_names_it_holds(module_name: str) -> None:
    assert _all_faults(importlib.import_module(module_name)) == []


def test_the_all_check_sees_a_missing_all_and_a_missing_name() -> None:
    sample = types.ModuleType("sample")
    assert _all_faults(sample) == ["sample has no __all__ list"]
    sample.__dict__.update(__all__=["here", "gone"], here=1)
    assert _all_faults(sample) == ["sample.__all__ names 'gone', which it lacks"]


def test_the_module_list_holds_every_file_under_games() -> None:
    root = Path(str(games.__file__)).parent
    files = {
        ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        for path in root.rglob("*.py")
    }
    assert files == set(MODULES)


def test_the_games_package_exports_exactly_its_public_names() -> None:
    public = {
        name
        for name, value in vars(games).items()
        if not name.startswith("_")
        and name != "annotations"  # the `from __future__` feature, not an export
        and not isinstance(value, types.ModuleType)
    }
    assert set(games.__all__) == public
