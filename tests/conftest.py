"""Shared test setup: async tests run on asyncio through anyio's pytest plugin."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    """Events go nowhere unless a test configures them (structlog prints by default)."""
    from arena.logs import close_logging

    close_logging()
