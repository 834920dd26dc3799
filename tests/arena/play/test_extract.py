"""Reply extraction: last JSON object with the key, then a `move:` label, then the text."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from arena.play.extract import NOTES_MAX, SAY_MAX, extract


def test_last_json_object_with_the_key_wins() -> None:
    reply = 'First {"move": "a"} then ```json\n{"move": "c4", "say": "hi", "notes": "n1"}\n``` and {"other": 1}'
    got = extract(reply)
    assert (got.move, got.say, got.notes, got.via) == ("c4", "hi", "n1", "json")


def test_label_when_no_json_object_has_the_key() -> None:
    reply = 'thinking {"plan": "x"}\nMove: d\nno wait\nMOVE:  e2-e3  \n'
    got = extract(reply)
    assert (got.move, got.via, got.notes) == ("e2-e3", "label", None)


def test_prose_reaches_the_reader_whole() -> None:
    reply = "I would play c4 because the centre matters."
    got = extract(reply)
    assert got.move == reply
    assert got.via == "text"


def test_empty_reply_has_no_move() -> None:
    assert extract("   \n").move is None


def test_say_and_notes_are_cut() -> None:
    got = extract('{"move": "a", "say": "' + "s" * 500 + '", "notes": "' + "n" * 5000 + '"}')
    assert len(got.say) == SAY_MAX
    assert got.notes is not None
    assert len(got.notes) == NOTES_MAX


def test_battle_orders_are_decoded_lists() -> None:
    got = extract('{"orders": [{"squad": "A1", "do": "hold"}]}', key="orders")
    assert got.move == [{"squad": "A1", "do": "hold"}]
    labelled = extract('orders: [{"squad": "A2", "do": "advance"}]', key="orders")
    assert labelled.move == [{"squad": "A2", "do": "advance"}]
    assert labelled.via == "label"


def test_non_string_move_values_become_text() -> None:
    assert extract('{"move": 4}').move == "4"


@given(st.text())
def test_extraction_never_crashes(text: str) -> None:
    got = extract(text)
    assert got.move is None or isinstance(got.move, str)


NOISE = st.text(alphabet=st.characters(blacklist_characters="{}"))
"""Prose around the reply's object: anything but braces, which could open an object of its own."""


@given(before=NOISE, move=st.text(), say=st.text(max_size=300), after=NOISE)
def test_a_move_object_in_noise_is_read_whole(before: str, move: str, say: str, after: str) -> None:
    reply = before + json.dumps({"move": move, "say": say}) + after
    got = extract(reply)
    assert (got.move, got.via) == (move, "json")
    assert got.say == say[:SAY_MAX]
