"""`arena report`: a run's standings, head to head, fallback records and games.

Read from the run's league store (read-only) and its resolved config, as a
rich table, JSON or CSV. JSON and CSV hold the same rows, one per record (a
policy's standing in one game, a pair's head to head, a fallback, a game), for
a researcher's dataframe; the whole summary is the run's `summary.json`.
`arena run` prints the same standings.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from arena.config import ConfigError
from arena.league.store import LeagueStore, read_resolved
from arena.league.tables import league_tables

__all__ = ["FORMATS", "WHATS", "League", "load_league", "render", "standings_tables"]

WHATS = ("standings", "h2h", "fallbacks", "games")
FORMATS = ("table", "json", "csv")


class League:
    """A finished or running league as stored: config, seed and tables; its games and
    fallback records are read from the store as they are reported, never held whole."""

    def __init__(self, run: Path) -> None:
        self.run = run
        self.config, self.seed, _ = read_resolved(run)
        with self._store() as store:
            self.tables = league_tables(store.game_summaries(), self.config, self.seed)

    @contextmanager
    def _store(self) -> Iterator[LeagueStore]:
        try:
            store = LeagueStore.open_readonly(self.run)
        except FileNotFoundError as exc:
            raise ConfigError(str(exc)) from exc
        try:
            yield store
        finally:
            store.close()

    def games(self) -> Iterator[dict[str, Any]]:
        """Every stored game's summary, in schedule order."""
        with self._store() as store:
            for game in store.game_summaries():
                yield game.to_json()

    def fallbacks(self) -> Iterator[dict[str, Any]]:
        """Every fallback record, in schedule order."""
        with self._store() as store:
            yield from store.fallback_rows()


def load_league(run: Path) -> League:
    """The stored league of run folder `run`."""
    return League(run)


def _rating_cells(policy: str, ratings: dict[str, Any]) -> list[str]:
    elo = ratings["elo"].get(policy)
    bt = ratings["bt"].get(policy)
    return [
        f"{elo:.0f}" if elo is not None else "-",
        f"{bt['rating']:.0f} [{bt['low']:.0f}, {bt['high']:.0f}]" if bt else "-",
    ]


def standings_tables(tables: dict[str, Any], *, with_ratings: bool = True) -> list[Table]:
    """One rich table per game, then the overall one (ratings on the overall table)."""
    out = []
    standings = tables["standings"]
    names = [n for n in standings if n != "overall"]
    for name in [*names, "overall"] if len(names) > 1 or not names else names:
        title = (
            "overall (+1 win, 0 draw, -1 loss per game)"
            if name == "overall"
            else f"{name} (mean game score)"
        )
        ratings = with_ratings and (name == "overall" or len(names) == 1)
        out.append(_table(title, standings[name], tables["ratings"] if ratings else None))
    return out


def _table(title: str, rows: list[dict[str, Any]], ratings: dict[str, Any] | None) -> Table:
    table = Table(title=title)
    table.add_column(
        "policy", no_wrap=True, min_width=max((len(r["policy"]) for r in rows), default=6)
    )
    columns = ["games", "W", "D", "L", "NC", "mean", "own play", "fallbacks seat/infra"]
    columns += ["p50/p95 ms", "tokens", "cost $"]
    columns += ["Elo", "BT [95%]"] if ratings is not None else []
    for column in columns:
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("fallbacks by cause", overflow="fold")
    for r in rows:
        causes = "\n".join(f"{c} {n}" for c, n in sorted(r["fallbacks"].items())) or "-"
        sides = r.get("fallbacks_by_side", {})
        cells = [
            r["policy"], str(r["games"]), str(r["wins"]), str(r["draws"]), str(r["losses"]),
            str(r["no_contest"]), f"{r['mean_score']:+.3f}",
            f"{r.get('own_play', 1 - r['fallback_rate']):.1%}",
            f"{sides.get('seat', 0)}/{sides.get('infrastructure', 0)}",
            f"{r['latency_p50_ms']:.0f}/{r['latency_p95_ms']:.0f}",
            f"{r['tokens_in'] + r['tokens_out']:,}", "–" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}",
        ]  # fmt: skip
        if ratings is not None:
            cells += _rating_cells(r["policy"], ratings)
        table.add_row(*cells, causes)
    return table


def _h2h_table(tables: dict[str, Any], policies: list[str]) -> Table:
    table = Table(title="head to head: W-D-L (NC) of the row against the column, all games")
    table.add_column("", no_wrap=True)
    for p in policies:
        table.add_column(p, justify="center")
    for a in policies:
        cells = []
        for b in policies:
            v = tables["h2h"].get(f"{a}|{b}")
            cells.append(
                "·"
                if a == b
                else f"{v[0]}-{v[1]}-{v[2]}" + (f" ({v[3]})" if v and v[3] else "")
                if v
                else "-"
            )
        table.add_row(a, *cells)
    return table


def _rows(league: League, what: str) -> Iterable[dict[str, Any]]:
    if what == "standings":
        return [
            {**row, "game": name, "elo": league.tables["ratings"]["elo"].get(row["policy"]),
             **{f"bt_{k}": v for k, v in league.tables["ratings"]["bt"].get(row["policy"], {}).items()}}
            for name, rows in league.tables["standings"].items() for row in rows
        ]  # fmt: skip
    if what == "h2h":
        return [
            {"policy": a, "opponent": b, "wins": v[0], "draws": v[1], "losses": v[2], "no_contest": v[3]}
            for key, v in league.tables["h2h"].items() for a, b in [key.split("|", 1)]
        ]  # fmt: skip
    if what == "fallbacks":
        return league.fallbacks()
    return league.games()


def _csv(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """CSV text a few rows at a time; the first row names the columns (every row of one
    report has the same)."""
    buffer = io.StringIO()
    writer: csv.DictWriter[str] | None = None
    for row in rows:
        if writer is None:
            writer = csv.DictWriter(buffer, fieldnames=list(row))
            writer.writeheader()
        writer.writerow(
            {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in row.items()}
        )
        if buffer.tell() > 1 << 16:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def _json_list(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """A JSON list written a row at a time."""
    yield "["
    for n, row in enumerate(rows):
        yield ("," if n else "") + "\n  " + json.dumps(row)
    yield "\n]"


def render(league: League, what: str, fmt: str, console: Console) -> None:
    """Print one report of the league in one format."""
    if what not in WHATS or fmt not in FORMATS:
        raise ConfigError(
            f"--what {what} --format {fmt}: use --what {'|'.join(WHATS)} --format {'|'.join(FORMATS)}"
        )
    if fmt in ("json", "csv"):
        chunks = _json_list(_rows(league, what)) if fmt == "json" else _csv(_rows(league, what))
        for chunk in chunks:
            console.out(chunk, highlight=False, end="")
        if fmt == "json":
            console.out("", highlight=False)
    elif what == "standings":
        for table in standings_tables(league.tables):
            console.print(table)
        for ab in league.tables["ab"]:
            diff = ab.get("bt_difference")
            shown = (
                f"{diff['value']:+.0f} [{diff['low']:+.0f}, {diff['high']:+.0f}]" if diff else "n/a"
            )
            console.print(
                f"prompt A/B {ab['a']} vs {ab['b']}: BT difference {shown}, head to head {ab['h2h']}"
            )
    elif what == "h2h":
        console.print(_h2h_table(league.tables, list(league.config.policies)))
    else:
        rows = list(_rows(league, what))
        table = Table(title=f"{what} ({len(rows)})")
        keys = list(rows[0]) if rows else []
        for key in keys:
            table.add_column(key, overflow="fold")
        for row in rows:
            table.add_row(*(str(row[k])[:80] for k in keys))
        console.print(table)
