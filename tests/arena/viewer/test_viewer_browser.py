"""The viewer in a real headless Chromium: pages opened from file://, stepped, checked, photographed.

Each page is checked against the engine, not against the viewer's own data:
the pieces on the board (data-cell / data-piece on the SVG), the eval bar's
HEURISTIC caption, fallback badges, keyboard stepping and #ply=N. Every page
must load without console errors and ask for nothing but its own files.
Screenshots go to /tmp/cog-screens/<kind>.png for people to look at.

Chromium: $COG_CHROMIUM or /usr/bin/chromium. Without one the tests skip,
unless COG_REQUIRE_BROWSER=1 (CI), where a missing browser fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import games
from arena.record.replay import Replay
from arena.viewer import build_site
from arena.viewer.battle import turn_frames
from tests.arena.viewer.test_viewer import _cached_run, _states

pytestmark = pytest.mark.browser

SCREENS = Path("/tmp/cog-screens")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PIECES = """() => Object.fromEntries([...document.querySelectorAll('#board [data-piece][data-cell]')]
    .map((e) => [e.dataset.cell, e.dataset.piece]))"""


def _chromium() -> str | None:
    path = os.environ.get("COG_CHROMIUM", "/usr/bin/chromium")
    return path if Path(path).is_file() else None


@dataclass
class Sites:
    """The built sites of the tiny runs, and their replays by file stem."""

    runs: dict[str, Path]
    replays: dict[str, dict[str, Replay]] = field(default_factory=dict)

    def url(self, kind: str, stem: str, hash_: str = "") -> str:
        return (self.runs[kind] / "view" / "games" / f"{stem}.html").as_uri() + hash_


@pytest.fixture(scope="module")
def sites() -> Sites:
    built = Sites({})
    for kind in ("board", "battle", "stratego", "backgammon"):
        root, replays = _cached_run(kind)
        build_site(root)
        built.runs[kind] = root
        built.replays[kind] = {f"{r.episode}": r for r in replays}
    return built


@pytest.fixture(scope="module")
def browser(sites: Sites) -> Iterator[Any]:
    path = _chromium()
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


@dataclass
class Tab:
    """A page with its console errors and requests recorded."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.wait_for_selector("#board svg, #games")

    def ply(self) -> int:
        return int(self.page.evaluate("document.body.dataset.ply"))

    def pieces(self) -> dict[str, str]:
        found: dict[str, str] = self.page.evaluate(PIECES)
        return found

    def shoot(self, kind: str) -> None:
        SCREENS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENS / f"{kind}.png"), full_page=True)

    def assert_clean(self) -> None:
        assert not self.errors, f"console errors: {self.errors}"
        foreign = [u for u in self.requests if not u.startswith(("file://", "data:"))]
        assert not foreign, f"requests beyond the page's own files: {foreign}"


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    page = browser.new_page(viewport={"width": 1400, "height": 950})
    opened = Tab(page)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on("request", lambda r: opened.requests.append(r.url))
    yield opened
    page.close()


def _expected_grid(replay: Replay, ply: int) -> dict[str, str]:
    """Cell -> piece after `ply` plies, from the engine's own view."""
    view = games.load(replay.game).view(_states(replay)[ply], 0)
    files = "".join(view["files"])
    return {
        f"{files[f]}{r + 1}": code
        for r, row in enumerate(view["cells"])
        for f, code in enumerate(row)
        if code != "."
    }


def _pick(replays: dict[str, Replay], game: str) -> Replay:
    """A replay of `game`, one with a fallback when there is one."""
    mine = [r for r in replays.values() if r.game == game]
    return next((r for r in mine if r.games[0].fallbacks), mine[0])


@pytest.mark.parametrize("kind", ["connect-four", "hex", "breakthrough", "quoridor"])
def test_board_page_shows_the_engine_position_and_steps_by_keyboard(
    sites: Sites, tab: Tab, kind: str
) -> None:
    replay = _pick(sites.replays["board"], kind)
    plies = len(replay.games[0].plies)
    ply = max(1, plies // 2)
    tab.open(sites.url("board", replay.episode, f"#ply={ply}"))
    assert tab.ply() == ply
    assert tab.pieces() == _expected_grid(replay, ply)
    assert "HEURISTIC" in tab.page.inner_text("#evalbar figcaption")
    recorded = replay.games[0].plies[ply - 1].standings
    assert [int(tab.page.inner_text(f"[data-standing='{s}']")) for s in (0, 1)] == recorded
    tab.page.keyboard.press("ArrowRight")
    assert tab.ply() == ply + 1
    assert f"ply={ply + 1}" in tab.page.url
    assert tab.pieces() == _expected_grid(replay, ply + 1)
    tab.page.keyboard.press("ArrowLeft")
    tab.page.keyboard.press("ArrowLeft")
    assert tab.ply() == ply - 1
    assert tab.pieces() == _expected_grid(replay, ply - 1)
    if kind == "quoridor":
        view = games.load("quoridor").view(_states(replay)[ply - 1], 0)
        walls = tab.page.eval_on_selector_all("[data-wall]", "els => els.map(e => e.dataset.wall)")
        assert sorted(walls) == sorted(view["walls"])
        left = tab.page.eval_on_selector_all(
            "[data-walls-left]", "els => els.map(e => +e.dataset.wallsLeft)"
        )
        assert sorted(left) == sorted(view["walls_left"].values())
    if (
        kind == "hex"
    ):  # a rhombus: 49 hexagons, each rank shifted half a cell right of the one below
        assert tab.page.locator("polygon[data-cell]").count() == 49
        a1 = tab.page.locator("polygon[data-cell='a1']").bounding_box()
        a2 = tab.page.locator("polygon[data-cell='a2']").bounding_box()
        assert a2["x"] > a1["x"]
        assert a2["y"] < a1["y"]
    tab.page.keyboard.press("End")
    tab.shoot(kind)
    tab.assert_clean()


def test_fallback_badge_shows_its_cause_and_the_raw_reply(sites: Sites, tab: Tab) -> None:
    replay = next(r for r in sites.replays["board"].values() if r.games[0].fallbacks)
    fallback = replay.games[0].fallbacks[0]
    tab.open(sites.url("board", replay.episode, f"#ply={fallback.ply}"))
    row = tab.page.locator(f"#moves li[data-ply='{fallback.ply}']")
    assert "current" in (row.get_attribute("class") or "")
    badge = row.locator("button.badge.fallback")
    assert badge.get_attribute("data-cause") == fallback.cause
    assert badge.inner_text() == fallback.cause
    badge.click()
    details = tab.page.inner_text("#details")
    assert f"fallback: {fallback.cause}" in details
    last = fallback.attempts[-1]
    assert (last.reply or "(no reply)")[:60] in details
    tab.assert_clean()


def test_battle_page_plays_the_ticks_the_engine_re_derives(sites: Sites, tab: Tab) -> None:
    replay = next(iter(sites.replays["battle"].values()))
    states = _states(replay, 1)
    tab.open(sites.url("battle", replay.episode, "#game=2&ply=2"))
    assert tab.page.evaluate("document.body.dataset.game") == "2"
    assert tab.ply() == 2

    def soldiers(x: Any, y: Any, hp: Any) -> dict[str, str]:
        layout = states[0].layout
        letters = ["B", "A"]  # game 2: seat 0 (red) commands the B squads
        return {
            f"{int(x[u]) + 1},{int(y[u]) + 1}": f"{letters[int(layout.side[u])]}{int(layout.squad[u]) + 1}"
            for u in range(layout.count)
            if hp[u] > 0
        }

    after = states[2]
    assert tab.pieces() == soldiers(after.x, after.y, after.hp)
    tab.page.keyboard.press(",")  # one tick back, inside the second turn
    frames = turn_frames(states[1], states[2])
    back = frames[-2]
    assert tab.page.evaluate("document.querySelector('#where').dataset.tick") == str(back.tick)
    assert f"tick={back.tick}" in tab.page.url
    assert tab.pieces() == soldiers(back.x, back.y, back.hp)
    assert "HEURISTIC" in tab.page.inner_text("#evalbar figcaption")
    tab.page.click("#first")
    tab.page.click("#play")  # plays tick by tick into the first turn, then pauses on a click
    tab.page.wait_for_function("+document.querySelector('#where').dataset.tick >= 3", timeout=5000)
    tab.page.click("#play")
    assert tab.ply() == 1
    assert "ply=1" in tab.page.url
    tab.page.goto(sites.url("battle", replay.episode, "#game=2&ply=2"))
    tab.shoot("battle")
    tab.assert_clean()


def test_stratego_page_all_seeing_and_each_seat_view(sites: Sites, tab: Tab) -> None:
    replay = next(iter(sites.replays["stratego"].values()))
    game = games.load("stratego")
    states = _states(replay)
    ply = next(
        p
        for p in range(len(states) // 3, len(states))
        if len(game.view(states[p], 0)["battles"]) >= 3
    )
    tab.open(sites.url("stratego", replay.episode, f"#ply={ply}"))
    views = [game.view(states[ply], seat) for seat in (0, 1)]
    truth = {
        p["square"]: p["code"]
        for seat, v in enumerate(views)
        for p in v["pieces"]
        if p["seat"] == seat
    }
    assert tab.pieces() == truth
    assert tab.page.locator(".player [data-policy]").count() == 2
    tab.shoot("stratego")
    for seat in (0, 1):
        tab.page.click(f"#view-toggle button[data-view='{seat}']")
        assert tab.pieces() == {p["square"]: p["code"] for p in views[seat]["pieces"]}
        assert "?" in tab.pieces().values()
        assert tab.page.locator(".player [data-policy]").count() == 0  # names: spectator side only
    tab.page.click("#view-toggle button[data-view='spectator']")
    assert tab.pieces() == truth
    tab.assert_clean()


def test_backgammon_page_moves_one_checker_at_a_time(sites: Sites, tab: Tab) -> None:
    replay = next(iter(sites.replays["backgammon"].values()))
    states = _states(replay)
    record = replay.games[0]
    ply = next(
        i for i, p in enumerate(record.plies, start=1) if i > 4 and " " in p.decisions[0].move
    )
    tab.open(sites.url("backgammon", replay.episode, f"#game=1&ply={ply}&step=1"))
    before, after = states[ply - 1], states[ply]
    first_die = tab.page.locator(".die[data-current='1']")
    assert first_die.count() == 1
    assert int(first_die.get_attribute("data-die") or 0) in before.dice
    counts = tab.page.eval_on_selector_all(
        "polygon[data-point]",
        "els => els.map(e => [+e.dataset.point, +e.dataset.count, e.dataset.piece || ''])",
    )
    total = sum(c for _, c, _ in counts) + sum(
        int(
            tab.page.locator(f"g[data-point='{where}'][data-piece='{c}']").get_attribute(
                "data-count"
            )
            or 0
        )
        for where in ("bar", "off")
        for c in "BW"
    )
    assert total == 30  # every checker is somewhere after the first step
    tab.open(sites.url("backgammon", replay.episode, f"#game=1&ply={ply}"))  # the whole play
    board = games.load("backgammon").integrity(after)["board"]["points"]
    counts = tab.page.eval_on_selector_all(
        "polygon[data-point]",
        "els => els.map(e => [+e.dataset.point, +e.dataset.count, e.dataset.piece || ''])",
    )
    shown = {p: c if piece == "B" else -c for p, c, piece in counts}
    assert [shown[p] for p in range(1, 25)] == board
    tab.shoot("backgammon")
    tab.assert_clean()


def test_league_page_filters_and_links(sites: Sites, tab: Tab) -> None:
    tab.open((sites.runs["board"] / "view" / "index.html").as_uri())
    rows = tab.page.locator("#games tr.game-row")
    total = rows.count()
    assert total == 8  # four games, one match of two games each
    summary = json.loads((sites.runs["board"] / "summary.json").read_text())
    rated = len(summary.get("ratings", {}).get("bt", {}))
    assert tab.page.locator("#rating-intervals .bt-interval").count() == rated
    tab.page.select_option("#filter-game", "hex")
    visible = tab.page.locator("#games tr.game-row:not([hidden])")
    assert visible.count() == 2
    assert set(visible.evaluate_all("els => els.map(e => e.dataset.game)")) == {"hex"}
    tab.page.select_option("#filter-game", "")
    tab.page.check("#filter-fallbacks")
    shown = visible.evaluate_all("els => els.map(e => +e.dataset.fallbacks)")
    assert shown
    assert all(n > 0 for n in shown)
    assert len(shown) < total
    assert tab.page.inner_text("#games-count") == f"{len(shown)} of {total} games"
    tab.page.uncheck("#filter-fallbacks")
    tab.page.select_option("#filter-policy", "shaky")
    assert visible.count() == total  # every game has the shaky policy at one seat
    tab.shoot("league")
    episode = visible.first.get_attribute("data-episode")
    visible.first.locator("a.replay-link").click()
    tab.page.wait_for_selector("#board svg")
    assert tab.page.url.split("#")[0].endswith(f"/games/{episode}.html")
    assert tab.page.evaluate("document.body.dataset.ply") == "0"
    tab.assert_clean()
