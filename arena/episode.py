"""One episode: the game loop from the initial state to a result (SPEC 1-4).

For each game of the episode: ask the seats that must act (one parallel batch
when several act at once), feed only validated moves to the engine, record
every decision, and stop at the game's own end or its wall clock, where the
position is adjudicated by the game's rules. The result is a `Replay`.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import structlog

import games
from arena.cards import CardDealer
from arena.config import Deadlines
from arena.decisions import (
    REPLY_CUT,
    Attempt,
    Decision,
    DecisionRequest,
    decide_batch,
    switched_off,
)
from arena.prompts import PromptTemplate, SeatContext, render
from arena.replay import (
    AttemptRecord,
    DecisionRecord,
    FallbackRecord,
    GameRecord,
    PlyRecord,
    Replay,
    Spectator,
    move_json,
    write_atomic,
)
from arena.schedule import Episode, aliases
from arena.seats import ProgramPlayer, ScriptedSeat, TextSeat
from games import COMPLETE, Outcome

__all__ = ["EpisodeSetup", "SeatFactory", "cancelled_card_replay", "play_episode"]

log = structlog.get_logger("arena.episode")

SeatFactory = Callable[[str, int, int, int], ScriptedSeat | TextSeat | ProgramPlayer]
"""(policy name, match seed, game index, seat) -> the seat that policy plays through."""


@dataclass(frozen=True, slots=True)
class EpisodeSetup:
    """What an episode needs beyond its schedule entry."""

    run: str
    game: games.Game[Any]
    params: dict[str, Any]
    deadlines: Deadlines
    wall_s: float | None
    record_prompts: bool
    templates: dict[str, PromptTemplate]
    """Policy name -> its template for this game's family."""
    seat_for: SeatFactory
    authors: dict[str, str | None]
    wall_covers_episode: bool = False
    """The battle's stop covers both games of the episode; other games' each game."""
    cards: CardDealer | None = None
    """Backgammon: draws, commits and reveals each card's dice seed."""
    switch_off_turns: int | None = None
    """Switch the seats off once this many full decisions no longer fit before the stop."""


class _GameLoop:
    """The state of one game in play: seats, notes, history and the record."""

    def __init__(
        self, setup: EpisodeSetup, episode: Episode, index: int, chance: int | str
    ) -> None:
        self.setup = setup
        self.episode = episode
        self.index = index
        seed = episode.match.seed
        self.state = setup.game.initial(chance, game=index)
        self.policies = episode.seats(index)
        self.aliases = aliases(setup.game.name, seed, index)
        self.players = [setup.seat_for(self.policies[seat], seed, index, seat) for seat in (0, 1)]
        self.notes = ["", ""]
        self.history: list[str] = []
        self.record = GameRecord(
            index=index, aliases=list(self.aliases), integrity=setup.game.integrity(self.state),
            programs={
                str(seat): {"sha256": p.seat.program.sha256, "seed": p.seat.seed,
                            "node_budget": p.seat.node_budget, "timeout_s": p.timeout_s}
                for seat, p in enumerate(self.players) if isinstance(p, ProgramPlayer)
            },
        )  # fmt: skip

    async def close(self) -> None:
        """End the seats' processes (program seats), bounded even when cancelled."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
            for player in self.players:
                if isinstance(player, ProgramPlayer):
                    await player.aclose()

    def request(self, seat: int) -> DecisionRequest:
        game, state = self.setup.game, self.state
        player = self.players[seat]
        # Only a seat asked in text is shown the list; scripted and program seats find their own.
        asked = not isinstance(player, ScriptedSeat | ProgramPlayer)
        legal = game.legal_moves(state, seat) if asked else ()
        template = self.setup.templates[self.policies[seat]]
        context: list[SeatContext] = []

        def prompt(feedback: str | None) -> str:
            if not context:
                context.append(SeatContext.of(
                    game, state, seat, game_index=self.index, aliases=self.aliases,
                    history=tuple(self.history), notes=self.notes[seat], legal=legal,
                ))  # fmt: skip
            return render(template, context[0], feedback)

        return DecisionRequest(
            game,
            state,
            seat,
            player,
            prompt,
            self.setup.deadlines,
            key=game.reply_key(state),
            legal=legal,
            move_help=lambda: games.move_help(game.name, game.view(state, seat)),
        )

    def play(self, decisions: dict[int, Decision]) -> None:
        game = self.setup.game
        self.state = game.apply(self.state, {seat: d.move for seat, d in decisions.items()})
        ply = len(self.record.plies) + 1
        records = [self._decision_record(d) for d in decisions.values()]
        for d in decisions.values():
            if d.notes is not None:
                self.notes[d.seat] = d.notes
            if d.source == "fallback":
                self.record.fallbacks.append(self._fallback_record(d, ply))
        if len(decisions) == 1:
            self.history.append(str(move_json(next(iter(decisions.values())).move)))
        else:  # simultaneous moves (setups, orders) are not repeated: one may be hidden
            self.history.append(f"turn {ply}")
        standings = [game.standing(self.state, 0), game.standing(self.state, 1)]
        self.record.plies.append(
            PlyRecord(
                ply=ply,
                decisions=records,
                standings=standings,
                integrity=game.integrity(self.state),
            )
        )

    def _decision_record(self, d: Decision) -> DecisionRecord:
        attempts = [
            AttemptRecord(
                n=a.n,
                prompt_sha256=_sha(a.prompt),
                prompt=a.prompt if self.setup.record_prompts else None,
                reply=a.reply,
                latency_s=round(a.latency_s, 6),
                cause=a.cause,
                error=a.error,
                **_answer_fields(a),
            )
            for a in d.attempts
        ]
        return DecisionRecord(
            seat=d.seat,
            alias=self.aliases[d.seat],
            move=move_json(d.move),
            source=d.source,  # type: ignore[arg-type]
            say=d.say,
            latency_s=round(d.latency_s, 6),
            attempts=attempts,
            nodes=d.nodes,
        )

    def _fallback_record(self, d: Decision, ply: int) -> FallbackRecord:
        record = FallbackRecord(
            run=self.setup.run,
            episode=self.episode.id,
            game_index=self.index,
            ply=ply,
            seat=d.seat,
            alias=self.aliases[d.seat],
            cause=d.cause or "timeout",
            last_error=d.attempts[-1].error if d.attempts else "",
            attempts=[
                {
                    "n": a.n,
                    "latency_s": round(a.latency_s, 6),
                    "cause": a.cause,
                    "error": a.error,
                    "status": a.answer.status
                    if a.answer
                    else (a.failure.status if a.failure else None),
                    "reply": a.reply[:REPLY_CUT] if a.reply is not None else None,
                }
                for a in d.attempts
            ],
            move=move_json(d.move),
        )
        log.info(
            "fallback_recorded",
            ply=ply,
            seat=self.aliases[d.seat],
            cause=record.cause,
            latency_ms=round(d.latency_s * 1000, 1),
            error=record.last_error,
        )
        return record


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _answer_fields(attempt: Attempt) -> dict[str, Any]:
    answer = attempt.answer
    if answer is None:
        failure = attempt.failure
        return {"status": failure.status, "retries": failure.retries} if failure else {}
    return {
        "provider": answer.provider,
        "model": answer.model,
        "usage": answer.usage,
        "raw_usage": answer.raw_usage,
        "stop_reason": answer.stop_reason,
        "raw_stop_reason": answer.raw_stop_reason,
        "request_id": answer.request_id,
        "status": answer.status,
        "retries": answer.retries,
        "cost_usd": answer.cost_usd,
    }


async def _play_game(
    setup: EpisodeSetup, episode: Episode, index: int, stop_at: float, chance: int | str
) -> GameRecord:
    """One game, stopped by the wall clock at `stop_at` (anyio's clock) if it runs that long."""
    loop = _GameLoop(setup, episode, index, chance)
    game = setup.game
    started = time.monotonic()
    outcome: Outcome | None = None
    try:
        with (
            structlog.contextvars.bound_contextvars(game_index=index),
            anyio.move_on_after(stop_at - anyio.current_time()),
        ):
            while seats := game.to_act(loop.state):
                requests = [loop.request(seat) for seat in seats]
                if _switched_off(setup, stop_at):
                    decisions = {r.seat: switched_off(r) for r in requests}
                else:
                    decisions = await decide_batch(requests)
                outcome = _forfeit(decisions)
                if outcome is not None:
                    break
                loop.play(decisions)
    finally:
        await loop.close()
    outcome = outcome or game.outcome(loop.state) or game.adjudicate(loop.state)
    loop.record.result = {**outcome.to_json(), "plies": len(loop.record.plies)}
    loop.record.wall_s = round(time.monotonic() - started, 3)
    log.info(
        "game_finished", ending=outcome.ending, reason=outcome.reason,
        scores=list(outcome.scores) if outcome.scores else None, plies=len(loop.record.plies),
        fallbacks=len(loop.record.fallbacks), wall_s=loop.record.wall_s,
    )  # fmt: skip
    return loop.record


def _forfeit(decisions: dict[int, Decision]) -> Outcome | None:
    """SPEC 3: a program seat that forfeits loses (-1/+1); both at once is a drawn forfeit."""
    lost = sorted(seat for seat, d in decisions.items() if d.source == "forfeit")
    if not lost:
        return None
    detail = "; ".join(f"seat {s} {decisions[s].cause}: {decisions[s].error}" for s in lost)
    scores = (0, 0) if len(lost) == 2 else (-1, 1) if lost == [0] else (1, -1)
    return Outcome(scores, COMPLETE, "forfeit", detail)


def _switched_off(setup: EpisodeSetup, stop_at: float) -> bool:
    """SPEC 5: once two more full turns no longer fit before the stop, no seat is asked."""
    if setup.switch_off_turns is None:
        return False
    return stop_at - anyio.current_time() < setup.switch_off_turns * setup.deadlines.decision_s


async def play_episode(setup: EpisodeSetup, episode: Episode) -> Replay:
    """Play every game of `episode` and return its replay."""
    with structlog.contextvars.bound_contextvars(episode=episode.id, game=episode.match.game):
        if setup.cards is None:
            records = await _play_games(setup, episode, episode.match.seed)
            return _replay(setup, episode, records, {})
        dealer = setup.cards
        with dealer.card(episode.id, episode.match.k) as card:
            log.info("card_committed", commitment=card.commitment, dice=card.dice)

            def keep(records: list[GameRecord]) -> None:
                # A card cut later keeps this finished game (SPEC 7); the seed stays out of it.
                kept = _replay(setup, episode, records, {"card": card.id, "attempt": card.attempt})
                write_atomic(dealer.partial_path(card), kept.model_dump_json())

            records = await _play_games(setup, episode, card.seed, keep)
        return _replay(setup, episode, records, card.revealed())


def cancelled_card_replay(kept: Replay, reveal: dict[str, Any]) -> Replay:
    """The replay of a card cut short: its finished games, the cut one no-contest (SPEC 7)."""
    played = {g.index for g in kept.games}
    cut = [
        GameRecord(
            index=index,
            aliases=list(aliases(kept.game, int(kept.match["seed"]), index)),
            result={
                "scores": None,
                "reason": COMPLETE,
                "ending": "no-contest",
                "detail": f"card cancelled: {reveal.get('reason', 'stopped mid-card')}",
                "plies": 0,
            },
        )
        for index in (1, 2)
        if index not in played
    ]
    integrity = {
        **kept.integrity, "dice": reveal.get("dice"), "card_seed": reveal.get("seed"),
        "status": "cancelled",
    }  # fmt: skip
    return kept.model_copy(
        update={"episode": f"{kept.episode}~cancelled-a{kept.integrity.get('attempt')}",
                "games": [*kept.games, *cut], "integrity": integrity}
    )  # fmt: skip


async def _play_games(
    setup: EpisodeSetup,
    episode: Episode,
    chance: int | str,
    keep: Callable[[list[GameRecord]], None] | None = None,
) -> list[GameRecord]:
    limit = setup.wall_s if setup.wall_s is not None else math.inf
    stop_at = anyio.current_time() + limit
    records = []
    for index in episode.game_indices:
        if not setup.wall_covers_episode:
            stop_at = anyio.current_time() + limit
        records.append(await _play_game(setup, episode, index, stop_at, chance))
        if keep is not None and len(records) < len(episode.game_indices):
            keep(records)
    return records


def _replay(
    setup: EpisodeSetup, episode: Episode, records: list[GameRecord], integrity: dict[str, Any]
) -> Replay:
    match = episode.match
    return Replay(
        run=setup.run,
        episode=episode.id,
        match={
            "id": match.id,
            "index": match.index,
            "entry": match.entry,
            "k": match.k,
            "seed": match.seed,
            "first": match.first,
            "second": match.second,
        },
        game=match.game,
        rules_version=setup.game.rules_version,
        params=setup.params,
        deadlines={**setup.deadlines.model_dump(), "episode_wall_s": setup.wall_s},
        record_prompts=setup.record_prompts,
        templates={
            setup.templates[p].sha256: setup.templates[p].path for p in (match.first, match.second)
        },
        games=records,
        spectator=Spectator(
            policies={str(i): list(episode.seats(i)) for i in episode.game_indices},
            authors={name: setup.authors.get(name) for name in (match.first, match.second)},
        ),
        integrity=integrity,
    )
