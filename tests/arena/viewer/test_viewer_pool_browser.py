"""The pool page in a real headless Chromium: leaderboard, rating history, heat map and
cards drawn from the page's data, names shown as text, the page fitting the window.

The picture of configs/pool's three sessions goes to docs/images/pool-page.png with
COG_UPDATE_SCREENSHOTS=1 (docs/pool.md shows it), else beside the other screenshots.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.config import load_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.viewer import build_site
from tests.arena.viewer.chromium import SCREENS, Tab
from tests.arena.viewer.conftest import launch_chromium
from tests.arena.viewer.test_viewer import _cached_run, _page_data
from tests.arena.viewer.test_viewer_pool import cached_pool

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
SHOT = (
    ROOT / "docs" / "images" / "pool-page.png"
    if os.environ.get("COG_UPDATE_SCREENSHOTS") == "1"
    else SCREENS / "pool-page.png"
)
"""The picture of the pool page: docs/pool.md's with COG_UPDATE_SCREENSHOTS=1, else one beside
the other screenshots, so a test run leaves the tree as it found it."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_chromium()


def _in_thread(play: Any, *args: Any) -> Any:
    """`play(*args)` in a thread of its own: the browser's event loop holds this one."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(play, *args).result(timeout=120)


def _open(tab: Tab, run: Path) -> dict[str, Any]:
    """The built pool page of `run`, opened; its data."""
    index = build_site(run) / "index.html"
    tab.page.goto(index.as_uri())
    tab.page.wait_for_selector("#games", state="attached")
    return _page_data(index)


def _texts(tab: Tab, selector: str, script: str = "e => e.textContent") -> list[Any]:
    found: list[Any] = tab.page.eval_on_selector_all(selector, f"els => els.map({script})")
    return found


def test_the_pool_page_draws_leaderboard_history_heat_map_and_cards(
    tab: Tab, tmp_path: Path
) -> None:
    run = tmp_path / "pool"
    shutil.copytree(_in_thread(cached_pool), run, ignore=shutil.ignore_patterns("view"))
    pool = _open(tab, run)["pool"]
    entrants = pool["entrants"]
    names = [e["name"] for e in entrants]
    rows = "#pool-leaderboard tr[data-entrant]"
    assert _texts(tab, rows, "e => e.dataset.entrant") == names
    assert _texts(tab, rows, "e => e.dataset.status") == [e["status"] for e in entrants]
    assert tab.page.locator("#pool-leaderboard svg.pool-bar .pool-interval").count() == len(
        [e for e in entrants if e["bt"]]
    )
    for e in entrants:  # one line per entrant, a dot per session it belongs in
        series = tab.page.locator(f"#pool-history g.series[data-entrant='{e['name']}']")
        assert series.locator("polyline").count() == 1
        sessions = _texts(tab, f"#pool-history g.series[data-entrant='{e['name']}'] circle",
                          "e => +e.dataset.session")  # fmt: skip
        assert sessions == [p["session"] for p in pool["lines"][e["name"]]]
    assert "retired" in (
        tab.page.locator("#pool-history g.series[data-entrant='random']").get_attribute("class")
        or ""
    )
    assert _texts(tab, "#pool-legend .legend-item", "e => e.dataset.entrant") == names
    tab.page.hover("#pool-legend .legend-item[data-entrant='late']")  # its line stands out
    assert _texts(tab, "#pool-history.focus g.series.on", "e => e.dataset.entrant") == ["late"]
    cells = tab.page.locator("#pool-h2h td.heat-cell")
    assert cells.count() == len(names) * (len(names) - 1) - 2  # random never met late
    first = tab.page.locator("#pool-h2h td[data-pair='tactician|random']")
    assert first.get_attribute("title").startswith("tactician against random: ")
    shown, expected = first.evaluate(
        "e => [getComputedStyle(e).backgroundColor, CogPool.heat(+e.dataset.share).background]"
    )
    assert shown.replace(" ", "") == expected == "rgb(47,111,214)"  # tactician won every game
    cards = "#pool-cards .entrant-card"
    assert _texts(tab, cards, "e => e.dataset.entrant") == names
    fingerprints = _texts(tab, f"{cards} code.fingerprint", "e => [e.textContent, e.title]")
    assert fingerprints == [[e["fingerprint"][:12], e["fingerprint"]] for e in entrants]
    retired = tab.page.locator(f"{cards}[data-entrant='random'] .retired-why").inner_text()
    assert "retired = true" in retired
    tab.assert_clean()


def test_names_and_authors_from_the_config_are_shown_as_text(tab: Tab, tmp_path: Path) -> None:
    run = tmp_path / "pool"
    shutil.copytree(_in_thread(cached_pool), run, ignore=shutil.ignore_patterns("view"))
    _open(tab, run)
    assert tab.page.locator("#app b, #app i").count() == 0
    card = tab.page.locator("#pool-cards .entrant-card[data-entrant='<b>mock']")
    assert card.locator(".entrant-name").inner_text() == "<b>mock"
    assert card.locator("dd[data-field='author']").inner_text() == "Ada & <i>co</i>"
    tab.assert_clean()


def test_a_league_page_shows_no_pool_sections(tab: Tab, tmp_path: Path) -> None:
    run = tmp_path / "run"
    board, _ = _in_thread(_cached_run, "board")
    shutil.copytree(board, run, ignore=shutil.ignore_patterns("view"))
    _open(tab, run)
    assert tab.page.locator("#h2h, #rating-intervals").count() == 2
    shown = "#pool-leaderboard, #pool-history, #pool-h2h, #pool-cards, #pool-legend"
    assert tab.page.locator(shown).count() == 0
    assert tab.page.locator("h1").inner_text().startswith("League · ")
    tab.assert_clean()


def _play_configs_pool(out: Path) -> None:
    """configs/pool's three sessions (docs/pool.md's example), played into `out`."""
    for step in (1, 2, 3):
        config = load_config(ROOT / "configs" / "pool" / f"step{step}.toml")
        result = anyio.run(execute, plan_run(config, out))
        assert not result.failed


@pytest.fixture(scope="module")
def configs_pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """configs/pool's three sessions, played once for the module."""
    run = tmp_path_factory.mktemp("configs-pool") / "pool"
    _in_thread(_play_configs_pool, run)
    return run


@pytest.mark.parametrize("width", [1400, 800])
def test_the_pool_of_configs_pool_fits_the_window(tab: Tab, configs_pool: Path, width: int) -> None:
    tab.page.set_viewport_size({"width": width, "height": 900})
    _open(tab, configs_pool)
    overflow = tab.page.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 1, f"the pool page scrolls sideways by {overflow} px at {width} px"
    chart = tab.page.locator("#pool-history").bounding_box()
    assert chart is not None
    assert chart["width"] <= width  # the chart scales down to the window
    assert tab.page.locator("#pool-history g.series").count() == 5
    if width == 1400:
        SHOT.parent.mkdir(parents=True, exist_ok=True)
        games = tab.page.locator("#games").bounding_box()
        assert games is not None
        # the page down to the first rows of the games list: its thousands of rows say no more
        bottom = games["y"] + 240
        tab.page.screenshot(
            path=str(SHOT), full_page=True, clip={"x": 0, "y": 0, "width": width, "height": bottom}
        )
    else:
        tab.shoot(f"pool-{width}")
    tab.assert_clean()
