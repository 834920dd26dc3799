"""Which play of a game counts, and what the standings say about a policy's own play."""

from __future__ import annotations

from typing import Any

from arena.config import parse_config
from arena.record.replay import (
    DecisionRecord,
    FallbackRecord,
    GameRecord,
    PlyRecord,
)
from arena.results.standings import GameSummary, SeatStats, Table, _seat_stats
from arena.results.tables import counted_games, league_tables, play_rank

CONFIG = parse_config(
    {
        "run": {"name": "t", "seed": 1, "games": ["connect-four"], "matches": 1},
        "policies": {
            "a": {"kind": "scripted", "baseline": "tactician"},
            "b": {"kind": "scripted", "baseline": "random"},
        },
    }
)


def _seat(decisions: int = 10, **fallbacks: int) -> SeatStats:
    return SeatStats((100,) * decisions, dict(fallbacks))


def _game(episode: str, match: int, index: int, scores: tuple[int, int] | None) -> GameSummary:
    ending = "no-contest" if scores is None else "win"
    return GameSummary(
        episode, match, "connect-four", index, ("a", "b"), scores, "complete", ending, 10,
        (_seat(), _seat()), False,
    )  # fmt: skip


def test_a_replay_ranks_after_the_play_it_replaces_and_a_replacement_after_the_cut_card() -> None:
    plays = ["m-g1~replay2", "m-g1", "m-g1~replay1", "m-g1~cancelled-a1", "m-g1~cancelled-a2"]
    assert sorted(plays, key=play_rank) == [
        "m-g1~cancelled-a1",
        "m-g1~cancelled-a2",
        "m-g1",
        "m-g1~replay1",
        "m-g1~replay2",
    ]


def test_each_slot_counts_its_latest_play_only() -> None:
    first = _game("m-g1", 0, 1, None)  # a no-contest, played again
    again = _game("m-g1~replay1", 0, 1, (1, 0))
    other = _game("m-g2", 0, 2, (0, 1))
    assert counted_games([first, other, again]) == [again, other]


def test_a_replaced_play_is_a_no_contest_in_the_standings_and_nothing_in_the_ratings() -> None:
    replaced = [_game("m-g1", 0, 1, None), _game("m-g2", 0, 2, (1, 0))]
    played_again = [*replaced[:1], _game("m-g1~replay1", 0, 1, (1, 0)), replaced[1]]
    clean = league_tables([_game("m-g1", 0, 1, (1, 0)), replaced[1]], CONFIG, 1)
    tables = league_tables(played_again, CONFIG, 1)
    a = next(r for r in tables["standings"]["overall"] if r["policy"] == "a")
    assert (a["games"], a["wins"], a["no_contest"]) == (3, 2, 1)
    assert tables["ratings"]["elo"] == clean["ratings"]["elo"]
    assert tables["ratings"]["matches_rated"] == 1


def test_own_play_and_fallbacks_by_side() -> None:
    table = Table(["a", "b"])
    seat = SeatStats(
        (100,) * 8, {"transport": 1, "illegal": 1}, decided=8,
        sides={"infrastructure": 1, "seat": 1},
    )  # fmt: skip
    table.add(
        GameSummary(
            "e",
            0,
            "connect-four",
            1,
            ("a", "b"),
            (1, 0),
            "complete",
            "win",
            16,
            (seat, _seat(8)),
            False,
        ),
        counted=True,
    )
    row = next(r.to_json() for r in table.rows() if r.policy == "a")
    assert row["own_play"] == 0.75  # 6 of its 8 decisions
    assert row["fallbacks_by_side"] == {"seat": 1, "infrastructure": 1}


def test_decisions_nobody_was_asked_stay_out_of_the_latencies() -> None:
    # Seat 0 decides at plies 0..3; at plies 2 and 3 the battle's clock switched it off.
    plies = [
        PlyRecord(
            ply=n,
            decisions=[
                DecisionRecord(
                    seat=0,
                    alias="A",
                    move="m",
                    source="fallback" if n >= 2 else "reply",
                    latency_s=0.0 if n >= 2 else 0.5,
                ),
                DecisionRecord(seat=1, alias="B", move="m", source="reply", latency_s=0.1),
            ],
            standings=[0, 0],
        )
        for n in range(4)
    ]
    off = [
        FallbackRecord(run="r", episode="e", game_index=1, ply=n, seat=0, alias="A",
                       cause="llm_off", side=None, last_error="", attempts=[], move="m")
        for n in (2, 3)
    ]  # fmt: skip
    record = GameRecord(index=1, aliases=["A", "B"], plies=plies, fallbacks=off)
    stats = _seat_stats(record, 0)
    assert stats.latencies_ms == (500, 500)
    assert stats.decisions == 4
    assert stats.own == 2
    assert stats.sides == {}


def test_a_store_from_before_sides_reads_them_from_the_causes() -> None:
    old: dict[str, Any] = {
        "latencies_ms": [10, 20, 30], "fallbacks": {"timeout": 1, "transport": 2, "llm_off": 1},
        "tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0,
    }  # fmt: skip
    stats = SeatStats.from_json(old)
    assert stats.decisions == 3
    assert stats.sides == {"seat": 1, "infrastructure": 2}
    assert SeatStats.from_json(stats.to_json()).to_json() == stats.to_json()
