"""The one retry loop: what is retried, how long it waits, and that deadlines hold (the
timed ones on a virtual clock, to the instant: respx and httpx's mock transport open no
socket)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from datetime import UTC, datetime

import anyio
import httpx
import pytest
import respx

from providers import (
    AuthError,
    CompletionRequest,
    HTTPStatusError,
    InvalidResponse,
    ProviderError,
    Providers,
    ProviderSpec,
    RateLimited,
    RetryPolicy,
    Timeout,
    TransportError,
)
from providers.retry import retry_after_from_headers
from tests.providers.conftest import FAST_RETRY, mockable

pytestmark = pytest.mark.anyio

SPEC = ProviderSpec(protocol="openai", model="m", base_url="http://llm.test/v1")
URL = "http://llm.test/v1/chat/completions"
OK = {
    "id": "chatcmpl-1",
    "choices": [{"index": 0, "message": {"content": "e4"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 1},
}
REQUEST = CompletionRequest("go", 16)


@pytest.mark.virtual_clock
@respx.mock
async def test_429_then_200_inside_the_deadline(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    respx.post(URL).mock(
        side_effect=[
            httpx.Response(429, headers={"retry-after-ms": "20"}, json={"error": "slow down"}),
            httpx.Response(200, json=OK),
        ]
    )
    started = anyio.current_time()
    completion = await pool.client(SPEC).complete(REQUEST, deadline=deadline(2))
    assert anyio.current_time() - started == pytest.approx(0.02)  # the wait the 429 asked for
    assert completion.text == "e4"
    first, second = completion.attempts
    assert (first.status, first.wait_s) == (429, 0.02)
    assert first.error is not None
    assert "HTTP 429" in first.error
    assert (second.status, second.error) == (200, None)


@pytest.mark.virtual_clock
@respx.mock
async def test_retry_after_past_the_deadline_fails_at_once(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    route = respx.post(URL).respond(429, headers={"retry-after": "5"})
    started = anyio.current_time()
    with pytest.raises(RateLimited) as caught:
        await pool.client(SPEC).complete(REQUEST, deadline=deadline(0.2))
    # It neither slept the 5 s asked for nor waited out its deadline first.
    assert anyio.current_time() - started == 0
    assert caught.value.retry_after == 5.0
    assert route.call_count == 1
    assert [a.status for a in caught.value.attempts] == [429]


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, HTTPStatusError),
        (401, AuthError),
        (403, AuthError),
        (404, HTTPStatusError),
        (422, HTTPStatusError),
    ],
)
@respx.mock
async def test_client_errors_are_not_retried(
    pool: Providers,
    deadline: Callable[[float], float],
    status: int,
    error: type[HTTPStatusError],
) -> None:
    route = respx.post(URL).respond(status, json={"error": {"message": "no"}})
    with pytest.raises(error) as caught:
        await pool.client(SPEC).complete(REQUEST, deadline=deadline(2))
    assert type(caught.value) is error
    assert caught.value.status == status
    assert route.call_count == 1


@pytest.mark.parametrize("status", [408, 500, 502, 503, 529])
@respx.mock
async def test_transient_statuses_then_200(
    pool: Providers, deadline: Callable[[float], float], status: int
) -> None:
    respx.post(URL).mock(side_effect=[httpx.Response(status), httpx.Response(200, json=OK)])
    completion = await pool.client(SPEC).complete(REQUEST, deadline=deadline(2))
    assert [a.status for a in completion.attempts] == [status, 200]
    assert 0 < completion.attempts[0].wait_s <= FAST_RETRY.backoff_max_s


@respx.mock
async def test_attempts_are_bounded_and_the_last_error_is_raised(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    route = respx.post(URL).respond(503, text="upstream unavailable")
    with pytest.raises(HTTPStatusError) as caught:
        await pool.client(SPEC).complete(REQUEST, deadline=deadline(5))
    assert route.call_count == FAST_RETRY.max_attempts
    assert [a.status for a in caught.value.attempts] == [503] * FAST_RETRY.max_attempts
    assert caught.value.attempts[-1].wait_s == 0.0


@pytest.mark.virtual_clock
@respx.mock
async def test_backoff_past_the_deadline_fails_at_once_with_the_status() -> None:
    slow_backoff = RetryPolicy(backoff_initial_s=5.0, backoff_max_s=5.0)
    route = respx.post(URL).respond(500)
    async with mockable(slow_backoff) as pool:
        started = anyio.current_time()
        with pytest.raises(HTTPStatusError) as caught:
            await pool.client(SPEC).complete(REQUEST, deadline=anyio.current_time() + 1)
        # The 5 s backoff would pass the deadline: the status comes back at once, not a Timeout.
        assert anyio.current_time() - started == 0
    assert caught.value.status == 500
    assert route.call_count == 1


@respx.mock
async def test_invalid_body_is_not_retried(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    route = respx.post(URL).respond(200, text='{"choices": [')
    with pytest.raises(InvalidResponse):
        await pool.client(SPEC).complete(REQUEST, deadline=deadline(2))
    assert route.call_count == 1


@respx.mock
async def test_dropped_connection_then_200(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    respx.post(URL).mock(
        side_effect=[httpx.RemoteProtocolError("peer closed"), httpx.Response(200, json=OK)]
    )
    completion = await pool.client(SPEC).complete(REQUEST, deadline=deadline(2))
    first = completion.attempts[0]
    assert first.status is None
    assert first.error is not None
    assert "dropped" in first.error


@respx.mock
async def test_read_error_to_the_end_is_a_transport_error_not_a_refusal(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    respx.post(URL).mock(side_effect=httpx.ReadError("reset by peer"))
    with pytest.raises(TransportError) as caught:
        await pool.client(SPEC).complete(REQUEST, deadline=deadline(2))
    assert caught.value.connect_refused is False
    assert isinstance(caught.value.__cause__, httpx.ReadError)


async def test_refused_connection_is_flagged(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = ProviderSpec(protocol="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(TransportError) as caught:
        await pool.client(spec).complete(REQUEST, deadline=deadline(2))
    assert caught.value.connect_refused is True
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    assert f"127.0.0.1:{port}" in str(caught.value)
    assert len(caught.value.attempts) == FAST_RETRY.max_attempts


async def hang(request: httpx.Request) -> httpx.Response:
    await anyio.sleep(30)
    return httpx.Response(200, json=OK)


@pytest.mark.virtual_clock
async def test_a_hang_ends_at_the_deadline() -> None:
    async with Providers(transport=httpx.MockTransport(hang)) as pool:
        started = anyio.current_time()
        with pytest.raises(Timeout) as caught:
            await pool.client(SPEC).complete(REQUEST, deadline=anyio.current_time() + 0.2)
        assert anyio.current_time() - started == pytest.approx(0.2)
    assert [(a.status, a.error) for a in caught.value.attempts] == [
        (None, "no answer before the deadline")
    ]


async def test_a_passed_deadline_times_out_without_sending() -> None:
    calls = 0

    def count(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(200, json=OK)

    async with Providers(transport=httpx.MockTransport(count)) as pool:
        with pytest.raises(Timeout):
            await pool.client(SPEC).complete(REQUEST, deadline=anyio.current_time() - 1)
    assert calls == 0


@pytest.mark.virtual_clock
async def test_the_callers_cancel_scope_still_bounds_the_call() -> None:
    async with Providers(transport=httpx.MockTransport(hang)) as pool:
        with anyio.move_on_after(0.1) as scope:
            await pool.client(SPEC).complete(REQUEST, deadline=anyio.current_time() + 60)
    assert scope.cancelled_caught  # cancelled, not turned into a Timeout


def test_retry_after_headers() -> None:
    now = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_from_headers({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_from_headers({"retry-after": "3"}) == 3.0
    assert retry_after_from_headers({"retry-after": "0.05"}) == 0.05
    date = {"retry-after": "Sat, 01 Mar 2025 12:00:07 GMT"}
    assert retry_after_from_headers(date, now=now) == 7.0
    past = {"retry-after": "Sat, 01 Mar 2025 11:00:00 GMT"}
    assert retry_after_from_headers(past, now=now) == 0.0
    assert retry_after_from_headers({"retry-after": "whenever"}) is None
    assert retry_after_from_headers({"retry-after": "-4"}) is None
    assert retry_after_from_headers({}) is None


def test_backoff_is_bounded_and_hints_win() -> None:
    policy = RetryPolicy(backoff_initial_s=0.5, backoff_max_s=2.0)
    waits = [policy.wait_s(None, n) for n in (1, 2, 3, 4, 5, 6) for _ in range(20)]
    assert all(0.25 <= w <= 2.0 for w in waits)
    hinted = RateLimited("429", status=429, body_excerpt="", retry_after=0.07)
    assert policy.wait_s(hinted, 3) == 0.07


def test_retry_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="max_attempts must be at least 1, got 0"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="backoff_initial_s <= backoff_max_s"):
        RetryPolicy(backoff_initial_s=3, backoff_max_s=1)


@respx.mock
async def test_a_body_over_the_cap_is_refused_and_never_read_whole(pool: Providers) -> None:
    spec = SPEC.model_copy(update={"max_response_bytes": 2048})
    route = respx.post(URL).respond(200, content=b'{"choices": "' + b"x" * 100_000 + b'"}')
    with pytest.raises(InvalidResponse, match="over 2,048 bytes"):
        await pool.client(spec).complete(REQUEST, deadline=anyio.current_time() + 5)
    assert route.call_count == 1  # not retried: asking again would bring the same body


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (httpx.Response(504, text="gateway timeout"), HTTPStatusError),
        (httpx.Response(503, text="busy"), HTTPStatusError),
        (httpx.ReadError("reset by peer"), TransportError),
    ],
)
@pytest.mark.virtual_clock
async def test_a_deadline_passed_while_recovering_from_the_infrastructure_is_its_failure(
    failure: httpx.Response | Exception, kind: type[ProviderError]
) -> None:
    """The first attempt fails on the infrastructure's side; the retry hangs past the
    deadline: the call ends with the first failure's class and status, never a Timeout."""
    answers = [failure]

    async def serve(request: httpx.Request) -> httpx.Response:
        if answers:
            answer = answers.pop()
            if isinstance(answer, Exception):
                raise answer
            return answer
        await anyio.sleep(30)
        return httpx.Response(200, json=OK)

    async with Providers(retry=FAST_RETRY, transport=httpx.MockTransport(serve)) as pool:
        started = anyio.current_time()
        with pytest.raises(ProviderError) as caught:
            await pool.client(SPEC).complete(REQUEST, deadline=anyio.current_time() + 0.3)
        assert anyio.current_time() - started == pytest.approx(0.3)
    assert type(caught.value) is kind
    assert not isinstance(caught.value, Timeout)
    assert "then the deadline passed" in str(caught.value)
    if isinstance(failure, httpx.Response):
        assert caught.value.status == failure.status_code  # type: ignore[attr-defined]
    assert caught.value.attempts[-1].error == "no answer before the deadline"
