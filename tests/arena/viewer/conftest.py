"""Fixtures of the browser tests: the built sites of the tiny runs, one Chromium per module (its
event loop holds the thread while it is open, so it must not outlive the module), a fresh tab."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from arena.viewer import build_site
from tests.arena.viewer.chromium import ARGS, Sites, Tab, chromium_path
from tests.arena.viewer.test_viewer import _cached_run


@pytest.fixture(scope="module")
def sites() -> Sites:
    built = Sites({})
    for kind in ("board", "battle", "stratego", "backgammon"):
        root, replays = _cached_run(kind)
        build_site(root)
        built.runs[kind] = root
        built.replays[kind] = {f"{r.episode}": r for r in replays}
    return built


def launch_chromium() -> Iterator[Any]:
    """A Chromium for the module's tests; skips (or fails, COG_REQUIRE_BROWSER=1) without one."""
    path = chromium_path()
    if path is None:
        message = "no Chromium (set COG_CHROMIUM or install /usr/bin/chromium)"
        if os.environ.get("COG_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{message}; COG_REQUIRE_BROWSER=1 requires one")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def browser(sites: Sites) -> Iterator[Any]:
    yield from launch_chromium()


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    page = browser.new_page(viewport={"width": 1400, "height": 950})
    page.set_default_timeout(10_000)  # a page from file:// draws in well under a second
    opened = Tab(page)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on("request", lambda r: opened.requests.append(r.url))
    yield opened
    page.close()
