"""The pipes to a program's child: framing, the fast reading of plain lines, and waits
that a wake or a closed end always ends."""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.programs import child
from arena.programs.pipes import (
    BUDGET_REFUSAL,
    MAX_LINE_BYTES,
    ChildPipes,
    PipesClosed,
    Unreadable,
    decode_line,
    refusal_line,
    result_line,
)
from providers import valid_json
from tests.timing import MARGIN_S


@pytest.fixture
def pipes() -> Iterator[tuple[ChildPipes, int, int]]:
    """The arena's ends of a child's two pipes and the child's (what it reads, writes); a
    test that closes a child's end itself replaces it with -1 in `CLOSED`."""
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    ends = ChildPipes(to_w, from_r)
    CLOSED.clear()
    yield ends, to_r, from_w
    ends.close()
    for fd in {to_r, from_w} - CLOSED:
        os.close(fd)


CLOSED: set[int] = set()
"""The child's ends a test closed itself (so that the fixture does not close them again)."""


def close_end(fd: int) -> None:
    os.close(fd)
    CLOSED.add(fd)


def careful(line: bytes) -> dict[str, Any] | None:
    """What the arena read before the fast path: every line walked by valid_json."""
    try:
        message = valid_json(json.loads(line))
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=6)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """Lines a child might send: JSON written either way, in any encoding JSON reads (UTF-16
    of ASCII text is ASCII bytes with NULs), raw bytes, or both spliced."""
    value = draw(st.dictionaries(TEXT, VALUES, max_size=3) | VALUES)
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    codec = draw(st.sampled_from(["utf-8", "utf-16-be", "utf-16-le", "utf-32-le"]))
    line = text.encode(codec, "surrogatepass")
    noise = draw(st.binary(max_size=6))
    at = draw(st.integers(0, len(line)))
    return draw(st.sampled_from([line, noise, line[:at] + noise + line[at:]]))


@given(lines())
def test_a_line_reads_as_the_careful_path_reads_it(line: bytes) -> None:
    expected = careful(line)
    if expected is None:
        with pytest.raises(Unreadable):
            decode_line(line)
        return
    got = decode_line(line)
    # NaN is not equal to itself: compare the values as the record would write them.
    assert json.dumps(got) == json.dumps(expected)
    json.dumps(got).encode("utf-8")  # no lone surrogate is left to break the record


@given(VALUES)
def test_answers_are_one_line_each_in_the_childs_reading(value: Any) -> None:
    line = result_line(value)
    assert line.endswith(b"\n")
    assert b"\n" not in line[:-1]
    assert json.dumps(json.loads(line)) == json.dumps({"op": "result", "value": value})
    assert json.loads(BUDGET_REFUSAL) == {"op": "refused", "error": "budget"}
    assert json.loads(refusal_line("no \ud800")) == {
        "op": "refused", "error": "helper", "detail": "no \ud800",
    }  # fmt: skip


class FakeChannel:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send_line(self, line: bytes) -> None:
        self.sent.append(line)

    def receive(self) -> dict[str, Any]:
        return {"op": "result", "value": 7}


@given(st.lists(VALUES, max_size=3))
def test_the_childs_framed_calls_read_as_the_messages_they_stand_for(args: list[Any]) -> None:
    channel = FakeChannel()
    hello = {"helpers": ["with_dice"], "game": "g", "seat": 0, "node_budget": 9, "seed": 1}
    ctx = child.Context(channel, hello)  # type: ignore[arg-type]
    try:
        assert ctx._call("with_dice", *args) == 7
    except child.HelperError:
        return  # not JSON: refused before anything is written
    (line,) = channel.sent
    message = {"op": "call", "fn": "with_dice", "args": args}
    assert json.dumps(decode_line(line.rstrip(b"\n"))) == json.dumps(valid_json(message))


def test_lines_are_cut_at_newlines_whatever_the_chunks(pipes: tuple[ChildPipes, int, int]) -> None:
    ends, _, from_w = pipes
    os.write(from_w, b'{"a":1}\n{"b":')
    with ends.held():
        assert ends.receive_line() == b'{"a":1}'
        os.write(from_w, b'2}\n{"c":3}\n')
        assert ends.receive_line() == b'{"b":2}'
        assert ends.receive_line() == b'{"c":3}'
        close_end(from_w)
        with pytest.raises(PipesClosed):
            ends.receive_line()


@given(
    st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    st.lists(st.integers(1, 40), min_size=1, max_size=8),
)
def test_lines_come_out_as_they_went_in_however_cut(lines: list[bytes], cuts: list[int]) -> None:
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    ends = ChildPipes(to_w, from_r)
    stream = b"".join(line + b"\n" for line in lines)
    sizes = itertools.cycle(cuts)
    got: list[bytes] = []
    written = 0
    try:
        with ends.held():
            while written < len(stream):  # a piece as the child's writes may come, then
                written += os.write(from_w, stream[written : written + next(sizes)])
                while len(got) < stream[:written].count(b"\n"):  # every line it completes
                    got.append(ends.receive_line())
        assert got == lines
    finally:
        ends.close()
        os.close(to_r)
        os.close(from_w)


def test_a_line_past_the_limit_is_unreadable(pipes: tuple[ChildPipes, int, int]) -> None:
    ends, _, from_w = pipes
    chunk = b"x" * (1 << 16)

    def write() -> None:
        try:
            for _ in range(MAX_LINE_BYTES // len(chunk) + 4):
                os.write(from_w, chunk)
        except OSError:
            pass  # the reader stopped and closed its end

    writer = threading.Thread(target=write)
    writer.start()
    with ends.held(), pytest.raises(Unreadable, match="longer than"):
        ends.receive_line()
    ends.close()
    writer.join(5)
    assert not writer.is_alive()


@pytest.mark.parametrize("blocked", ["reading", "writing"])
def test_a_wake_ends_a_blocked_wait_at_once_and_for_good(
    pipes: tuple[ChildPipes, int, int], blocked: str
) -> None:
    ends, _, _ = pipes
    ended: list[BaseException] = []

    def serve() -> None:
        with ends.held():
            try:
                if blocked == "reading":
                    ends.receive_line()
                else:
                    ends.send(b"x" * (1 << 22))  # more than the pipe holds: it blocks
            except PipesClosed as exc:
                ended.append(exc)

    thread = threading.Thread(target=serve)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive(), "the wait should block until woken"
    ends.wake()
    thread.join(MARGIN_S)
    assert not thread.is_alive()
    assert len(ended) == 1
    assert ends.free.is_set()
    with ends.held(), pytest.raises(PipesClosed):
        ends.receive_line()  # woken for good: no wait blocks again


def test_the_ends_close_only_when_the_thread_lets_go(pipes: tuple[ChildPipes, int, int]) -> None:
    ends, to_r, from_w = pipes
    with ends.held():
        ends.close()
        os.write(from_w, b"{}\n")
        assert ends.receive_line() == b"{}"  # still open while held
    with pytest.raises(BrokenPipeError):
        os.write(from_w, b"{}\n")  # the arena's reading end is closed: a broken pipe
    with pytest.raises(PipesClosed), ends.held():
        pass
    assert os.read(to_r, 10) == b""  # and its writing end: end of file


def test_hang_up_says_goodbye_and_closes_the_way_to_the_child(
    pipes: tuple[ChildPipes, int, int],
) -> None:
    ends, to_r, _ = pipes
    ends.hang_up(b'{"op":"bye"}\n')
    assert os.read(to_r, 100) == b'{"op":"bye"}\n'
    assert os.read(to_r, 100) == b""
