"""A model's endpoint goes down during a league: the games it spoiled are no-contests, played
again, and the ratings are what the model's own play earns.

The endpoint is `arena mock-llm` behind a front whose port really closes (`Outage`). Its
answers are a function of the request, and every seat is deterministic, so a league whose
spoiled games were played again ends where the same league without an outage ends.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from arena.league.run import RunResult, execute
from arena.mock_llm import build_app, serving
from arena.mock_llm.outage import Outage
from arena.play.match import replay_number
from arena.record.causes import INFRASTRUCTURE, SEAT
from arena.record.replay import GameRecord, Replay, load_replay
from arena.record.validity import infrastructure_share, measured
from arena.record.verify import VerifyError, verify_replay
from tests.timing import MARGIN_S

pytestmark = pytest.mark.anyio

DEADLINES = {"first_reply_s": 1.5, "retry_s": 1.0, "decision_s": 2.5}
LATENCY_MS = 60
"""Each answer's delay: the league lasts some seconds, so an outage falls in its middle."""


def _config(url: str, name: str, **run: Any) -> dict[str, Any]:
    return {
        "run": {"name": name, "seed": 21, "games": ["connect-four", "breakthrough"],
                "matches": 2, "concurrency": 3, **run},
        "deadlines": DEADLINES,
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "random": {"kind": "scripted", "baseline": "random"},
            "model": {"kind": "llm", "provider": "openai", "model": "m", "base_url": f"{url}/v1"},
        },
    }  # fmt: skip


async def _league(out: Path, name: str, outage: Outage | None, **run: Any) -> RunResult:
    async with serving(build_app(latency_ms=LATENCY_MS, seed=3), outage=outage) as url:
        return await execute(plan_run(parse_config(_config(url, name, **run)), out))


def _replays(out: Path) -> list[Replay]:
    return [load_replay(p) for p in sorted((out / "replays").glob("*.json"))]


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())  # type: ignore[no-any-return]


def _counted(out: Path) -> dict[str, tuple[int, int, int]]:
    return {
        r["policy"]: (r["wins"], r["draws"], r["losses"])
        for r in _summary(out)["standings"]["overall"]
    }


@pytest.fixture(scope="module")
def leagues(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same league played with no outage and with one in its middle (run folders).

    Every game the outage touched is a no-contest here (max_infra_share 0): under the
    default share a game touched by one failure still counts, with one baseline move in it,
    and could end otherwise than without the outage."""
    root = tmp_path_factory.mktemp("outage")

    async def both() -> None:
        clean = await _league(root / "clean", "outage", None, max_infra_share=0.0)
        down = await _league(
            root / "down", "outage", Outage(after_s=2.0, for_s=2.5), max_infra_share=0.0
        )
        assert not clean.failed
        assert not down.failed
        assert not down.stopped
        assert clean.replays == 0
        assert down.replays >= 1, "the outage touched no game: make the league longer"

    anyio.run(both)
    return root / "clean", root / "down"


def _spoiled(out: Path) -> list[tuple[Replay, GameRecord]]:
    return [
        (replay, game)
        for replay in _replays(out)
        for game in replay.games
        if game.result is not None and not measured(game.result)
    ]


def test_an_outage_mid_league_is_played_again_and_leaves_the_ratings_alone(
    leagues: tuple[Path, Path],
) -> None:
    clean, down = leagues
    spoiled = _spoiled(down)
    assert spoiled
    for _, game in spoiled:
        assert game.result is not None
        assert game.result.ending == "no-contest"
        assert "fell back on the infrastructure's failures" in game.result.detail
        assert any(f.side == INFRASTRUCTURE for f in game.fallbacks)
    # Each spoiled play was played again, under the next replay number.
    played = {r.episode for r in _replays(down)}
    for replay, _ in spoiled:
        base, n = replay.episode.split("~")[0], replay_number(replay.episode)
        assert f"{base}~replay{n + 1}" in played, replay.episode
    for replay in _replays(down):
        verify_replay(replay)

    assert _counted(down) == _counted(clean)
    assert _summary(down)["ratings"]["elo"] == _summary(clean)["ratings"]["elo"]
    assert _summary(down)["ratings"]["bt"] == _summary(clean)["ratings"]["bt"]
    nc = {r["policy"]: r["no_contest"] for r in _summary(down)["standings"]["overall"]}
    assert nc["model"] >= len(spoiled)  # kept, and shown in the NC column


def test_verify_refuses_a_no_contest_edited_into_a_result_or_a_side_edited(
    leagues: tuple[Path, Path],
) -> None:
    replay, game = _spoiled(leagues[1])[0]
    index = replay.games.index(game)

    def edited(change: Callable[[GameRecord], None]) -> Replay:
        copy = replay.model_copy(deep=True)
        change(copy.games[index])
        return copy

    def counted(g: GameRecord) -> None:
        assert g.result is not None
        g.result.scores, g.result.ending, g.result.detail = [1, 0], "win", ""

    def blamed_on_the_seat(g: GameRecord) -> None:
        for f in g.fallbacks:
            f.side = SEAT
            for a in f.attempts:
                a.side = SEAT

    with pytest.raises(VerifyError, match="did not measure the seat"):
        verify_replay(edited(counted))
    with pytest.raises(VerifyError, match="recorded as the seat's failure"):
        verify_replay(edited(blamed_on_the_seat))


async def test_a_flapping_endpoint_finishes_with_only_measured_games_rated(
    tmp_path: Path,
) -> None:
    out = tmp_path / "flap"
    result = await _league(out, "flap", Outage(after_s=2.0, for_s=2.0, repeat=True))
    assert not result.failed
    assert not result.stopped
    replays = _replays(out)
    infra = sum(f.side == INFRASTRUCTURE for r in replays for g in r.games for f in g.fallbacks)
    assert infra > 0, "the endpoint never went down during the league: make it longer"
    assert max(replay_number(r.episode) for r in replays) <= 2  # replay_no_contest
    bases = Counter(r.episode.split("~")[0] for r in replays)
    assert max(bases.values()) <= 1 + 2
    for replay in replays:
        verify_replay(replay)
        for game in replay.games:
            for ply in game.plies:
                for d in ply.decisions:
                    assert d.latency_s < DEADLINES["decision_s"] + MARGIN_S
            assert game.result is not None
            if game.result.ending == "no-contest":
                continue
            for seat in (0, 1):  # a rated game: neither seat over the share
                failed, decided = infrastructure_share(game, seat)
                assert failed <= 0.25 * decided, (replay.episode, seat, failed, decided)


async def test_an_endpoint_down_too_long_stops_the_run_and_it_resumes(tmp_path: Path) -> None:
    out = tmp_path / "stop"
    async with serving(build_app(latency_ms=LATENCY_MS, seed=3), outage=Outage(1.0, 6.0)) as url:
        plan = plan_run(parse_config(_config(url, "stop", endpoint_down_s=1.5)), out)
        stopped = await execute(plan)
        assert "has been down for" in stopped.stopped
        assert "endpoint_down_s = 1.5" in stopped.stopped
        assert stopped.interrupted
        total = len([e for m in plan.matches() for e in m.episodes()])
        assert stopped.played < total
        with anyio.fail_after(30):  # the same command, once the endpoint is back
            while True:
                try:
                    resumed = await execute(plan)
                except ConfigError:  # the preflight: still down
                    await anyio.sleep(0.5)
                    continue
                if not resumed.stopped:
                    break
    assert not resumed.failed
    assert not resumed.interrupted
    latest: dict[str, Replay] = {}
    for replay in _replays(out):
        base = replay.episode.split("~")[0]
        if base not in latest or replay_number(replay.episode) > replay_number(
            latest[base].episode
        ):
            latest[base] = replay
    assert len(latest) == total
    # What the first session left spoiled was played again by the second, up to the cap.
    assert any(replay_number(r.episode) > 0 for r in latest.values())
    for replay in latest.values():
        results = [g.result for g in replay.games]
        assert replay_number(replay.episode) == 2 or all(
            r is not None and measured(r) for r in results
        )
