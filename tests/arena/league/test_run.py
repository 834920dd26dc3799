"""Whole runs in-process: leaks, notes, zero-sum results, determinism, verification."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.config import parse_config
from arena.league.plan import RunPlan, plan_run
from arena.league.run import execute
from arena.play.decisions import TextSeat
from arena.play.protocol import Answer, Question
from arena.record.replay import Replay, load_replay
from arena.record.verify import VerifyError, verify_file, verify_replay
from tests.arena.fakes import stored_games
from tests.timing import MARGIN_S


def _config(
    name: str, policies: dict[str, Any], games: list[str], matches: int = 2
) -> dict[str, Any]:
    return {
        "run": {"name": name, "seed": 99, "games": games, "matches": matches, "concurrency": 4},
        "deadlines": {"first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.8},
        "policies": policies,
    }


def _replays(out: Path) -> list[Replay]:
    return [load_replay(p) for p in sorted((out / "replays").glob("*.json"))]


class MarkerSeat(TextSeat):
    """Plays legally and marks its say and notes with its policy, seat and turn."""

    def __init__(self, mark: str, rng: random.Random) -> None:
        self.mark, self.rng, self.turn = mark, rng, 0

    async def ask(self, question: Question, *, deadline: float) -> Answer:
        self.turn += 1
        reply = {
            "move": self.rng.choice(question.legal),
            "say": f"SAY<{self.mark}>",
            "notes": f"NOTE<{self.mark}>#{self.turn}",
        }
        return Answer(text=json.dumps(reply))


class MarkerSeats:
    """Makes a `MarkerSeat` for every seat."""

    def __init__(self, policies: list[str]) -> None:
        self.policies = policies

    def make(self, game: Any, policy: str, *, seed: int, index: int, seat: int) -> MarkerSeat:
        # The mark names the policy by its position only: the name itself must never reach a prompt.
        return MarkerSeat(
            f"P{self.policies.index(policy)}/{index}/{seat}", random.Random(f"{seed}{index}{seat}")
        )


class MarkedPlan(RunPlan):
    def seat_maker(self, *_: Any, **__: Any) -> Any:
        return MarkerSeats(self.policies)


def test_no_prompt_leaks_names_say_or_notes(tmp_path: Path) -> None:
    policies = {"zebra-prime": {"kind": "mock"}, "yak-omega": {"kind": "mock"}}
    config = parse_config(_config("leak", policies, ["connect-four", "quoridor"], matches=1))
    plan = plan_run(config, tmp_path / "out")
    plan = MarkedPlan(plan.config, plan.master_seed, plan.out, plan.templates)
    assert not anyio.run(execute, plan).failed
    prompts = 0
    for replay in _replays(tmp_path / "out"):
        for game in replay.games:
            seen_notes: dict[int, list[str]] = {0: [], 1: []}
            for ply in game.plies:
                for decision in ply.decisions:
                    for attempt in decision.attempts:
                        prompt = attempt.prompt or ""
                        prompts += 1
                        assert "zebra" not in prompt
                        assert "yak" not in prompt
                        assert "SAY<" not in prompt
                        policy = replay.spectator.policies[str(game.index)][decision.seat]
                        mine = f"P{list(policies).index(policy)}/{game.index}/{decision.seat}"
                        for note in seen_notes[decision.seat][-1:]:
                            assert note in prompt, "a seat's latest notes come back to it"
                        for line in prompt.splitlines():
                            if "NOTE<" in line:
                                assert f"NOTE<{mine}>" in line, "notes reach only their author"
                    seen_notes[decision.seat].append(
                        f"NOTE<{mine}>#{len(seen_notes[decision.seat]) + 1}"
                    )
    assert prompts > 20


def test_results_are_zero_sum_and_every_replay_verifies(tmp_path: Path) -> None:
    policies = {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random": {"kind": "scripted", "baseline": "random"},
        "faulty": {
            "kind": "mock",
            "faults": {"empty": 0.1, "unreadable": 0.1, "illegal": 0.1, "error": 0.1},
        },
    }
    config = parse_config(_config("zero", policies, ["rotate"], matches=4))
    result = anyio.run(execute, plan_run(config, tmp_path / "out"))
    assert not result.failed
    games = stored_games(tmp_path / "out")
    assert len(games) == 4 * 3 * 2
    for game in games:
        assert game.scores is not None
        assert sum(game.scores) == 0
    causes = {cause for g in games for seat in g.seats for cause in seat.fallbacks}
    assert {"empty", "unreadable", "illegal", "provider_error"} <= causes
    for path in sorted((tmp_path / "out" / "replays").glob("*.json")):
        verify_file(path)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["seed"] == 99
    assert summary["standings"]["overall"][0]["policy"] == "tactician"


def _strip_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_timings(v) for k, v in value.items() if k not in ("latency_s", "wall_s")}
    if isinstance(value, list):
        return [_strip_timings(v) for v in value]
    return value


def test_same_seed_and_replies_give_the_same_replays(tmp_path: Path) -> None:
    policies = {
        "sound": {"kind": "mock"},
        "faulty": {"kind": "mock", "faults": {"unreadable": 0.2, "illegal": 0.1}},
        "random": {"kind": "scripted", "baseline": "random"},
    }
    config = parse_config(_config("same", policies, ["rotate", "hex"], matches=1))
    for folder in ("a", "b"):
        anyio.run(execute, plan_run(config, tmp_path / folder))
    a, b = _replays(tmp_path / "a"), _replays(tmp_path / "b")
    assert len(a) == len(b) > 0
    for x, y in zip(a, b, strict=True):
        assert _strip_timings(x.model_dump()) == _strip_timings(y.model_dump())


@pytest.fixture(scope="module")
def faulty_replay(tmp_path_factory: pytest.TempPathFactory) -> Replay:
    out = tmp_path_factory.mktemp("tamper")
    policies = {
        "sound": {"kind": "mock"},
        "faulty": {"kind": "mock", "faults": {"unreadable": 0.3}},
    }
    anyio.run(execute, plan_run(parse_config(_config("tamper", policies, ["hex"], matches=1)), out))
    for replay in _replays(out):
        if any(g.fallbacks for g in replay.games):
            verify_replay(replay)
            return replay
    raise AssertionError("no replay with a fallback")


def _tampered(replay: Replay, change: Any) -> Replay:
    copy = replay.model_copy(deep=True)
    change(copy)
    return copy


def _swap_first_move(r: Replay) -> None:
    decision = r.games[0].plies[0].decisions[0]
    decision.move = "g7" if decision.move != "g7" else "a1"


def _bump_standing(r: Replay) -> None:
    r.games[0].plies[3].standings[0] += 10


def _flip_result(r: Replay) -> None:
    result = r.games[0].result
    assert result is not None
    assert result.scores is not None
    result.scores = [-s for s in result.scores]


def _fallback_move(r: Replay) -> None:
    f = r.games[0].fallbacks[0]
    for ply in r.games[0].plies:
        if ply.ply == f.ply:
            decision = next(d for d in ply.decisions if d.seat == f.seat)
            legal = [c for c in ("a1", "b2", "c3", "d4", "e5", "f6", "g7") if c != decision.move]
            decision.move = legal[0]


def _seed(r: Replay) -> None:
    r.match.seed += 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_swap_first_move, "standings|refused|result"),
        (_bump_standing, "standings"),
        (_flip_result, "result"),
        (_fallback_move, "fallback played|refused|standings"),
        (_seed, "aliases|resolve"),
    ],
)
def test_verify_names_the_first_difference(
    faulty_replay: Replay, change: Any, message: str
) -> None:
    with pytest.raises(VerifyError, match=message):
        verify_replay(_tampered(faulty_replay, change))


def test_wall_clock_stop_is_adjudicated_and_verifies(tmp_path: Path) -> None:
    policies = {
        "sound": {"kind": "mock"},
        "slow": {"kind": "mock", "faults": {"silent": 1.0}},
    }
    data = _config("wall", policies, ["quoridor"], matches=1)
    data["deadlines"] = {"first_reply_s": 0.05, "retry_s": 0.05, "decision_s": 0.1}
    data["game"] = {"quoridor": {"episode_wall_s": 0.5}}
    anyio.run(execute, plan_run(parse_config(data), tmp_path / "out"))
    games = stored_games(tmp_path / "out")
    assert {(g.reason, g.ending) for g in games} == {("deadline", "wall-clock")}
    for replay in _replays(tmp_path / "out"):
        verify_replay(replay)
        for game in replay.games:
            assert game.wall_s < 0.5 + MARGIN_S
            assert all(f.cause == "timeout" for f in game.fallbacks)


def test_an_episode_that_cannot_be_stored_is_a_failure_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.league.store import LeagueStore

    policies = {"a": {"kind": "scripted"}, "b": {"kind": "scripted", "baseline": "random"}}
    plan = plan_run(parse_config(_config("unstorable", policies, ["hex"], matches=1)), tmp_path)
    record = LeagueStore.record

    def refuse_one(store: LeagueStore, replay: Replay, path: Path, digest: str) -> Any:
        if replay.episode.endswith("-g2"):
            raise ValueError("surrogates not allowed")
        return record(store, replay, path, digest)

    monkeypatch.setattr(LeagueStore, "record", refuse_one)
    result = anyio.run(execute, plan)
    assert result.played == 1
    assert [f.episode for f in result.failed] == ["hex-k1-a-vs-b-g2"]
    assert "surrogates not allowed" in result.failed[0].error
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["failed"] == [f.to_json() for f in result.failed]
    lines = (tmp_path / "games.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == summary["games"]
