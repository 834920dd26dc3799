"""The arena's own texts never lead a model to a move (docs/rules.md#the-one-retry).

Measured on a small model: a refusal that showed a legal move as its example
(`e.g. 'd'`) was copied on the retry, and so were the rules summaries'
examples. So at random positions of every game (random legal moves from the
opening, a seeded rng) every text the arena writes into a prompt is collected:
the readers' refusals of bad replies (an illegal move, an unreadable one, a
placeholder, several moves), the retry text, the reply format, the rules
summary, the templates, the move help, the first line and the board's words.
Every word-like token of them is given to the game's own parser; one that
reads as a legal move is an example a model could copy, unless it is the reply
the text echoes. The placeholder and several-moves replies get their own
refusals, every refusal is whole sentences, and a retry after a reply cut at
the token limit opens by asking for a short one.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from functools import cache
from itertools import pairwise
from typing import Any

import pytest

import games
from arena.config import Deadlines
from arena.play.decisions import RETRY_REASONS, SHORT_REPLY, decide, read_reply, retry_text
from arena.play.prompts import (
    SeatContext,
    first_line,
    prompts_dir,
    reply_format,
    rules_summary,
)
from arena.play.protocol import DecisionRequest
from games import MoveError
from games.core import normalise_token
from tests.arena.fakes import FixedPrompt, ScriptSeat

POSITIONS = {
    "backgammon": 40,
    "battle": 4,
    "breakthrough": 40,
    "connect-four": 40,
    "hex": 40,
    "quoridor": 40,
    "stratego": 24,
}
"""Random positions per game, each with every seat to act there."""
PLIES = {"backgammon": 120, "battle": 8, "stratego": 160}
"""The longest random walk from the opening (else 60 plies)."""

PLACEHOLDERS = (
    "...",
    "<...>",
    "<your move>",
    '"<your move>"',
    "<file letter>",
    "<from>-<to>",
    "<cell>",
    "<from>/<to>",
    "<anchor><h|v>",
)
"""Placeholders of the arena's texts a model has been seen to hand back as its move."""
UNREADABLE = ("I will think about it first", "zz9")
ENDS = (".", "?", "!")
_WORD_EDGES = "\"'`([{<"
_WORD_TAILS = "\"'`,.;:!?]}>"
_OBJECT = re.compile(r"\{[^{}]*\}")


# -- positions ------------------------------------------------------------------


def _seed(game: games.Game[Any], walk: int) -> int | str:
    return game.derived_chance(walk) if game.match_format.dealt_in_cards else walk


def _random_move(game: games.Game[Any], state: Any, seat: int, rng: random.Random) -> Any:
    legal = game.legal_moves(state, seat)
    if legal:
        return rng.choice(legal)
    if game.name == "battle" and rng.random() < 0.5:
        return game.parse(state, seat, [])  # every squad keeps its order
    return game.baseline(state, seat)  # Stratego's setup, the battle's pincer


def positions(name: str) -> Iterator[tuple[games.Game[Any], Any]]:
    """`POSITIONS[name]` positions with seats to act, from seeded random walks."""
    game = games.load(name)
    rng = random.Random(f"texts/{name}")
    found, walk = 0, 0
    while found < POSITIONS[name]:
        walk += 1
        state = game.initial(_seed(game, walk), game=1 + walk % 2)
        for _ in range(rng.randint(0, PLIES.get(name, 60))):
            seats = game.to_act(state)
            if not seats:
                break
            state = game.apply(state, {s: _random_move(game, state, s, rng) for s in seats})
        if game.to_act(state):
            found += 1
            yield game, state


# -- bad replies ----------------------------------------------------------------


def _notation(name: str, phase: str | None) -> list[str]:
    """Moves in the game's notation, legal somewhere, to find illegal ones among."""
    if name == "connect-four":
        return list("abcdefg")
    if name == "hex":
        return [f"{f}{r}" for f in "abcdefg" for r in range(1, 8)]
    if name == "breakthrough":
        cells = [f"{f}{r}" for f in "abcdef" for r in range(1, 7)]
        return [f"{a}-{b}" for a in cells for b in cells if a != b]
    if name == "quoridor":
        cells = [f"{f}{r}" for f in "abcdefghi" for r in range(1, 10)]
        return cells + [f"{f}{r}{o}" for f in "abcdefgh" for r in range(1, 9) for o in "hv"]
    if name == "stratego":
        if phase == "setup":
            return ["F" * 40, "FB2" * 13]
        squares = [f"{f}{r}" for f in "abcdefghij" for r in range(1, 11)]
        return [f"{a}-{b}" for a in squares for b in squares if a != b]
    if name == "backgammon":
        points = ["bar", *map(str, range(24, 0, -1)), "off"]
        moves = [f"{a}/{b}" for i, a in enumerate(points) for b in points[i + 1 :]]
        return moves + [f"{a} {b}" for a in moves[:60] for b in moves[-60:]]
    return []


def _illegal(game: games.Game[Any], state: Any, seat: int, rng: random.Random) -> list[str]:
    """Up to three moves in the notation that the game reads and refuses as illegal."""
    candidates = _notation(game.name, game.view(state, seat).get("phase"))
    found = []
    for move in rng.sample(candidates, min(60, len(candidates))):
        try:
            game.parse(state, seat, move)
        except games.Illegal:
            found.append(move)
        except games.Unreadable:
            continue
        if len(found) == 3:
            break
    return found


def _several(game: games.Game[Any], legal: tuple[str, ...], rng: random.Random) -> list[str]:
    """Two legal moves in one reply, as models write them (a pasted list, `or`, a space)."""
    if len(legal) < 2:
        return []
    one, two = rng.sample(legal, 2)
    replies = [f"{one}, {two}", f"{one} or {two}", ", ".join(legal[:6])]
    return replies if game.name == "backgammon" else [*replies, f"{one} {two}"]


def bad_replies(
    game: games.Game[Any], state: Any, seat: int, rng: random.Random
) -> Iterator[tuple[str, str]]:
    """(kind, whole reply text) for every bad reply tried at `state`."""
    key = game.reply_key(state)
    for move in _illegal(game, state, seat, rng):
        yield "illegal", json.dumps({key: move})
    for text in UNREADABLE:
        yield "unreadable", json.dumps({key: text})
    for text in (*PLACEHOLDERS, f"<your {key}>", f"[<your {key}>]"):
        yield "placeholder", json.dumps({key: text})
    # the reply format's own line handed back as the reply
    yield "placeholder", reply_format(key).splitlines()[1]
    for text in _several(game, game.legal_moves(state, seat), rng):
        yield "several", json.dumps({key: text})


# -- the texts ------------------------------------------------------------------


@cache
def _templates(family: str) -> tuple[str, ...]:
    return tuple(
        p.read_text(encoding="utf-8") for p in sorted((prompts_dir() / family).glob("*.md"))
    )


def fixed_texts(game: games.Game[Any], state: Any, seat: int) -> list[str]:
    """What the arena writes into this seat's prompts besides a refusal: the rules, the
    templates, the reply format, the move help, the first line, the board's words, and
    the retry of every cause with a fixed reason."""
    key, view = game.reply_key(state), game.view(state, seat)
    context = SeatContext.of(
        game, state, seat, game_index=1, aliases=game.match_format.aliases(7), history=(),
        notes="",
    )  # fmt: skip
    texts = [
        rules_summary(game.name),
        *_templates(game.family),
        reply_format(key),
        games.move_help(game.name, view),
        first_line(context),
    ]
    # Connect-four's board draws blue discs as B and names its files a-g below it: both are
    # the board's own symbols and coordinates, and its tolerant reader takes each for a move.
    if game.name != "connect-four":
        texts.append(games.board_text(game.name, view))
    help_ = (
        (lambda: games.move_help(game.name, view)) if not game.legal_moves(state, seat) else None
    )
    for cause in RETRY_REASONS:
        texts.append(_retry(cause, "", game, state, seat, help_, cut=cause == "truncated"))
    return texts


def _help(game: games.Game[Any], state: Any, seat: int) -> Callable[[], str] | None:
    """The move help a retry shows where the moves cannot be listed, as the episode makes it."""
    if game.legal_moves(state, seat):
        return None
    return lambda: games.move_help(game.name, game.view(state, seat))


def _retry(
    cause: str,
    error: str,
    game: games.Game[Any],
    state: Any,
    seat: int,
    move_help: Callable[[], str] | None,
    *,
    cut: bool = False,
) -> str:
    key, legal = game.reply_key(state), game.legal_moves(state, seat)
    return retry_text(cause, error, key=key, legal=legal, move_help=move_help, cut=cut)


def _without_legal_list(text: str) -> str:
    """The retry's list of every legal move is the list, not an example of one."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("LEGAL MOVES: "))


def _word(raw: str) -> str:
    """A whitespace-separated chunk without the quotes, brackets and punctuation around it
    (a closing parenthesis stays where it closes one the word opened: `6/3(2)`)."""
    word = raw.lstrip(_WORD_EDGES)
    while word and (
        word[-1] in _WORD_TAILS or (word[-1] == ")" and word.count("(") < word.count(")"))
    ):
        word = word[:-1]
    return word


def _echoed(reply: str, key: str) -> str:
    """The move a bad reply gave (what its refusal may quote back), else the whole reply."""
    try:
        move = json.loads(reply).get(key)
    except json.JSONDecodeError:
        return reply
    return move if isinstance(move, str) else reply


def _article(words: list[str], i: int) -> bool:
    """`a` before a word is English (`a file letter`), not connect-four's file a."""
    following = _word(words[i + 1]) if i + 1 < len(words) else ""
    return words[i] in ("a", "A") and re.fullmatch(r"[A-Za-z][A-Za-z-]+", following) is not None


def leading_tokens(
    game: games.Game[Any], state: Any, seat: int, text: str, echoed: str = ""
) -> list[str]:
    """The tokens of `text` that read as legal moves of `seat`: each whitespace-separated
    word (and, for backgammon's plays of several moves, each pair of them) whose canonical
    reading is the token itself, not a tolerated spelling (connect-four reads `1` as `a`).
    A token of the echoed reply is the seat's own (a word of it, or the start of one where
    a refusal's quote cuts a long reply), and naming the only legal move leads nowhere."""
    legal = game.legal_moves(state, seat)
    echo = [_word(w).casefold() for w in echoed.split()]

    def echoes(token: str) -> bool:
        return all(any(e.startswith(w) for e in echo) for w in token.casefold().split())

    words = text.split()
    tokens = [_word(w) for i, w in enumerate(words) if not _article(words, i)]
    if game.name == "backgammon":
        tokens += [f"{_word(a)} {_word(b)}" for a, b in pairwise(words)]
    found = []
    for token in tokens:
        if not token or echoes(token):
            continue
        try:
            move = game.parse(state, seat, token)
        except MoveError:
            continue
        if not isinstance(move, str) or (len(legal) == 1 and move in legal):
            continue
        if game.name != "backgammon" and normalise_token(token) != normalise_token(move):
            continue
        found.append(token)
    return found


def _orders_shown(game: games.Game[Any], state: Any, seat: int, text: str) -> list[str]:
    """The battle's texts: JSON objects among them that its reader takes as an order."""
    shown = []
    for found in _OBJECT.finditer(text):
        try:
            entry = json.loads(found.group(0))
        except json.JSONDecodeError:
            continue
        if game.parse(state, seat, [entry]).entries:
            shown.append(found.group(0))
    return shown


# -- the tests ------------------------------------------------------------------


@pytest.mark.parametrize("name", games.names())
def test_no_text_shows_a_legal_move_but_the_reply_it_echoes(name: str) -> None:
    rng = random.Random(f"replies/{name}")
    kinds: set[str] = set()
    for game, state in positions(name):
        for seat in game.to_act(state):
            key = game.reply_key(state)
            help_ = _help(game, state, seat)
            texts = [("", text) for text in fixed_texts(game, state, seat)]
            for kind, reply in bad_replies(game, state, seat, rng):
                read = read_reply(game, state, seat, reply, key, None)
                assert read.cause in ("unreadable", "illegal"), (name, kind, reply, read)
                kinds.add(kind)
                texts.append((_echoed(reply, key), read.error))
                texts.append(
                    (_echoed(reply, key), _retry(read.cause, read.error, game, state, seat, help_))
                )
            for echoed, text in texts:
                shown = leading_tokens(game, state, seat, _without_legal_list(text), echoed)
                assert not shown, f"{name}: {shown} legal at ply {game.ply(state)} in:\n{text}"
                if name == "battle":
                    assert not _orders_shown(game, state, seat, text), text
    assert {"unreadable", "placeholder"} <= kinds
    if name != "battle":
        assert "several" in kinds
    if name not in ("battle", "stratego"):
        assert "illegal" in kinds


@pytest.mark.parametrize("name", games.names())
def test_placeholders_and_several_moves_get_their_own_refusals(name: str) -> None:
    rng = random.Random(f"kinds/{name}")
    for game, state in positions(name):
        for seat in game.to_act(state):
            key = game.reply_key(state)
            for kind, reply in bad_replies(game, state, seat, rng):
                error = read_reply(game, state, seat, reply, key, None).error
                if kind == "placeholder":
                    assert " is a placeholder: in its place, write " in error, (reply, error)
                elif kind == "several":
                    several = "plays" if name == "backgammon" else "moves"
                    assert f" holds several {several}: give exactly one." in error, (reply, error)
                else:
                    assert "placeholder" not in error, (reply, error)
                    assert "several" not in error, (reply, error)


@pytest.mark.parametrize("name", games.names())
def test_every_refusal_is_whole_sentences(name: str) -> None:
    rng = random.Random(f"sentences/{name}")
    for game, state in positions(name):
        for seat in game.to_act(state):
            key = game.reply_key(state)
            for _, reply in bad_replies(game, state, seat, rng):
                read = read_reply(game, state, seat, reply, key, None)
                assert read.error.endswith(ENDS), (reply, read.error)
                retry = _retry(read.cause or "", read.error, game, state, seat, None)
                reason = retry.splitlines()[0].removeprefix("YOUR PREVIOUS REPLY WAS REFUSED: ")
                assert reason.endswith(ENDS), (reply, reason)
    for cause, reason in RETRY_REASONS.items():
        assert reason.endswith(ENDS), cause


def test_the_breakthrough_refusal_that_read_as_cut_off_is_whole_sentences() -> None:
    game = games.load("breakthrough")
    state = game.apply(game.initial(1), {0: "d2-d3"})
    read = read_reply(game, state, 1, '{"move": "d4-e5"}', "move", None)
    assert read.error == (
        "d4-e5 is not legal here: it is not a step of one rank down, toward rank 1. "
        "A blue piece steps one rank down, toward rank 1, straight or diagonally."
    )


@pytest.mark.parametrize("key", ["move", "orders", "setup"])
def test_a_truncated_reply_s_retry_starts_with_the_short_answer_request(key: str) -> None:
    text = retry_text("truncated", "", key=key, legal=("a", "b") if key == "move" else (), cut=True)
    first = text.splitlines()[0]
    assert first == SHORT_REPLY.format(key=key)
    assert first.startswith(f"KEEP THIS REPLY SHORT: write only the JSON object with your {key}")
    assert "YOUR PREVIOUS REPLY WAS REFUSED: the reply was cut off at the token limit." in text
    assert not retry_text("illegal", "x.", key=key, legal=("a",)).startswith("KEEP")


@pytest.mark.anyio
@pytest.mark.parametrize(
    "reply", ['{"move": "c', '{"move": "a1"}', ""], ids=["truncated", "illegal", "empty"]
)
async def test_any_reply_stopped_at_the_token_limit_gets_the_short_answer_request(
    reply: str,
) -> None:
    game = games.load("hex")
    state = game.apply(game.initial(1), {0: "a1"})
    seat = ScriptSeat([("reply", reply), ("reply", '{"move": "b1"}')], stop_reason="length")
    request = DecisionRequest(
        game, state, 1, seat, FixedPrompt("PROMPT"),
        Deadlines(first_reply_s=0.5, retry_s=0.5, decision_s=1.5), legal=game.legal_moves(state, 1),
    )  # fmt: skip
    decision = await decide(request)
    assert decision.source == "retry"
    assert seat.questions[1].prompt.startswith("PROMPT\n" + SHORT_REPLY.format(key="move") + "\n")
