"""Shared test setup: async tests run on asyncio through anyio's pytest plugin, or, marked
`virtual_clock`, on trio with a virtual clock (`tests.timing.virtual_clock`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.timing import virtual_clock


@pytest.fixture
def anyio_backend(request: pytest.FixtureRequest) -> str | tuple[str, dict[str, Any]]:
    if request.node.get_closest_marker("virtual_clock") is not None:
        return virtual_clock()
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    """Events go nowhere unless a test configures them (structlog prints by default)."""
    from arena.logs import close_logging

    close_logging()


SLOW_FOLDERS = ("golden", "chaos", "nginx", "gateways", "bench")
"""Whole folders of slow tests: they play leagues, start servers or time benchmarks."""
SLOW_MODULES = ("test_ray.py",)
"""Modules of slow tests elsewhere: a real Ray cluster."""
LONG_TIMEOUTS_S = {"golden": 1200, "chaos": 600, "nginx": 600, "gateways": 600,
                   "test_ray.py": 600}  # fmt: skip
"""Per-test timeouts above the default (pyproject's `timeout`), for what plays many games."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tiers: `slow` marks the golden, chaos, nginx, gateway, bench, Ray and browser tests (and
    those marked by hand: each starts `arena` or a server in a subprocess), so that
    `pytest -m "not slow"` is the fast tier; the long ones get their own timeouts."""
    for item in items:
        parts = item.path.relative_to(config.rootpath / "tests").parts
        slow = parts[0] in SLOW_FOLDERS or item.path.name in SLOW_MODULES
        if slow or item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.slow)
        limit = LONG_TIMEOUTS_S.get(parts[0]) or LONG_TIMEOUTS_S.get(item.path.name)
        if limit is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(limit))
