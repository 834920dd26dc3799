"""The league page of an SPRT run shows the test: its verdict, LLR and bounds, counts; its
lines wrap inside their card at every width."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.viewer import build_site
from tests.arena.viewer.chromium import SCREENS, Tab

pytestmark = pytest.mark.browser

FIRST, SECOND = "tactician-baseline", "random-baseline"
"""Names as long as an A/B test's: the verdict line is then wider than a 1400 px window."""


@pytest.fixture(scope="module")
def sprt_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A played SPRT run with its site built."""
    data = {
        "run": {"name": "ab", "seed": 11, "games": ["connect-four"], "concurrency": 4,
                "sprt": {"elo0": 0, "elo1": 20, "max_matches": 400}},
        "policies": {FIRST: {"kind": "scripted", "baseline": "tactician"},
                     SECOND: {"kind": "scripted", "baseline": "random"}},
    }  # fmt: skip
    out = tmp_path_factory.mktemp("sprt") / "out"
    plan = plan_run(parse_config(data), out)
    with ThreadPoolExecutor(1) as thread:  # the browser's own event loop holds this thread
        thread.submit(anyio.run, execute, plan).result(timeout=120)
    build_site(out)
    return out


def test_the_league_page_shows_the_sequential_test(sprt_run: Path, tab: Tab) -> None:
    tab.open((sprt_run / "view" / "index.html").as_uri())
    sprt = json.loads((sprt_run / "summary.json").read_text())["sprt"]
    shown = tab.page.inner_text("#sprt")
    assert f"H1 accepted: {FIRST} is stronger than {SECOND} by at least 20 Elo" in shown
    assert f"LLR {sprt['llr']:+.3f} in [{sprt['lower']:+.3f}, {sprt['upper']:+.3f}]" in shown
    assert " ".join(str(n) for n in sprt["pentanomial"]) in shown
    assert f"the SPRT accepted H1 after {sprt['matches']} matches" in tab.page.inner_text(
        "#stopped-by"
    )
    tab.assert_clean()


def test_the_header_counts_the_episodes_played_of_the_most_planned(
    sprt_run: Path, tab: Tab
) -> None:
    tab.open((sprt_run / "view" / "index.html").as_uri())
    summary = json.loads((sprt_run / "summary.json").read_text())
    played = len({g["episode"] for g in summary["games"]})
    assert played < summary["episodes"]  # the SPRT stopped it well before its cap
    assert tab.page.inner_text("#episodes") == (
        f"{played} played of at most {summary['episodes']} episodes"
    )
    tab.assert_clean()


SPRT_FIT = """() => {
  const text = document.getElementById('sprt');
  const card = text.closest('.card');
  const range = document.createRange();
  range.selectNodeContents(text);
  const words = range.getBoundingClientRect(), box = card.getBoundingClientRect();
  return { words: { left: words.left, right: words.right }, card: { left: box.left, right: box.right },
    scroll: card.scrollWidth, client: card.clientWidth };
}"""
"""Where the test's text is laid out (overflowing text included) against its card's box."""


@pytest.mark.parametrize("width", [420, 800, 1400])
def test_the_sequential_test_fits_its_card(sprt_run: Path, tab: Tab, width: int) -> None:
    tab.page.set_viewport_size({"width": width, "height": 900})
    tab.open((sprt_run / "view" / "index.html").as_uri())
    fit = tab.page.evaluate(SPRT_FIT)
    assert fit["words"]["left"] >= fit["card"]["left"]
    assert fit["words"]["right"] <= fit["card"]["right"], f"the text runs past its card: {fit}"
    assert fit["scroll"] <= fit["client"], f"the card scrolls sideways: {fit}"
    assert fit["card"]["right"] <= width
    SCREENS.mkdir(parents=True, exist_ok=True)
    tab.page.locator("#sprt").screenshot(path=str(SCREENS / f"sprt-{width}.png"))
    tab.assert_clean()
