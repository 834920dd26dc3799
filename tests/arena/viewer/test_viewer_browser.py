"""The viewer in a real headless Chromium: pages opened from file://, stepped, checked, photographed.

Each page is checked against the engine, not against the viewer's own data:
the pieces on the board (data-cell / data-piece on the SVG), the eval bar's
HEURISTIC caption, fallback badges, keyboard stepping and #ply=N. Every page
must load without console errors and ask for nothing but its own files.
Screenshots go to /tmp/cog-screens/<kind>.png for people to look at.
The fixtures (sites, browser, tab) are in conftest.py, the helpers in chromium.py.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest

import games
from arena.record.replay import Replay
from arena.results.ab import ab_sentence
from arena.viewer import build_site
from arena.viewer.battle import turn_frames
from games.connect_four.rules import winning_cells
from games.hex.rules import winning_chain
from tests.arena.viewer.chromium import Sites, Tab
from tests.arena.viewer.test_viewer import _cached_ab_run, _states

pytestmark = pytest.mark.browser


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
    shown = [tab.page.locator(f"[data-standing='{s}']") for s in (0, 1)]
    assert [int(span.get_attribute("data-value") or "") for span in shown] == recorded
    shares = [int(span.inner_text().removesuffix("%")) for span in shown]
    assert sum(shares) == 100  # each seat's share of the bar, not the raw figures
    a, b = recorded
    if a >= 0 and b >= 0 and a + b > 0:
        assert shares[0] == int(100 * a / (a + b) + 0.5)  # as the page rounds
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


WINNING_MARKS = """() => [...document.querySelectorAll('#board [data-piece][data-winning]')]
    .map((e) => e.dataset.cell)"""


@pytest.mark.parametrize(
    ("kind", "winning", "ending"),
    [("connect-four", winning_cells, "four-in-a-row"), ("hex", winning_chain, "connection")],
)
def test_the_last_ply_of_a_win_marks_exactly_the_winning_cells(
    sites: Sites, tab: Tab, kind: str, winning: Any, ending: str
) -> None:
    replay = next(
        r
        for r in sites.replays["board"].values()
        if r.game == kind and r.games[0].result is not None and r.games[0].result.ending == ending
    )
    plies = len(replay.games[0].plies)
    expected = winning(_states(replay)[plies])  # from the engine, not the page's data
    assert expected
    tab.open(sites.url("board", replay.episode, f"#ply={plies - 1}"))
    assert tab.page.evaluate(WINNING_MARKS) == []
    tab.page.keyboard.press("ArrowRight")
    assert tab.ply() == plies
    assert sorted(tab.page.evaluate(WINNING_MARKS)) == sorted(expected)
    assert " ".join(expected) in tab.page.inner_text("#board-caption")
    if kind == "hex":  # the chain is drawn through its stones, first edge to second
        assert tab.page.locator("#board polyline.winning-chain").count() == 1
    tab.shoot(f"{kind}-won")
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


REASONING = "Weigh <b>c3</b> & d4 \U0001f642\n<script>alert(1)</script> then pick the centre."


def _with_reasoning(run: Path, out: Path) -> tuple[str, int, int, str, int]:
    """A copy of run folder `run` in `out` whose first prompted attempt of a board replay has
    reasoning, usage with reasoning tokens and a chat-layout split; its page is built.
    Returns the replay's stem, the ply, the seat, the prompt and its system_chars."""
    shutil.copytree(run, out, ignore=shutil.ignore_patterns("view"))
    for path in sorted((out / "replays").glob("*.json")):
        data = json.loads(path.read_text())
        for ply in data["games"][0]["plies"]:
            for decision in ply["decisions"]:
                attempt = next((a for a in decision["attempts"] if a.get("prompt")), None)
                if attempt is None:
                    continue
                split = attempt["prompt"].index("\n") + 1
                attempt["reasoning"] = REASONING
                attempt["usage"] = {
                    "input_uncached": 700,
                    "cache_read": 100,
                    "cache_write": 12,
                    "output": 140,
                    "reasoning": 96,
                }
                attempt["system_chars"] = split
                path.write_text(json.dumps(data))
                build_site(out)
                return path.stem, ply["ply"], decision["seat"], attempt["prompt"], split
    raise AssertionError(f"no board replay of {run} has a prompted attempt")


def test_attempt_shows_reasoning_as_text_tokens_and_the_system_user_split(
    sites: Sites, tab: Tab, tmp_path: Path
) -> None:
    stem, ply, seat, prompt, split = _with_reasoning(sites.runs["board"], tmp_path / "run")
    tab.open((tmp_path / "run" / "view" / "games" / f"{stem}.html").as_uri() + f"#ply={ply}")
    tab.page.click(f"#moves li[data-ply='{ply}']")
    attempt = tab.page.locator(f"#details .decision[data-seat='{seat}'] .attempt").first
    summary = attempt.locator("details.reasoning-block > summary.reasoning")
    assert summary.inner_text() == f"reasoning ({len(REASONING)} chars)"
    text = attempt.locator("pre.reasoning-text")
    assert not text.is_visible()  # folded: a long reasoning does not swamp the panel
    summary.click()
    assert text.is_visible()
    assert text.text_content() == REASONING
    assert "<b>c3</b> & d4" in text.inner_text()  # shown as text, not as markup
    assert attempt.locator("b, script").count() == 0
    reply = attempt.locator("pre.raw-reply")
    assert REASONING not in (reply.text_content() or "")
    tint = "e => getComputedStyle(e).backgroundColor"
    assert text.evaluate(tint) != reply.evaluate(tint)
    assert attempt.locator(".tokens").inner_text() == "tokens: 812 in · 140 out (96 reasoning)"
    attempt.locator("details.prompt-block > summary").click()
    roles = attempt.locator(".prompt-role")
    assert roles.all_inner_texts() == [
        f"system ({split} chars)",
        f"user ({len(prompt) - split} chars)",
    ]
    assert attempt.locator("pre.prompt-system").text_content() == prompt[:split]
    assert attempt.locator("pre.prompt-user").text_content() == prompt[split:]
    assert tab.page.locator("#details .reasoning-block").count() == 1
    assert tab.page.locator("#details .prompt-role").count() == 2  # other prompts: one message
    tab.shoot("attempt-details")
    tab.assert_clean()


def test_a_league_of_reasoning_models_shows_their_reasoning(tab: Tab, tmp_path: Path) -> None:
    """End to end: each protocol's reasoning, from `arena mock-llm --reasoning apart` with
    params and the chat layout, reaches the attempt panel apart from the reply."""
    from tests.arena.seats.test_model_extras import play_reasoning_league

    out = tmp_path / "reasoning"
    with ThreadPoolExecutor(1) as thread:  # playwright's sync API holds this thread's loop
        replays = thread.submit(anyio.run, play_reasoning_league, out, "apart").result()
    build_site(out)
    for replay in replays:
        ply = next(p for p in replay.games[0].plies if any(d.attempts for d in p.decisions))
        decision = next(d for d in ply.decisions if d.attempts)
        attempt = decision.attempts[0]
        assert attempt.reasoning is not None
        tab.open(sites_url(out, replay.episode, f"#ply={ply.ply}"))
        tab.page.click(f"#moves li[data-ply='{ply.ply}']")
        shown = tab.page.locator(f"#details .decision[data-seat='{decision.seat}'] .attempt").first
        shown.locator("summary.reasoning").click()
        assert shown.locator("pre.reasoning-text").text_content() == attempt.reasoning
        assert attempt.reasoning not in (shown.locator("pre.raw-reply").text_content() or "")
        shown.locator("details.prompt-block > summary").click()
        assert (
            shown.locator("pre.prompt-system").text_content()
            == (attempt.prompt or "")[: attempt.system_chars]
        )
        tab.assert_clean()


def sites_url(run: Path, stem: str, hash_: str = "") -> str:
    """The page of replay `stem` in the built site of run folder `run`."""
    return (run / "view" / "games" / f"{stem}.html").as_uri() + hash_


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


def test_a_finished_league_header_counts_its_episodes_played(sites: Sites, tab: Tab) -> None:
    tab.open(sites.league_url())
    summary = json.loads((sites.runs["board"] / "summary.json").read_text())
    played = len({g["episode"] for g in summary["games"]})
    assert played == summary["episodes"]  # every planned episode was played
    assert tab.page.inner_text("#episodes") == f"{played} episodes played"
    tab.assert_clean()


@pytest.mark.parametrize("width", [420, 1400])
def test_an_ab_pair_reads_as_a_sentence_on_the_league_page(tab: Tab, width: int) -> None:
    with ThreadPoolExecutor(1) as thread:  # the browser's own event loop holds this thread
        run = thread.submit(_cached_ab_run).result(timeout=120)
    build_site(run)
    pair = json.loads((run / "summary.json").read_text())["ab"][0]
    tab.page.set_viewport_size({"width": width, "height": 900})
    tab.open((run / "view" / "index.html").as_uri())
    shown = tab.page.locator("#ab p.ab[data-pair='plain|terse']")
    assert shown.inner_text() == ab_sentence(pair)
    box = shown.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= width  # it wraps: never off the side of the window
    tab.assert_clean()
