"""No secret reaches an output: the reply, the provider's errors, the events, the console."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest
import structlog

import games
import providers
from arena.config import LlmPolicy
from arena.logs import close_logging, configure_logging
from arena.play.protocol import Question, SeatFailure
from arena.redact import REDACTED, Redactor
from arena.seats.llm import LlmSeat, provider_spec

KEY = "sk-marker-0123456789abcdef"
OTHER = "other-policy-key-5555"


def test_only_values_of_eight_characters_or_more_are_secrets() -> None:
    redactor = Redactor([KEY, "x", "local", "abcdefgh"])
    assert redactor.text(f"a {KEY} b x local abcdefgh") == f"a {REDACTED} b x local {REDACTED}"
    assert redactor.value({KEY: [KEY, 3]}) == {REDACTED: [REDACTED, 3]}
    assert not Redactor(["short"])


async def _ask(reply: httpx.Response, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setenv("MARKER_KEY", KEY)
    policy = LlmPolicy(
        kind="llm", provider="openai", model="m", base_url="http://h/v1", api_key_env="MARKER_KEY"
    )
    game = games.load("connect-four")
    state = game.initial(1)
    question = Question("p", "move", 1, game, state, 0, game.legal_moves(state, 0))
    transport = httpx.MockTransport(lambda request: reply)
    async with providers.Providers(transport=transport) as pool:
        seat = LlmSeat(pool.client(provider_spec(policy)), policy, Redactor([KEY, OTHER]))
        try:
            return await seat.ask(question, deadline=anyio.current_time() + 5)
        except SeatFailure as failure:
            return failure


pytestmark = pytest.mark.anyio


async def test_a_reply_that_echoes_a_key_is_redacted_where_it_enters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = {"choices": [{"message": {"content": f'{{"move": "d", "say": "{KEY} {OTHER}"}}'}}]}
    answer = await _ask(httpx.Response(200, json=body), monkeypatch)
    assert not isinstance(answer, SeatFailure)
    assert KEY not in answer.text
    assert OTHER not in answer.text
    assert answer.text.count(REDACTED) == 2


async def test_an_error_that_echoes_a_key_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    failure = await _ask(httpx.Response(400, text=f"bad key {OTHER}"), monkeypatch)
    assert isinstance(failure, SeatFailure)
    assert OTHER not in failure.detail
    assert REDACTED in failure.detail


def test_events_and_console_lines_are_redacted_and_tracebacks_show_no_locals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events.jsonl"
    configure_logging(events, console=True, redactor=Redactor([KEY]))
    try:
        unlisted = "a-value-the-redactor-does-not-know"  # a local a traceback could show
        try:
            raise RuntimeError(f"boom after {len(unlisted)} characters")
        except RuntimeError:
            structlog.get_logger("t").exception("episode_failed", detail=f"echo {KEY}")
    finally:
        close_logging()
    err = capsys.readouterr().err
    assert "episode_failed" in err
    assert KEY not in err
    assert "boom after 34 characters" in err  # the traceback is there...
    assert "a-value-the-redactor-does-not-know" not in err  # ...without its frames' locals
    line = json.loads(events.read_text().splitlines()[0])
    assert line["detail"] == f"echo {REDACTED}"


def test_a_value_of_several_lines_reads_as_lines_on_the_console(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(tmp_path / "events.jsonl", console=True)
    try:
        detail = 'Traceback (most recent call last):\n  File "p.py", line 6\nValueError: boom'
        structlog.get_logger("t").warning("program_forfeited", cause="exception", detail=detail)
    finally:
        close_logging()
    err = capsys.readouterr().err
    assert "\\n" not in err  # no escapes
    lines = err.splitlines()
    assert "program_forfeited" in lines[0]
    assert "cause=exception" in lines[0]
    assert lines[1:] == [
        "  detail:", "    Traceback (most recent call last):", '      File "p.py", line 6',
        "    ValueError: boom",
    ]  # fmt: skip
    logged = json.loads((tmp_path / "events.jsonl").read_text())
    assert logged["detail"] == detail  # the events file keeps the value as it is
