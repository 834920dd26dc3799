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
from tests.arena.results.leagues import lineup, match_games

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


def test_nc_counts_every_no_contest_play_in_standings_and_head_to_head_alike() -> None:
    # Match 0: game 1 a no-contest played again and won by a; game 2 won by a.
    # Match 1: a cut card's kept game 1 (a won it) and its cut game 2 (a no-contest), then
    # the replacement card: b wins game 1, game 2 drawn.
    plays = [
        _game("m0-g1", 0, 1, None), _game("m0-g1~replay1", 0, 1, (1, 0)),
        _game("m0-g2", 0, 2, (1, 0)),
        _game("m1-g1~cancelled-a1", 1, 1, (1, 0)), _game("m1-g2~cancelled-a1", 1, 2, None),
        _game("m1-g1", 1, 1, (0, 1)), _game("m1-g2", 1, 2, (0, 0)),
    ]  # fmt: skip
    tables = league_tables(plays, CONFIG, 1)
    a = next(r for r in tables["standings"]["overall"] if r["policy"] == "a")
    # Two plays ended no-contest, both replaced; three plays were replaced in all.
    assert (a["games"], a["wins"], a["draws"], a["losses"]) == (7, 2, 1, 1)
    assert (a["no_contest"], a["replayed"]) == (2, 3)
    assert a["mean_score"] == 0.25  # (+1 +1 +0 -1) / 4 counted games
    assert tables["h2h"]["a|b"] == [2, 1, 1, 2]
    assert tables["h2h"]["b|a"] == [1, 1, 2, 2]


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


# -- the standings' order ----------------------------------------------------------------------

LEAGUE = lineup(["wide", "narrow", "top", "weak", "lucky", "unlucky", "idle"])


def _league(game_of: dict[int, str] | None = None) -> list[GameSummary]:
    """A league where the mean and the rating disagree: `wide` beats `weak` twice and loses
    to `top`, `narrow` splits with `top` (wide's mean is the higher, narrow's rating);
    `lucky` and `unlucky` play only a match with a no-contest (unrated), lucky winning its
    other game; `idle` plays nothing. `game_of`: match index -> game, else connect-four."""
    schedule: list[tuple[str, str, tuple[float | None, float | None]]] = [
        ("wide", "weak", (1.0, 1.0)), ("wide", "weak", (1.0, 1.0)), ("top", "wide", (1.0, 1.0)),
        ("narrow", "top", (1.0, 0.0)), ("lucky", "weak", (None, 1.0)),
        ("unlucky", "weak", (0.0, None)),
    ]  # fmt: skip
    games = (game_of or {}).get
    return [
        g
        for i, (a, b, results) in enumerate(schedule)
        for g in match_games(i, a, b, results, games(i, "connect-four"))
    ]


def _order(rows: list[dict[str, Any]]) -> list[str]:
    return [r["policy"] for r in rows]


def test_standings_are_ordered_by_bradley_terry_then_the_unrated_by_mean_score() -> None:
    tables = league_tables(_league(), LEAGUE, 1)
    overall = tables["standings"]["overall"]
    bt = tables["ratings"]["bt"]
    assert _order(overall) == ["top", "narrow", "wide", "weak", "lucky", "unlucky", "idle"]
    rated = overall[:4]
    ratings = [bt[r["policy"]]["rating"] for r in rated]
    assert ratings == sorted(ratings, reverse=True)
    # not the mean's order: wide's mean is above narrow's, lucky's above everyone's
    means = {r["policy"]: r["mean_score"] for r in overall}
    assert means["wide"] > means["narrow"]
    assert means["lucky"] > means["top"]
    assert "lucky" in bt  # fitted on the prior alone, but without a rated match: last
    # one game: its table shows the ratings and is in the same order
    assert _order(tables["standings"]["connect-four"]) == _order(overall)


def test_with_several_games_each_games_table_is_ordered_by_its_mean_score() -> None:
    tables = league_tables(_league({2: "hex", 3: "hex"}), LEAGUE, 1)
    standings = tables["standings"]
    assert _order(standings["overall"])[:4] == ["top", "narrow", "wide", "weak"]
    for name in ("connect-four", "hex"):
        played = [r for r in standings[name] if r["games"]]
        means = [r["mean_score"] for r in played]
        assert means == sorted(means, reverse=True), name
    assert _order(standings["hex"])[:3] == ["top", "narrow", "wide"]
    # connect-four: wide and lucky won every scored game there (wide more of them)
    assert _order(standings["connect-four"])[:2] == ["wide", "lucky"]


def test_a_rating_on_the_prior_is_marked_in_the_tables() -> None:
    bt = league_tables(_league(), LEAGUE, 1)["ratings"]["bt"]
    # weak lost every rated game; lucky and unlucky played none; the others won and lost
    assert {p for p, r in bt.items() if r["on_prior"]} == {"weak", "lucky", "unlucky"}
    assert all(isinstance(r["on_prior"], bool) for r in bt.values())
