"""The league page's data: standings, ratings, head to head, fallbacks and the games.

`summary.json` is the source when the run has written it. While a run is in
progress it has not: the same tables are then derived from the games of the
replays drawn so far (`Drawn`), with `arena.results.standings`, in the order
`summary.json` will have (`arena.results.tables.ranked_standings`: by
Bradley-Terry), so a served league page fills in as games finish. The site
keeps of each replay only what this page needs, never the replay itself.
A standing pool's page has its entrants and rating history besides
(`arena.viewer.pool`), under `pool`; a league's has `pool: null`.
An A/B pair (two policies that differ in one condition: prompt, decoding or
retry_lists_moves) reads as the sentence `arena run` and `arena report` print
(`arena.results.ab.ab_sentence`), under `ab`; like the ratings, from
summary.json only, so a run in progress shows none yet.
The header counts the episodes played (`episodes_played`: those the store
holds, or the replays so far) against the most the run plans
(`episodes_planned`: summary.json's `episodes`, the plan's count), which an
SPRT or a budget may stop it well short of; a run cut short (its last session
killed or stopped, `league.summary.run_status`) says so under `partial`, and so do its A/B
sentences.
The games are read a row at a time (from the store, else `games.jsonl`, else
summary.json) and the site writes them a page at a time (`site.write_game_pages`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import structlog

from arena.config import Config, ConfigError
from arena.league.store import DB_NAME, LeagueStore
from arena.league.summary import GAMES_NAME, read_summary_head, run_status
from arena.record.replay import Replay, load_replay
from arena.results.ab import ab_sentence
from arena.results.ratings import bradley_terry, pair_tallies
from arena.results.report import sprt_lines
from arena.results.standings import GameSummary, by_game, standings, summarise
from arena.results.tables import match_outcomes, ranked_standings, rated_points, with_decoding
from arena.viewer.pool import is_pool, pool_data, pool_so_far, revealed_sources

__all__ = ["Drawn", "h2h_from_games", "league_data"]

log = structlog.get_logger("arena.viewer")


@dataclass(frozen=True, slots=True)
class Drawn:
    """What the league page needs of one replay: its episode and seed (a site of thousands
    of replays keeps this much of each, never the replay)."""

    episode: str
    seed: int

    @classmethod
    def of(cls, replay: Replay) -> Drawn:
        """The page's part of `replay`."""
        return cls(replay.episode, replay.match.seed)


def league_data(
    run: Path, replays: dict[str, Drawn], pages: set[str]
) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """Everything the league page shows, and apart from it (to be written as they come)
    its rows of games; `replays` by file stem, `pages` the stems with a page."""
    summary = read_summary_head(run / "summary.json")
    in_progress = summary is None
    config = _read_json(run / "config.resolved.json") or {}
    pool = is_pool(summary, config)
    games: Callable[[], Iterable[dict[str, Any]]]
    if summary is None:
        summary = _summary_from_replays(run, config, pool=pool)
        played = summary.pop("played")
        games = partial(iter, summary.pop("games"))
    elif (run / DB_NAME).exists():  # the store holds the games: read them as they are drawn
        games = partial(_stored_rows, run)
        played = _stored_episodes(run)
    elif (run / GAMES_NAME).exists():  # games.jsonl: the same rows, a line at a time
        games = partial(_jsonl_rows, run / GAMES_NAME)
        played = len({g["episode"] for g in games()})
    else:
        rows = (_read_json(run / "summary.json") or {}).get("games", [])
        played = len({g["episode"] for g in rows})
        games = partial(iter, rows)
    cut = run_status(run).sentence()
    episode_pages = {r.episode: stem for stem, r in replays.items() if stem in pages}
    tables = {name: [_row(r) for r in rows] for name, rows in summary.get("standings", {}).items()}
    overall = tables.get("overall", [])
    data = {
        "kind": "pool" if pool else "league",
        "run": summary.get("run", run.name),
        "seed": summary.get("seed"),
        "in_progress": in_progress,
        "episodes_played": played,
        "episodes_planned": summary.get("episodes"),
        "failed": summary.get("failed", []),
        "standings": tables,
        "ratings": _ratings(summary.get("ratings")),
        "h2h": summary.get("h2h") or h2h_from_games(games()),
        "h2h_source": "summary" if summary.get("h2h") else "games",
        "fallbacks": _fallback_table(overall),
        "stopped_by": summary.get("stopped_by"),
        "sprt": sprt_lines(summary["sprt"]) if summary.get("sprt") else None,
        "partial": cut,
        "ab": [
            {
                "pair": f"{ab['a']}|{ab['b']}",
                "sentence": ab_sentence(ab, summary.get("sprt"), partial=cut),
            }
            for ab in summary.get("ab") or []
        ],
        "pool": pool_data(summary, revealed_sources(run)) if pool else None,
    }
    return data, (_game_row(g, episode_pages, replays) for g in games())


def _ratings(ratings: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ratings the page shows: without the Elo after each match (`elo_events`, or an
    older summary's `elo_history`), which grow with the matches; a pool's page draws the
    history from each session's ratings (`history`)."""
    if ratings is None:
        return None
    return {k: v for k, v in ratings.items() if k not in ("elo_events", "elo_history")}


def _jsonl_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The games of `games.jsonl`, one line at a time."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def _stored_rows(run: Path) -> Iterator[dict[str, Any]]:
    store = LeagueStore.open_readonly(run)
    try:
        for game in store.game_summaries():
            yield game.to_json(latencies=False)
    finally:
        store.close()


def _stored_episodes(run: Path) -> int:
    """How many episodes the store holds the results of."""
    store = LeagueStore.open_readonly(run)
    try:
        return len(store.finished_episodes())
    finally:
        store.close()


def _planned_episodes(run: Path) -> int | None:
    """How many episodes the run plans at most, as summary.json will say (the plan's
    count); None when its resolved config cannot be read."""
    from arena.league.lineup import read_resolved  # a run in progress only
    from arena.league.plan import RunPlan

    try:
        config, master, _ = read_resolved(run)
    except ConfigError:
        return None
    return RunPlan(config, master, run, templates={}).episode_count()


def h2h_from_games(games_list: Iterable[dict[str, Any]]) -> dict[str, list[int]]:
    """`"first|second": [w, d, l, nc]` of first against second, from the finished games."""
    tallies = pair_tallies((*g["policies"], _result(g["scores"])) for g in games_list)
    return {f"{a}|{b}": list(tally) for (a, b), tally in tallies.items()}


def _result(scores: list[int] | None) -> float | None:
    """A game's result for the policy at seat 0: 1, 0.5 or 0; None for a no-contest."""
    if scores is None:
        return None
    return 1.0 if scores[0] > scores[1] else 0.5 if scores[0] == scores[1] else 0.0


def _fallback_table(overall: list[dict[str, Any]]) -> dict[str, Any]:
    """Fallbacks by cause (columns) and policy (rows), from the overall standings."""
    causes: Counter[str] = Counter()
    for row in overall:
        causes.update(row.get("fallbacks", {}))
    return {
        "causes": sorted(causes, key=lambda c: (-causes[c], c)),
        "rows": [
            {
                "policy": row["policy"],
                "decisions": row.get("decisions", 0),
                "rate": row.get("fallback_rate", 0.0),
                "by_cause": row.get("fallbacks", {}),
            }
            for row in overall
        ],
    }


def _row(row: dict[str, Any]) -> dict[str, Any]:
    """A standings row with its latency in one field, whichever summary wrote it.

    summary.json has carried the mean latency in seconds and, later, the
    median and 95th percentile in milliseconds; the page shows what is there.
    """
    out = dict(row)
    if "latency_p50_ms" in row:
        out["latency_ms"] = row["latency_p50_ms"]
    elif "mean_latency_s" in row:
        out["latency_ms"] = row["mean_latency_s"] * 1000
    return out


def _seat_fallbacks(g: dict[str, Any]) -> list[dict[str, int]]:
    """Fallback causes per seat of a summary's game row (`seats[i].fallbacks` or `fallbacks[i]`)."""
    if "seats" in g:
        return [seat.get("fallbacks", {}) for seat in g["seats"]]
    return list(g.get("fallbacks", [{}, {}]))


def _game_row(
    g: dict[str, Any], episode_pages: dict[str, str], replays: dict[str, Drawn]
) -> dict[str, Any]:
    stem = episode_pages.get(g["episode"])
    replay = replays.get(stem) if stem is not None else None
    fallbacks = _seat_fallbacks(g)
    return {
        **{k: v for k, v in g.items() if k != "seats"},
        "fallbacks": fallbacks,
        "fallback_count": sum(sum(seat.values()) for seat in fallbacks),
        "seed": replay.seed if replay is not None else None,
        "page": None if stem is None else f"games/{stem}.html#game={g['game_index']}",
    }


def _policies(config: dict[str, Any]) -> dict[str, Any]:
    """The resolved config's policies as the config reads them (none, if it cannot)."""
    try:
        return dict(
            Config.model_validate({k: v for k, v in config.items() if k != "resolved"}).policies
        )
    except ValueError:
        return {}


def _summary_from_replays(run: Path, config: dict[str, Any], *, pool: bool) -> dict[str, Any]:
    """What summary.json would say about the replays written so far (read one at a time),
    and under `played` how many episodes they are; `config` the run's resolved config,
    `pool` whether it is a standing pool's."""
    finished: list[GameSummary] = []
    for path in sorted((run / "replays").glob("*.json")):
        try:
            finished.extend(summarise(load_replay(path)))
        except Exception:  # whatever the file holds: the site lists it among the problems
            continue
    finished.sort(key=lambda g: (g.match_index, g.game_index))
    policies = list(config.get("policies", {})) or sorted({p for g in finished for p in g.policies})
    matches = match_outcomes(finished)
    # the order needs only the point ratings, the fit to the matches themselves
    points = rated_points(matches, bradley_terry(matches, seed=0, resamples=1))
    per_game = {
        name: standings(group, policies, game=name) for name, group in by_game(finished).items()
    }
    summary = {
        "run": config.get("run", {}).get("name", run.name),
        "seed": config.get("run", {}).get("seed"),
        "episodes": _planned_episodes(run),
        "played": len({g.episode for g in finished}),
        "standings": ranked_standings(standings(finished, policies), per_game, points),
        "games": [g.to_json(latencies=False) for g in finished],
    }
    with_decoding(summary["standings"], _policies(config))
    if pool:
        try:
            summary |= pool_so_far(run, finished)
        except ConfigError as exc:  # the page shows the pool without its entrants
            log.warning("pool_not_derived", run=str(run), error=str(exc))
    return summary


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
