"""When a run starts no new match: a budget reached, or the SPRT's verdict or match cap.

Every rule is asked only as a match is about to start (its first episode): a
match already started always finishes, so a stopped run holds only complete
matches. The counts cover the whole run, earlier sessions included, so that
raising a budget and running again continues where the run stopped, and a
resumed SPRT reaches the verdict an uninterrupted run reaches.

The SPRT is fed matches in schedule order (`league.sprt`): a match counts once
it is settled, both of its games stored and none of them waiting to be played
again (a no-contest under the replay cap, a card to be replaced); a later match
waits for an earlier unsettled one. The first policy of the config is the one
the test is about.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from arena.config import Config

if TYPE_CHECKING:  # the tables are imported by a run with a rule to feed
    from arena.league.sprt import SequentialTest  # numpy: a run with an SPRT only
    from arena.results.standings import GameSummary

__all__ = ["StopRules"]


class StopRules:
    """The run's budgets and sequential test, over every stored game."""

    def __init__(self, config: Config, stored: Iterable[GameSummary], spoiled: set[str]) -> None:
        run = config.run
        self.budget_usd = run.budget_usd
        self.budget_tokens = run.budget_tokens
        self.budget_matches = run.budget_matches
        self.replay_cap = run.replay_no_contest
        self.spoiled = spoiled
        """Stored episodes with a game the infrastructure spoiled (shared with the session)."""
        self.first, self.second = list(config.policies)[:2]
        self.sprt: SequentialTest | None = None
        if run.sprt is not None:  # numpy's import waits for a run that has a test
            from arena.league.sprt import SequentialTest  # numpy: a run with an SPRT only

            self.sprt = SequentialTest(run.sprt)
        self.tokens = 0
        self.cost_usd = 0.0
        self.started: set[int] = set()
        """Matches with an episode stored or handed to a worker."""
        self._games: dict[int, list[GameSummary]] = defaultdict(list)
        self._fed: set[int] = set()
        self.active = self.sprt is not None or any(
            b is not None for b in (self.budget_usd, self.budget_tokens, self.budget_matches)
        )
        """Whether any rule is set: a run without one never reads its stored games here."""
        if not self.active:
            return
        for g in stored:
            self._spend(g)
            self.started.add(g.match_index)
            if self.sprt is not None:
                self._games[g.match_index].append(g)
        for index in sorted(self._games):
            self._feed(index, pending=())

    def closed(self, match_index: int) -> str | None:
        """Why match `match_index` may not start, or None: it may (a started one always may)."""
        if not self.active or match_index in self.started:
            return None
        reason = self._reason()
        if reason is None:
            self.started.add(match_index)
        return reason

    def _reason(self) -> str | None:
        if self.budget_matches is not None and len(self.started) >= self.budget_matches:
            return f"budget_matches = {self.budget_matches} reached ({len(self.started)} matches)"
        if self.budget_tokens is not None and self.tokens >= self.budget_tokens:
            return f"budget_tokens = {self.budget_tokens:,} reached ({self.tokens:,} tokens used)"
        if self.budget_usd is not None and self.cost_usd >= self.budget_usd:
            return f"budget_usd = {self.budget_usd:g} reached (${self.cost_usd:.4f} spent)"
        test = self.sprt
        if test is not None and test.verdict is not None:
            return f"the SPRT accepted {test.verdict} after {test.matches} matches"
        if test is not None and len(self.started) >= test.max_matches:
            return f"sprt.max_matches = {test.max_matches} reached without a verdict"
        return None

    def stored(self, games: list[GameSummary], pending: Collection[int]) -> None:
        """Count a stored episode's games; `pending`: matches with an episode still to be
        played or in play (a replay queued, a card to replace)."""
        if not self.active:
            return
        for g in games:
            self._spend(g)
            if self.sprt is not None:
                self._games[g.match_index].append(g)
        for index in sorted({g.match_index for g in games}):
            self._feed(index, pending)

    def _spend(self, g: GameSummary) -> None:
        for seat in g.seats:
            self.tokens += seat.tokens_in + seat.tokens_out
            self.cost_usd += seat.cost_usd or 0.0

    def _feed(self, index: int, pending: Collection[int]) -> None:
        """Give the test match `index` once it is settled."""
        if self.sprt is None or index in self._fed or index in pending:
            return
        from arena.results.tables import (  # numpy: a run with an SPRT only
            counted_games,
            match_outcomes,
        )

        counted = counted_games(self._games[index])
        if len(counted) != 2 or any(self._to_replay(g) for g in counted):
            return
        outcome = match_outcomes(counted)[0]
        self._fed.add(index)
        del self._games[index]
        if outcome.no_contest:
            self.sprt.add(index, None)
            return
        points = sum(r for r in outcome.results if r is not None)
        self.sprt.add(index, points if outcome.first == self.first else 2 - points)

    def _to_replay(self, g: GameSummary) -> bool:
        """A game that another play replaces: spoiled under the replay cap, or of a cut card
        (its replacement card follows)."""
        from arena.record.cards import (
            CANCELLED_MARK,  # not before the first move (see test_startup)
        )
        from arena.results.tables import play_rank

        if CANCELLED_MARK in g.episode:
            return True
        return g.episode in self.spoiled and play_rank(g.episode)[0] < self.replay_cap

    def to_json(self) -> dict[str, Any]:
        """What summary.json shows: spending against the budgets, and the test."""
        return {
            "budgets": {
                "usd": self.budget_usd,
                "tokens": self.budget_tokens,
                "matches": self.budget_matches,
            },
            "spent": {
                "usd": round(self.cost_usd, 6),
                "tokens": self.tokens,
                "matches": len(self.started),
            },
            "sprt": self._sprt_json(),
        }

    def _sprt_json(self) -> dict[str, Any] | None:
        if self.sprt is None:
            return None
        shown = {"first": self.first, "second": self.second, **self.sprt.to_json()}
        capped = len(self.started) >= self.sprt.max_matches and not self._games
        if shown["status"] == "running" and capped:  # no-contests kept it under its cap
            shown["status"] = "inconclusive"
        return shown
