"""The backlog: what goes out next, what is out, and what a lost or spoiled episode becomes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from arena.config import parse_config
from arena.league.backlog import LOST_TRIES, Backlog
from arena.league.plan import RunPlan, plan_run
from arena.league.store import LeagueStore
from arena.league.summary import EpisodeFailure, RunResult
from arena.play.episode import play_episode
from arena.play.match import Episode


def _plan(out: Path, matches: int = 2) -> RunPlan:
    return plan_run(
        parse_config(
            {
                "run": {
                    "name": "backlog",
                    "seed": 5,
                    "games": ["connect-four"],
                    "matches": matches,
                    "concurrency": 2,
                },
                "policies": {
                    "a": {"kind": "scripted", "baseline": "random"},
                    "b": {"kind": "scripted", "baseline": "random"},
                },
            }
        ),
        out,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LeagueStore]:
    opened = LeagueStore.open_for_run(tmp_path)
    yield opened
    opened.close()


def _backlog(tmp_path: Path, store: LeagueStore, down: set[int] | None = None) -> Backlog:
    down = down if down is not None else set()
    return Backlog(_plan(tmp_path), store, set(), RunResult(), lambda m: m.index in down)


def _drain(backlog: Backlog) -> list[Episode]:
    """Every episode `take` hands out now, each handed out."""
    out = []
    while (episode := backlog.take()) is not None:
        backlog.hand_out(episode)
        out.append(episode)
    return out


def test_the_schedule_goes_out_once_and_the_backlog_is_done_when_all_is_dealt_with(
    tmp_path: Path, store: LeagueStore
) -> None:
    backlog = _backlog(tmp_path, store)
    episodes = _drain(backlog)
    assert [e.id for e in episodes] == [
        e.id for m in _plan(tmp_path).matches() for e in m.episodes()
    ]
    assert not backlog.done  # all of them are out
    for episode in episodes:
        backlog.dealt_with(episode.id)
    assert backlog.done


def test_an_episode_is_in_flight_from_its_worker_until_it_is_stored_and_done(
    tmp_path: Path, store: LeagueStore
) -> None:
    result = RunResult()
    plan = _plan(tmp_path)
    backlog = Backlog(plan, store, set(), result, lambda m: False)
    first, second = _drain(backlog)[:2]
    backlog.start(first)
    backlog.start(second)
    assert (result.in_flight, result.played) == (2, 0)
    replay = anyio.run(play_episode, plan.setup_for("connect-four"), first)
    # A finished game waits for the writer in flight; once stored, it is done in the same
    # step, so a progress line in between never counts it as neither.
    assert (result.in_flight, result.played) == (2, 0)
    backlog.stored(replay, [])
    assert (result.in_flight, result.played) == (1, 1)
    assert set(backlog.playing) == {second.id}
    assert backlog.written(second.id) == second  # a failure, dealt with by the writer
    assert (result.in_flight, result.played) == (0, 1)


def test_a_lost_episode_is_played_again_first_then_given_up(
    tmp_path: Path, store: LeagueStore
) -> None:
    backlog = _backlog(tmp_path, store)
    lost = _drain(backlog)[0]
    for _ in range(LOST_TRIES - 1):
        backlog.start(lost)
        assert backlog.lost(lost, "the node died", kept=None) is None
        assert backlog.take() == lost  # before anything else
        backlog.hand_out(lost)
    backlog.start(lost)
    failed = backlog.lost(lost, "the node died", kept=None)
    assert failed == EpisodeFailure(
        lost.id, f"its worker was lost {LOST_TRIES} times; last: the node died"
    )
    assert backlog.take() is None  # not played again: the writer stores its failure
    assert lost.id in backlog.playing


def test_a_kept_cut_card_counts_as_a_replay(tmp_path: Path, store: LeagueStore) -> None:
    result = RunResult()
    backlog = Backlog(_plan(tmp_path), store, set(), result, lambda m: False)
    lost = _drain(backlog)[0]
    backlog.lost(lost, "gone", kept=f"{lost.id}~cut")
    assert result.replays == 1


def test_episodes_of_a_match_whose_endpoints_are_down_wait_and_come_back(
    tmp_path: Path, store: LeagueStore
) -> None:
    down = {0}
    backlog = _backlog(tmp_path, store, down)
    first = _drain(backlog)
    assert first
    assert all(e.match.index != 0 for e in first)
    assert {e.match.index for e in backlog.waiting} == {0}
    down.clear()
    again = _drain(backlog)
    assert {e.match.index for e in again} == {0}


def test_an_episode_played_again_is_logged_with_its_game(
    tmp_path: Path, store: LeagueStore
) -> None:
    from structlog.testing import capture_logs

    backlog = _backlog(tmp_path, store)
    episode = _drain(backlog)[1]
    with capture_logs() as logs:
        again = backlog.replayed(episode, "a no-contest the infrastructure caused")
    (event,) = [e for e in logs if e["event"] == "episode_replayed"]
    assert (event["episode"], event["replay"]) == (episode.id, again.id)
    # an int, as in every other event that names a game
    assert (event["game"], event["game_index"]) == ("connect-four", episode.game_indices[0])
    assert isinstance(event["game_index"], int)
    assert "game_indices" not in event
