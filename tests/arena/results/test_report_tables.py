"""The standings as the console shows them: what ranks first, what stays at 80 columns,
the mark on a rating that rests on the prior, and the export's column for it."""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

from rich.console import Console

from arena.results.export import standings_rows
from arena.results.report import standings_tables
from arena.results.standings import SeatStats
from arena.results.tables import league_tables
from tests.arena.results.leagues import lineup, match_games

# Seats that cost something, so every low column has something to say.
BUSY = SeatStats(
    (1234,) * 20, {"illegal": 2, "timeout": 1}, tokens_in=5000, tokens_out=800, cost_usd=0.0123,
    sides={"seat": 3},
)  # fmt: skip

Schedule = list[tuple[str, str, tuple[float | None, float | None]]]

# tactician beats everyone; random and mock-chatty trade wins.
THREE: Schedule = [
    ("tactician", "random", (1.0, 1.0)), ("tactician", "mock-chatty", (1.0, 1.0)),
    ("random", "mock-chatty", (1.0, 0.0)), ("tactician", "random", (1.0, 1.0)),
    ("random", "mock-chatty", (0.5, 0.0)),
]  # fmt: skip
# The same and a fourth, greedy, that beats random and loses to tactician and mock-chatty
# (so nobody but tactician is undefeated or winless).
FOUR: Schedule = [
    *THREE, ("greedy", "random", (1.0, 0.5)), ("tactician", "greedy", (1.0, 1.0)),
    ("mock-chatty", "greedy", (1.0, 0.5)),
]  # fmt: skip
# Nobody undefeated: tactician drops a game to random.
EVEN: Schedule = [
    ("tactician", "random", (1.0, 0.0)), ("tactician", "mock-chatty", (1.0, 0.5)),
    ("random", "mock-chatty", (1.0, 0.0)),
]  # fmt: skip


def _tables(schedule: Schedule, games: tuple[str, ...] = ("connect-four",)) -> dict[str, Any]:
    names = list(dict.fromkeys(p for a, b, _ in schedule for p in (a, b)))
    played = [
        g
        for i, (a, b, results) in enumerate(schedule)
        for g in match_games(i, a, b, results, games[i % len(games)], BUSY)
    ]
    return league_tables(played, lineup(names, games), 1)


def _render(tables: dict[str, Any], width: int) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False)
    for table in standings_tables(tables, width):
        console.print(table)
    return out.getvalue()


def _header(text: str) -> str:
    """The header rows of the first table, joined (a header may take two lines)."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    rule = next(i for i, line in enumerate(lines) if line.startswith("┡"))
    return "\n".join(lines[top + 1 : rule])


def _columns(text: str) -> list[str]:
    """The first table's column headers, left to right (their lines joined)."""
    rows = [
        [cell.strip() for cell in line.strip("┃").split("┃")] for line in _header(text).splitlines()
    ]
    return [" ".join(part for part in parts if part) for parts in zip(*rows, strict=True)]


def test_at_80_columns_the_ranking_columns_stay_and_come_first() -> None:
    for schedule in (THREE, FOUR):
        text = _render(_tables(schedule), 80)
        assert max(len(line) for line in text.splitlines()) <= 80
        columns = _columns(text)
        assert columns[:6] == ["policy", "BT [95%]", "Elo K=24 seq.", "mean", "W-D-L", "NC"]
        for low in ("tokens", "cost $", "games", "p50/p95 ms"):
            assert low not in columns, low
        not_shown = text[text.index("not shown at 80 columns:") :]
        assert "tokens" in not_shown
        assert "cost $" in not_shown
        assert "by cause" not in not_shown  # said as lines instead
        assert "tactician fell back: illegal" in text


def test_a_wide_console_shows_every_column_in_order() -> None:
    columns = _columns(_render(_tables(THREE), 200))
    assert columns == [
        "policy", "BT [95%]", "Elo K=24 seq.", "mean", "W-D-L", "NC", "games", "own play",
        "fallbacks seat/infra", "forfeits", "p50/p95 ms", "tokens", "cost $", "fallbacks by cause",
    ]  # fmt: skip


def _body(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("┡"))
    end = next(i for i, line in enumerate(lines) if line.startswith("└"))
    return [line for line in lines[start + 1 : end] if line.split("│")[1].strip()]


def test_the_rows_come_in_the_ratings_order_and_the_undefeated_is_marked() -> None:
    tables = _tables(FOUR)
    bt = tables["ratings"]["bt"]
    text = _render(tables, 80)
    rows = _body(text)
    names = [line.split("│")[1].strip() for line in rows]
    assert names == sorted(bt, key=lambda p: -bt[p]["rating"])
    assert names[0] == "tactician"
    marked = [n for n, line in zip(names, rows, strict=True) if "]*" in line]
    assert marked == ["tactician"]
    assert "* won every rated game, lost every one or played none" in text


def test_without_a_rating_on_the_prior_there_is_no_mark() -> None:
    tables = _tables(EVEN)
    assert not any(r["on_prior"] for r in tables["ratings"]["bt"].values())
    text = _render(tables, 120)
    assert "*" not in text


def test_the_standings_export_says_which_rating_rests_on_the_prior() -> None:
    rows = standings_rows(_tables(FOUR, games=("connect-four", "hex")))
    overall = {r["policy"]: r for r in rows if r["game"] == "overall"}
    assert {p: r["bt_on_prior"] for p, r in overall.items()} == {
        "tactician": True, "random": False, "mock-chatty": False, "greedy": False,
    }  # fmt: skip
    assert all(r["bt_on_prior"] is None for r in rows if r["game"] != "overall")
    keys = list(rows[0])  # the columns before it keep their names and places
    assert keys[keys.index("elo") :] == [
        "elo", "bt_rating", "bt_low", "bt_high", "bt_on_prior", "fingerprint",
    ]  # fmt: skip


def test_a_replayed_column_appears_after_nc_once_a_play_was_replaced() -> None:
    assert "replayed" not in _columns(_render(_tables(THREE), 200))
    played = [
        *match_games(0, "tactician", "random", (None, 1.0)),
        *match_games(1, "tactician", "random", (1.0, 1.0)),
    ]
    again = match_games(0, "tactician", "random", (1.0, 1.0))[0]
    played.insert(1, replace(again, episode=again.episode + "~replay1"))
    tables = league_tables(played, lineup(["tactician", "random"], ("connect-four",)), 1)
    columns = _columns(_render(tables, 200))
    assert columns[columns.index("NC") + 1] == "replayed"
    rows = {r["policy"]: r for r in standings_rows(tables)}
    assert (rows["tactician"]["no_contest"], rows["tactician"]["replayed"]) == (1, 1)
