"""`arena report`: a run's standings, head to head, fallback records and games.

Read from the run's league store (read-only) and its resolved config, as a
rich table fitted to the console's width, JSON or CSV. JSON and CSV hold the
same tidy rows, one per record (a policy's standing in one game, a pair's head
to head, a fallback, a game) with flat typed columns (`arena.results.export`),
for a researcher's dataframe; the whole summary is the run's `summary.json`.
`arena run` prints the same standings.

The results sit below the league: the caller (`arena.cli.report`) opens the
store and hands it in as a `LeagueSource`, with the SPRT the league's stop
rules re-derive from it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.table import Table

from arena.config import Config, ConfigError
from arena.results.ab import ab_sentence
from arena.results.export import (
    entrant_export_rows,
    fallback_rows,
    game_rows,
    h2h_rows,
    standings_rows,
)
from arena.results.fit import Column, fitted
from arena.results.formats import FORMATS, WHATS
from arena.results.notes import order_notes, own_play_notes, same_author_note
from arena.results.standings import GameSummary
from arena.results.tables import league_tables

__all__ = [
    "League",
    "LeagueSource",
    "authors_table",
    "entrants_table",
    "render",
    "sprt_lines",
    "sprt_row",
    "standings_tables",
]


class LeagueSource(Protocol):
    """What a report reads of a run's stored results; the league store
    (`arena.league.store.LeagueStore`, opened read-only) is one."""

    def game_summaries(self) -> Iterator[GameSummary]:
        """Every stored game's summary, in schedule order, read as it is iterated."""
        ...

    def fallback_rows(self) -> Iterator[dict[str, Any]]:
        """Every fallback record, in schedule order, read as it is iterated."""
        ...

    def entrants(self) -> list[dict[str, Any]]:
        """Every stored policy (name, kind, author, fingerprint, added, retired), in the
        order first stored."""
        ...

    def latest_snapshot(self) -> tuple[str, dict[str, Any]] | None:
        """The stamp and ratings the last closed session stored, or None."""
        ...

    def results_stamp(self) -> str:
        """The stored results now, as a snapshot's stamp names them."""
        ...


class League:
    """A finished or running league as stored: config, seed and tables; its games and
    fallback records are read from `source` as they are reported, never held whole.

    A report reads the ratings the last session stored: only the standings fit them
    again, and only when results were stored since (a session killed before its end)
    or none were kept (a store from before the snapshots)."""

    def __init__(
        self,
        run: Path,
        config: Config,
        seed: int,
        source: LeagueSource,
        sprt: Callable[[], dict[str, Any] | None],
    ) -> None:
        self.run = run
        self.config = config
        self.seed = seed
        self.source = source
        self.sprt = sprt
        """The SPRT as summary.json shows it, re-derived from the stored games when a report
        asks for it (by the league's stop rules, which know the test)."""
        self.partial: str | None = None
        """How short the run was cut (`league.summary.RunStatus.sentence`), if it was."""

    @cached_property
    def _kept(self) -> tuple[str, dict[str, Any]] | None:
        latest = self.source.latest_snapshot()
        return latest if latest is not None and latest[1].get("seed") == self.seed else None

    def kept_ratings(self) -> dict[str, Any]:
        """The ratings the last session stored, whatever was stored since (none kept: no
        ratings); never a fit."""
        return self._kept[1] if self._kept is not None else {"bt": {}, "ab": {}}

    @cached_property
    def tables(self) -> dict[str, Any]:
        """The league's tables (`league_tables`), with the stored ratings when nothing was
        stored since they were fitted, else fitted anew."""
        fresh = self._kept is not None and self._kept[0] == self.source.results_stamp()
        stored = self.kept_ratings() if fresh else None
        return league_tables(self.source.game_summaries(), self.config, self.seed, stored=stored)

    @cached_property
    def counts(self) -> dict[str, Any]:
        """The tables that need no fit (head to head, W-D-L, Elo), with the stored ratings."""
        if "tables" in self.__dict__:  # fitted already: no second pass
            return self.tables
        return league_tables(
            self.source.game_summaries(), self.config, self.seed, stored=self.kept_ratings()
        )

    def games(self) -> Iterator[GameSummary]:
        """Every stored game's summary, in schedule order."""
        return self.source.game_summaries()

    def fallbacks(self) -> Iterator[dict[str, Any]]:
        """Every fallback record, in schedule order."""
        return self.source.fallback_rows()

    def entrants(self) -> list[dict[str, Any]]:
        """Every policy as an entrant (`arena.results.pool.entrant_rows`): a pool's, with
        its status; a league's policies all active."""
        from arena.results.pool import entrant_rows  # an entrants report only

        run = self.config.run
        placement = min(run.placement_matches, run.matches) if run.pool else 0
        stored = self.source.entrants()
        named = {e["name"] for e in stored}
        stored += [{"name": n, "retired": None} for n in self.config.policies if n not in named]
        bt = self.kept_ratings().get("bt", {})
        return entrant_rows(stored, self.games(), bt, placement=placement)

    def fingerprints(self) -> dict[str, str | None]:
        """Policy -> its fingerprint as the store keeps it (None: a store from before)."""
        return {e["name"]: e.get("fingerprint") for e in self.source.entrants()}


def standings_tables(
    tables: dict[str, Any], width: int, *, with_ratings: bool = True
) -> list[Table]:
    """One table per game, then the overall one (ratings on the overall table), each fitted
    to `width` columns."""
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
        out.append(_table(title, standings[name], tables["ratings"] if ratings else None, width))
    return out


_MORE = "; `arena report RUN --format csv` has every column"


def _table(
    title: str, rows: list[dict[str, Any]], ratings: dict[str, Any] | None, width: int
) -> Table:
    def cells(cell: Callable[[dict[str, Any]], str]) -> list[str]:
        return [cell(r) for r in rows]

    def sides(r: dict[str, Any]) -> str:
        by_side = r.get("fallbacks_by_side", {})
        return f"{by_side.get('seat', 0)}/{by_side.get('infrastructure', 0)}"

    columns = [Column("policy", cells(lambda r: r["policy"]), 1000, right=False)]
    if ratings is not None:  # what ranks the table, first
        columns += _rating_columns(rows, ratings)
    columns += [
        Column("mean", cells(lambda r: f"{r['mean_score']:+.3f}"), 97),
        Column("W-D-L", cells(lambda r: f"{r['wins']}-{r['draws']}-{r['losses']}"), 96),
        Column("NC", cells(lambda r: str(r["no_contest"])), 95),
        Column("games", cells(lambda r: str(r["games"])), 60),
        Column(
            "own\nplay", cells(lambda r: f"{r['own_play']:.1%}"), 90, notes=own_play_notes(rows)
        ),
        Column("fallbacks\nseat/infra", cells(sides), 85),
        Column("forfeits", cells(lambda r: str(r.get("forfeits", 0))), 55, empty=frozenset("0")),
        Column(
            "p50/p95\nms",
            cells(lambda r: f"{r['latency_p50_ms']:.0f}/{r['latency_p95_ms']:.0f}"),
            80,
        ),
        Column(
            "tokens",
            cells(lambda r: f"{r['tokens_in'] + r['tokens_out']:,}"),
            75,
            empty=frozenset("0"),
        ),
        Column(
            "cost $",
            cells(lambda r: "-" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}"),
            70,
            empty=frozenset("-"),
        ),
    ]
    if any(r.get("replayed") for r in rows):  # a league that played some plays again
        after_nc = next(i for i, c in enumerate(columns) if c.header == "NC") + 1
        columns.insert(after_nc, Column("replayed", cells(lambda r: str(r["replayed"])), 58))
    if any(r.get("decoding") not in (None, "free") for r in rows):  # a decoding A/B, a condition
        columns.append(
            Column("decoding", cells(lambda r: r.get("decoding") or "-"), 65, right=False)
        )
    causes = cells(
        lambda r: "\n".join(f"{c} {n}" for c, n in sorted(r["fallbacks"].items())) or "-"
    )
    instead = [  # left out at this width, the causes are said under the table
        f"{r['policy']} fell back: "
        + ", ".join(f"{c} {n}" for c, n in sorted(r["fallbacks"].items()))
        for r in rows
        if r["fallbacks"]
    ]
    columns.append(
        Column(
            "fallbacks\nby cause",
            causes,
            50,
            right=False,
            wrap=True,
            empty=frozenset("-"),
            instead=instead,
        )
    )
    return fitted(title, columns, width, more=_MORE)


_ON_PRIOR = (
    "* won every rated game, lost every one or played none: the rating and its interval rest "
    "on the fit's prior"
)
"""What the mark on a Bradley-Terry rating means, under the table."""


def _rating_columns(rows: list[dict[str, Any]], ratings: dict[str, Any]) -> list[Column]:
    """Bradley-Terry with its interval (what the rows are ordered by), then the sequential
    Elo; a rating that rests on the prior is marked, and the mark said under the table."""
    elo, bt = ratings["elo"], ratings["bt"]
    marked = [bool(bt.get(r["policy"], {}).get("on_prior")) for r in rows]
    intervals = [
        _interval(bt.get(r["policy"])) + ("*" if mark else "")
        for r, mark in zip(rows, marked, strict=True)
    ]
    return [  # BT flush left: the ratings line up whether marked or not
        Column("BT [95%]", intervals, 99, right=False, notes=[_ON_PRIOR] if any(marked) else []),
        Column(
            "Elo\nK=24 seq.",
            [_number(elo.get(r["policy"])) for r in rows],
            98,
            notes=order_notes(rows, ratings),
        ),
    ]


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _interval(bt: dict[str, float] | None) -> str:
    return f"{bt['rating']:.0f} [{bt['low']:.0f}, {bt['high']:.0f}]" if bt else "-"


def entrants_table(entrants: list[dict[str, Any]], width: int) -> Table:
    """A pool's entrants (`arena.results.pool.entrant_rows`) by Bradley-Terry rating (none
    rated last, in the order added), fitted to `width` columns."""
    rows = sorted(entrants, key=lambda e: -e["bt"]["rating"] if e["bt"] else float("inf"))

    def cells(cell: Callable[[dict[str, Any]], str]) -> list[str]:
        return [cell(e) for e in rows]

    def sessions(e: dict[str, Any]) -> str:
        first, last = e["first_session"], e["last_session"]
        return "-" if first is None else str(first) if last in (None, first) else f"{first}-{last}"

    why = [f"{e['name']} retired: {e['retired']}" for e in rows if e["retired"]]
    columns = [
        Column("entrant", cells(lambda e: e["name"]), 1000, right=False),
        Column("BT [95%]", cells(lambda e: _interval(e["bt"])), 100, right=False),
        Column("status", cells(lambda e: e["status"]), 95, right=False, notes=why),
        Column("games", cells(lambda e: str(e["games"])), 90, notes=same_author_note(rows)),
        Column("fingerprint", cells(lambda e: (e["fingerprint"] or "-")[:12]), 80, right=False),
        Column("sessions", cells(sessions), 70),
        Column(
            "author", cells(lambda e: e["author"] or "-"), 60, right=False, empty=frozenset("-")
        ),
    ]
    return fitted("entrants, by Bradley-Terry rating (docs/pool.md)", columns, width, more=_MORE)


def authors_table(entrants: list[dict[str, Any]], width: int) -> Table:
    """Each author's two forms side by side: the model as a player, its program."""
    from arena.results.pool import author_rows  # an authors report only

    rows = author_rows(entrants)

    def cells(cell: Callable[[dict[str, Any]], str]) -> list[str]:
        return [cell(r) for r in rows]

    def rated(prefix: str) -> Callable[[dict[str, Any]], str]:
        def shown(r: dict[str, Any]) -> str:
            if r[f"{prefix}_bt_rating"] is None:
                return "-"
            return _interval({k: r[f"{prefix}_bt_{k}"] for k in ("rating", "low", "high")})

        return shown

    columns = [
        Column("author", cells(lambda r: r["author"]), 1000, right=False),
        Column("as a player", cells(lambda r: r["player"] or "-"), 90, right=False),
        Column("BT [95%]", cells(rated("player")), 95, right=False),
        Column("as an author", cells(lambda r: r["program"]), 90, right=False),
        Column("BT [95%] ", cells(rated("program")), 95, right=False),
    ]
    title = "models and the programs they wrote, rated against everyone else (docs/authors.md)"
    return fitted(title, columns, width, more=_MORE)


def _h2h_table(tables: dict[str, Any], policies: list[str]) -> Table:
    table = Table(
        title="head to head: W-D-L (NC) of the row against the column, every game of every "
        "complete match (the standings also count the games of a match cut short)"
    )
    table.add_column("", no_wrap=True)
    for p in policies:
        table.add_column(p, justify="center", overflow="fold")
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


def _texts(rows: list[dict[str, Any]], key: str) -> list[str]:
    """Column `key` of tidy rows as cell texts (empty for null)."""
    return ["" if r[key] is None else str(r[key]) for r in rows]


def _games_table(rows: list[dict[str, Any]], width: int) -> Table:
    cells = partial(_texts, rows)
    scores = ["NC" if r["no_contest"] else f"{r['score_0']}:{r['score_1']}" for r in rows]
    fallbacks = [f"{r['fallbacks_0']}/{r['fallbacks_1']}" for r in rows]
    columns = [
        Column("match", cells("match_index"), 1000),
        Column("game", cells("game"), 95, right=False),
        Column("g", cells("game_index"), 85),
        Column("seat 0", cells("policy_0"), 100, right=False),
        Column("seat 1", cells("policy_1"), 100, right=False),
        Column("score", scores, 98),
        Column("ending", cells("ending"), 80, right=False),
        Column("plies", cells("plies"), 70),
        Column("fallbacks", fallbacks, 75),
        Column("episode", cells("episode"), 10, right=False),
    ]
    return fitted(f"games ({len(rows)})", columns, width, more=_MORE)


def _fallbacks_table(rows: list[dict[str, Any]], width: int) -> Table:
    cells = partial(_texts, rows)
    columns = [
        Column("match", cells("match_index"), 1000),
        Column("game", cells("game"), 90, right=False),
        Column("g", cells("game_index"), 80),
        Column("ply", cells("ply"), 85),
        Column("policy", cells("policy"), 95, right=False),
        Column("cause", cells("cause"), 100, right=False),
        Column("side", cells("side"), 70, right=False),
        Column("move", cells("move"), 75, right=False),
        Column("last error", cells("last_error"), 60, right=False, wrap=True),
        Column("alias", cells("alias"), 20, right=False),
        Column("episode", cells("episode"), 10, right=False),
    ]
    return fitted(f"fallbacks ({len(rows)})", columns, width, more=_MORE)


def sprt_lines(sprt: dict[str, Any]) -> list[str]:
    """The SPRT as the console and the league page show it: verdict, LLR and bounds,
    counts, Elo."""
    first, second = sprt["first"], sprt["second"]
    verdict = {
        "H1": f"H1 accepted: {first} is stronger than {second} by at least {sprt['elo1']:g} Elo",
        "H0": f"H0 accepted: {first} is not stronger than {second} by more than {sprt['elo0']:g} Elo",
        "inconclusive": f"inconclusive: max_matches = {sprt['max_matches']} reached without a verdict",
        "running": "no verdict yet",
    }[sprt["status"]]
    after = sprt["after"]["matches"]
    return [
        f"SPRT {first} vs {second}: {verdict} ({sprt['matches']} matches counted"
        + (f", {after} more finished after the verdict and left out" if after else "")
        + ")",
        f"  LLR {sprt['llr']:+.3f} in [{sprt['lower']:+.3f}, {sprt['upper']:+.3f}]  "
        f"(elo0 {sprt['elo0']:g}, elo1 {sprt['elo1']:g}, alpha {sprt['alpha']:g}, beta {sprt['beta']:g})",
        "  pentanomial (first's points 0, 0.5, 1, 1.5, 2): "
        + " ".join(str(n) for n in sprt["pentanomial"])
        + (
            f"; {sprt['no_contests']} no-contest match(es) not counted"
            if sprt["no_contests"]
            else ""
        ),
        f"  Elo {_estimate(sprt['elo'])}  normalised Elo {_estimate(sprt['nelo'])}  (95%)",
    ]


def _estimate(e: dict[str, float | None]) -> str:
    def number(x: float | None) -> str:
        return "n/a" if x is None else f"{x + 0.0:+.1f}"  # + 0.0: no "-0.0"

    return f"{number(e['value'])} [{number(e['low'])}, {number(e['high'])}]"


def sprt_row(sprt: dict[str, Any]) -> dict[str, Any]:
    """The SPRT as one flat row."""
    row: dict[str, Any] = {"first": sprt["first"], "second": sprt["second"]}
    row |= {k: sprt[k] for k in ("elo0", "elo1", "alpha", "beta", "max_matches", "status")}
    row |= {k: sprt[k] for k in ("verdict", "decided_at", "llr", "lower", "upper", "matches")}
    row |= {f"pentanomial_{n}": count for n, count in enumerate(sprt["pentanomial"])}
    row |= {"no_contests": sprt["no_contests"], "after_verdict": sprt["after"]["matches"]}
    for name in ("elo", "nelo"):
        e = sprt[name]
        row |= {name: e["value"], f"{name}_low": e["low"], f"{name}_high": e["high"]}
    return row


def _rows(league: League, what: str) -> Iterable[dict[str, Any]]:
    if what == "sprt":
        sprt = league.sprt()
        return [sprt_row(sprt)] if sprt else []
    if what == "standings":
        return standings_rows(league.tables, league.fingerprints())
    if what == "entrants":
        return entrant_export_rows(league.entrants())
    if what == "authors":
        from arena.results.pool import author_rows  # an authors report only

        return author_rows(league.entrants())
    if what == "h2h":
        return h2h_rows(league.counts)
    if what == "fallbacks":
        return fallback_rows(league.fallbacks())
    return game_rows(league.games())


def _csv(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """CSV text a few rows at a time; the first row names the columns (every row of one
    report has the same)."""
    buffer = io.StringIO()
    writer: csv.DictWriter[str] | None = None
    for row in rows:
        if writer is None:
            writer = csv.DictWriter(buffer, fieldnames=list(row))
            writer.writeheader()
        writer.writerow(row)
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
    if what == "sprt" and league.config.run.sprt is None:
        raise ConfigError(f"{league.run} has no [run.sprt]: --what sprt reports an SPRT run")
    if fmt in ("json", "csv"):
        chunks = _json_list(_rows(league, what)) if fmt == "json" else _csv(_rows(league, what))
        for chunk in chunks:
            console.out(chunk, highlight=False, end="")
        if fmt == "json":
            console.out("", highlight=False)
    elif what == "standings":
        for table in standings_tables(league.tables, console.width):
            console.print(table)
        sprt = league.sprt() if league.config.run.sprt is not None else None
        for ab in league.tables["ab"]:
            console.print(
                ab_sentence(ab, sprt, partial=league.partial), highlight=False, markup=False
            )
    elif what == "h2h":
        console.print(_h2h_table(league.counts, list(league.config.policies)))
    elif what == "entrants":
        console.print(entrants_table(league.entrants(), console.width))
    elif what == "authors":
        console.print(authors_table(league.entrants(), console.width))
    elif what == "sprt":
        sprt = league.sprt()
        assert sprt is not None  # the config has [run.sprt], checked above
        for line in sprt_lines(sprt):
            console.print(line, highlight=False, markup=False)
    else:
        rows = list(_rows(league, what))
        fit = _games_table if what == "games" else _fallbacks_table
        console.print(fit(rows, console.width))
