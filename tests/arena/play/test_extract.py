"""Reply extraction: the last move statement (a complete JSON object with the key, or a loose
`"move": ...` key/value outside every object), then a `move:` label, then the text."""

from __future__ import annotations

import json

import pytest
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


NOISE = st.text(alphabet=st.characters(blacklist_characters="{}")).filter(
    lambda text: '"move"' not in text and 'move"' not in text
)
"""Prose around the reply's object: anything but braces, which could open an object of its own,
and a quoted `"move"` key (or its tail, `move"`, which the quote ending a value completes)."""


@given(before=NOISE, move=st.text(), say=st.text(max_size=300), after=NOISE)
def test_a_move_object_in_noise_is_read_whole(before: str, move: str, say: str, after: str) -> None:
    reply = before + json.dumps({"move": move, "say": say}) + after
    got = extract(reply)
    assert (got.move, got.via) == (move, "json")
    assert got.say == say[:SAY_MAX]


# -- the last move statement: complete objects and loose key/values ---------------------------


def test_a_reply_cut_off_after_the_move_is_read() -> None:
    got = extract('Centre. {"move": "d", "say": "hi", "notes": "my plan is to')
    assert (got.move, got.say, got.notes, got.via) == ("d", "hi", None, "json")


def test_a_bare_key_value_line_is_a_statement() -> None:
    got = extract('I play the centre.\n"move": "d"\n')
    assert (got.move, got.say, got.notes, got.via) == ("d", "", None, "json")


def test_a_complete_object_after_a_bare_key_value_wins() -> None:
    got = extract('"move": "a", "say": "first"\nno: {"move": "b", "say": "second"}')
    assert (got.move, got.say) == ("b", "second")


def test_a_bare_key_value_after_a_complete_object_wins() -> None:
    got = extract('{"move": "b", "say": "first", "notes": "n"}\nno, "move": "a"')
    assert (got.move, got.say, got.notes) == ("a", "", None)


@pytest.mark.parametrize(
    "reply",
    [
        '{"say": "I would write \\"move\\": \\"d\\""}',
        '{"plan": {"move": "d"}, "say": "not yet"}',
    ],
    ids=["in-a-string", "in-a-nested-object"],
)
def test_a_key_value_inside_a_complete_object_is_not_loose(reply: str) -> None:
    got = extract(reply)
    assert (got.move, got.via) == (reply, "text")


def test_a_loose_key_value_nested_in_an_unfinished_object_is_read() -> None:
    got = extract('{"plan": {"step": 1}, "move": "e2-e3", "say": "go", "notes": "n", "x": [1')
    assert (got.move, got.say, got.notes) == ("e2-e3", "go", "n")


def test_an_unfinished_value_is_not_a_statement() -> None:
    got = extract('{"move": "c4"} then {"move": "d')
    assert got.move == "c4"
    labelled = extract('{"move": "d\nMove: e')
    assert (labelled.move, labelled.via) == ("e", "label")


def test_the_label_reading_still_needs_no_quotes() -> None:
    got = extract("Let me see.\nMOVE: c4\n")
    assert (got.move, got.via) == ("c4", "label")


def test_battle_orders_in_a_string_holding_json_are_decoded() -> None:
    orders = [{"squad": "A1", "do": "hold"}]
    got = extract(json.dumps({"orders": json.dumps(orders), "say": "s"}), key="orders")
    assert (got.move, got.say) == (orders, "s")
    assert extract('{"orders": "hold everything"}', key="orders").move == "hold everything"


def test_battle_orders_cut_off_after_the_list_are_read() -> None:
    got = extract('{"orders": [{"squad": "A1", "do": "hold"}], "say": "ho', key="orders")
    assert got.move == [{"squad": "A1", "do": "hold"}]


def test_say_and_notes_of_a_loose_move_are_cut() -> None:
    got = extract('"move": "a", "say": "' + "s" * 500 + '", "notes": "' + "n" * 5000 + '"')
    assert (len(got.say), len(got.notes or "")) == (SAY_MAX, NOTES_MAX)


def test_absurd_nesting_raises_recursion_error_as_before() -> None:
    for reply in ('{"move": ' + "[" * 100_000 + "]" * 100_000 + "}", '"move": ' + "[" * 100_000):
        with pytest.raises(RecursionError):
            extract(reply)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYLESS = st.dictionaries(
    st.text(max_size=6).filter(lambda k: k != "move"), JSON_VALUES, max_size=3
)
"""Objects without the key at their top (a nested object may have it: it is not a statement)."""


@st.composite
def _last_statement(draw: st.DrawFn, move: str) -> str:
    """`"move": <move>` as a complete object, a reply cut off after the value, or a bare
    key/value; optionally fenced; prose and an object without the key may follow."""
    value = json.dumps(move)
    shape = draw(st.sampled_from(["object", "cut", "cut-in-say", "bare"]))
    statement = {
        "object": json.dumps({"move": move, "say": draw(st.text(max_size=20))}),
        "cut": '{"move": ' + value,
        "cut-in-say": '{"move": '
        + value
        + ', "say": "'
        + draw(NOISE.filter(lambda t: '"' not in t)),
        "bare": '"move": ' + value,
    }[shape]
    if draw(st.booleans()):
        statement = "```json\n" + statement + ("\n```" if shape in ("object", "bare") else "")
    if shape.startswith("cut"):
        return statement
    after = [json.dumps(obj) + draw(NOISE) for obj in draw(st.lists(KEYLESS, max_size=1))]
    return statement + draw(NOISE) + "".join(after)


@given(data=st.data(), move=st.text(), earlier=st.text())
def test_the_last_move_statement_is_read(data: st.DataObject, move: str, earlier: str) -> None:
    parts = [data.draw(NOISE)]
    if data.draw(st.booleans()) and earlier != move:
        parts += [json.dumps({"move": earlier}), data.draw(NOISE)]
    for obj in data.draw(st.lists(KEYLESS, max_size=2)):
        parts += [json.dumps(obj), data.draw(NOISE)]
    reply = "".join(parts) + data.draw(_last_statement(move))
    got = extract(reply)
    assert (got.move, got.via) == (move, "json")
