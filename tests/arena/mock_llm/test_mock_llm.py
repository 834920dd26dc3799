"""The mock LLM server: legal answers in all three protocols, every fault, the counters."""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.mock_llm import (
    FAULTS,
    STRATEGO_PIECES,
    MockLLM,
    PromptLines,
    build_app,
    invent,
    parse_faults,
    serving,
)
from providers import (
    CompletionRequest,
    InvalidResponse,
    Providers,
    ProviderSpec,
    Timeout,
)
from tests.timing import MARGIN_S

pytestmark = pytest.mark.anyio

LEGAL = ("a1", "b2", "c3", "d4")
BOARD_PROMPT = "You play hex.\nREPLY KEY: move\nLEGAL MOVES: " + ", ".join(LEGAL) + "\n"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def mock() -> AsyncIterator[tuple[MockLLM, str]]:
    """One in-process server on a free loopback port for the whole module."""
    app = build_app(slow_ms=150, seed=7)
    async with serving(app) as url:
        yield app, url


@pytest.fixture
def set_faults(mock: tuple[MockLLM, str]) -> AsyncIterator[Callable[[str], None]]:
    app, _ = mock

    def set_to(spec: str) -> None:
        app.faults = parse_faults(spec)

    yield set_to
    app.faults = {}


# -- requests as each protocol sends them -------------------------------------------------------


def request_for(protocol: str, url: str, prompt: str) -> tuple[str, dict[str, Any]]:
    if protocol == "openai":
        messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": prompt}]
        return f"{url}/v1/chat/completions", {"model": "mock-1", "messages": messages}
    if protocol == "anthropic":
        body = {
            "model": "mock-1",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": prompt}],
        }
        return f"{url}/v1/messages", body
    contents = [{"role": "user", "parts": [{"text": prompt}]}]
    return f"{url}/v1beta/models/mock-1:generateContent", {"contents": contents}


def reply_of(protocol: str, body: dict[str, Any]) -> tuple[str, str]:
    """(text, finish reason) of a successful answer, read the protocol's way."""
    if protocol == "openai":
        choice = body["choices"][0]
        return choice["message"]["content"], choice["finish_reason"]
    if protocol == "anthropic":
        return body["content"][0]["text"], body["stop_reason"]
    candidate = body["candidates"][0]
    return candidate["content"]["parts"][0]["text"], candidate["finishReason"]


async def post(
    protocol: str, url: str, prompt: str = BOARD_PROMPT, client: httpx.AsyncClient | None = None
) -> httpx.Response:
    target, body = request_for(protocol, url, prompt)
    if client is not None:
        return await client.post(target, json=body)
    async with httpx.AsyncClient(timeout=5) as fresh:
        return await fresh.post(target, json=body)


PROTOCOLS = ("openai", "anthropic", "gemini")


def spec_for(protocol: str, url: str) -> ProviderSpec:
    base = f"{url}/v1" if protocol == "openai" else url
    return ProviderSpec(protocol=protocol, model="mock-1", base_url=base)  # type: ignore[arg-type]


# -- answers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_each_protocol_answers_a_legal_move_through_our_client(
    mock: tuple[MockLLM, str], protocol: str
) -> None:
    _, url = mock
    async with Providers() as pool:
        model = pool.client(spec_for(protocol, url))
        request = CompletionRequest(BOARD_PROMPT, 64, system="you play hex")
        completion = await model.complete(request, deadline=anyio.current_time() + 5)
    reply = json.loads(completion.text)
    assert reply["move"] in LEGAL
    assert reply["say"]
    assert "notes" in reply
    assert completion.stop_reason == "stop"
    assert completion.usage.input_uncached
    assert completion.usage.output
    assert completion.request_id
    assert completion.model


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_replies_are_real_shaped(mock: tuple[MockLLM, str], protocol: str) -> None:
    _, url = mock
    response = await post(protocol, url)
    body = response.json()
    assert response.status_code == 200
    assert response.headers["content-length"] == str(len(response.content))
    if protocol == "openai":
        assert body["id"].startswith("chatcmpl-")
        assert response.headers["x-request-id"]
        assert body["usage"]["total_tokens"] == (
            body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
        )
    elif protocol == "anthropic":
        assert body["id"].startswith("msg_")
        assert response.headers["request-id"]
        assert body["usage"]["input_tokens"] > 0
        assert body["usage"]["output_tokens"] > 0
    else:
        assert body["responseId"]
        assert body["usageMetadata"]["candidatesTokenCount"] > 0
        assert body["modelVersion"] == "mock-1"


async def test_the_last_user_turn_and_last_list_count(mock: tuple[MockLLM, str]) -> None:
    _, url = mock
    messages = [
        {"role": "user", "content": "LEGAL MOVES: zz1"},
        {"role": "assistant", "content": '{"move": "zz1"}'},
        {
            "role": "user",
            "content": [{"type": "text", "text": "LEGAL MOVES: old\nLEGAL MOVES: e5"}],
        },
    ]
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{url}/chat/completions", json={"messages": messages})
    assert json.loads(reply_of("openai", response.json())[0])["move"] == "e5"


def test_battle_orders_are_valid() -> None:
    prompt = "REPLY KEY: orders\nYOUR SQUADS: A1 A2 A4 A9\nENEMY SQUADS: B3 B7\nMAP SIZE: 20\n"
    lines = PromptLines.read(prompt)
    for seed in range(20):
        orders = invent(lines, random.Random(seed))
        assert isinstance(orders, list)
        assert [o["squad"] for o in orders] == ["A1", "A2", "A4", "A9"]
        for order in orders:
            assert order["do"] in ("advance", "attack", "move", "hold", "retreat")
            if order["do"] == "attack":
                assert order["enemy"] in ("B3", "B7")
            if order["do"] == "move":
                assert all(1 <= c <= 20 for c in order["to"])
                assert len(order["to"]) == 2


def test_battle_orders_are_the_games_random_orders_for_the_field_the_prompt_shows() -> None:
    import games
    from games.battle import Battle

    battle = Battle(map_size=31)
    s = battle.initial(3, game=2)
    for _ in range(4):
        s = battle.apply(s, {seat: battle.baseline(s, seat) for seat in (0, 1)})
    for seat in (0, 1):
        prompt = "REPLY KEY: orders\n" + games.board_text("battle", battle.view(s, seat))
        for seed in range(5):
            orders = invent(PromptLines.read(prompt), random.Random(seed))
            drawn = battle.random_move(s, seat, random.Random(seed))
            assert orders == drawn.to_json()
            assert battle.parse(s, seat, orders) == drawn  # no repair


@given(st.lists(st.integers(1, 9), min_size=1, max_size=9, unique=True), st.integers(0, 2**32))
def test_orders_without_enemies_never_attack(squads: list[int], seed: int) -> None:
    lines = PromptLines.read("REPLY KEY: orders\nYOUR SQUADS: " + " ".join(f"B{n}" for n in squads))
    orders = invent(lines, random.Random(seed))
    assert isinstance(orders, list)
    assert len(orders) == len(squads)
    assert all(o["do"] != "attack" for o in orders)
    assert all(1 <= c <= 45 for o in orders if o["do"] == "move" for c in o["to"])


@pytest.mark.parametrize("seed", range(5))
def test_stratego_setup_is_a_shuffled_army(seed: int) -> None:
    setup = invent(PromptLines.read("REPLY KEY: setup"), random.Random(seed))
    assert isinstance(setup, str)
    assert len(setup) == 40
    assert Counter(setup) == Counter(STRATEGO_PIECES)
    assert Counter(STRATEGO_PIECES) == Counter(
        {
            "F": 1,
            "B": 6,
            "S": 1,
            "2": 8,
            "3": 5,
            "4": 4,
            "5": 4,
            "6": 4,
            "7": 3,
            "8": 2,
            "9": 1,
            "X": 1,
        }
    )
    illegal = invent(PromptLines.read("REPLY KEY: setup"), random.Random(seed), illegal=True)
    assert isinstance(illegal, str)
    assert Counter(illegal) != Counter(STRATEGO_PIECES)


def test_without_a_list_the_guess_is_a_short_token() -> None:
    guesses = {invent(PromptLines.read("Your move."), random.Random(s)) for s in range(10)}
    assert all(isinstance(g, str) and re.fullmatch(r"[a-h][1-8]", g) for g in guesses)


# -- faults ----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("status", [429, 500, 529])
async def test_status_faults(
    mock: tuple[MockLLM, str], set_faults: Callable[[str], None], protocol: str, status: int
) -> None:
    set_faults(f"{status}=1")
    response = await post(protocol, mock[1])
    assert response.status_code == status
    assert "error" in response.json()
    if status == 429 and protocol != "gemini":
        assert response.headers["retry-after-ms"] == "50"
    if status == 429 and protocol == "gemini":
        assert response.json()["error"]["details"][0]["retryDelay"] == "0.050s"


async def test_hang_lasts_until_the_client_gives_up(
    mock: tuple[MockLLM, str], set_faults: Callable[[str], None]
) -> None:
    app, url = mock
    set_faults("hang=1")
    before = app.injected["hang"]
    async with Providers() as pool:
        started = time.monotonic()
        with pytest.raises(Timeout):
            await pool.client(spec_for("anthropic", url)).complete(
                CompletionRequest(BOARD_PROMPT, 64), deadline=anyio.current_time() + 0.2
            )
    assert time.monotonic() - started < 0.2 + MARGIN_S
    assert app.injected["hang"] == before + 1


async def test_slow_answers_after_slow_ms(
    mock: tuple[MockLLM, str], set_faults: Callable[[str], None]
) -> None:
    set_faults("slow=1")
    started = time.monotonic()
    response = await post("openai", mock[1])
    assert response.status_code == 200
    assert time.monotonic() - started >= 0.15


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_garbage_is_an_invalid_response(
    mock: tuple[MockLLM, str], set_faults: Callable[[str], None], protocol: str
) -> None:
    set_faults("garbage=1")
    async with Providers() as pool:
        with pytest.raises(InvalidResponse, match="not a JSON object"):
            await pool.client(spec_for(protocol, mock[1])).complete(
                CompletionRequest(BOARD_PROMPT, 64), deadline=anyio.current_time() + 5
            )


@pytest.mark.parametrize(
    ("protocol", "finish"),
    [("openai", "length"), ("anthropic", "max_tokens"), ("gemini", "MAX_TOKENS")],
)
async def test_truncated_stops_at_the_token_limit(
    mock: tuple[MockLLM, str], set_faults: Callable[[str], None], protocol: str, finish: str
) -> None:
    set_faults("truncated=1")
    text, reason = reply_of(protocol, (await post(protocol, mock[1])).json())
    assert reason == finish
    assert text.startswith('{"move": ')
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_prose_has_no_move(
    mock: tuple[MockLLM, str], set_faults: Callable[[str], None], protocol: str
) -> None:
    set_faults("prose=1")
    text, reason = reply_of(protocol, (await post(protocol, mock[1])).json())
    assert reason in ("stop", "end_turn", "STOP")
    assert "{" not in text
    assert "move" not in text.lower()
    assert not any(re.search(rf"\b{m}\b", text) for m in LEGAL)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_illegal_is_well_formed_but_not_in_the_list(
    mock: tuple[MockLLM, str], set_faults: Callable[[str], None], protocol: str
) -> None:
    set_faults("illegal=1")
    text, _ = reply_of(protocol, (await post(protocol, mock[1])).json())
    move = json.loads(text)["move"]
    # Shaped like the listed moves (a letter a-d then a digit 1-4), yet not among them.
    assert re.fullmatch(r"[a-d][1-4]", move)
    assert move not in LEGAL


def test_illegal_falls_back_to_an_unreadable_token_when_every_variation_is_legal() -> None:
    import random

    from arena.mock_llm import PromptLines, invent

    every_file = PromptLines(legal=tuple("abcdefg"))
    assert invent(every_file, random.Random(1), illegal=True) == "z9"


async def test_stats_count_requests_and_injected_faults(
    mock: tuple[MockLLM, str], set_faults: Callable[[str], None]
) -> None:
    app, url = mock
    set_faults("500=0.5,prose=0.5")
    before = app.stats()
    async with httpx.AsyncClient() as client:
        for n in range(20):  # twenty different requests: each draws its own fault
            await post("gemini", url, f"{BOARD_PROMPT}\nturn {n}", client=client)
        stats = (await client.get(f"{url}/stats")).json()
    assert stats == app.stats()
    assert set(stats["injected"]) == set(FAULTS)
    injected = {k: stats["injected"][k] - before["injected"][k] for k in FAULTS}
    assert stats["requests"] - before["requests"] == 20
    assert injected["500"] + injected["prose"] == 20
    assert injected["500"] > 0
    assert injected["prose"] > 0


async def test_keep_alive_answers_add_no_latency(mock: tuple[MockLLM, str]) -> None:
    # A delayed-ACK stall would cost ~40 ms per answer on a reused connection.
    _, url = mock
    async with httpx.AsyncClient() as client:
        await post("openai", url, client=client)
        started = time.monotonic()
        for _ in range(20):
            assert (await post("openai", url, client=client)).status_code == 200
    # Twenty stalls would cost 0.8 s; a handful of local round trips costs far less.
    assert time.monotonic() - started < 20 * 0.040


async def test_unknown_paths_and_bodies_are_refused(mock: tuple[MockLLM, str]) -> None:
    _, url = mock
    async with httpx.AsyncClient() as client:
        missing = await client.post(f"{url}/v2/complete", json={})
        not_json = await client.post(f"{url}/v1/messages", content=b"hello")
    assert missing.status_code == 404
    assert "/v1/messages" in missing.json()["error"]["message"]
    assert not_json.status_code == 400


# -- seeds, parsing, shutdown ------------------------------------------------------------------


async def test_the_same_seed_gives_the_same_answers() -> None:
    async def answers(seed: int) -> list[str]:
        app = build_app(faults="illegal=0.3,prose=0.3", seed=seed)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as client:
            target, body = request_for("openai", "http://mock", BOARD_PROMPT)
            return [(await client.post(target, json=body)).text for _ in range(12)]

    assert await answers(3) == await answers(3)
    assert await answers(3) != await answers(4)


async def test_latency_is_added_to_every_answer() -> None:
    app = build_app(latency_ms=120)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as client:
        target, body = request_for("anthropic", "http://mock", BOARD_PROMPT)
        started = time.monotonic()
        response = await client.post(target, json=body)
    assert response.status_code == 200
    assert time.monotonic() - started >= 0.12


def test_parse_faults() -> None:
    spec = (
        "illegal=0.05, 429=0.05,500=0.02,529=0.01,hang=0.01,slow=0.02,garbage=0.02,truncated=0.02,"
        "prose=0.02,schema_ignored=0.01"
    )
    rates = parse_faults(spec)
    assert list(rates) == list(FAULTS)  # draw order, whatever the spec's order
    assert rates["illegal"] == 0.05
    assert rates["hang"] == 0.01
    assert parse_faults("") == {}
    assert parse_faults("500=0") == {}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("timeout=0.1", r"unknown fault 'timeout' \(known: 429, 500, 529, hang"),
        ("429=lots", r"fault rate '429=lots' is not a number"),
        ("429", r"fault rate 429=nan must be between 0 and 1"),
        ("500=1.5", r"fault rate 500=1.5 must be between 0 and 1"),
        ("500=0.6,prose=0.6", r"fault rates add up to 1.2"),
    ],
)
def test_bad_fault_specs_say_what_and_how(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_faults(spec)


async def test_a_hang_does_not_block_shutdown() -> None:
    app = build_app(faults="hang=1")
    outcome: list[object] = []

    async def wait_forever(url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            try:
                target, body = request_for("openai", url, "x")
                outcome.append((await client.post(target, json=body)).status_code)
            except httpx.HTTPError as exc:
                outcome.append(type(exc))

    started = time.monotonic()
    async with anyio.create_task_group() as tg, serving(app) as url:
        tg.start_soon(wait_forever, url)
        while not app.injected["hang"]:  # noqa: ASYNC110 - the server counts, it signals nothing
            await anyio.sleep(0.01)
    assert time.monotonic() - started < 5.0  # the server's own 5 s stop cut-off never came
    assert outcome == [503]  # released at shutdown, not cut off


async def test_a_busy_port_is_a_clear_error(mock: tuple[MockLLM, str]) -> None:
    port = int(mock[1].rsplit(":", 1)[1])
    with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}.*pick another --port"):
        async with serving(build_app(), port=port):
            pass


async def test_the_same_request_gets_the_same_answer_whatever_came_before() -> None:
    async def answers(order: list[int]) -> dict[int, tuple[int, str]]:
        app = build_app(faults="500=0.3,prose=0.3,illegal=0.2", seed=9)
        got = {}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as client:
            for n in order:
                target, body = request_for("openai", "http://mock", f"{BOARD_PROMPT}\n#{n}")
                response = await client.post(target, json=body)
                got[n] = (response.status_code, response.text)
        return got

    forward = await answers(list(range(12)))
    assert forward == await answers(list(range(11, -1, -1)))  # arrival order changes nothing
    assert len({text for _, text in forward.values()}) > 1  # and the requests differ


async def test_a_long_plain_latency_is_released_at_shutdown_too() -> None:
    app = build_app(latency_ms=60_000)
    outcome: list[object] = []

    async def wait(url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            target, body = request_for("openai", url, "x")
            outcome.append((await client.post(target, json=body)).status_code)

    started = time.monotonic()
    async with anyio.create_task_group() as tg, serving(app) as url:
        tg.start_soon(wait, url)
        while not app.requests:  # noqa: ASYNC110 - the server counts, it signals nothing
            await anyio.sleep(0.01)
    assert time.monotonic() - started < 5.0
    assert outcome == [503]


_LABELS = ("REPLY KEY", "LEGAL MOVES", "MAP SIZE", "YOUR SQUADS", "ENEMY SQUADS", "OTHER")


@given(
    st.lists(
        st.tuples(st.sampled_from(_LABELS), st.sampled_from(["", " ", "\t"]),
                  st.text(alphabet="ab1, \t:", max_size=8)),
        max_size=8,
    )
)  # fmt: skip
def test_prompt_lines_are_the_last_line_of_each_label(lines: list[tuple[str, str, str]]) -> None:
    text = "\n".join(f"{indent}{label}: {value}" for label, indent, value in lines)

    def last(label: str) -> str | None:
        found = [v.strip(" \t") for name, _, v in lines if name == label]
        return found[-1] if found else None

    read = PromptLines.read(text)
    legal = tuple(m.strip() for m in (last("LEGAL MOVES") or "").split(",") if m.strip())
    assert read.legal == legal
    key = (last("REPLY KEY") or "move").split()
    assert read.reply_key == (key[0] if key else "move")


@pytest.mark.anyio
async def test_the_mock_lists_the_models_it_stands_in_for() -> None:
    from arena.cli.playing import model_names
    from arena.config import load_config

    config = load_config("configs/authors.toml", keys=False)
    names = model_names(config)
    assert {"mock-a", "mock-b", "mock-c"} <= set(names)  # what the shipped config asks
    async with serving(build_app(models=names)) as url, httpx.AsyncClient() as client:
        listed = (await client.get(f"{url}/v1/models")).json()["data"]
    assert [m["id"] for m in listed] == ["mock-1", *names]
    async with serving(build_app()) as url, httpx.AsyncClient() as client:
        alone = (await client.get(f"{url}/v1/models")).json()["data"]
    assert [m["id"] for m in alone] == ["mock-1"]
