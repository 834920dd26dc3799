"""The driver's side of a cluster without a cluster: the worker's code played in a thread of
this process, as a Ray task plays it, and workers lost on purpose.

What these pin down: a worker gives the replays a local run gives; it is handed each game's
own seed, never a card's secret; a lost worker's board game is played again and a lost card
is cancelled, its finished game kept, and replaced; nothing is stored twice; a worker that
cannot play as the run requires stops the run, resumably.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import structlog

from arena.cli.verify import audit_folder
from arena.cluster import EpisodeLost
from arena.cluster.messages import Failed, Kept, Logged, Message, Played, WorkerPlan
from arena.cluster.remote import RemoteExecutor
from arena.cluster.worker import code_build, episode_messages
from arena.config import load_config
from arena.league.backlog import LOST_TRIES
from arena.league.plan import RunPlan, plan_run
from arena.league.run import RunResult, execute
from arena.league.store import LeagueStore
from arena.logs import close_logging, configure_logging, relay
from arena.play.match import Episode
from arena.record.ledger import read_current
from tests.golden import replay_digest

ROOT = Path(__file__).resolve().parents[3]

Lose = Callable[[Episode, Message, int], bool]
"""(episode, the message about to be handed over, the episode's attempt) -> lose it now."""


def _never(episode: Episode, message: Message, attempt: int) -> bool:
    return False


class ThreadWorker(RemoteExecutor):
    """`arena.cluster.worker` in a thread of this process, one episode at a time."""

    def __init__(self, plan: RunPlan, lose: Lose = _never, build: str | None = None) -> None:
        super().__init__(plan, "a thread of the test")
        self.spec = WorkerPlan(f"test-{id(self)}", build or code_build(), plan, False)
        self.lose = lose
        self.chances: list[dict[int, int | str]] = []
        self.attempts: dict[str, int] = {}

    async def messages(
        self, episode: Episode, chances: dict[int, int | str]
    ) -> AsyncIterator[Message]:
        self.chances.append(chances)
        attempt = self.attempts[episode.id] = self.attempts.get(episode.id, 0) + 1
        stream = episode_messages(
            self.spec.key, lambda: self.spec, episode, chances, capture_events=False
        )
        while (message := await anyio.to_thread.run_sync(next, stream, None)) is not None:
            if self.lose(episode, message, attempt):
                stream.close()
                raise EpisodeLost("WorkerCrashedError: the worker died (on purpose)")
            yield message


def _config(tmp_path: Path, games: str, policies: str, *, extra: str = "") -> Path:
    path = tmp_path / "league.toml"
    path.write_text(
        f'[run]\nname = "cluster"\nseed = 7\ngames = [{games}]\nmatches = 1\nconcurrency = 1\n'
        f"{extra}\n{policies}"
    )
    return path


SCRIPTED = """
[policies.tactician]
kind = "scripted"
baseline = "default"
[policies.random]
kind = "scripted"
baseline = "random"
[policies.mock]
kind = "mock"
"""

CARDS = f"""
[game.backgammon]
dice = "derived"
[policies.greedy]
kind = "program"
path = "{ROOT / "players" / "greedy.py"}"
[policies.random]
kind = "scripted"
baseline = "random"
"""


def _play(
    config: Path, out: Path, executor: Callable[[RunPlan], RemoteExecutor] | None = None
) -> tuple[RunResult, RemoteExecutor | None]:
    plan = plan_run(load_config(config), out)
    chosen = executor(plan) if executor is not None else None
    configure_logging(out / "events.jsonl", console=False)
    try:
        result = anyio.run(lambda: execute(plan, check_endpoints=False, executor=chosen))
    finally:
        close_logging()
    return result, chosen


def _digests(out: Path) -> dict[str, str]:
    return {p.name: replay_digest(p) for p in sorted((out / "replays").glob("*.json"))}


def _events(out: Path, name: str) -> list[dict[str, Any]]:
    lines = (out / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == name]


def _stored(out: Path) -> list[str]:
    store = LeagueStore.open_readonly(out)
    try:
        return [row["id"] for row in store.episode_rows()]
    finally:
        store.close()


def test_a_worker_plays_the_replays_a_local_run_plays(tmp_path: Path) -> None:
    config = _config(tmp_path, '"connect-four", "stratego", "backgammon"', SCRIPTED,
                     extra='[game.backgammon]\ndice = "derived"')  # fmt: skip
    local, _ = _play(config, tmp_path / "local")
    remote, worker = _play(config, tmp_path / "worker", ThreadWorker)
    assert local.played == remote.played == 3 * 3 * 2 - 3  # a backgammon match is one episode
    assert _digests(tmp_path / "worker") == _digests(tmp_path / "local")
    assert remote.tables["ratings"] == local.tables["ratings"]
    audit, local_audit = audit_folder(tmp_path / "worker"), audit_folder(tmp_path / "local")
    assert audit.problems == []
    assert audit.results == local_audit.results  # what `arena verify` prints to compare runs
    assert audit.digest != local_audit.digest  # the timings differ
    # A card's worker holds each game's own seed, never the card seed the ledger reveals.
    assert worker is not None
    revealed = [e["seed"] for e in read_current(tmp_path / "worker") if e["event"] == "reveal"]
    handed = [str(c) for chances in worker.chances for c in chances.values()]
    assert len(revealed) == 3  # one card a pair (derived dice: the pairs' k-th cards share it)
    assert not set(revealed) & set(handed)
    assert sum(c.startswith("game-seed:") for c in handed) == 3 * 2


def _lose_board_game(episode: Episode, message: Message, attempt: int) -> bool:
    """The worker dies just before it sends its first two episodes' replays, the first time."""
    return isinstance(message, Played) and attempt == 1 and episode.match.index < 1


def test_a_lost_worker_s_board_games_are_played_again_and_stored_once(tmp_path: Path) -> None:
    config = _config(tmp_path, '"connect-four"', SCRIPTED)
    local, _ = _play(config, tmp_path / "local")
    result, _worker = _play(
        config, tmp_path / "worker", lambda p: ThreadWorker(p, _lose_board_game)
    )
    assert result.failed == []
    assert result.played == local.played == 6
    assert _digests(tmp_path / "worker") == _digests(tmp_path / "local")
    stored = _stored(tmp_path / "worker")
    assert len(stored) == len(set(stored)) == 6
    lost = _events(tmp_path / "worker", "episode_lost")
    assert [e["episode"] for e in lost] == ["connect-four-k1-tactician-vs-random-g1",
                                            "connect-four-k1-tactician-vs-random-g2"]  # fmt: skip
    assert all("on purpose" in e["error"] and e["kept"] is None for e in lost)


def _lose_card_after_game_one(episode: Episode, message: Message, attempt: int) -> bool:
    """The first card's worker dies after it sent the card's first game, before the second."""
    return isinstance(message, Played) and attempt == 1 and episode.match.index == 0


def test_a_lost_worker_s_card_is_cancelled_kept_and_replaced(tmp_path: Path) -> None:
    config = _config(tmp_path, '"backgammon"', CARDS)
    result, _ = _play(
        config, tmp_path / "run", lambda p: ThreadWorker(p, _lose_card_after_game_one)
    )
    out = tmp_path / "run"
    assert result.failed == []
    card = "backgammon-k1-greedy-vs-random"
    assert sorted(_stored(out)) == [card, f"{card}~cancelled-a1"]
    cut = json.loads((out / "replays" / f"{card}~cancelled-a1.json").read_text())
    assert cut["integrity"]["status"] == "cancelled"
    assert cut["games"][0]["result"]["ending"] != "no-contest"  # the finished game is kept
    assert cut["games"][1]["result"]["ending"] == "no-contest"
    whole = json.loads((out / "replays" / f"{card}.json").read_text())
    assert whole["integrity"]["attempt"] == 2
    assert len(whole["games"]) == 2
    reveals = [(e["attempt"], e["status"]) for e in read_current(out) if e["event"] == "reveal"]
    assert reveals == [(1, "cancelled"), (2, "finished")]
    assert audit_folder(out).problems == []
    assert not list((out / "partial-cards").glob("*.json"))


def test_an_episode_lost_again_and_again_is_given_up_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, '"connect-four"', SCRIPTED)

    def always(episode: Episode, message: Message, attempt: int) -> bool:
        return episode.id == "connect-four-k1-random-vs-mock-g2"

    result, _ = _play(config, tmp_path / "run", lambda p: ThreadWorker(p, always))
    assert [f.episode for f in result.failed] == ["connect-four-k1-random-vs-mock-g2"]
    assert f"lost {LOST_TRIES} times" in result.failed[0].error
    assert len(_stored(tmp_path / "run")) == 5


def test_a_worker_running_other_code_stops_the_run_resumably(tmp_path: Path) -> None:
    config = _config(tmp_path, '"connect-four"', SCRIPTED)
    refused, _ = _play(config, tmp_path / "run", lambda p: ThreadWorker(p, build="0" * 64))
    assert refused.interrupted
    assert "other cog-arena code than the driver" in refused.stopped
    assert "install the driver's version on every worker" in refused.stopped
    assert _stored(tmp_path / "run") == []
    resumed, _ = _play(config, tmp_path / "run", ThreadWorker)
    assert resumed.played == 6
    assert resumed.failed == []


def test_an_event_relayed_from_a_worker_keeps_its_time_and_fields(tmp_path: Path) -> None:
    configure_logging(tmp_path / "events.jsonl", console=False)
    try:
        with structlog.contextvars.bound_contextvars(run="driver-side", episode="not-this"):
            relay({"event": "fallback_recorded", "level": "warning", "episode": "e1", "seat": 1,
                   "worker": "node-3:4242", "timestamp": "2026-01-02T03:04:05Z"})  # fmt: skip
    finally:
        close_logging()
    (event,) = _events(tmp_path, "fallback_recorded")
    assert event["timestamp"] == "2026-01-02T03:04:05Z"
    assert event["level"] == "warning"
    assert event["worker"] == "node-3:4242"
    assert event["episode"] == "e1"
    assert event["seat"] == 1
    assert event["run"] == "driver-side"


def test_executor_ray_without_ray_installed_fails_before_any_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from arena.config import ConfigError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    config = _config(tmp_path, '"connect-four"', SCRIPTED, extra='executor = "ray"')
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[ray\]'"):
        plan_run(load_config(config), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_run_may_switch_its_executor_when_it_resumes(tmp_path: Path) -> None:
    from arena.config import ConfigError

    _play(_config(tmp_path, '"connect-four"', SCRIPTED), tmp_path / "run")
    on_ray = _config(tmp_path, '"connect-four"', SCRIPTED, extra='executor = "ray"')
    assert plan_run(load_config(on_ray), tmp_path / "run").config.run.executor == "ray"
    other = _config(tmp_path, '"connect-four"', SCRIPTED, extra="record_prompts = false")
    with pytest.raises(ConfigError, match="record_prompts"):  # a key that can change a game
        plan_run(load_config(other), tmp_path / "run")


@pytest.mark.parametrize(
    "message",
    [Kept("{}", ('{"event":"a"}',)), Played("{}"), Failed("Traceback ..."), Logged(("{}",))],
    ids=lambda m: type(m).__name__,
)
def test_a_worker_s_messages_pickle_as_ray_carries_them(message: Message) -> None:
    assert pickle.loads(pickle.dumps(message)) == message
