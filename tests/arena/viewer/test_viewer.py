"""The viewer's data: frames re-derived with the engines, the league tables, the site, the server."""

from __future__ import annotations

import atexit
import hashlib
import json
import re
import shutil
import socket
import tempfile
import threading
import time
import urllib.request
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import httpx
import numpy as np
import pytest

import games
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.record.replay import Replay, load_replay
from arena.results.ab import ab_sentence
from arena.results.tables import league_tables
from arena.viewer import build_site, main_view, replay_data
from arena.viewer import league as league_page
from arena.viewer.battle import turn_frames
from arena.viewer.league import h2h_from_games
from arena.viewer.server import Server, SiteFiles
from arena.viewer.site import ASSETS, embed_json
from games.battle import BattleState
from games.connect_four.rules import winning_cells
from games.hex.rules import winning_chain
from tests.arena.results.leagues import lineup, match_games

BOARD_GAMES = ["connect-four", "hex", "breakthrough", "quoridor"]


def run_config(name: str, games_: list[str], *, battle: bool = False) -> dict[str, Any]:
    """A tiny run: the game's own baseline against a mock that often replies badly."""
    tiny = {"first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.8}
    config: dict[str, Any] = {
        "run": {"name": name, "seed": 5, "games": games_, "matches": 1, "concurrency": 4},
        "deadlines": tiny,
        "policies": {
            "base": {"kind": "scripted"},
            "shaky": {"kind": "mock", "faults": {"unreadable": 0.4, "illegal": 0.1}},
        },
    }
    if "backgammon" in games_:
        config["game"] = {"backgammon": {"dice": "derived", **tiny}}
    if battle:
        config["game"] = {
            "battle": {
                "map_size": 31,
                "max_ticks": 100,
                **tiny,
            }
        }
    return config


def make_run(out: Path, name: str, games_: list[str], *, battle: bool = False) -> Path:
    """Play a tiny run into `out` and return its folder."""
    plan = plan_run(parse_config(run_config(name, games_, battle=battle)), out)
    result = anyio.run(execute, plan)
    assert not result.failed
    return out


@cache
def _cached_run(kind: str) -> tuple[Path, list[Replay]]:
    """One tiny run per kind for the whole session (the browser tests share them); removed at exit."""
    root = Path(tempfile.mkdtemp(prefix=f"cog-view-{kind}-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    if kind == "board":
        make_run(root, "board", BOARD_GAMES)
    elif kind == "battle":
        make_run(root, "battle", ["battle"], battle=True)
    elif kind == "backgammon":
        make_run(root, "backgammon", ["backgammon"])
    else:
        make_run(root, "stratego", ["stratego"])
    replays = [load_replay(p) for p in sorted((root / "replays").glob("*.json"))]
    return root, replays


AB_POLICIES = {"plain": {"kind": "mock"}, "terse": {"kind": "mock", "prompt": "board/terse.md"}}
"""A prompt A/B pair: two mock policies that differ in their template only."""


@cache
def _cached_ab_run() -> Path:
    """A tiny prompt A/B run for the whole session; removed at exit."""
    root = Path(tempfile.mkdtemp(prefix="cog-view-ab-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    config = {
        "run": {"name": "ab", "seed": 5, "games": ["connect-four"], "matches": 3},
        "policies": AB_POLICIES,
    }
    result = anyio.run(execute, plan_run(parse_config(config), root / "run"))
    assert not result.failed
    return root / "run"


@pytest.fixture(scope="module")
def board_run() -> tuple[Path, list[Replay]]:
    return _cached_run("board")


@pytest.fixture(scope="module")
def battle_run() -> tuple[Path, list[Replay]]:
    return _cached_run("battle")


@pytest.fixture(scope="module")
def backgammon_run() -> tuple[Path, list[Replay]]:
    return _cached_run("backgammon")


@pytest.fixture(scope="module")
def stratego_run() -> tuple[Path, list[Replay]]:
    return _cached_run("stratego")


def _states(replay: Replay, index: int = 0) -> list[Any]:
    """The states of a game after 0, 1, 2, ... plies, straight from the engine."""
    game = games.load(replay.game, **replay.params)
    record = replay.games[index]
    state = game.initial(replay.chance, game=record.index)
    states = [state]
    for ply in record.plies:
        state = game.apply(
            state, {d.seat: game.parse(state, d.seat, d.move) for d in ply.decisions}
        )
        states.append(state)
    return states


def _cell(frame: dict[str, Any], files: str, name: str) -> str:
    rank = int(name[1:]) - 1
    return str(frame["cells"][rank][files.index(name[0])])


# -- board games ------------------------------------------------------------------------


def test_board_frames_follow_the_recorded_moves(board_run: tuple[Path, list[Replay]]) -> None:
    _, replays = board_run
    seen = set()
    for replay in replays:
        data = replay_data(replay)
        g = data["games"][0]
        files = g["static"]["files"]
        record = replay.games[0]
        assert len(g["frames"]) == len(record.plies) + 1
        if replay.game in ("connect-four", "hex"):
            assert all(set(row) == {"."} for row in g["frames"][0]["cells"])
        first = record.plies[0].decisions[0].move
        second = record.plies[1].decisions[0].move
        after1, after2 = g["frames"][1], g["frames"][2]
        if replay.game == "connect-four":
            assert _cell(after1, files, f"{first}1") == "R"
            expected = f"{second}2" if second == first else f"{second}1"
            assert _cell(after2, files, expected) == "B"
        elif replay.game == "hex":
            assert _cell(after1, files, first) == "R"
            assert _cell(after2, files, second) == "B"
            assert after2["changed"] == [second]
        elif replay.game == "breakthrough":
            start, end = first.split("-")
            assert _cell(after1, files, start) == "."
            assert _cell(after1, files, end) == "R"
            assert sorted(after1["changed"]) == sorted([start, end])
        else:
            if first.endswith(("h", "v")):
                assert after1["walls"] == [first]
                assert after1["walls_left"] == [9, 10]
            else:
                assert after1["pawns"][0] == first
                assert _cell(after1, files, first) == "R"
        seen.add(replay.game)
    assert seen == set(BOARD_GAMES)


def test_board_cells_at_a_ply_match_the_engine(board_run: tuple[Path, list[Replay]]) -> None:
    _, replays = board_run
    for replay in replays:
        g = replay_data(replay)["games"][0]
        states = _states(replay)
        game = games.load(replay.game)
        for ply in (0, len(states) // 2, len(states) - 1):
            view = game.view(states[ply], 1)
            assert g["frames"][ply]["cells"] == ["".join(row) for row in view["cells"]]
            assert g["standings"][ply] == [game.standing(states[ply], s) for s in (0, 1)]
            if replay.game == "quoridor":
                assert g["frames"][ply]["walls"] == view["walls"]


WINNING = {"connect-four": (winning_cells, "four-in-a-row"), "hex": (winning_chain, "connection")}


def test_the_last_frame_of_a_win_names_the_winning_cells(
    board_run: tuple[Path, list[Replay]],
) -> None:
    _, replays = board_run
    won = set()
    for replay in replays:
        if replay.game not in WINNING:
            continue
        winning, ending = WINNING[replay.game]
        frames = replay_data(replay)["games"][0]["frames"]
        assert not any("winning" in frame for frame in frames[:-1])
        result = replay.games[0].result
        assert result is not None
        if result.ending != ending:  # adjudicated or forfeited: no line to mark
            assert "winning" not in frames[-1]
            continue
        cells = winning(_states(replay)[-1])
        assert len(cells) >= (4 if replay.game == "connect-four" else 7)
        assert frames[-1]["winning"] == list(cells)
        winner = "R" if result.scores == [1, -1] else "B"
        assert {_cell(frames[-1], "abcdefg", c) for c in cells} == {winner}
        won.add(replay.game)
    assert won == set(WINNING)  # the tiny run has a won game of each


def test_a_fallback_carries_its_cause_and_raw_replies(board_run: tuple[Path, list[Replay]]) -> None:
    _, replays = board_run
    checked = 0
    for replay in replays:
        g = replay_data(replay)["games"][0]
        for record in replay.games[0].fallbacks:
            decision = next(
                d for d in g["plies"][record.ply - 1]["decisions"] if d["seat"] == record.seat
            )
            assert decision["source"] == "fallback"
            assert decision["fallback"]["cause"] == record.cause
            assert [a["reply"] for a in decision["attempts"]] == [a.reply for a in record.attempts]
            checked += 1
        for ply in g["plies"]:
            for d in ply["decisions"]:
                assert (d["fallback"] is None) == (d["source"] != "fallback")
    assert checked > 0, "the shaky mock should have fallen back somewhere"


def test_attempts_carry_reasoning_usage_and_the_prompt_split(
    board_run: tuple[Path, list[Replay]],
) -> None:
    _, replays = board_run
    replay = next(
        r for r in replays if any(d.attempts for p in r.games[0].plies for d in p.decisions)
    ).model_copy(deep=True)
    ply, decision = next((p, d) for p in replay.games[0].plies for d in p.decisions if d.attempts)
    attempt = decision.attempts[0]
    attempt.reasoning = "think <b>first</b>"
    attempt.usage = {"input_uncached": 10, "output": 5, "reasoning": 3}
    attempt.system_chars = 7
    shown = next(
        d
        for d in replay_data(replay)["games"][0]["plies"][ply.ply - 1]["decisions"]
        if d["seat"] == decision.seat
    )["attempts"][0]
    assert shown["reasoning"] == "think <b>first</b>"
    assert shown["usage"] == {"input_uncached": 10, "output": 5, "reasoning": 3}
    assert shown["prompt"] == attempt.prompt
    assert shown["system_chars"] == 7
    assert "<b>" not in embed_json(shown)  # on the page it cannot open a tag either


# -- the battle ----------------------------------------------------------------------------


def _hash_link(previous: bytes, x: Any, y: Any, hp: Any) -> bytes:
    """The battle's gameHash link (docs/rules.md#gamehash), packed independently of the engine."""
    record = b"".join(
        int(i).to_bytes(2, "big")
        + bytes([int(h > 0), int(a), int(b)])
        + int(h).to_bytes(2, "big", signed=True)
        for i, (a, b, h) in enumerate(zip(x, y, hp, strict=True))
    )
    return hashlib.sha256(previous + record).digest()


def _decode(packed: str) -> np.ndarray:
    import base64

    return np.frombuffer(base64.b64decode(packed), dtype=np.uint8).reshape(-1, 3)


def test_battle_frames_are_one_per_tick_and_hash_to_the_chain(
    battle_run: tuple[Path, list[Replay]],
) -> None:
    _, replays = battle_run
    replay = replays[0]
    data = replay_data(replay)
    assert [g["index"] for g in data["games"]] == [1, 2]
    for index, g in enumerate(data["games"]):
        record = replay.games[index]
        states: list[BattleState] = _states(replay, index)
        assert len(g["frames"]) == len(record.plies) + 1
        assert len(g["frames"][0]["ticks"]) == 1
        assert g["frames"][0]["first_tick"] == 0
        digest = hashlib.sha256(f"{replay.match.seed}:{record.index}".encode()).digest()
        for ply, frame in enumerate(g["frames"][1:], start=1):
            hashes = record.plies[ply - 1].integrity["hashes"]
            assert len(frame["ticks"]) == len(hashes) == states[ply].tick - states[ply - 1].tick
            assert frame["first_tick"] == states[ply - 1].tick + 1
            for packed, recorded in zip(frame["ticks"], hashes, strict=True):
                soldiers = _decode(packed)
                digest = _hash_link(digest, soldiers[:, 0], soldiers[:, 1], soldiers[:, 2])
                assert digest.hex() == recorded
            last = _decode(frame["ticks"][-1])
            after = states[ply]
            assert last[:, 0].tolist() == after.x.tolist()
            assert last[:, 2].tolist() == after.hp.tolist()
        assert sum(len(f["ticks"]) for f in g["frames"][1:]) == states[-1].tick
        assert len(g["static"]["side"]) == states[0].layout.count
        assert g["static"]["letters"] == (["A", "B"] if record.index == 1 else ["B", "A"])


def test_turn_frames_refuse_states_that_do_not_follow() -> None:
    game = games.load("battle", map_size=31)
    start = game.initial(3)
    orders = {seat: game.baseline(start, seat) for seat in (0, 1)}
    one = game.apply(start, orders)
    two = game.apply(one, {seat: game.baseline(one, seat) for seat in (0, 1)})
    assert len(turn_frames(start, one)) == 20
    assert turn_frames(start, one)[-1].tick == 20
    with pytest.raises(ValueError, match="not one command turn after"):
        turn_frames(start, two)
    other = game.apply(game.initial(4), orders)  # another seed: another hash chain
    with pytest.raises(ValueError, match="gameHash"):
        turn_frames(start, other)


# -- Stratego ---------------------------------------------------------------------------------


def test_stratego_spectator_board_is_the_union_of_the_seat_views(
    stratego_run: tuple[Path, list[Replay]],
) -> None:
    _, replays = stratego_run
    replay = replays[0]
    g = replay_data(replay)["games"][0]
    states = _states(replay)
    game = games.load("stratego")
    hidden_seen = revealed_seen = False
    for ply in range(0, len(states), max(1, len(states) // 25)):
        frame = g["frames"][ply]
        views = [game.view(states[ply], seat) for seat in (0, 1)]
        union = ["."] * 100
        for seat, view in enumerate(views):
            assert frame["seen"][seat] == _stratego_cells(view["pieces"])
            for piece in view["pieces"]:
                if piece["seat"] == seat:
                    union[_index(piece["square"])] = piece["code"]
        assert frame["board"] == "".join(union)
        assert "?" not in frame["board"]
        for i, code in enumerate(frame["board"]):
            for seat in (0, 1):
                shown = frame["seen"][seat][i]
                assert shown == code or (shown == "?" and frame["owners"][i] == str(1 - seat))
        hidden_seen |= "?" in frame["seen"][0]
        revealed_seen |= "r" in frame["flags"] or "b" in frame["flags"]
    assert hidden_seen
    assert revealed_seen
    assert g["frames"][0]["board"] == "." * 100
    assert g["frames"][0]["phase"] == "setup"


def _index(square: str) -> int:
    return (int(square[1:]) - 1) * 10 + "abcdefghij".index(square[0])


def _stratego_cells(pieces: list[dict[str, Any]]) -> str:
    cells = ["."] * 100
    for piece in pieces:
        cells[_index(piece["square"])] = piece["code"]
    return "".join(cells)


# -- backgammon -------------------------------------------------------------------------------


def test_backgammon_plays_are_shown_one_checker_step_at_a_time(
    backgammon_run: tuple[Path, list[Replay]],
) -> None:
    _, replays = backgammon_run
    game = games.load("backgammon")
    hits = 0
    for replay in replays[:2]:
        data = replay_data(replay)
        assert data["card_seed"] == replay.integrity["card_seed"]
        for index, g in enumerate(data["games"]):
            states = _states(replay, index)
            assert g["static"]["colours"] == (
                ["BLACK", "WHITE"] if g["index"] == 1 else ["WHITE", "BLACK"]
            )
            opening = g["frames"][0]
            assert opening["opening"]
            assert opening["dice"] == list(states[0].dice)
            for ply, frame in enumerate(g["frames"][1:], start=1):
                before, after = states[ply - 1], states[ply]
                board = game.integrity(after)["board"]
                assert [frame["points"], frame["bar"], frame["off"]] == [
                    board["points"],
                    board["bar"],
                    board["off"],
                ]
                assert frame["dice"] == list(before.dice)
                assert frame["mover"] == before.colour
                move = g["plies"][ply - 1]["decisions"][0]["move"]
                if move == "NONE":
                    assert frame["steps"] == []
                    continue
                steps = frame["steps"]
                assert steps, f"ply {ply}: {move} has no steps"
                assert steps[-1]["points"] == board["points"]
                assert steps[-1]["off"] == board["off"]
                rolled = list(before.dice) * (2 if before.dice[0] == before.dice[1] else 1)
                for step in steps:
                    rolled.remove(step["die"])  # every step uses one die of the roll
                hits += sum(step["hit"] for step in steps)
                assert ("*" in move) == any(step["hit"] for step in steps)
    assert hits > 0


def test_play_steps_of_known_plays() -> None:
    from arena.viewer.backgammon import play_steps
    from games.backgammon import OPENING

    game = games.load("backgammon")
    start = game.position({8: 3, 6: 5, 13: 5, 24: 2}, {8: 3, 6: 5, 13: 5, 24: 2}, dice=(3, 1))
    after = game.apply(start, {0: game.parse(start, 0, "8/5 6/5")})
    steps = play_steps(OPENING, OPENING, (3, 1), (after.black, after.white))
    assert steps == [(8, 5, 3, False), (6, 5, 1, False)]
    doubles = game.with_dice(start, (6, 6))
    after = game.apply(doubles, {0: game.parse(doubles, 0, "24/18(2) 13/7(2)")})
    steps = play_steps(OPENING, OPENING, (6, 6), (after.black, after.white))
    assert steps is not None
    assert sorted(steps) == sorted([(24, 18, 6, False)] * 2 + [(13, 7, 6, False)] * 2)
    assert play_steps(OPENING, OPENING, (3, 1), (OPENING, OPENING)) == []


# -- the league page and the site ---------------------------------------------------------------


def _page_data(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', text, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_build_site_writes_a_league_page_and_a_page_per_replay(
    board_run: tuple[Path, list[Replay]], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(board_run[0], run)
    out = build_site(run)
    assert out == run / "view"
    pages = sorted(p.stem for p in (out / "games").glob("*.html"))
    assert pages == sorted(p.stem for p in (run / "replays").glob("*.json"))
    league = _page_data(out / "index.html")
    summary = json.loads((run / "summary.json").read_text())
    assert _plain(league["standings"]) == summary["standings"]
    assert not league["in_progress"]
    assert len(league["games"]) == len(summary["games"])
    assert all(g["page"].startswith("games/") for g in league["games"])
    assert {g["fallback_count"] > 0 for g in league["games"]} == {True, False}
    for page in [out / "index.html", *sorted((out / "games").glob("*.html"))[:2]]:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r'(src|href)="(https?:)?//', text), "no page loads from the network"
    for asset in ASSETS:
        text = (out / "static" / asset).read_text(encoding="utf-8")
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)


def _plain(tables: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Standings as summary.json has them: without the page's one `latency_ms` field."""
    return {
        name: [{k: v for k, v in row.items() if k != "latency_ms"} for row in rows]
        for name, rows in tables.items()
    }


def test_league_without_summary_is_derived_from_the_replays(
    board_run: tuple[Path, list[Replay]], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(board_run[0], run)
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").unlink()
    league = _page_data(build_site(run) / "index.html")
    assert league["in_progress"]
    assert _plain(league["standings"])["overall"] == summary["standings"]["overall"]
    assert league["h2h"] == h2h_from_games(summary["games"])


def test_the_league_counts_the_episodes_played_and_the_most_planned(
    board_run: tuple[Path, list[Replay]], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(board_run[0], run)
    summary = json.loads((run / "summary.json").read_text())
    episodes = sorted({g["episode"] for g in summary["games"]})
    planned = summary["episodes"]
    league = _page_data(build_site(run) / "index.html")  # from the store
    assert (league["episodes_played"], league["episodes_planned"]) == (len(episodes), planned)
    summary["episodes"] = planned + 12  # as an SPRT run's: the most it could have played
    (run / "summary.json").write_text(json.dumps(summary))
    for path in run.glob("league.db*"):
        path.unlink()
    league = _page_data(build_site(run) / "index.html")  # from games.jsonl, a line at a time
    assert (league["episodes_played"], league["episodes_planned"]) == (len(episodes), planned + 12)
    assert [g["episode"] for g in league["games"]] == [g["episode"] for g in summary["games"]]
    (run / "games.jsonl").unlink()
    league = _page_data(build_site(run) / "index.html")  # from summary.json's games
    assert (league["episodes_played"], league["episodes_planned"]) == (len(episodes), planned + 12)
    (run / "summary.json").unlink()
    for path in sorted((run / "replays").glob("*.json"))[:3]:
        path.unlink()
    league = _page_data(build_site(run) / "index.html")  # in progress: the replays so far
    assert league["in_progress"]
    assert league["episodes_played"] == len(episodes) - 3
    assert league["episodes_planned"] == planned  # the plan's count, from the resolved config


def test_an_in_progress_league_orders_its_standings_as_the_summary_will(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # three policies whose mean score and Bradley-Terry disagree: wide beats weak twice
    # and loses to top, narrow splits with top (wide's mean is the higher, narrow's rating)
    schedule: list[tuple[str, str, tuple[float | None, float | None]]] = [
        ("wide", "weak", (1.0, 1.0)), ("wide", "weak", (1.0, 1.0)), ("top", "wide", (1.0, 1.0)),
        ("narrow", "top", (1.0, 0.0)),
    ]  # fmt: skip
    names = ["wide", "narrow", "top", "weak"]
    played = {f"m{i}": match_games(i, a, b, results) for i, (a, b, results) in enumerate(schedule)}
    (tmp_path / "replays").mkdir()
    for stem in played:
        (tmp_path / "replays" / f"{stem}.json").write_text("{}")
    monkeypatch.setattr(league_page, "load_replay", lambda path: path.stem)
    monkeypatch.setattr(league_page, "summarise", lambda stem: played[stem])
    data, _ = league_page.league_data(tmp_path, {}, set())
    summary = league_tables([g for gs in played.values() for g in gs], lineup(names), 1)
    order = [r["policy"] for r in data["standings"]["overall"]]
    assert order == [r["policy"] for r in summary["standings"]["overall"]]
    assert order == ["top", "narrow", "wide", "weak"]


def test_ratings_and_h2h_from_the_summary_are_shown_as_given(
    board_run: tuple[Path, list[Replay]], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(board_run[0], run)
    summary = json.loads((run / "summary.json").read_text())
    summary["ratings"] = {
        "elo": {"base": 1540.5, "shaky": 1459.5},
        "bt": {
            "base": {"rating": 1580.0, "low": 1500.0, "high": 1700.0},
            "shaky": {"rating": 1420.0, "low": 1300.0, "high": 1500.0},
        },
    }
    summary["h2h"] = {"base|shaky": [7, 0, 1, 0], "shaky|base": [1, 0, 7, 0]}
    (run / "summary.json").write_text(json.dumps(summary))
    league = _page_data(build_site(run) / "index.html")
    assert league["ratings"] == summary["ratings"]
    assert league["h2h"] == summary["h2h"]
    assert league["h2h_source"] == "summary"


def test_the_league_page_reads_an_ab_pair_as_the_report_sentence(
    board_run: tuple[Path, list[Replay]], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(_cached_ab_run(), run)
    pair = json.loads((run / "summary.json").read_text())["ab"][0]
    league = _page_data(build_site(run) / "index.html")
    assert [ab["pair"] for ab in league["ab"]] == ["plain|terse"]
    sentence = league["ab"][0]["sentence"]
    assert sentence == ab_sentence(pair)  # what arena run and arena report print
    wins, draws, losses, _ = pair["h2h"]
    assert sentence.startswith("prompt A/B, plain vs terse (they differ in prompt only): plain ")
    assert f"head to head plain won {wins}, drew {draws} and lost {losses} of its games" in sentence
    (run / "summary.json").unlink()  # in progress: no sentence yet, as no ratings
    assert _page_data(build_site(run) / "index.html")["ab"] == []
    other = tmp_path / "board"  # base and shaky differ in more than one condition
    shutil.copytree(board_run[0], other)
    assert _page_data(build_site(other) / "index.html")["ab"] == []


def test_h2h_counts_wins_draws_losses_and_no_contests() -> None:
    rows = [
        {"policies": ["a", "b"], "scores": [1, -1]},
        {"policies": ["b", "a"], "scores": [0, 0]},
        {"policies": ["b", "a"], "scores": [1, -1]},
        {"policies": ["a", "b"], "scores": None},
    ]
    assert h2h_from_games(rows) == {"a|b": [1, 1, 1, 1], "b|a": [1, 1, 1, 1]}


def test_embedded_json_cannot_close_its_script_element() -> None:
    text = embed_json({"say": "</script><script>alert(1)</script>"})
    assert "</script>" not in text
    assert json.loads(text)["say"].startswith("</script>")


def test_main_view_builds_and_refuses_a_folder_without_replays(
    board_run: tuple[Path, list[Replay]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main_view(tmp_path, serve=False, port=0) == 2
    assert "no replays folder" in capsys.readouterr().err
    run = tmp_path / "run"
    shutil.copytree(board_run[0], run)
    assert main_view(run, serve=False, port=0) == 0
    assert (run / "view" / "index.html").is_file()
    assert "file://" in capsys.readouterr().out


def test_server_serves_and_redraws_as_replays_appear(
    board_run: tuple[Path, list[Replay]], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(board_run[0], run)
    (run / "summary.json").unlink()  # a run in progress has no summary yet
    moved = sorted((run / "replays").glob("*.json"))[-1]
    held = tmp_path / moved.name
    moved.rename(held)
    server = Server(run, port=0)
    server.start()
    watcher = threading.Thread(target=server.watch, kwargs={"poll_s": 0.05})
    watcher.start()
    try:
        page = urllib.request.urlopen(server.url + "index.html", timeout=5).read().decode()
        assert moved.stem not in page
        stamp = json.loads(urllib.request.urlopen(server.url + "live.json", timeout=5).read())
        held.rename(moved)
        _wait_for_stamp(server, stamp["stamp"])
        page = urllib.request.urlopen(server.url + "index.html", timeout=5).read().decode()
        assert moved.stem in page
        assert (
            urllib.request.urlopen(server.url + f"games/{moved.stem}.html", timeout=5).status == 200
        )
    finally:
        server.stop()
        watcher.join(timeout=5)
    assert not watcher.is_alive()


@pytest.mark.anyio
async def test_the_site_is_served_as_files_with_their_types(tmp_path: Path) -> None:
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "g1.html").write_text("<p>g1</p>")
    (tmp_path / "index.html").write_text("<p>league</p>")
    (tmp_path / "live.json").write_text('{"stamp":1}')
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "league.js").write_text("let x;")
    (tmp_path.parent / "secret.txt").write_text("not for the page")
    transport = httpx.ASGITransport(app=SiteFiles(tmp_path))
    async with httpx.AsyncClient(transport=transport, base_url="http://view") as client:
        league = await client.get("/")
        assert (league.status_code, league.text) == (200, "<p>league</p>")
        assert league.headers["content-type"] == "text/html"
        assert (await client.get("/live.json")).headers["content-type"] == "application/json"
        script = await client.get("/static/league.js")
        assert script.headers["content-type"] in ("text/javascript", "application/javascript")
        assert (await client.get("/games/g1.html")).text == "<p>g1</p>"
        folder = await client.get("/games")
        assert (folder.status_code, folder.headers["location"]) == (301, "/games/")
        head = await client.head("/index.html")
        assert (head.status_code, head.content, head.headers["content-length"]) == (200, b"", "13")
        for missing in ("/nope.html", "/games/"):
            assert (await client.get(missing)).status_code == 404, missing
        assert (await client.post("/index.html")).status_code == 501
    # A path that climbs out of the site (which a client may send unnormalised) stays in it.
    assert SiteFiles(tmp_path).answer("GET", "/../secret.txt")[0] == 404
    assert SiteFiles(tmp_path).answer("GET", "/games/../../secret.txt")[0] == 404


def test_view_serve_on_a_busy_port_says_which_flag_to_change(
    board_run: tuple[Path, list[Replay]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(board_run[0], run)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main_view(run, serve=True, port=port) == 2
    error = capsys.readouterr().err
    assert f"arena view: the viewer cannot listen on 127.0.0.1:{port}" in error
    assert "pick another --port" in error


def _wait_for_stamp(server: Server, old: int) -> None:
    """Until the served live.json moves past `old`; bounded, in small steps."""
    deadline = time.monotonic() + 5
    while True:
        live = json.loads(urllib.request.urlopen(server.url + "live.json", timeout=5).read())
        if live["stamp"] > old:
            return
        assert time.monotonic() < deadline, "the league page was not redrawn within 5 s"
        time.sleep(0.02)


def test_game_pages_carry_every_row_once_and_drop_stale_pages(tmp_path: Path) -> None:
    from arena.viewer.site import write_game_pages

    rows = [
        {"episode": f"e{n}", "game": "hex" if n % 2 else "connect-four", "ending": "won",
         "policies": [f"p{n % 3}", f"p{(n + 1) % 3}"]}
        for n in range(7)
    ]  # fmt: skip
    (tmp_path / "games-0009.js").write_text("stale")  # from a larger league drawn here before
    first, paging = write_game_pages(tmp_path, iter(rows), size=3)
    assert first == rows[:3]
    assert paging == {
        "total": 7, "size": 3, "pages": 3, "games": ["connect-four", "hex"],
        "policies": ["p0", "p1", "p2"], "endings": ["won"],
    }  # fmt: skip
    assert sorted(p.name for p in tmp_path.glob("*.js")) == ["games-0001.js", "games-0002.js"]
    seen = list(first)
    for n in (1, 2):
        text = (tmp_path / f"games-{n:04d}.js").read_text()
        assert text.startswith(f"CogGames.page({n}, [")
        seen += json.loads(text[text.index("[") : text.rindex("]") + 1])
    assert seen == rows
