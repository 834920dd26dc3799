"""Whose failure a fallback was, and when a game did not measure its seats (worked by hand)."""

from __future__ import annotations

import pytest

from arena.record.causes import INFRASTRUCTURE, SEAT, side_of
from arena.record.replay import (
    DecisionRecord,
    FallbackRecord,
    GameRecord,
    GameResult,
    PlyRecord,
)
from arena.record.validity import (
    infrastructure_no_contest,
    infrastructure_share,
    measured,
    side_error,
)


@pytest.mark.parametrize(
    ("cause", "closed", "open_"),
    [
        ("empty", SEAT, SEAT),
        ("unreadable", SEAT, SEAT),
        ("truncated", SEAT, SEAT),
        ("illegal", SEAT, SEAT),
        ("over_budget", SEAT, SEAT),
        ("timeout", SEAT, INFRASTRUCTURE),
        ("not_connected", INFRASTRUCTURE, INFRASTRUCTURE),
        ("transport", INFRASTRUCTURE, INFRASTRUCTURE),
        ("http_status", INFRASTRUCTURE, INFRASTRUCTURE),
        ("rate_limited", INFRASTRUCTURE, INFRASTRUCTURE),
        ("provider_error", INFRASTRUCTURE, INFRASTRUCTURE),
        ("llm_off", None, None),
    ],
)
def test_each_cause_has_its_side(cause: str, closed: str | None, open_: str | None) -> None:
    assert side_of(cause, endpoint_down=False) == closed
    assert side_of(cause, endpoint_down=True) == open_


def test_a_side_the_cause_does_not_allow_is_named() -> None:
    assert side_error("timeout", SEAT) is None
    assert side_error("timeout", INFRASTRUCTURE) is None
    assert side_error("transport", INFRASTRUCTURE) is None
    assert side_error("illegal", INFRASTRUCTURE) == (
        "a fallback of cause 'illegal' (an illegal move) is recorded as the infrastructure's failure"
    )
    assert side_error("transport", SEAT) is not None
    assert side_error("transport", None) is not None


def _game(decisions: int, infra: int, seat_failures: int = 0) -> GameRecord:
    """Seat 0 decides `decisions` times, `infra` of them fallbacks on the infrastructure's
    failures and `seat_failures` on its own; seat 1 decides as often, all its own moves."""
    plies = [
        PlyRecord(
            ply=n,
            decisions=[
                DecisionRecord(seat=s, alias=("A", "B")[s], move="a", source="reply", latency_s=0.1)
                for s in (0, 1)
            ],
            standings=[0, 0],
        )
        for n in range(decisions)
    ]
    causes = ["transport"] * infra + ["illegal"] * seat_failures
    fallbacks = [
        FallbackRecord(
            run="r",
            episode="e",
            game_index=1,
            ply=n,
            seat=0,
            alias="A",
            cause=cause,
            side=side_of(cause, False),
            last_error="x",
            attempts=[],
            move="a",
        )
        for n, cause in enumerate(causes)
    ]
    return GameRecord(index=1, aliases=["A", "B"], plies=plies, fallbacks=fallbacks)


def test_the_share_counts_only_the_infrastructures_fallbacks_of_that_seat() -> None:
    game = _game(10, infra=3, seat_failures=4)
    assert infrastructure_share(game, 0) == (3, 10)
    assert infrastructure_share(game, 1) == (0, 10)


def test_a_game_over_the_share_is_a_no_contest_and_one_at_it_is_not() -> None:
    # 3 of 10 is 0.30 > 0.25: no contest. 2 of 8 is exactly 0.25: it counts.
    reason = infrastructure_no_contest(_game(10, infra=3), 0.25)
    assert reason == (
        "infrastructure: 3 of the 10 decisions of A fell back on the infrastructure's "
        "failures (more than 0.25 of them): the game did not measure the seat"
    )
    assert infrastructure_no_contest(_game(8, infra=2), 0.25) is None
    # A seat's own failures never make a no-contest, however many.
    assert infrastructure_no_contest(_game(10, infra=0, seat_failures=10), 0.25) is None
    # Share 0: any infrastructure fallback spoils the game.
    assert infrastructure_no_contest(_game(40, infra=1), 0.0) is not None
    assert infrastructure_no_contest(_game(40, infra=0), 0.0) is None


def test_only_an_infrastructure_no_contest_is_played_again() -> None:
    spoiled = GameResult(
        scores=None, reason="x", ending="no-contest", detail="infrastructure: 3 of the 10", plies=4
    )
    other_nc = GameResult(
        scores=None, reason="x", ending="no-contest", detail="a seat was withdrawn", plies=4
    )
    win = GameResult(scores=[1, 0], reason="x", ending="win", plies=4)
    assert not measured(spoiled)
    assert measured(other_nc)
    assert measured(win)


def test_a_pair_that_played_only_no_contests_is_unmeasured() -> None:
    from arena.record.validity import unmeasured_pairs

    h2h = {
        "a|b": [0, 0, 0, 4], "b|a": [0, 0, 0, 4],  # only no-contests
        "a|c": [1, 0, 0, 3], "c|a": [0, 0, 1, 3],  # one game measured
        "b|c": [0, 1, 0, 0], "c|b": [0, 1, 0, 0],  # a draw, no NC
    }  # fmt: skip
    assert unmeasured_pairs(h2h) == [("a", "b", 4)]
    assert unmeasured_pairs({}) == []


def _gateway_game(*decisions: list[tuple[str, int | None, str]]) -> GameRecord:
    """Seat 0 falls back at each decision given as its attempts (cause, status, side), each
    attempt that got a 502/504 having waited 2 s for it."""
    from arena.record.replay import AttemptRecord, FallbackAttempt

    plies, fallbacks = [], []
    for n, attempts in enumerate(decisions):
        records = [
            AttemptRecord(
                n=i + 1, prompt_sha256="0", latency_s=2.0, cause=cause, status=status,  # type: ignore[arg-type]
                retries=[{"status": status, "latency_s": 2.0}] if status else [],
            )
            for i, (cause, status, _) in enumerate(attempts)
        ]  # fmt: skip
        decision = DecisionRecord(
            seat=0, alias="A", move="a", source="fallback", latency_s=4.0, attempts=records
        )
        plies.append(PlyRecord(ply=n, decisions=[decision], standings=[0, 0]))
        fallbacks.append(
            FallbackRecord(
                run="r", episode="e", game_index=1, ply=n, seat=0, alias="A",
                cause=attempts[-1][0], side=attempts[-1][2], last_error="", move="a",  # type: ignore[arg-type]
                attempts=[
                    FallbackAttempt(n=i + 1, latency_s=2.0, cause=c, error="", status=s,  # type: ignore[arg-type]
                                    reply=None, side=side)  # type: ignore[arg-type]
                    for i, (c, s, side) in enumerate(attempts)
                ],
            )
        )  # fmt: skip
    return GameRecord(index=1, aliases=["A", "B"], plies=plies, fallbacks=fallbacks)


def test_a_timeout_after_a_gateways_504_is_the_gateways_and_a_500_is_not() -> None:
    from arena.record.validity import gateway_timeouts

    at_retry = [("http_status", 504, INFRASTRUCTURE), ("timeout", None, INFRASTRUCTURE)]
    twice = [("http_status", 502, INFRASTRUCTURE), ("http_status", 504, INFRASTRUCTURE)]
    # a 504, then the retry's own deadline: the gateway's, with its wait (no http_status
    # fallback at all is needed)
    assert gateway_timeouts(_gateway_game(at_retry, at_retry)) == {0: [2.0, 2.0]}
    assert gateway_timeouts(_gateway_game(twice)) == {0: [2.0, 2.0]}
    # a 500 follows the prompt, not the clock: not a gateway's wait
    server = [("http_status", 500, INFRASTRUCTURE), ("timeout", None, INFRASTRUCTURE)]
    assert gateway_timeouts(_gateway_game(at_retry, server)) == {}
    # a reset is no gateway's wait either
    reset = [("transport", None, INFRASTRUCTURE), ("timeout", None, INFRASTRUCTURE)]
    assert gateway_timeouts(_gateway_game(reset)) == {}
