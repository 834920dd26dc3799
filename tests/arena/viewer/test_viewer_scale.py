"""The league and pool pages at scale: 200 entrants and 20,000 games open in Chromium from
file://, the games a page at a time, a page loaded when it is shown or a filter needs it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from arena.viewer import build_site
from arena.viewer.site import GAMES_PAGE
from tests.arena.viewer.big_league import big_league
from tests.arena.viewer.chromium import Tab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ENTRANTS, GAMES = 200, 20_000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("big")
    big_league(run, entrants=ENTRANTS, games=GAMES)
    build_site(run)
    return run


def _page_data(index: Path) -> dict[str, Any]:
    text = index.read_text(encoding="utf-8")
    start = text.index('id="page-data">') + len('id="page-data">')
    data: dict[str, Any] = json.loads(text[start : text.index("</script>", start)])
    return data


def test_the_page_carries_one_page_of_games_and_the_rest_in_files(big: Path) -> None:
    index = big / "view" / "index.html"
    data = _page_data(index)
    assert len(data["games"]) == GAMES_PAGE
    paging = data["games_pages"]
    assert paging["total"] == GAMES
    assert paging["pages"] == GAMES // GAMES_PAGE
    assert len(paging["policies"]) == ENTRANTS
    files = sorted((big / "view" / "data").glob("games-*.js"))
    assert [f.name for f in files] == [f"games-{n:04d}.js" for n in range(1, paging["pages"])]
    assert "elo_events" not in data["ratings"]  # grows with the matches; not drawn
    assert index.stat().st_size < 2_000_000  # one page of games, not 20,000


def test_a_200_entrant_20000_game_league_page_renders_in_time(big: Path, tab: Tab) -> None:
    started = time.monotonic()
    tab.open((big / "view" / "index.html").as_uri())  # waits for #games, within the tab's timeout
    opened = time.monotonic() - started
    page = tab.page
    assert page.locator("#games tr.game-row").count() == GAMES_PAGE
    assert page.locator("#standings-overall tr[data-policy]").count() == ENTRANTS
    assert page.locator("#ratings tr[data-policy]").count() == ENTRANTS
    assert page.inner_text("#games-count") == f"{GAMES} of {GAMES} games"
    # head to head: one policy's row at a time, as a table of its opponents
    first = page.locator("#h2h-policy").input_value()
    summary = json.loads((big / "summary.json").read_text())
    met = [k for k in summary["h2h"] if k.startswith(f"{first}|")]
    assert page.locator("#h2h tr[data-policy]").count() == len(met)
    # the next page of games is loaded from its file when asked for
    page.click("#games-next")
    page.wait_for_function(
        f"document.querySelector('#games tr.game-row').dataset.episode === "
        f"{json.dumps(summary['games'][GAMES_PAGE]['episode'])}"
    )
    assert page.inner_text("#games-page") == f"games {GAMES_PAGE + 1}–{2 * GAMES_PAGE} of {GAMES}"
    # a filter reads every page once, then shows what matches, a page at a time
    policy = "policy-0007"
    expected = sum(policy in g["policies"] for g in summary["games"])
    page.select_option("#filter-policy", policy)
    page.wait_for_function(f"document.getElementById('games-count').dataset.shown === '{expected}'")
    rows = page.locator("#games tr.game-row")
    assert rows.count() == min(expected, GAMES_PAGE)
    assert all(
        policy in p.split("|") for p in rows.evaluate_all("e => e.map(r => r.dataset.policies)")
    )
    tab.shoot("league-at-scale")
    tab.assert_clean()
    print(f"opened in {opened:.2f} s")


def test_a_200_entrant_pool_page_renders_in_time(tmp_path: Path, tab: Tab) -> None:
    run = tmp_path / "pool"
    big_league(run, entrants=ENTRANTS, games=2_000, pool=True)
    build_site(run)
    tab.open((run / "view" / "index.html").as_uri())
    page = tab.page
    assert page.locator("#pool-leaderboard tr[data-entrant]").count() == ENTRANTS
    assert page.locator("#pool-history g.series").count() == ENTRANTS  # from the two sessions
    assert page.locator("#pool-h2h tr[data-entrant]").count() == 24  # the top of the board
    assert page.locator("#pool-cards .entrant-card").count() == ENTRANTS
    tab.assert_clean()
