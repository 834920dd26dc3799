"""One episode: the game loop from the initial state to a result.

For each game of the episode: ask the seats that must act (one parallel batch
when several act at once), feed only validated moves to the engine, record
every decision, and stop at the game's own end or its wall clock, where the
position is adjudicated by the game's rules. Everything particular to a game
comes from its match format (clocks, aliases, the switch-off rule) and its
episode hooks (where its chance comes from, what is kept and revealed); the
loop itself is the same for every game. The result is a `Replay`.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog
from pydantic import TypeAdapter

import games
from arena.config import Deadlines
from arena.play.decisions import REPLY_CUT, decide_batch
from arena.play.match import Episode
from arena.play.prompts import PromptTemplate, SeatPrompt
from arena.play.protocol import Decision, DecisionRequest, MakesSeats
from arena.record.causes import side_of
from arena.record.hooks import EpisodeHooks
from arena.record.replay import (
    FallbackAttempt,
    FallbackRecord,
    GameRecord,
    GameResult,
    MatchRecord,
    PlyRecord,
    Replay,
    ReplyReport,
    Spectator,
    kept_reply,
    move_json,
    prompt_sha256,
)
from arena.record.validity import infrastructure_no_contest
from games import COMPLETE, Outcome

__all__ = [
    "HOLD_S",
    "EpisodeSetup",
    "Keep",
    "episode_replay",
    "play_episode",
    "play_games",
]

log = structlog.get_logger("arena.play.episode")

HOLD_S = 0.005
"""The longest a game holds the event loop between two plies before it lets others run."""


@dataclass(frozen=True, slots=True)
class EpisodeSetup:
    """What an episode of one game needs beyond its schedule entry."""

    run: str
    game: games.Game[Any]
    params: dict[str, Any]
    deadlines: Deadlines
    wall_s: float | None
    record_prompts: bool
    templates: dict[str, PromptTemplate]
    """Policy name -> its template for this game's family."""
    seat_maker: MakesSeats
    """Makes the seats of each game (the session's one `arena.seats.factory.SeatMaker`)."""
    authors: dict[str, str | None]
    hooks: EpisodeHooks
    """Where the game's chance comes from and what is kept and revealed around it."""
    max_infra_share: float | None = None
    """A game where more of a seat's decisions fell back on the infrastructure is a
    no-contest (`record.validity`); None: the rule is off."""
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Model policy name -> how it was asked (provider, model, URLs, params, layout, ...)."""
    fingerprints: dict[str, str] = field(default_factory=dict)
    """Policy name -> its fingerprint (`arena.play.fingerprint`), for spectators."""
    retry_lists_moves: dict[str, bool] = field(default_factory=dict)
    """Policy name -> list the legal moves in a retry though its template leaves them out."""
    session: int = 0
    """The run folder's session that plays the episode (0: none said)."""


class _GameLoop:
    """The state of one game in play: seats, notes, history and the record."""

    def __init__(
        self, setup: EpisodeSetup, episode: Episode, index: int, chance: int | str
    ) -> None:
        self.setup = setup
        self.episode = episode
        self.index = index
        game = setup.game
        seed = episode.match.seed
        self.state = game.initial(chance, game=index)
        self.policies = episode.seats(index)
        self.aliases = game.match_format.aliases(seed, index)
        self.players = [
            setup.seat_maker.make(game, self.policies[seat], seed=seed, index=index, seat=seat)
            for seat in (0, 1)
        ]
        self.labels = {seat: self._label(seat) for seat in (0, 1)}
        """Seat -> its alias, policy and model: the events log's names, never a prompt's."""
        self.notes = ["", ""]
        self.standings: tuple[int, int] | None = None
        """The standings after the last ply (None before the first: the prompt asks the game)."""
        self.history: list[str] = []
        self.plies: list[str] = []
        """Each ply's record as JSON text while the game is played: a long game then holds
        no objects the garbage collector must walk (its full passes pause the event loop
        for every game in flight); `finish` turns them back into records."""
        for player in self.players:
            player.observe(self.state, None)
        described = {str(seat): p.describe() for seat, p in enumerate(self.players)}
        self.programs = {seat: d for seat, d in described.items() if d is not None}
        self.integrity = game.integrity(self.state)
        """The initial state's integrity data."""
        self.fallbacks: list[FallbackRecord] = []
        self.unlisted: dict[str, dict[str, bool]] = {}
        """Seat -> whether its prompt and its retry listed the legal moves, for the seats whose
        template leaves them out."""
        # The game's record is made when it ends: the replay's models are built when a
        # process first uses them, and a game's first decision need not wait for that.

    async def close(self) -> None:
        """End what the seats hold (program seats' processes), bounded even when cancelled."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
            for player in self.players:
                await player.aclose()

    def _label(self, seat: int) -> dict[str, Any]:
        policy = self.policies[seat]
        model = self.setup.models.get(policy, {}).get("model")
        return {"alias": self.aliases[seat], "policy": policy, "model": model}

    def request(self, seat: int) -> DecisionRequest:
        game, state = self.setup.game, self.state
        player = self.players[seat]
        # Only a seat asked in text is shown the list; scripted and program seats find their own.
        legal = game.legal_moves(state, seat) if player.prompted else ()
        template = self.setup.templates[self.policies[seat]]
        prompt = SeatPrompt(
            template,
            game,
            state,
            seat,
            game_index=self.index,
            aliases=self.aliases,
            history=tuple(self.history) if player.prompted else (),  # only a prompt reads it
            notes=self.notes[seat],
            legal=legal,
            standings=self.standings,
        )
        policy = self.policies[seat]
        lists = template.lists_moves
        retry_lists = lists or self.setup.retry_lists_moves.get(policy, False)
        if legal and not lists:  # the replay says which seats were not shown the moves
            self.unlisted[str(seat)] = {"prompt": False, "retry": retry_lists}
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
            retry_lists=retry_lists,
        )

    def play(self, decisions: dict[int, Decision]) -> None:
        game = self.setup.game
        self.state = game.apply(self.state, {seat: d.move for seat, d in decisions.items()})
        ply = len(self.plies) + 1
        records = [self._decision_json(d) for d in decisions.values()]
        for d in decisions.values():
            if d.notes is not None:
                self.notes[d.seat] = d.notes
            if d.source == "fallback":
                self.fallbacks.append(self._fallback_record(d, ply))
        if len(decisions) == 1:
            self.history.append(str(move_json(next(iter(decisions.values())).move)))
        else:  # simultaneous moves (setups, orders) are not repeated: one may be hidden
            self.history.append(f"turn {ply}")
        for player in self.players:
            player.observe(self.state, self.history[-1])
        standings = (game.standing(self.state, 0), game.standing(self.state, 1))
        self.standings = standings
        record = {
            "ply": ply,
            "decisions": records,
            "standings": list(standings),
            "integrity": game.integrity(self.state),
        }
        try:  # the record is checked whole when the game finishes (`PlyRecord`)
            self.plies.append(json.dumps(record, allow_nan=False))
        except (TypeError, ValueError):  # a value plain JSON cannot hold: pydantic's own way
            self.plies.append(PlyRecord.model_validate(record).model_dump_json())

    def finish(self, outcome: Outcome, wall_s: float) -> GameRecord:
        """The game's record, whole: its plies, its result and its wall time."""
        return GameRecord(
            index=self.index,
            aliases=list(self.aliases),
            integrity=self.integrity,
            programs=self.programs,
            fallbacks=self.fallbacks,
            listed=self.unlisted,
            plies=_plies().validate_json(f"[{','.join(self.plies)}]"),
            result=GameResult(**outcome.to_json(), plies=len(self.plies)),
            wall_s=wall_s,
        )

    def _decision_json(self, d: Decision) -> dict[str, Any]:
        """The decision as its `DecisionRecord`'s fields (checked when the game finishes)."""
        if d.source == "forfeit":
            raise ValueError("a forfeit ends the game: it is no ply to record")
        attempts = []
        for a in d.attempts:
            reply, chars, whole = kept_reply(a.reply) if a.reply is not None else (None, None, None)
            attempts.append(
                {
                    "n": a.n,
                    "prompt_sha256": prompt_sha256(a.prompt, a.system_chars),
                    "prompt": a.prompt if self.setup.record_prompts else None,
                    "system_chars": a.system_chars,
                    "reply": reply,
                    **({"reply_chars": chars, "reply_sha256": whole} if chars else {}),
                    "latency_s": round(a.latency_s, 6),
                    "cause": a.cause,
                    "error": a.error,
                    **_report_fields(a.report),
                }
            )
        return {
            "seat": d.seat,
            "alias": self.aliases[d.seat],
            "move": move_json(d.move),
            "source": d.source,
            "say": d.say,
            "latency_s": round(d.latency_s, 6),
            "attempts": attempts,
            "nodes": d.nodes,
        }

    def _fallback_record(self, d: Decision, ply: int) -> FallbackRecord:
        record = FallbackRecord(
            run=self.setup.run,
            episode=self.episode.id,
            game_index=self.index,
            ply=ply,
            seat=d.seat,
            alias=self.aliases[d.seat],
            cause=d.cause or "timeout",
            side=d.attempts[-1].side if d.attempts else side_of(d.cause or "timeout", False),
            last_error=d.attempts[-1].error if d.attempts else "",
            attempts=[
                FallbackAttempt(
                    n=a.n,
                    latency_s=round(a.latency_s, 6),
                    cause=a.cause,
                    error=a.error,
                    status=a.report.status if a.report else None,
                    reply=a.reply[:REPLY_CUT] if a.reply is not None else None,
                    side=a.side,
                )
                for a in d.attempts
            ],
            move=move_json(d.move),
        )
        log.info(
            "fallback_recorded",
            ply=ply,
            seat=d.seat,
            **self.labels[d.seat],
            cause=record.cause,
            side=record.side,
            latency_ms=round(d.latency_s * 1000, 1),
            error=record.last_error,
        )
        return record


@functools.cache
def _plies() -> TypeAdapter[list[PlyRecord]]:
    """The reader of a game's plies, built when the first game ends (the replay models are
    built on first use: a run's first decision does not wait for them)."""
    return TypeAdapter(list[PlyRecord])


def _report_fields(report: ReplyReport | None) -> dict[str, Any]:
    """The provider's report as an attempt record's fields (all defaults where none came)."""
    if report is None:
        return {}
    return {name: getattr(report, name) for name in ReplyReport.model_fields}


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
            held = time.perf_counter()
            while seats := game.to_act(loop.state):
                requests = [loop.request(seat) for seat in seats]
                switched_off = _switched_off(setup, stop_at)
                decisions = await decide_batch(
                    requests, switch_off=switched_off, labels=loop.labels
                )
                outcome = _forfeit(decisions)
                if outcome is not None:
                    break
                loop.play(decisions)
                if time.perf_counter() - held > HOLD_S:
                    # Seats that never wait (scripted, switched off) would otherwise hold the
                    # event loop for a whole game, and every other game's deadlines with it.
                    # Switched off, the game still plays on to its end: no stop cuts it.
                    if switched_off:
                        await anyio.lowlevel.cancel_shielded_checkpoint()
                    else:
                        await anyio.lowlevel.checkpoint()
                    held = time.perf_counter()
    finally:
        await loop.close()
    outcome = outcome or game.outcome(loop.state) or game.adjudicate(loop.state)
    record = loop.finish(outcome, round(time.monotonic() - started, 3))
    spoiled = (
        infrastructure_no_contest(record, setup.max_infra_share)
        if setup.max_infra_share is not None
        else None
    )
    if spoiled is not None:
        outcome = Outcome(None, COMPLETE, "no-contest", spoiled)
        record.result = GameResult(**outcome.to_json(), plies=len(record.plies))
    for player in loop.players:
        player.ended(outcome)
    log.info(
        "game_finished",
        ending=outcome.ending,
        reason=outcome.reason,
        game_index=index,
        policies=list(loop.policies),
        aliases=list(loop.aliases),
        scores=list(outcome.scores) if outcome.scores else None,
        plies=len(record.plies),
        fallbacks=len(record.fallbacks),
        wall_s=record.wall_s,
    )
    return record


def _forfeit(decisions: dict[int, Decision]) -> Outcome | None:
    """A program seat that forfeits loses (-1/+1); both at once is a drawn forfeit."""
    lost = sorted(seat for seat, d in decisions.items() if d.source == "forfeit")
    if not lost:
        return None
    detail = "; ".join(f"seat {s} {decisions[s].forfeit}: {decisions[s].error}" for s in lost)
    scores = (0, 0) if len(lost) == 2 else (-1, 1) if lost == [0] else (1, -1)
    return Outcome(scores, COMPLETE, "forfeit", detail)


def _switched_off(setup: EpisodeSetup, stop_at: float) -> bool:
    """The match format's switch-off rule: once this many full decisions no longer fit
    before the stop, no prompted seat is asked."""
    turns = setup.game.match_format.switch_off_turns
    if turns is None:
        return False
    return stop_at - anyio.current_time() < turns * setup.deadlines.decision_s


async def play_episode(setup: EpisodeSetup, episode: Episode) -> Replay:
    """Play every game of `episode` and return its replay."""
    match = episode.match
    with structlog.contextvars.bound_contextvars(episode=episode.id, game=match.game):
        async with setup.hooks.open(episode.id, episode.base_id, match.k, match.seed) as scope:
            chances = {i: scope.chance for i in episode.game_indices}
            records = await play_games(setup, episode, chances, scope.keep)
    return episode_replay(setup, episode, records, scope.integrity())


Keep = Callable[[Replay], Awaitable[None]]
"""Told after each game but the last, with the replay of the games played so far."""


async def play_games(
    setup: EpisodeSetup, episode: Episode, chances: Mapping[int, int | str], keep: Keep
) -> list[GameRecord]:
    """The games of `episode`, game i started from `chances[i]` (the episode's chance, or
    what `Game.game_chance` derives of it: a process playing the games on a cluster's
    worker is given only that)."""
    match = episode.match
    fmt = setup.game.match_format
    limit = setup.wall_s if setup.wall_s is not None else math.inf
    with structlog.contextvars.bound_contextvars(episode=episode.id, game=match.game):
        records: list[GameRecord] = []
        stop_at = anyio.current_time() + limit
        for index in episode.game_indices:
            if not fmt.wall_covers_episode:
                stop_at = anyio.current_time() + limit
            records.append(await _play_game(setup, episode, index, stop_at, chances[index]))
            if len(records) < len(episode.game_indices):
                await keep(episode_replay(setup, episode, records, {}))
    return records


def episode_replay(
    setup: EpisodeSetup, episode: Episode, records: list[GameRecord], integrity: dict[str, Any]
) -> Replay:
    """The replay of `episode`'s games played so far, with the episode's integrity block."""
    match = episode.match
    return Replay(
        run=setup.run,
        episode=episode.id,
        match=MatchRecord(
            id=match.id,
            index=match.index,
            entry=match.entry,
            k=match.k,
            seed=match.seed,
            first=match.first,
            second=match.second,
        ),
        game=match.game,
        rules_version=setup.game.rules_version,
        params=setup.params,
        deadlines={**setup.deadlines.model_dump(), "episode_wall_s": setup.wall_s},
        record_prompts=setup.record_prompts,
        max_infra_share=setup.max_infra_share,
        models={p: setup.models[p] for p in (match.first, match.second) if p in setup.models},
        templates={
            setup.templates[p].sha256: setup.templates[p].path for p in (match.first, match.second)
        },
        games=records,
        spectator=Spectator(
            policies={str(i): list(episode.seats(i)) for i in episode.game_indices},
            authors={name: setup.authors.get(name) for name in (match.first, match.second)},
            fingerprints={
                name: setup.fingerprints[name]
                for name in (match.first, match.second)
                if name in setup.fingerprints
            },
        ),
        integrity=integrity,
        session=setup.session,
    )
