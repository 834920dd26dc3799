"""The play page in a real headless Chromium: against a stand-in of its server, then against
the arena's own (a run with a person's seat, in a thread).

The stand-in (play_desk.py) answers the page's HTTP contract over the real
engines and the viewer's drawers, its other seat playing the baseline, so
each test checks that what the person clicks reaches the engine as the move
the person meant: a column, a cell, a from-to move, a wall, a backgammon
play, a Stratego setup, a battle's orders. The live tests (play_run.py) play
runs through `arena.viewer.play` and the desk: a game to its end and
`arena verify`, a refusal, timeouts, the token, Stratego's hidden ranks, a
move of each kind of input. Screenshots go to /tmp/cog-screens/;
COG_UPDATE_SCREENSHOTS=1 rewrites the README's docs/images/play-page.png.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import games
from arena.cli import main as arena_main
from arena.record.replay import load_replay
from arena.seats.desk import Table as DeskTable
from tests.arena.viewer.chromium import SCREENS, Tab
from tests.arena.viewer.conftest import launch_chromium
from tests.arena.viewer.play_desk import TOKEN, StandInDesk, Table
from tests.arena.viewer.play_run import LiveRun

pytestmark = pytest.mark.browser

CARD_SEED = "ab" * 32
SHOT = (
    Path(__file__).resolve().parents[3] / "docs" / "images" / "play-page.png"
    if os.environ.get("COG_UPDATE_SCREENSHOTS") == "1"
    else SCREENS / "play-page.png"
)
"""The picture of the play page mid-game: the README's (docs/images/) with
COG_UPDATE_SCREENSHOTS=1, else one beside the other screenshots, so a test run leaves the
tree as it found it."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_chromium()


@pytest.fixture
def desk() -> Iterator[StandInDesk]:
    with StandInDesk() as running:
        yield running


def _open(tab: Tab, desk: StandInDesk) -> None:
    tab.page.goto(desk.url)
    tab.page.wait_for_selector("#board svg, #board-fallback")


def _table(desk: StandInDesk, game: str, seat: int = 0, seed: int | str = 7, **kw: Any) -> Table:
    return desk.add(Table(f"{game}-{seat}", games.load(game), seat, seed, **kw))


def _wait_plies(tab: Tab, n: int) -> None:
    """Until the page lists at least `n` plies and asks for a move again (or the game is over)."""
    tab.page.wait_for_function(
        """n => document.querySelectorAll('#history li').length >= n &&
            ['your-move', 'over'].includes(document.querySelector('#turn-status').dataset.status)""",
        arg=n,
    )


def _clean(tab: Tab, *, refused: bool = False) -> None:
    """No console errors (but Chromium's own line for a refused move's 422 where one was sent),
    and no request beyond the play server."""
    errors = [e for e in tab.errors if not (refused and "status of 422" in e)]
    assert not errors, f"console errors: {errors}"
    foreign = [u for u in tab.requests if not u.startswith("http://127.0.0.1")]
    assert not foreign, f"requests beyond the play server: {foreign}"


def _click(tab: Tab, cell: str) -> None:
    tab.page.locator(f"#board [data-cell='{cell}']").last.click()


def test_connect_four_by_clicks_to_the_end(tab: Tab, desk: StandInDesk) -> None:
    table = _table(desk, "connect-four")
    _open(tab, desk)
    assert "your move" in tab.page.inner_text("#turn-status")
    assert float(tab.page.get_attribute("#countdown", "data-remaining") or 0) > 100
    assert tab.page.locator("#tables [data-table].your-move").count() == 1
    for _ in range(30):
        if table.game.outcome(table.state):
            break
        plies = len(table.history)
        column = table.game.baseline(table.state, 0)
        _click(tab, f"{column}1")  # the bottom cell: a click anywhere in the column plays it
        _wait_plies(tab, plies + 1)
        assert desk.moves[-1]["move"] == column
    tab.page.wait_for_selector("#result-text")
    assert tab.page.get_attribute("#turn-status", "data-status") == "over"
    assert tab.page.inner_text("#countdown") == ""
    tab.shoot("play-connect-four")
    _clean(tab)


def test_a_full_column_is_refused_and_the_clock_runs_on(tab: Tab, desk: StandInDesk) -> None:
    table = Table("c4-full", games.load("connect-four"), 0, 7, decision_s=60.0)
    g = table.game
    for _ in range(3):  # file a filled, three discs each
        table.advance({0: "a"})
        table.advance({1: "a"})
    desk.add(table)
    assert "a" not in g.legal_moves(table.state, 0)
    _open(tab, desk)
    before = float(tab.page.get_attribute("#countdown", "data-remaining") or 0)
    _click(tab, "a3")
    tab.page.wait_for_selector("#refusal .refused")
    error = desk.tables[table.id].refused[-1]["error"]
    assert error in tab.page.inner_text("#refusal")
    assert tab.page.locator("#board svg").count() == 1
    tab.page.wait_for_timeout(700)
    after = float(tab.page.get_attribute("#countdown", "data-remaining") or 0)
    assert 0 < after < before
    assert tab.page.get_attribute("#turn-status", "data-status") == "your-move"
    _click(tab, "b1")  # a legal move still goes through
    tab.page.wait_for_function("() => !document.querySelector('#refusal .refused')")
    _clean(tab, refused=True)


def test_hex_cell_click_plays_its_name(tab: Tab, desk: StandInDesk) -> None:
    _table(desk, "hex")
    _open(tab, desk)
    _click(tab, "c4")
    tab.page.wait_for_function("() => document.querySelectorAll('#history li').length >= 2")
    assert desk.moves[-1]["move"] == "c4"
    assert tab.pieces()["c4"] == "R"
    _clean(tab)


def test_breakthrough_from_to_with_highlights(tab: Tab, desk: StandInDesk) -> None:
    table = _table(desk, "breakthrough")
    _open(tab, desk)
    _click(tab, "b2")
    targets = tab.page.eval_on_selector_all(
        "#board .target[data-cell]", "els => [...new Set(els.map(e => e.dataset.cell))].sort()"
    )
    assert targets == ["a3", "b3", "c3"]
    assert tab.page.locator("#board .picked").count() >= 1
    _click(tab, "c3")
    tab.page.wait_for_function("() => document.querySelectorAll('#history li').length >= 2")
    assert desk.moves[-1]["move"] == "b2-c3"
    assert table.history[0] == "b2-c3"
    _clean(tab)


def test_quoridor_pawn_step_then_a_wall_from_the_picker(tab: Tab, desk: StandInDesk) -> None:
    table = _table(desk, "quoridor")
    _open(tab, desk)
    pawn = sorted(
        tab.page.eval_on_selector_all("#board .target", "els => els.map(e => e.dataset.cell)")
    )
    assert pawn == sorted(m for m in table.game.legal_moves(table.state, 0) if m[-1] not in "hv")
    _click(tab, "e2")
    tab.page.wait_for_function("() => document.querySelectorAll('#history li').length >= 2")
    assert desk.moves[-1]["move"] == "e2"
    label = tab.page.inner_text("#wall-select option[value='c3h']")
    assert label == "c3h horizontal: blocks c3-c4, d3-d4"
    tab.page.select_option("#wall-select", "c3h")
    assert tab.page.locator("[data-wall-preview='c3h']").count() == 1
    tab.page.click("#wall-place")
    tab.page.wait_for_function("() => document.querySelectorAll('#history li').length >= 4")
    assert desk.moves[-1]["move"] == "c3h"
    assert tab.page.locator("#board [data-wall='c3h']").count() == 1
    _clean(tab)


def test_backgammon_play_picked_from_the_list(tab: Tab, desk: StandInDesk) -> None:
    table = _table(desk, "backgammon", seat=0, seed=CARD_SEED)
    _open(tab, desk)
    legal = list(table.game.legal_moves(table.state, 0))
    buttons = tab.page.eval_on_selector_all(
        "#move-buttons [data-move]", "els => els.map(e => e.dataset.move)"
    )
    assert buttons == legal
    dice = table.game.view(table.state, 0)["dice"]
    assert tab.page.get_attribute("#dice", "data-dice") == "-".join(map(str, dice))
    drawn = tab.page.eval_on_selector_all("#board .die", "els => els.map(e => +e.dataset.die)")
    assert drawn == (dice * 2 if dice[0] == dice[1] else dice)  # the person's dice, on the board
    plies = len(table.history)
    tab.page.click(f"#move-buttons [data-move='{legal[-1]}']")
    _wait_plies(tab, plies + 1)
    assert desk.moves[-1]["move"] == legal[-1]
    assert desk.moves[-1]["table"] == table.id
    _clean(tab)


def _hidden_ranks(sent: list[Any], seat: int) -> list[str]:
    """Codes of the other seat's pieces that any JSON the page got carries (unknown is '?')."""
    found = []
    for desk in sent:
        for t in desk.get("tables", []) if isinstance(desk, dict) else []:
            if t["game"] != "stratego":
                continue
            frame = t["frame"]
            for board in [frame["board"], *frame["seen"]]:
                for code, owner, flag in zip(board, frame["owners"], frame["flags"], strict=True):
                    if owner == str(1 - seat) and code not in ".?" and flag not in "rb":
                        found.append(code)
            view = (t["turn"] or {}).get("view") or {}
            for piece in view.get("pieces", []):
                if piece["seat"] != seat and piece["code"] != "?" and not piece["revealed"]:
                    found.append(piece["code"])
    return found


def test_stratego_setup_from_the_editor_then_a_move(tab: Tab, desk: StandInDesk) -> None:
    table = _table(desk, "stratego", seat=1)
    seen: list[Any] = []
    tab.page.on("response", lambda r: seen.append(r.json()) if "/api/" in r.url else None)
    _open(tab, desk)
    suggestion = table.game.baseline(table.state, 1)
    assert tab.page.input_value("#setup-text").replace(" / ", "") == suggestion
    # Blue's setup starts on its own back rank, rank 10, file a: swap a10 with b7
    _click(tab, "a10")
    _click(tab, "b7")
    swapped = list(suggestion)
    swapped[0], swapped[31] = swapped[31], swapped[0]
    assert tab.page.input_value("#setup-text").replace(" / ", "") == "".join(swapped)
    assert tab.pieces()["a10"] == suggestion[31]
    tab.page.click("#setup-submit")
    tab.page.wait_for_function("() => document.querySelector('#history li')")
    assert desk.moves[-1]["move"] == "".join(swapped)
    tab.page.wait_for_function("() => !document.querySelector('#setup-submit')")
    if table.game.to_act(table.state) == (1,):
        legal = table.game.legal_moves(table.state, 1)
        frm, to = legal[0].split("-")
        plies = len(table.history)
        _click(tab, frm)
        _click(tab, to)
        _wait_plies(tab, plies + 1)
        assert desk.moves[-1]["move"] == legal[0]
    assert seen, "the page fetched its desk"
    assert _hidden_ranks(seen, 1) == []
    assert "?" in tab.pieces().values()  # Red's pieces, unknown to Blue
    _clean(tab)


def _click_field(tab: Tab, x: int, y: int, size: int = 45) -> None:
    """A click on the middle of the battle field's cell (x, y), 1-based from bottom-left (the
    field's geometry of boards.js: 13-pixel cells past 35, a 30-pixel margin left, 4 above)."""
    cs, off = (13 if size > 35 else 18), 30
    svg = tab.page.locator("#board svg")
    box = svg.bounding_box()
    assert box is not None
    scale = box["width"] / (off + size * cs + 6)
    px, py = off + (x - 1) * cs + cs / 2, 4 + (size - y) * cs + cs / 2
    svg.click(position={"x": px * scale, "y": py * scale})


def test_battle_orders_from_the_form(tab: Tab, desk: StandInDesk) -> None:
    table = _table(desk, "battle")
    _open(tab, desk)
    tab.page.select_option("[data-order-do='A3']", "attack")
    tab.page.select_option("[data-order-enemy='A3']", "B5")
    tab.page.select_option("[data-order-do='A4']", "move")
    _click_field(tab, 30, 22)  # the field's cell (30, 22) sets A4's target
    assert tab.page.input_value("[data-order-x='A4']") == "30"
    assert tab.page.input_value("[data-order-y='A4']") == "22"
    tab.page.select_option("[data-order-do='A9']", "hold")
    tab.page.click("#orders-submit")
    tab.page.wait_for_function("() => document.querySelector('#history li')")
    assert desk.moves[-1]["move"] == [
        {"squad": "A3", "do": "attack", "enemy": "B5"},
        {"squad": "A4", "do": "move", "to": [30, 22]},
        {"squad": "A9", "do": "hold"},
    ]
    in_force = {o["squad"]: o for o in (o.to_json() for o in table.state.orders[0])}
    assert (in_force["A3"]["do"], in_force["A3"]["enemy"]) == ("attack", "B5")
    assert (in_force["A4"]["do"], list(in_force["A4"]["to"])) == ("move", [30, 22])
    _clean(tab)


def test_a_table_it_cannot_draw_keeps_the_text_box(tab: Tab, desk: StandInDesk) -> None:
    table = _table(desk, "connect-four")
    real = table.to_json

    def undrawable() -> dict[str, Any]:
        data = real()
        data["game"], data["frame"] = "go", None
        return data

    table.to_json = undrawable  # type: ignore[method-assign]
    _open(tab, desk)
    assert tab.page.locator("#board-fallback").count() == 1
    tab.page.fill("#move-text", "d")
    tab.page.click("#move-submit")
    tab.page.wait_for_function("() => document.querySelectorAll('#history li').length >= 2")
    assert desk.moves[-1]["move"] == "d"
    _clean(tab)


def test_the_list_marks_the_move_and_keeps_the_persons_pick(tab: Tab, desk: StandInDesk) -> None:
    waiting = _table(desk, "connect-four")
    real = waiting.to_json

    def their_move() -> dict[str, Any]:
        return {**real(), "status": "waiting", "turn": None}

    waiting.to_json = their_move  # type: ignore[method-assign]
    mine = _table(desk, "hex", seat=1)
    _open(tab, desk)
    assert tab.page.evaluate("document.body.dataset.table") == mine.id  # picked: the move is there
    assert tab.page.locator("#tables .your-move").count() == 1
    assert tab.page.get_attribute("#tables .your-move", "data-table") == mine.id
    assert tab.page.title().startswith("(your move)")
    tab.page.click(f"#tables [data-table='{waiting.id}']")
    assert tab.page.evaluate("document.body.dataset.table") == waiting.id
    assert tab.page.inner_text("#turn-status") == "waiting for cog-opp"
    assert tab.page.locator("#move-text").count() == 0
    with desk.changed:
        desk._bump()  # a new desk: the person's pick stays
    tab.page.wait_for_timeout(300)
    assert tab.page.evaluate("document.body.dataset.table") == waiting.id
    desk.close()
    tab.page.wait_for_selector("body[data-stopped]")
    assert "over" in tab.page.inner_text("#connection")
    asked = len(desk.sent)
    tab.page.wait_for_timeout(600)
    assert len(desk.sent) == asked  # a closed desk is not asked again
    _clean(tab)


def test_a_finished_game_keeps_its_result_until_the_person_moves_on(
    tab: Tab, desk: StandInDesk
) -> None:
    """The game shown ends while another waits for the person's move: its result (who won,
    how, the score) stays until the person moves on, and its moves say who played each."""
    table = _table(desk, "connect-four")
    other = _table(desk, "hex", seat=1)
    _open(tab, desk)
    assert tab.page.evaluate("document.body.dataset.table") == table.id
    for _ in range(30):
        if table.game.outcome(table.state):
            break
        plies = len(table.history)
        _click(tab, f"{table.game.baseline(table.state, 0)}1")
        _wait_plies(tab, plies + 1)
    outcome = table.game.outcome(table.state)
    assert outcome is not None
    tab.page.wait_for_selector("#result-text")
    with desk.changed:
        desk._bump()  # a new desk: the result stays all the same
    tab.page.wait_for_timeout(1500)  # past the stand-in's long poll
    assert tab.page.evaluate("document.body.dataset.table") == table.id
    assert tab.page.get_attribute("#turn-status", "data-status") == "over"
    assert tab.page.locator(f"#tables [data-table='{other.id}'].your-move").count() == 1
    scores = list(outcome.scores)
    winner = "" if scores[0] == scores[1] else table.aliases[scores.index(max(scores))]
    assert tab.page.get_attribute("#result", "data-winner") == winner
    shown = tab.page.inner_text("#result")
    assert outcome.ending in shown
    assert f"{scores[0]}" in tab.page.inner_text("#result-score")
    if winner:
        mine = winner == table.aliases[table.seat]
        assert tab.page.inner_text("#result-winner") == (
            f"winner: you ({winner})" if mine else f"winner: {winner}"
        )
    by = tab.page.eval_on_selector_all("#history li", "els => els.map(e => e.dataset.by)")
    assert by == ["you" if i % 2 == 0 else "cog-opp" for i in range(len(table.history))]
    assert tab.page.locator("#history li .by.you").count() == (len(table.history) + 1) // 2
    tab.shoot("play-result")
    tab.page.click("#result-next")
    tab.page.wait_for_function(f"() => document.body.dataset.table === {other.id!r}")
    assert tab.page.get_attribute("#turn-status", "data-status") == "your-move"
    _clean(tab)


def test_paths_without_the_token_are_refused(desk: StandInDesk) -> None:
    base = desk.url.removesuffix(f"play/{TOKEN}/")
    for path in ["", "play/", "play/wrong/api/tables", "play/wrong/"]:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + path, timeout=5)
        assert refused.value.code == 403
    with urllib.request.urlopen(desk.url + "api/tables?since=-1", timeout=10) as answer:
        assert json.load(answer)["run"] == "standin"


# -- against the arena's own play page: `arena run`'s desk and server, in a thread -------------


def _live_config(name: str, game: str, *, people: int = 1, **person: Any) -> dict[str, Any]:
    """One match of `game`: a person (or two) against the game's baseline."""
    policies: dict[str, Any] = {"you": {"kind": "human", "name": "A Person", **person}}
    if people == 2:
        policies["friend"] = {"kind": "human", **person}
    else:
        policies["tactician"] = {"kind": "scripted"}
    return {
        "run": {"name": name, "seed": 5, "games": [game], "matches": 1, "concurrency": 1},
        "policies": policies,
    }


def _send(tab: Tab, action: Callable[[], None]) -> tuple[int, Any]:
    """The play server's answer (status, body) to the move that `action` (clicks) sends."""
    with tab.page.expect_response(lambda r: r.url.endswith("/api/move")) as answer:
        action()
    return answer.value.status, answer.value.json()


def _desks_seen(tab: Tab) -> list[Any]:
    """Every desk the page fetched (the long poll's JSON), recorded from now on."""
    desks: list[Any] = []
    tab.page.on(
        "response",
        lambda r: desks.append(r.json()) if "/api/tables" in r.url and r.ok else None,
    )
    return desks


def _next_turn(tab: Tab, run: LiveRun, timeout_ms: float = 20_000) -> DeskTable | None:
    """The table whose decision the page shows open, once it does (moving on from a game's
    result, as the person does); None once the run is over."""
    waited = 0.0
    while waited < timeout_ms:
        if run.over:
            return None
        if tab.page.locator("#result-next").count():
            tab.page.click("#result-next")
        try:
            tab.page.wait_for_selector("#play-input[data-turn]", timeout=500)
        except PlaywrightTimeout:
            waited += 500
            continue
        table = run.desk.tables[tab.page.evaluate("document.body.dataset.table")]
        if table.turn is not None and str(table.turn.id) == tab.page.get_attribute(
            "#play-input", "data-turn"
        ):
            return table
        tab.page.wait_for_timeout(50)
        waited += 50
    raise AssertionError("no decision of the person's came up")


def _answered(tab: Tab, table: DeskTable, turn: int) -> None:
    """Until the page no longer shows decision `turn` of `table` open."""
    tab.page.wait_for_function(
        """([id, turn]) => !document.body.dataset.pending && (document.body.dataset.table !== id ||
             document.querySelector('#play-input').dataset.turn !== turn)""",
        arg=[table.id, str(turn)],
    )


def test_live_connect_four_played_by_clicks_finishes_and_verifies(tab: Tab, tmp_path: Path) -> None:
    posted: list[tuple[int, Any]] = []
    with LiveRun(tmp_path / "run", _live_config("c4-live", "connect-four")) as run:
        tab.page.goto(run.url)
        shot = False
        for _ in range(60):
            table = _next_turn(tab, run)
            if table is None:
                break
            assert table.turn is not None
            turn = table.turn
            column = table.game.baseline(turn.request.state, table.seat)
            if len(table.history) >= 3 and not shot:  # mid-game, for the README
                tab.page.set_viewport_size({"width": 1200, "height": 800})
                tab.page.wait_for_timeout(300)
                SHOT.parent.mkdir(parents=True, exist_ok=True)
                tab.page.screenshot(path=str(SHOT))
                shot = True
            cell = f"{column}{1 + len(table.history) % 6}"  # any cell of the column
            posted.append(_send(tab, partial(_click, tab, cell)))
            _answered(tab, table, turn.id)
        result = run.wait()
        tab.page.wait_for_selector("#result-text")
        assert tab.page.get_attribute("#turn-status", "data-status") == "over"
    assert result.played == 2
    assert not result.failed
    assert shot
    assert posted
    assert all(answer == (200, {"ok": True}) for answer in posted)
    assert arena_main(["verify", str(tmp_path / "run")]) == 0
    for path in run.replays:
        replay = load_replay(path)
        person = replay.spectator.policies[str(replay.games[0].index)].index("you")
        alias = replay.games[0].aliases[person]
        mine = [d for p in replay.games[0].plies for d in p.decisions if d.alias == alias]
        assert mine
        assert {d.source for d in mine} == {"reply"}
    _clean(tab)


def test_live_full_column_click_is_refused_and_the_countdown_runs_on(
    tab: Tab, tmp_path: Path
) -> None:
    """Two people (both the test) fill file a, then one clicks it once more."""
    config = _live_config("c4-full", "connect-four", people=2, decision_s=60)
    with LiveRun(tmp_path / "run", config) as run:
        tab.page.goto(run.url)
        for _ in range(6):
            table = _next_turn(tab, run)
            assert table is not None
            assert table.turn is not None
            turn = table.turn.id
            assert _send(tab, lambda: _click(tab, "a1")) == (200, {"ok": True})
            _answered(tab, table, turn)
        table = _next_turn(tab, run)
        assert table is not None
        assert table.turn is not None
        before = float(tab.page.get_attribute("#countdown", "data-remaining") or 0)
        status, body = _send(tab, lambda: _click(tab, "a6"))
        tab.page.wait_for_selector("#refusal .refused")
        assert status == 422
        assert body["error"] in tab.page.inner_text("#refusal")
        assert table.turn.refused[-1]["error"] == body["error"]  # the engine's own message
        assert tab.page.locator("#board svg [data-piece]").count() == 6  # the board stays
        tab.page.wait_for_timeout(600)
        after = float(tab.page.get_attribute("#countdown", "data-remaining") or 0)
        assert 40 < after < before  # still counting down, not started over
        assert tab.page.get_attribute("#turn-status", "data-status") == "your-move"
        assert _send(tab, lambda: _click(tab, "b1")) == (200, {"ok": True})
        tab.page.wait_for_function("() => !document.querySelector('#refusal .refused')")
    _clean(tab, refused=True)


def test_live_unanswered_decisions_become_timeout_fallbacks(tab: Tab, tmp_path: Path) -> None:
    # game 2's first decision waits while the page keeps game 1's result on screen: at most
    # first_open_s, as for a person who does not move on
    config = _live_config("c4-silent", "connect-four", decision_s=0.6, first_open_s=1.0)
    with LiveRun(tmp_path / "run", config) as run:
        tab.page.goto(run.url)
        tab.page.wait_for_selector("#countdown.low[data-remaining]")  # red, under 10 s
        result = run.wait()
        tab.page.wait_for_selector("#result-text")
    assert result.played == 2
    fallbacks = [f for path in run.replays for f in load_replay(path).games[0].fallbacks]
    assert fallbacks
    assert {f.cause for f in fallbacks} == {"timeout"}
    assert arena_main(["verify", str(tmp_path / "run")]) == 0
    _clean(tab)


def test_live_page_refuses_requests_without_its_token(tab: Tab, tmp_path: Path) -> None:
    with LiveRun(tmp_path / "run", _live_config("guarded", "hex")) as run:
        base, token = run.url.split("/play/")
        for url in [f"{base}/", f"{base}/play/", f"{base}/play/wrong/", f"{base}/play/x{token}"]:
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url, timeout=10)
            assert refused.value.code == 403, url
        answer = tab.page.goto(f"{base}/play/not-{token}")
        assert answer is not None
        assert answer.status == 403
        answer = tab.page.goto(run.url)
        assert answer is not None
        assert answer.status == 200
        tab.page.wait_for_selector("#tables [data-table]")


def _hidden_in(desks: list[Any]) -> tuple[int, list[str]]:
    """(the enemy pieces seen on the person's Stratego boards, the codes of those not '?'
    although unrevealed), over every desk the page fetched."""
    seen, leaked = 0, []
    for desk in desks:
        for t in desk["tables"]:
            frame, me = t["frame"], str(t["seat"])
            if frame is None:
                continue
            for board in [frame["board"], *frame["seen"]]:
                for code, owner, flag in zip(board, frame["owners"], frame["flags"], strict=True):
                    if owner not in (".", me):
                        seen += 1
                        if code != "?" and flag not in "rb":
                            leaked.append(code)
            for piece in ((t["turn"] or {}).get("view") or {}).get("pieces", []):
                if str(piece["seat"]) != me and piece["code"] != "?" and not piece["revealed"]:
                    leaked.append(piece["code"])
    return seen, leaked


def test_live_stratego_setup_from_the_editor_and_no_hidden_rank_reaches_the_page(
    tab: Tab, tmp_path: Path
) -> None:
    with LiveRun(tmp_path / "run", _live_config("stratego-live", "stratego")) as run:
        desks = _desks_seen(tab)
        tab.page.goto(run.url)
        table = _next_turn(tab, run)
        assert table is not None
        assert table.turn is not None
        assert table.turn.request.key == "setup"
        suggestion = table.turn.suggestion
        assert tab.page.input_value("#setup-text").replace(" / ", "") == suggestion
        back = 1 if table.seat == 0 else 10
        _click(tab, f"a{back}")
        _click(tab, f"j{back}")
        setup = list(suggestion)
        setup[0], setup[9] = setup[9], setup[0]
        turn = table.turn
        assert _send(tab, lambda: tab.page.click("#setup-submit")) == (200, {"ok": True})
        _answered(tab, table, turn.id)
        assert turn.written == "".join(setup)
        table = _next_turn(tab, run)
        assert table is not None
        assert table.turn is not None
        assert table.turn.request.key == "move"
        frm, to = re.findall(r"[a-j]\d+", table.turn.request.legal[0])
        turn = table.turn
        _click(tab, frm)
        assert _send(tab, lambda: _click(tab, to)) == (200, {"ok": True})
        _answered(tab, table, turn.id)
        assert turn.written == turn.request.legal[0]
        assert "?" in tab.pieces().values()
    seen, leaked = _hidden_in(desks)
    assert seen > 0  # the enemy was on the board...
    assert leaked == []  # ...and never with its ranks
    _clean(tab)


def _wall(tab: Tab, table: DeskTable) -> None:
    assert table.turn is not None
    walls = [m for m in table.turn.request.legal if m[-1] in "hv"]
    tab.page.select_option("#wall-select", walls[len(walls) // 2])
    assert tab.page.locator("[data-wall-preview]").count() == 1
    tab.page.click("#wall-place")


def _from_to(tab: Tab, table: DeskTable) -> None:
    assert table.turn is not None
    frm, to = re.findall(r"[a-z]\d+", table.turn.request.legal[-1])
    _click(tab, frm)
    assert tab.page.locator(f"#board .target[data-cell='{to}']").count() >= 1
    _click(tab, to)


def _backgammon_play(tab: Tab, table: DeskTable) -> None:
    assert table.turn is not None
    legal = list(table.turn.request.legal)
    shown = tab.page.eval_on_selector_all(
        "#move-buttons [data-move]", "els => els.map(e => e.dataset.move)"
    )
    assert shown == legal
    tab.page.click(f"#move-buttons [data-move='{legal[-1]}']")


def _orders(tab: Tab, table: DeskTable) -> None:
    assert table.turn is not None
    view = table.turn.view
    own, enemy = view["own_squads"][0]["name"], view["enemy_squads"][0]["name"]
    second = view["own_squads"][1]["name"]
    tab.page.select_option(f"[data-order-do='{own}']", "attack")
    tab.page.select_option(f"[data-order-enemy='{own}']", enemy)
    tab.page.select_option(f"[data-order-do='{second}']", "move")
    tab.page.fill(f"[data-order-x='{second}']", "20")
    tab.page.fill(f"[data-order-y='{second}']", "21")
    tab.page.click("#orders-submit")


@pytest.mark.parametrize(
    ("game", "act"),
    [
        ("quoridor", _wall),
        ("breakthrough", _from_to),
        ("backgammon", _backgammon_play),
        ("battle", _orders),
    ],
)
def test_live_a_move_from_the_pages_input_is_accepted(
    tab: Tab, tmp_path: Path, game: str, act: Any
) -> None:
    with LiveRun(tmp_path / "run", _live_config(f"{game}-live", game)) as run:
        tab.page.goto(run.url)
        table = _next_turn(tab, run)
        assert table is not None
        assert table.turn is not None
        turn = table.turn
        assert _send(tab, lambda: act(tab, table)) == (200, {"ok": True})
        _answered(tab, table, turn.id)
        assert turn.move is not None  # the engine read it
        if game == "battle":
            assert turn.written[0]["do"] == "attack"
            assert turn.written[1]["to"] == [20, 21]
    _clean(tab)


def test_live_a_finished_game_stays_until_the_person_moves_on_and_its_moves_name_seats(
    tab: Tab, tmp_path: Path
) -> None:
    """Game 1 ends and game 2 asks for the person's move: the page keeps game 1's result until
    the person presses on, its moves naming "you" and the opponent's alias."""
    with LiveRun(tmp_path / "run", _live_config("c4-result", "connect-four")) as run:
        tab.page.goto(run.url)
        first = _next_turn(tab, run)
        assert first is not None
        for _ in range(30):
            assert first.turn is not None
            turn = first.turn
            column = first.game.baseline(turn.request.state, first.seat)
            assert _send(tab, partial(_click, tab, f"{column}1")) == (200, {"ok": True})
            _answered(tab, first, turn.id)
            tab.page.wait_for_selector("#play-input[data-turn], #result-text")
            if first.status == "over":
                break
            assert _next_turn(tab, run) is first
        tab.page.wait_for_selector("#result-text")
        second = None
        for _ in range(200):  # until game 2 waits for the person's move
            second = next((t for t in list(run.desk.tables.values()) if t is not first), None)
            if second is not None and second.turn is not None:
                break
            tab.page.wait_for_timeout(100)
        assert second is not None
        assert second.turn is not None
        tab.page.wait_for_selector(f"#tables [data-table='{second.id}'].your-move")
        assert tab.page.evaluate("document.body.dataset.table") == first.id  # still game 1
        assert tab.page.get_attribute("#turn-status", "data-status") == "over"
        # the page fetched game 2's decision while showing game 1: its clock waits
        assert second.turn.started is None
        assert first.result is not None
        assert tab.page.get_attribute("#result", "data-winner") == (first.result["winner"] or "")
        by = tab.page.eval_on_selector_all("#history li", "els => els.map(e => e.dataset.by)")
        assert by == [p["by"] for p in first.plies()]
        assert set(by) == {"you", first.aliases[1 - first.seat]}
        tab.page.click("#result-next")
        shown = time.monotonic()
        tab.page.wait_for_function(f"() => document.body.dataset.table === {second.id!r}")
        tab.page.wait_for_selector("#play-input[data-turn]")
        while second.turn is not None and second.turn.started is None:  # said at once, not
            assert time.monotonic() - shown < 5, "game 2's clock did not start when shown"
            tab.page.wait_for_timeout(50)  # at the long poll's next answer (10 s)
    _clean(tab)


def test_a_refusal_keeps_the_move_list_beside_the_board_at_1300_px(
    tab: Tab, desk: StandInDesk
) -> None:
    table = Table("c4-full-wide", games.load("connect-four"), 0, 7, decision_s=60.0)
    for _ in range(3):  # file a filled, three discs each
        table.advance({0: "a"})
        table.advance({1: "a"})
    desk.add(table)
    tab.page.set_viewport_size({"width": 1300, "height": 900})
    _open(tab, desk)

    def side_by_side() -> bool:
        board = tab.page.locator(".board-col").bounding_box()
        moves = tab.page.locator(".side-col").bounding_box()
        assert board is not None
        assert moves is not None
        return moves["x"] >= board["x"] + board["width"] - 1 and moves["y"] < board["y"] + 50

    assert side_by_side()
    _click(tab, "a3")
    tab.page.wait_for_selector("#refusal .refused")
    assert side_by_side()  # the refusal's long line wraps in the board's column
    tab.page.fill("#move-text", "the centre file looks strongest to me, so I will play it now " * 2)
    tab.page.click("#move-submit")
    tab.page.wait_for_function("() => document.querySelector('#refusal').innerText.length > 200")
    tab.shoot("play-refusal-1300")
    assert side_by_side()
    _clean(tab, refused=True)
