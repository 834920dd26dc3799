"""The league page of an SPRT run shows the test: its verdict, LLR and bounds, counts."""

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
from tests.arena.viewer.chromium import Tab

pytestmark = pytest.mark.browser


def test_the_league_page_shows_the_sequential_test(tmp_path: Path, tab: Tab) -> None:
    data = {
        "run": {"name": "ab", "seed": 11, "games": ["connect-four"], "concurrency": 4,
                "sprt": {"elo0": 0, "elo1": 20, "max_matches": 400}},
        "policies": {"tactician": {"kind": "scripted", "baseline": "tactician"},
                     "random": {"kind": "scripted", "baseline": "random"}},
    }  # fmt: skip
    out = tmp_path / "out"
    plan = plan_run(parse_config(data), out)
    with ThreadPoolExecutor(1) as thread:  # the browser's own event loop holds this thread
        thread.submit(anyio.run, execute, plan).result(timeout=120)
    build_site(out)
    tab.open((out / "view" / "index.html").as_uri())
    sprt = json.loads((out / "summary.json").read_text())["sprt"]
    shown = tab.page.inner_text("#sprt")
    assert "H1 accepted: tactician is stronger than random by at least 20 Elo" in shown
    assert f"LLR {sprt['llr']:+.3f} in [{sprt['lower']:+.3f}, {sprt['upper']:+.3f}]" in shown
    assert " ".join(str(n) for n in sprt["pentanomial"]) in shown
    assert f"the SPRT accepted H1 after {sprt['matches']} matches" in tab.page.inner_text(
        "#stopped-by"
    )
    tab.assert_clean()
