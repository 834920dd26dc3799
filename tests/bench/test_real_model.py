"""bench.real_model's pure pieces, on hand-made replies (no server, no games played)."""

from __future__ import annotations

import pytest

from bench.real_model import (
    Asked,
    Refusal,
    expand_games,
    group_refusals,
    legal_from_prompt,
    legal_in_reply,
    percentile,
    summarise,
)

HEX = ("a1", "b2", "c4", "d4")


def test_the_legal_moves_come_from_the_prompts_last_list() -> None:
    first = "THE POSITION\n...\nLEGAL MOVES: a1, b2, c4\n\nChoose exactly one"
    assert legal_from_prompt(first) == ("a1", "b2", "c4")
    retry = first + "\nYOUR PREVIOUS REPLY WAS REFUSED: ...\nLEGAL MOVES: 24/23 24/20, NONE"
    assert legal_from_prompt(retry) == ("24/23 24/20", "NONE")
    assert legal_from_prompt("HOW TO REPLY\n...\nLEGAL MOVES: (see the rules)\n") == ()
    assert legal_from_prompt("") == ()


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        ('{"move": "C4 "}', ("c4",)),
        ("I play c4.", ("c4",)),
        ("**C4**", ("c4",)),
        ('{"move": "<your move>", "say": "c 4"}', ()),
        ("c44 and xc4 are no cells", ()),
        ("b2, then d4", ("b2", "d4")),
        ("", ()),
    ],
)
def test_board_replies_are_read_token_by_token(reply: str, found: tuple[str, ...]) -> None:
    assert legal_in_reply(reply, HEX, "board") == found


def test_board_moves_with_a_dash_match_without_it() -> None:
    assert legal_in_reply("move: A2-B3!", ("a2-a3", "a2-b3"), "board") == ("a2-b3",)
    assert legal_in_reply('{"move": "e4e5"}', ("e4-e5",), "stratego") == ("e4-e5",)


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        ('{"move": "24/23 24/20"}', ("24/23 24/20",)),
        ("24 / 20, 24/23.", ("24/23 24/20",)),
        ("13/9* 8/7", ("13/9 8/7",)),
        ("24/23 then later 24/20", ()),
        ("24/2", ()),
        ("NONE", ("NONE",)),
    ],
)
def test_backgammon_plays_match_their_moves_side_by_side(
    reply: str, found: tuple[str, ...]
) -> None:
    assert legal_in_reply(reply, ("24/23 24/20", "13/9 8/7", "NONE"), "backgammon") == found


def test_percentile_interpolates_like_numpy() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([3.0], 95) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([4.0, 1.0, 3.0, 2.0], 95) == pytest.approx(3.85)


def test_summarise_counts_outcomes_attempts_and_tokens_per_family() -> None:
    asked = [
        Asked("board", "reply", None, 1.0, 100, 10, (None,)),
        Asked("board", "retry", None, 3.0, 200, 20, ("unreadable", None)),
        Asked("board", "fallback", "illegal", 5.0, 200, 30, ("unreadable", "illegal")),
        Asked("backgammon", "fallback", "timeout", 60.0, 0, 0, ("timeout",)),
    ]
    summaries = summarise(asked)
    assert list(summaries) == ["board", "backgammon"]
    board = summaries["board"]
    assert board.decisions == 3
    assert board.by_outcome == {"first reply": 1, "retry": 1, "fallback: illegal": 1}
    assert board.fallbacks == 1
    assert board.attempt_causes == {"unreadable": 2, "illegal": 1}
    assert (board.attempts, board.tokens_in, board.tokens_out) == (5, 500, 60)
    assert board.latency_p50_s == 3.0
    assert summaries["backgammon"].by_outcome == {"fallback: timeout": 1}


def test_identical_refusals_are_listed_once_with_their_count() -> None:
    one = Refusal("board", "e1 ply 2 attempt 1", "unreadable", "I play c4.", "read ...", ("c4",))
    later = Refusal("board", "e2 ply 4 attempt 1", "unreadable", "I play c4.", "read ...", ("c4",))
    other = Refusal("board", "e2 ply 6 attempt 2", "illegal", '{"move": "a1"}', "taken", ("a1",))
    assert group_refusals([one, other, later]) == [(one, 2), (other, 1)]


def test_families_expand_to_their_games() -> None:
    assert expand_games("board,hex") == ["breakthrough", "connect-four", "hex", "quoridor"]
    assert expand_games("stratego, backgammon") == ["stratego", "backgammon"]
    with pytest.raises(SystemExit, match="unknown game or family 'hexx'"):
        expand_games("hexx")
