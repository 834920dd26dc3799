"""The history kept per game does not grow with the number of entrants (bench.history_sizes)."""

from __future__ import annotations

from bench.history_sizes import TARGET, per_game_sizes


def test_league_db_and_summary_per_game_do_not_grow_with_the_entrants() -> None:
    few, many = per_game_sizes(matches=300, entrants=(10, 40))
    assert few["games"] == many["games"] == 600  # the same games: both of each match
    for name in ("league.db", "summary.json"):
        assert many[name] <= TARGET * few[name], (name, few[name], many[name])
    # what made them grow before: every policy's Elo after every match (here 40 a match)
    assert many["league.db"] < 1500
