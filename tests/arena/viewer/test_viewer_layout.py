"""The viewer's text, layout and colours in a real Chromium, at the widths people open it at.

Each newcomer report has a test that fails if it comes back: no `null` or
`undefined` in a page's text (Stratego's seat views once read "null" where
the policy was hidden); the board and the move list never overlap and no
page scrolls sideways, from 420 px to 1400 px; connect-four's discs stand out
from the board (contrast at least 3:1); the battle's two armies are two hue
families with a legend naming them, and a long order is shown whole; hex's
goal edges are drawn thick, on top, in the players' colours; the move list's
first row is never under its heading; the standing sparkline's caption and
the league's rating plot caption stay clear of their lines; at 420 px every
game's replay link is on screen without scrolling sideways, and a table wider
than its card shows a shadow on each side that has more to see, none on a
table that fits.
Screenshots go to /tmp/cog-screens/<kind>-<width>.png.
"""

from __future__ import annotations

import colorsys
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from arena.viewer import build_site
from tests.arena.viewer.chromium import Sites, Tab

pytestmark = pytest.mark.browser

KINDS = ["connect-four", "hex", "breakthrough", "quoridor", "battle", "stratego", "backgammon"]
WIDTHS = [420, 620, 800, 1400]
SHOT_WIDTHS = {420, 800, 1400}
RUN_OF = {"battle": "battle", "stratego": "stratego", "backgammon": "backgammon"}
"""The tiny run each game kind's replays are in; the other kinds are in the board run."""

Box = dict[str, float]

LEAKS = """() => {
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest("script, style, pre")) continue;  // pre: a model's own text
    if (/\\b(null|undefined|NaN)\\b/.test(node.textContent)) found.push(node.textContent);
  }
  return found;
}"""
"""Every piece of text on the page (SVG tooltips and folded details too) that reads like a
missing value; the raw prompts and replies (pre) are the model's words and not checked."""


def _stem(sites: Sites, kind: str) -> str:
    return next(
        r.episode for r in sites.replays[RUN_OF.get(kind, "board")].values() if r.game == kind
    )


def _url(sites: Sites, kind: str, hash_: str = "") -> str:
    """The page of the first replay of game `kind`."""
    return sites.url(RUN_OF.get(kind, "board"), _stem(sites, kind), hash_)


def _box(tab: Tab, selector: str) -> Box:
    box: Box | None = tab.page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not drawn"
    return box


def _overlap(a: Box, b: Box) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def _rgb(css: str) -> tuple[float, float, float]:
    """`rgb(20, 26, 41)` or `rgba(...)`, as getComputedStyle gives a colour, without alpha."""
    r, g, b = (float(v) for v in re.findall(r"[\d.]+", css)[:3])
    return r, g, b


def _luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance."""
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two CSS colours, 1 to 21."""
    light, dark = sorted((_luminance(_rgb(a)), _luminance(_rgb(b))), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _hue(css: str) -> float:
    return colorsys.rgb_to_hls(*(v / 255 for v in _rgb(css)))[0] * 360


def _hue_gap(a: float, b: float) -> float:
    return min(abs(a - b), 360 - abs(a - b))


def _seat_colour(tab: Tab, seat: int) -> str:
    colour: str = tab.page.eval_on_selector(
        f".player[data-seat='{seat}'] .swatch", "e => getComputedStyle(e).backgroundColor"
    )
    return colour


def _assert_no_leaks(tab: Tab, where: str) -> None:
    leaks = tab.page.evaluate(LEAKS)
    assert not leaks, f"{where}: text reads like a missing value: {leaks}"


def _positions(sites: Sites, kind: str) -> list[str]:
    """Hashes of the start, middle and end of every game of the replay."""
    run = RUN_OF.get(kind, "board")
    replay = sites.replays[run][_stem(sites, kind)]
    return [
        f"#game={record.index}&ply={ply}"
        for record in replay.games
        for ply in sorted({0, len(record.plies) // 2, len(record.plies)})
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_no_page_text_reads_null_or_undefined(sites: Sites, tab: Tab, kind: str) -> None:
    for hash_ in _positions(sites, kind):
        tab.open(_url(sites, kind, hash_))
        _assert_no_leaks(tab, hash_)
        views = ["0", "1"] if kind == "stratego" else []
        for seat in views:
            tab.page.click(f"#view-toggle button[data-view='{seat}']")
            _assert_no_leaks(tab, f"{hash_}, seat {seat}'s view")
            _assert_seats_labelled(tab)
        fallback = tab.page.locator("#moves button.badge.fallback").first
        if fallback.count():  # the attempts panel of a fallback: causes, errors, tokens
            fallback.click()
            _assert_no_leaks(tab, f"{hash_}, a fallback's details")
    tab.open(sites.league_url(RUN_OF.get(kind, "board")))
    _assert_no_leaks(tab, "the league page")
    tab.assert_clean()


def _assert_seats_labelled(tab: Tab) -> None:
    """Each seat's header opens with its alias, and no policy name in a seat's own view."""
    for seat in (0, 1):
        alias = tab.page.inner_text(f".player[data-seat='{seat}'] .alias").strip()
        assert alias
        assert tab.page.inner_text(f".player[data-seat='{seat}']").startswith(alias)
    assert tab.page.locator(".player [data-policy]").count() == 0


def _without_policy_names(run: Path, out: Path) -> None:
    """A copy of run folder `run` in `out` whose replays lost the spectator's policy names."""
    shutil.copytree(run, out, ignore=shutil.ignore_patterns("view"))
    for path in (out / "replays").glob("*.json"):
        data = json.loads(path.read_text())
        data["spectator"]["policies"] = {}
        path.write_text(json.dumps(data))
    build_site(out)


def test_a_replay_without_policy_names_labels_seats_by_alias(
    sites: Sites, tab: Tab, tmp_path: Path
) -> None:
    _without_policy_names(sites.runs["stratego"], tmp_path / "run")
    stem = _stem(sites, "stratego")
    tab.open((tmp_path / "run" / "view" / "games" / f"{stem}.html").as_uri() + "#ply=50")
    _assert_no_leaks(tab, "spectator's view without policy names")
    _assert_seats_labelled(tab)
    assert "wins" in tab.page.inner_text("#result")
    tab.assert_clean()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", KINDS)
def test_board_and_move_list_never_overlap(sites: Sites, tab: Tab, kind: str, width: int) -> None:
    tab.page.set_viewport_size({"width": width, "height": 900})
    tab.open(_url(sites, kind, "#ply=3"))
    board, moves = _box(tab, "#board"), _box(tab, "#moves")
    assert not _overlap(board, moves), f"board {board} overlaps the move list {moves}"
    assert board["x"] >= 0
    assert board["x"] + board["width"] <= width
    overflow = tab.page.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow} px at {width} px"
    if width in SHOT_WIDTHS:
        tab.shoot(f"{kind}-{width}")
    tab.assert_clean()


@pytest.mark.parametrize("width", sorted(SHOT_WIDTHS))
def test_league_page_fits_the_window(sites: Sites, tab: Tab, width: int) -> None:
    tab.page.set_viewport_size({"width": width, "height": 900})
    tab.open(sites.league_url())
    overflow = tab.page.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 1, f"the league page scrolls sideways by {overflow} px at {width} px"
    tab.shoot(f"league-{width}")
    tab.assert_clean()


REPLAY_LINKS = """() => [...document.querySelectorAll('#games a.replay-link')].map((a) => {
  const r = a.getBoundingClientRect();
  return { left: r.left, right: r.right };
})"""


def test_every_replay_link_is_on_screen_at_420_px(sites: Sites, tab: Tab) -> None:
    tab.page.set_viewport_size({"width": 420, "height": 900})
    tab.open(sites.league_url())
    links = tab.page.evaluate(REPLAY_LINKS)
    assert len(links) == tab.page.locator("#games tr.game-row").count()
    for link in links:  # nothing scrolled sideways: neither the page nor the table
        assert link["left"] >= 0
        assert link["right"] <= 420, f"a replay link is off the side of the window: {link}"
    first = tab.page.locator("#games a.replay-link").first
    first.scroll_into_view_if_needed()
    first.click()  # reachable: nothing covers it
    tab.page.wait_for_selector("#board svg")
    tab.assert_clean()


CUES = """() => [...document.querySelectorAll('#app .scroll-x')].map((wrap) => {
  const body = wrap.querySelector(':scope > .scroll-body');
  return { table: body.querySelector('table').id, overflows: body.scrollWidth > body.clientWidth + 1,
    left: getComputedStyle(wrap, '::before').opacity, right: getComputedStyle(wrap, '::after').opacity };
})"""
"""Per table of the page: whether it is wider than its box, and how visible each side's shadow is."""

SCROLL_TO = """(where) => { for (const body of document.querySelectorAll('#app .scroll-body')) {
  body.scrollLeft = where * (body.scrollWidth - body.clientWidth); } }"""


def _cues(tab: Tab) -> dict[str, tuple[bool, str, str]]:
    cues = tab.page.evaluate(CUES)
    return {c["table"]: (c["overflows"], c["left"], c["right"]) for c in cues}


@pytest.mark.parametrize("width", sorted(SHOT_WIDTHS))
def test_a_table_wider_than_its_card_shows_a_shadow_on_the_side_with_more(
    sites: Sites, tab: Tab, width: int
) -> None:
    tab.page.set_viewport_size({"width": width, "height": 900})
    tab.open(sites.league_url())
    cues = _cues(tab)
    assert len(cues) == tab.page.locator("#app table").count()  # every table has its cue
    wide = {name for name, (overflows, _, _) in cues.items() if overflows}
    for name, (overflows, left, right) in cues.items():  # scrolled to the left edge
        assert (left, right) == ("0", "1" if overflows else "0"), name
    if width == 420:
        assert {"standings-overall", "games"} <= wide
    if width == 1400:
        assert "standings-overall" not in wide
    tab.page.evaluate(SCROLL_TO, 1)
    tab.page.wait_for_function(
        "() => [...document.querySelectorAll('#app .scroll-x')].every((w) => "
        "w.classList.contains('more-left') === (w.firstChild.scrollLeft > 1))"
    )
    for name, (_, left, right) in _cues(tab).items():  # scrolled to the right edge
        assert (left, right) == ("1" if name in wide else "0", "0"), name
    tab.page.evaluate(SCROLL_TO, 0.5)
    tab.page.wait_for_function(
        "() => [...document.querySelectorAll('#app .scroll-x.more-left')].every((w) => "
        "w.classList.contains('more-right'))"
    )
    for name, (_, left, right) in _cues(tab).items():  # half way: more on both sides
        assert (left, right) == (("1", "1") if name in wide else ("0", "0")), name
    tab.assert_clean()


def test_connect_four_discs_stand_out_from_the_board(sites: Sites, tab: Tab) -> None:
    tab.open(_url(sites, "connect-four", "#ply=8"))
    board = tab.page.eval_on_selector("#board .board-frame", "e => getComputedStyle(e).fill")
    discs = tab.page.eval_on_selector_all(
        "#board circle[data-piece]",
        "els => els.map(e => [e.dataset.piece, getComputedStyle(e).fill])",
    )
    assert {piece for piece, _ in discs} == {"R", "B"}
    for piece, fill in discs:
        assert _contrast(fill, board) >= 3, f"{piece} disc {fill} on board {board}"
    tab.assert_clean()


def test_battle_armies_are_two_hue_families_named_by_a_legend(sites: Sites, tab: Tab) -> None:
    replay = next(iter(sites.replays["battle"].values()))
    tab.open(sites.url("battle", replay.episode, "#game=1&ply=1"))
    soldiers = tab.page.eval_on_selector_all(
        "#board rect[data-unit]", "els => els.map(e => [+e.dataset.side, getComputedStyle(e).fill])"
    )
    hues: dict[int, list[float]] = {0: [], 1: []}
    for side, fill in soldiers:
        hues[side].append(_hue(fill))
    assert hues[0]
    assert hues[1]
    for side, own in hues.items():
        seat = _hue(_seat_colour(tab, side))
        assert max(_hue_gap(h, seat) for h in own) <= 30, f"side {side}'s squads stray from its hue"
    assert min(_hue_gap(a, b) for a in hues[0] for b in hues[1]) >= 90
    legend = tab.page.locator("#army-legend [data-side]")
    assert legend.count() == 2
    aliases = replay.games[0].aliases
    squads = tab.page.evaluate(
        "JSON.parse(document.getElementById('page-data').textContent).games[0].static.letters"
    )
    for seat in (0, 1):
        text = legend.nth(seat).inner_text()
        assert aliases[seat] in text
        assert f"{squads[seat]}1-{squads[seat]}9" in text
    tab.assert_clean()


@pytest.mark.parametrize("width", [420, 1400])
def test_a_long_battle_order_is_shown_whole(sites: Sites, tab: Tab, width: int) -> None:
    tab.page.set_viewport_size({"width": width, "height": 900})
    replay = next(iter(sites.replays["battle"].values()))
    tab.open(sites.url("battle", replay.episode, "#game=1&ply=1"))
    shown = tab.page.eval_on_selector_all(
        "#moves .mv",
        """els => els.map(e => ({text: e.textContent, scroll: e.scrollWidth, client: e.clientWidth,
            right: e.getBoundingClientRect().right,
            list: e.closest('#moves').getBoundingClientRect().right}))""",
    )
    longest = max(shown, key=lambda m: len(m["text"]))
    assert len(longest["text"]) > 80  # nine orders: longer than any list is wide at 420 px
    for move in shown:
        assert move["scroll"] <= move["client"], f"cut: {move['text']}"
        assert move["right"] <= move["list"] + 0.5
    recorded = tab.page.evaluate(
        """() => JSON.parse(document.getElementById('page-data').textContent)
            .games[0].plies.flatMap((p) => p.decisions.map((d) => d.move))"""
    )
    assert longest["text"] in recorded  # the whole order line, not a shortened one
    tab.assert_clean()


EDGE_ON_TOP = """els => els.map((e) => {
  const p = e.getPointAtLength(e.getTotalLength() / 2);
  const q = new DOMPoint(p.x, p.y).matrixTransform(e.getScreenCTM());
  return document.elementFromPoint(q.x, q.y) === e;
})"""
"""Per goal edge: is the edge itself what the pointer finds half way along it (not a cell)?"""


def test_hex_goal_edges_are_thick_in_the_players_colours(sites: Sites, tab: Tab) -> None:
    tab.open(_url(sites, "hex", "#ply=6"))
    edges = tab.page.eval_on_selector_all(
        "#board [data-edge]",
        """els => els.map(e => ({edge: e.dataset.edge, seat: +e.dataset.seat,
            stroke: getComputedStyle(e).stroke, width: parseFloat(getComputedStyle(e).strokeWidth)}))""",
    )
    assert {e["edge"]: e["seat"] for e in edges} == {
        "file-a": 0,
        "file-g": 0,
        "rank-1": 1,
        "rank-7": 1,
    }
    for edge in edges:
        assert _rgb(edge["stroke"]) == _rgb(_seat_colour(tab, edge["seat"])), edge
        assert edge["width"] >= 4, edge
    on_top = tab.page.eval_on_selector_all("#board [data-edge]", EDGE_ON_TOP)
    assert all(on_top), f"edges hidden under the cells: {on_top}"
    tab.assert_clean()


FIRST_ROW = """() => {
  const list = document.getElementById('moves');
  list.scrollIntoView({ block: 'center' });
  const scrolled = list.scrollTop;
  list.scrollTop = 0;
  const row = list.firstElementChild.getBoundingClientRect();
  const hit = document.elementFromPoint(row.left + 12, row.top + 3);
  const box = (r) => ({ top: r.top, bottom: r.bottom });
  return { scrolled, row: box(row), list: box(list.getBoundingClientRect()),
    heading: box(list.closest('.card').querySelector('h3').getBoundingClientRect()),
    hitsRow: !!hit && hit.closest('li') === list.firstElementChild };
}"""


@pytest.mark.parametrize("width", [420, 1400])
def test_move_list_scrolled_to_the_top_shows_its_first_row(
    sites: Sites, tab: Tab, width: int
) -> None:
    tab.page.set_viewport_size({"width": width, "height": 900})
    plies = len(sites.replays["stratego"][_stem(sites, "stratego")].games[0].plies)
    tab.open(_url(sites, "stratego", f"#ply={plies}"))
    seen = tab.page.evaluate(FIRST_ROW)
    assert seen["scrolled"] > 0  # the last ply's row had scrolled the list down
    assert seen["row"]["top"] >= seen["heading"]["bottom"]
    assert seen["row"]["top"] >= seen["list"]["top"]
    assert seen["hitsRow"], f"the first row is covered: {seen}"
    tab.assert_clean()


@pytest.mark.parametrize("width", [420, 1400])
@pytest.mark.parametrize("kind", KINDS)
def test_standing_sparkline_caption_is_clear_of_its_line(
    sites: Sites, tab: Tab, kind: str, width: int
) -> None:
    tab.page.set_viewport_size({"width": width, "height": 900})
    tab.open(_url(sites, kind))
    tab.page.keyboard.press("End")
    caption = tab.page.locator("#graph").get_by_text("standing over the game").bounding_box()
    line, plot = _box(tab, "#graph polyline"), _box(tab, "#graph svg")
    assert caption is not None
    assert not _overlap(caption, line), f"caption {caption} crosses the line {line}"
    # the line can reach any height of the plot: a caption inside it would cross it some day
    assert not _overlap(caption, plot), f"caption {caption} is inside the plot {plot}"
    tab.assert_clean()


def test_league_rating_plot_caption_is_clear_of_the_plot(sites: Sites, tab: Tab) -> None:
    tab.open(sites.league_url())
    caption = tab.page.get_by_text("Bradley-Terry with its 95% bootstrap interval").bounding_box()
    marks: list[Any] = tab.page.eval_on_selector_all(
        "#rating-intervals :is(line, circle, path, text)",
        "els => els.map(e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; })",
    )
    assert caption is not None
    assert marks
    crossing = [m for m in marks if _overlap(caption, m)]
    assert not crossing, f"caption {caption} crosses {crossing}"
    tab.assert_clean()
