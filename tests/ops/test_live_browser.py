"""The live page in Chromium: `arena view RUN --serve` on a run in progress shows it moving
(episodes played, decisions per second, the policies' figures) without a reload, and
turns into the league page when the run ends."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.arena.viewer.conftest import launch_chromium
from tests.ops.league import free_port, toml_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_chromium()


def _wait(check: Any, what: str, within_s: float = 60.0) -> Any:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what} within {within_s:g} s")


def test_the_live_page_follows_a_run_and_becomes_the_league_page(
    tmp_path: Path, browser: Any
) -> None:
    raw = {
        "run": {"name": "followed", "seed": 3, "games": ["connect-four"], "matches": 3,
                "concurrency": 2},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "quick": {"kind": "mock", "latency_ms": 120.0, "faults": {"unreadable": 0.15}},
            "steady": {"kind": "mock", "latency_ms": 150.0},
        },
    }  # fmt: skip
    config, out = tmp_path / "followed.toml", tmp_path / "run"
    config.write_text(toml_text(raw))
    port = free_port()
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    run = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(config), "--out",
                            str(out), "--no-progress"], **quiet)  # fmt: skip
    view: subprocess.Popen[bytes] | None = None
    try:
        _wait(lambda: (out / "replays").is_dir(), "the run made its folder")
        view = subprocess.Popen([sys.executable, "-m", "arena.cli", "view", str(out), "--serve",
                                 "--port", str(port)], **quiet)  # fmt: skip
        url = f"http://127.0.0.1:{port}/"

        def answers() -> bool:
            try:
                return httpx.get(url + "live/state.json", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        _wait(answers, "the viewer answered", 90)
        page = browser.new_page()
        page.set_default_timeout(30_000)
        loads: list[str] = []
        page.on("load", lambda: loads.append(page.url))
        page.goto(url + "?every=0.5")
        assert run.poll() is None, "the run ended before the page opened: make it longer"
        page.wait_for_function("document.body.dataset.played !== undefined")
        first = int(page.eval_on_selector("body", "b => b.dataset.played"))
        assert page.text_content("#live-played").endswith("of 18")
        # Without a reload, the page shows more played and decisions going on.
        page.wait_for_function(f"Number(document.body.dataset.played) > {first}")
        page.wait_for_function("parseFloat(document.getElementById('live-rate').textContent) > 0")
        assert len(loads) == 1, f"the page was reloaded: {loads}"
        policies = page.eval_on_selector_all(
            "#live-policies tbody tr", "rows => rows.map(r => r.cells[0].textContent)"
        )
        assert set(policies) == {"quick", "steady"}
        p95 = page.text_content("#live-policies tbody tr td:nth-child(5)")
        assert p95 is not None
        assert int(p95) >= 100  # the mock waits 120 ms or more before each reply
        assert "up (none went down)" in (page.text_content("#live-endpoints") or "")
        fallbacks = page.eval_on_selector_all(
            "#live-fallbacks tbody tr", "rows => rows.map(r => r.cells[1].textContent)"
        )
        assert set(fallbacks) <= {"unreadable"}  # the only fault the quick mock draws
        # The run ends: the page becomes the league page, its standings whole.
        assert run.wait(timeout=180) == 0
        page.wait_for_function("document.title !== 'live run'", timeout=60_000)
        page.wait_for_selector("#app h1")
        assert "followed" in (page.text_content("#app h1") or "")
        assert page.query_selector("#live-played") is None
        page.close()
    finally:
        for process in (run, view):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=20)
