"""Shared fixtures: a pool with fast retries, a deadline maker (asyncio comes from tests/).

The pool's requests go over httpx's own transport, which respx's mocks intercept: the
code above the transport (requests, retries, errors) is tested against respx's routes,
and the transport itself against real sockets (test_transport.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio
import httpx
import pytest

from providers import Providers, RetryPolicy

FAST_RETRY = RetryPolicy(max_attempts=4, backoff_initial_s=0.01, backoff_max_s=0.02)


def mockable(retry: RetryPolicy = FAST_RETRY) -> Providers:
    """A pool on httpx's own transport, whose requests respx's mocks answer."""
    return Providers(retry=retry, transport=httpx.AsyncHTTPTransport())


@pytest.fixture
async def pool() -> AsyncIterator[Providers]:
    async with mockable() as providers:
        yield providers


@pytest.fixture
def deadline() -> Callable[[float], float]:
    """`deadline(s)`: the absolute deadline s seconds from now on anyio's clock."""
    return lambda seconds: anyio.current_time() + seconds
