"""The league's tables: standings, Elo, Bradley-Terry, head to head, prompt A/B.

Everything here is derived from the stored games; `summary.json`, the CLI's
tables and `arena report` all come from `league_tables`.

The standings are ordered by Bradley-Terry point rating, best first (the
number to rank by, docs/rules.md#which-number-to-read); policies without a
rated match come after them by mean score. A game's own table is ordered the
same way when it is the league's only game (it shows the ratings then); in a
league of several games, where the ratings are the whole league's, each game's
table is ordered by its mean score.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

import games
from arena.config import Config
from arena.play.match import REPLAY_MARK
from arena.play.schema import schema_form
from arena.record.cards import CANCELLED_MARK
from arena.results.history import elo_events
from arena.results.ratings import (
    BTRating,
    MatchOutcome,
    bradley_terry,
    bt_difference,
    head_to_head,
)
from arena.results.standings import GameSummary, Row, Table

__all__ = [
    "AB_CONDITIONS",
    "SCHEMA_FORM",
    "ab_differs",
    "ab_pairs",
    "condition",
    "counted_games",
    "decoding_sent",
    "league_tables",
    "match_outcomes",
    "play_rank",
    "ranked",
    "ranked_standings",
    "rated_points",
    "with_decoding",
]


def _result(game: GameSummary, first: str) -> float | None:
    if game.scores is None:
        return None
    seat = game.policies.index(first)
    mine, theirs = game.scores[seat], game.scores[1 - seat]
    return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


def match_outcomes(games: Iterable[GameSummary]) -> list[MatchOutcome]:
    """Complete matches (both games stored), from each match's first policy's side."""
    collect = _Matches()
    for g in sorted(games, key=lambda g: g.match_index):
        collect.add(g)
    return collect.done()


def play_rank(episode: str) -> tuple[int, int, int]:
    """How late a play of an episode is, by its id: a replay after a no-contest comes after
    the play it replaces (`~replay<n>`), and a card's replacement after the cut card
    (`~cancelled-a<n>`: cut at attempt n)."""
    replay = re.search(re.escape(REPLAY_MARK) + r"(\d+)", episode)
    cut = re.search(re.escape(CANCELLED_MARK) + r"(\d+)", episode)
    return (
        int(replay.group(1)) if replay else 0,
        0 if cut else 1,
        int(cut.group(1)) if cut else 0,
    )


def counted_games(played: Iterable[GameSummary]) -> list[GameSummary]:
    """The game that counts for each of a match's slots (its game 1 and game 2): the latest
    play's. An earlier play (a no-contest played again, a cut card) counts for nothing:
    ratings stay a function of the schedule, whatever was replayed."""
    best: dict[int, GameSummary] = {}
    for g in played:
        kept = best.get(g.game_index)
        if kept is None or play_rank(g.episode) > play_rank(kept.episode):
            best[g.game_index] = g
    return [best[i] for i in sorted(best)]


class _Matches:
    """Match outcomes from games given in schedule order, holding one match's games at a time."""

    def __init__(self) -> None:
        self.outcomes: list[MatchOutcome] = []
        self._index = -1
        self._games: list[GameSummary] = []

    def add(self, g: GameSummary) -> None:
        if g.match_index < self._index:
            raise ValueError("games must come in schedule order (by match index)")
        if g.match_index != self._index:
            self._close()
            self._index = g.match_index
        self._games.append(g)

    def done(self) -> list[MatchOutcome]:
        self._close()
        return self.outcomes

    def _close(self) -> None:
        played, self._games = counted_games(self._games), []
        self.rate(played)

    def rate(self, played: list[GameSummary]) -> None:
        """Rate one match from the games that count for it (in slot order)."""
        if len(played) != 2:
            return  # a match is rated only once both of its games are in
        first, second = (
            played[0].policies if played[0].game_index == 1 else played[0].policies[::-1]
        )
        self.outcomes.append(
            MatchOutcome(
                played[0].match_index,
                first,
                second,
                tuple(_result(g, first) for g in played),
                played[0].same_author,
            )
        )


def rated_points(matches: Iterable[MatchOutcome], bt: Mapping[str, BTRating]) -> dict[str, float]:
    """The Bradley-Terry point rating of each policy with a rated match (not a no-contest,
    not same-author): what the standings are ordered by."""
    rated = {p for m in matches if m.rated for p in (m.first, m.second)}
    return {p: r.rating for p, r in bt.items() if p in rated}


def ranked(rows: Iterable[Row], points: Mapping[str, float]) -> list[Row]:
    """`rows` by Bradley-Terry point rating (`points`), best first; the policies without one
    after them. Ties, and the policies without a rating, keep the order of `rows` (a
    table's: by mean score, then wins, then name)."""
    return sorted(rows, key=lambda r: (r.policy not in points, -points.get(r.policy, 0.0)))


def ranked_standings(
    overall: list[Row], per_game: Mapping[str, list[Row]], points: Mapping[str, float]
) -> dict[str, list[dict[str, Any]]]:
    """The standings as summary.json holds them: the overall table `ranked` by the point
    ratings; a game's table too when it is the only game, by mean score among several."""
    one_game = len(per_game) <= 1
    return {
        "overall": [r.to_json() for r in ranked(overall, points)],
        **{
            name: [r.to_json() for r in (ranked(rows, points) if one_game else rows)]
            for name, rows in per_game.items()
        },
    }


AB_CONDITIONS = ("prompt", "decoding", "retry_lists_moves")
"""What an A/B pair of policies may differ in: exactly one of these, nothing else."""

SCHEMA_FORM = "schema form"
"""What a pair that differs only in its schema's form (both under `schema`) is an A/B of."""


def decoding_sent(spec: Any) -> str | None:
    """How a policy's requests are decoded, as they are sent: `free`, `json`, or `schema/`
    and the schema's form (`schema/json_schema`, `schema/json_object`, `schema/tool`,
    `schema/responseSchema`; the in-process mock's, which sends nothing, `schema`). None for
    a policy not asked in text."""
    decoding = getattr(spec, "reply_decoding", None)
    protocol = getattr(spec, "provider", None)
    if decoding == "schema" and protocol is not None:
        return f"schema/{schema_form(protocol, spec.schema_style)}"
    if decoding == "json" and protocol == "anthropic":  # refused now; an older run sent it free
        return "free"
    return decoding


def condition(spec: Any) -> dict[str, Any]:
    """A policy's A/B conditions: its prompt, its decoding as sent (`decoding_sent`) and
    whether a retry lists the moves its template leaves out."""
    return {
        "prompt": spec.prompt,
        "decoding": decoding_sent(spec),
        "retry_lists_moves": getattr(spec, "retry_lists_moves", None),
    }


def with_decoding(standings: dict[str, list[dict[str, Any]]], policies: Mapping[str, Any]) -> None:
    """Each standings row's `decoding`: its policy's as sent (`decoding_sent`), None for a
    policy that is not asked in text (or one the config no longer has)."""
    for rows in standings.values():
        for row in rows:
            spec = policies.get(row["policy"])
            row["decoding"] = decoding_sent(spec) if spec is not None else None


def ab_differs(config: Config, a: str, b: str) -> str | None:
    """The one condition policies `a` and `b` differ in, if that is all they differ in:
    one of `AB_CONDITIONS`, or `SCHEMA_FORM` for two schema policies whose requests differ
    in form only. A setting their protocol never sends is no difference (Anthropic's and
    Gemini's schema has one form whatever `schema_style` says)."""
    first, second = config.policies[a], config.policies[b]
    exclude = {*AB_CONDITIONS, "json_mode", "schema_style"}
    if first.model_dump(exclude=exclude) != second.model_dump(exclude=exclude):
        return None
    one, other = condition(first), condition(second)
    differ = [key for key in AB_CONDITIONS if one[key] != other[key]]
    if differ != ["decoding"]:
        return differ[0] if len(differ) == 1 else None
    both_schema = all(str(c["decoding"]).startswith("schema/") for c in (one, other))
    return SCHEMA_FORM if both_schema else "decoding"


def ab_pairs(config: Config) -> list[tuple[str, str]]:
    """Pairs of policies that differ in exactly one condition (`AB_CONDITIONS`): an A/B
    test of a prompt, a decoding, or listing the moves in the retry."""
    names = list(config.policies)
    return [
        (a, b)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if ab_differs(config, a, b) is not None
    ]


def league_tables(
    games: Iterable[GameSummary],
    config: Config,
    master_seed: int,
    *,
    stored: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Standings per game and overall, ratings with intervals, head to head and A/B pairs.

    Every Bradley-Terry entry carries `on_prior` (true or false): the policy won every
    rated game, lost every one or played none, so its rating and interval rest on the
    fit's prior (`arena.results.ratings.bradley_terry`). With `stored` (a session's
    snapshot, `arena.results.history.snapshot`) the Bradley-Terry ratings and A/B
    differences are read from it and nothing is fitted. The Elo comes with its events
    (`elo_events`: per match, the two policies it moved), not every policy's after
    every match.

    One pass over `games`, in schedule order (as the store gives them): a league of any
    size holds its tables and its matches' outcomes, never its games.
    """
    policies = list(config.policies)
    overall = Table(policies)
    per_game: dict[str, Table] = {}
    collect = _Matches()
    replaced_nc: list[tuple[str, str, None]] = []  # head to head counts them as NC too
    for _, match in itertools.groupby(games, key=lambda g: g.match_index):
        played = list(match)
        counted = counted_games(played)
        for g in played:
            overall.add(g, counted=g in counted)
            per_game.setdefault(g.game, Table(policies, g.game)).add(g, counted=g in counted)
            if g not in counted and g.scores is None:
                replaced_nc.append((g.policies[0], g.policies[1], None))
        collect.rate(counted)
    matches = collect.outcomes
    rated = [m for m in matches if not m.no_contest and not m.same_author]
    if stored is not None:
        bt = {p: BTRating(**r) for p, r in stored.get("bt", {}).items()}
    else:
        bt = bradley_terry(matches, seed=master_seed) if rated else {}
    final_elo, events = elo_events(matches)
    games_rows = {name: table.rows() for name, table in per_game.items()}
    tables: dict[str, Any] = {
        "standings": ranked_standings(overall.rows(), games_rows, rated_points(matches, bt)),
        "ratings": {
            "elo": final_elo,
            "elo_events": [[i, moved] for i, moved in events],
            "bt": {
                p: {"rating": r.rating, "low": r.low, "high": r.high, "on_prior": r.on_prior}
                for p, r in bt.items()
            },
            "matches_rated": len(rated),
        },
        "h2h": {
            f"{a}|{b}": list(v) for (a, b), v in head_to_head(matches, also=replaced_nc).items()
        },
        "ab": [],
    }
    with_decoding(tables["standings"], config.policies)
    own = {r["policy"]: r["own_play"] for r in tables["standings"]["overall"] if r["decisions"]}
    fallback = _fallback_names(per_game)
    for a, b in ab_pairs(config):
        differs = ab_differs(config, a, b)
        entry: dict[str, Any] = {
            "a": a,
            "b": b,
            "differs": differs,
            "h2h": tables["h2h"].get(f"{a}|{b}"),
            "own_play": {p: own[p] for p in (a, b) if p in own},
            "fallback": fallback,
        }
        if differs in ("decoding", SCHEMA_FORM):  # the sentence names what each sends
            entry["decodings"] = [decoding_sent(config.policies[p]) for p in (a, b)]
        if stored is not None:
            if f"{a}|{b}" in stored.get("ab", {}):
                entry["bt_difference"] = stored["ab"][f"{a}|{b}"]
        elif rated and a in bt and b in bt:
            diff, low, high = bt_difference(matches, a, b, seed=master_seed)
            entry["bt_difference"] = {"value": diff, "low": low, "high": high}
        tables["ab"].append(entry)
    return tables


def _fallback_names(per_game: dict[str, Table]) -> str:
    """Whose moves a fallback plays in the games of the league: the games' own baselines
    (`tactician` in the board games), named once each."""
    names = sorted({games.load(name).baseline_name or "random" for name in per_game})
    return " or ".join(names) if names else "fallback baseline"
