"""The pool: one HTTP client per endpoint, slot limits per model, closed at the end."""

from __future__ import annotations

from functools import partial

import anyio
import httpx
import pytest

from providers import CompletionRequest, Providers, ProviderSpec, Timeout

pytestmark = pytest.mark.anyio

OK = {
    "id": "chatcmpl-1",
    "choices": [{"index": 0, "message": {"content": "e4"}, "finish_reason": "stop"}],
}
REQUEST = CompletionRequest("go", 16)


def spec(model: str = "m", max_connections: int = 16) -> ProviderSpec:
    return ProviderSpec(
        protocol="openai",
        model=model,
        base_url="http://llm.test/v1",
        max_connections=max_connections,
    )


class InFlight:
    """A mock server that holds each request briefly and records the peak concurrency."""

    def __init__(self, hold_s: float = 0.05) -> None:
        self.hold_s = hold_s
        self.now = 0
        self.peak = 0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            await anyio.sleep(self.hold_s)
        finally:
            self.now -= 1
        return httpx.Response(200, json=OK)


@pytest.mark.parametrize("limit", [1, 3])
async def test_at_most_max_connections_in_flight(limit: int) -> None:
    server = InFlight()
    done: list[float] = []
    async with Providers(transport=httpx.MockTransport(server)) as pool:
        model = pool.client(spec(max_connections=limit))

        async def ask() -> None:
            completion = await model.complete(REQUEST, deadline=anyio.current_time() + 5)
            done.append(completion.queued_s)

        async with anyio.create_task_group() as tg:
            for _ in range(limit + 1):
                tg.start_soon(ask)
    assert server.peak == limit
    assert len(done) == limit + 1
    assert max(done) >= server.hold_s * 0.9  # the extra call waited for a slot


async def test_each_model_has_its_own_slots() -> None:
    server = InFlight()
    async with Providers(transport=httpx.MockTransport(server)) as pool:
        first, second = pool.client(spec("a", 1)), pool.client(spec("b", 1))
        deadline = anyio.current_time() + 5
        async with anyio.create_task_group() as tg:
            for model in (first, second):
                tg.start_soon(partial(model.complete, REQUEST, deadline=deadline))
    assert server.peak == 2


async def test_waiting_for_a_slot_counts_against_the_deadline() -> None:
    server = InFlight(hold_s=1.0)
    async with Providers(transport=httpx.MockTransport(server)) as pool:
        model = pool.client(spec(max_connections=1))
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: model.complete(REQUEST, deadline=anyio.current_time() + 5))
            await anyio.sleep(0.01)
            with pytest.raises(Timeout, match="waiting for one of max_connections=1") as caught:
                await model.complete(REQUEST, deadline=anyio.current_time() + 0.1)
            tg.cancel_scope.cancel()
    assert caught.value.attempts == ()


async def test_equal_specs_share_a_client_and_clients_close_at_exit() -> None:
    async with Providers(transport=httpx.MockTransport(InFlight(0))) as pool:
        a, b = pool.client(spec()), pool.client(spec())
        other = pool.client(spec("other"))
        assert a is b
        assert a is not other
        await a.complete(REQUEST, deadline=anyio.current_time() + 1)
    with pytest.raises(RuntimeError, match="async with Providers"):
        pool.client(spec())
