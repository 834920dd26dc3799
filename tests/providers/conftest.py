"""Shared fixtures: a pool with fast retries, a deadline maker (asyncio comes from tests/)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio
import pytest

from providers import Providers, RetryPolicy

FAST_RETRY = RetryPolicy(max_attempts=4, backoff_initial_s=0.01, backoff_max_s=0.02)


@pytest.fixture
async def pool() -> AsyncIterator[Providers]:
    async with Providers(retry=FAST_RETRY) as providers:
        yield providers


@pytest.fixture
def deadline() -> Callable[[float], float]:
    """`deadline(s)`: the absolute deadline s seconds from now on anyio's clock."""
    return lambda seconds: anyio.current_time() + seconds
