"""From a policy to the seat it plays through in one game.

A session has one `SeatMaker`, built with what its seats share (the provider
pool, the endpoints' circuits, the response cache, the play page's desk, the
programs' registrations); the game loop asks it for each seat of each game.
The kind of seat follows from the policy's type, through one table of
builders. A seat's randomness derives from the match seed, the game index,
the seat and the policy, so the same config plays the same games; a model's
seats share the run's provider pool; a program's seat starts its own
sandboxed child.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import games
from arena.config import (
    Config,
    HumanPolicy,
    LlmPolicy,
    MockPolicy,
    ProgramPolicy,
    ScriptedPolicy,
)
from arena.play.protocol import Seat
from arena.redact import Redactor
from arena.seats.scripted import ScriptedSeat

if TYPE_CHECKING:  # each kind of seat is imported when a run first seats one
    import providers
    from arena.programs import ProgramInfo
    from arena.seats.breaker import Breakers
    from arena.seats.cache import ResponseCache
    from arena.seats.cut import CuttableEpisode
    from arena.seats.desk import Desk

__all__ = ["SeatMaker"]


def _no_cache() -> ResponseCache | None:
    return None


@dataclass(frozen=True)
class SeatMaker:
    """Every seat of one session, each made from its policy (`arena.play.protocol.MakesSeats`).

    A model's seat needs the run's open provider `pool` (its replicas counted on
    `breakers`, if given); a person's seat a table of the play page's `desk`, and the
    scope of its `episode`; a program's seat its registration in `programs`.
    """

    config: Config
    programs: Mapping[str, ProgramInfo] = field(default_factory=dict)
    pool: providers.Providers | None = None
    breakers: Breakers | None = None
    desk: Desk | None = None
    redactor: Redactor = field(default_factory=Redactor)
    """Replaces the run's secrets in what a model's seat records."""
    commits: Mapping[str, int] = field(default_factory=dict)
    """Program policy -> the ledger line of its commit, which its games record."""
    response_cache: Callable[[], ResponseCache | None] = _no_cache
    """The run's response cache, which a model's seat asks first, or None. It is asked for
    with every seat, so a cache is opened (and its opening logged) with the first seat a
    session makes, whatever its kind."""
    episode: CuttableEpisode | None = None
    """The episode these seats play in (`in_episode`): a person's table gets its scope,
    which a stop cuts while the game waits on nobody but people."""

    def in_episode(self, episode: CuttableEpisode) -> SeatMaker:
        """This maker for the seats of one `episode`, played in its scope."""
        return replace(self, episode=episode)

    def make(self, game: games.Game[Any], policy: str, *, seed: int, index: int, seat: int) -> Seat:
        """The seat `policy` plays through at `seat` of game `index` of `game`'s match on
        `seed`."""
        self.response_cache()  # with every seat: see the field
        spec = self.config.policies[policy]
        build = _BUILDERS.get(type(spec))
        if build is None:
            known = ", ".join(sorted(kind.__name__ for kind in _BUILDERS))
            raise TypeError(
                f"policy {policy!r}: no seat is made for a {type(spec).__name__} (known: {known})"
            )
        return build(self, spec, _Place(game, policy, seed, index, seat))


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a seat sits: the game, the policy, the match seed, the game's index, the seat."""

    game: games.Game[Any]
    policy: str
    seed: int
    index: int
    seat: int

    def rng(self) -> random.Random:
        """The seat's own randomness."""
        return random.Random(f"{self.seed}:{self.index}:{self.seat}:{self.policy}")


def _scripted(maker: SeatMaker, spec: ScriptedPolicy, place: _Place) -> Seat:
    return ScriptedSeat(spec.baseline, place.rng())


def _mock(maker: SeatMaker, spec: MockPolicy, place: _Place) -> Seat:
    from arena.seats.mock import MockSeat  # a kind's seat module loads with its first seat

    return MockSeat(place.rng(), spec.faults, spec.latency_ms / 1000, decoding=spec.decoding)


def _program(maker: SeatMaker, spec: ProgramPolicy, place: _Place) -> Seat:
    from arena.programs import ProgramRunner  # a kind's seat module loads with its first seat
    from arena.seats.program import ProgramPlayer

    where = f"{place.seed}:{place.index}:{place.seat}:program"
    info, run = maker.programs[place.policy], maker.config.run
    program = ProgramRunner(
        info,
        seed=int(hashlib.sha256(where.encode()).hexdigest()[:8], 16),
        node_budget=run.node_budget,
        sandbox=run.sandbox,
        program_uids=run.program_uids,
        trusted=info.trusted,
    )
    timeout = spec.timeout_s or place.game.match_format.program_timeout_s
    if timeout is None:
        raise ValueError(
            f"policy {place.policy!r} is a program, and programs do not play {place.game.name}"
        )
    return ProgramPlayer(program, timeout, commit=maker.commits.get(place.policy))


def _human(maker: SeatMaker, spec: HumanPolicy, place: _Place) -> Seat:
    if maker.desk is None:
        raise RuntimeError(
            f"policy {place.policy!r} is a person: its seats need the run's play page (arena "
            "run serves one while a run has a human policy)"
        )
    from arena.seats.human import HumanSeat  # a kind's seat module loads with its first seat

    table = maker.desk.table(place.game, place.seed, place.index, place.seat, episode=maker.episode)
    return HumanSeat(table, spec.deadlines(), spec.first_open_s)


def _model(maker: SeatMaker, spec: LlmPolicy, place: _Place) -> Seat:
    pool = maker.pool
    if pool is None:
        raise RuntimeError(
            f"policy {place.policy!r} is a model: its seats need the run's open provider pool"
        )
    from arena.seats.llm import LlmSeat, provider_specs  # the HTTP stack: runs with models only

    breakers = maker.breakers
    replicas = [
        (pool.client(p), breakers.circuit(p) if breakers is not None else None)
        for p in provider_specs(spec)
    ]
    client, circuit = replicas[0]
    return LlmSeat(client, spec, maker.redactor, circuit, replicas[1:], maker.response_cache())


_BUILDERS: dict[type[Any], Callable[[SeatMaker, Any, _Place], Seat]] = {
    ScriptedPolicy: _scripted,
    MockPolicy: _mock,
    ProgramPolicy: _program,
    HumanPolicy: _human,
    LlmPolicy: _model,
}
"""Each kind of policy (its config model) -> the builder of its seats."""
