"""From a policy to the seat it plays through in one game.

A seat's randomness derives from the match seed, the game index, the seat
and the policy, so the same config plays the same games; a model's seats
share the run's provider pool; a program's seat starts its own sandboxed
child.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
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
    from arena.seats.desk import Desk

__all__ = ["make_seat"]


def make_seat(
    config: Config,
    programs: Mapping[str, ProgramInfo],
    game: games.Game[Any],
    policy: str,
    seed: int,
    index: int,
    seat: int,
    pool: providers.Providers | None = None,
    redactor: Redactor | None = None,
    breakers: Breakers | None = None,
    cache: ResponseCache | None = None,
    desk: Desk | None = None,
) -> Seat:
    """The seat `policy` plays through at `seat` of game `index` of a match on `seed`; a
    model's seat asks the run's response `cache` first, if it has one; a person's seat is
    a table of the run's play page `desk`."""
    spec = config.policies[policy]
    rng = random.Random(f"{seed}:{index}:{seat}:{policy}")
    if isinstance(spec, ScriptedPolicy):
        return ScriptedSeat(spec.baseline, rng)
    if isinstance(spec, MockPolicy):
        from arena.seats.mock import MockSeat

        return MockSeat(rng, spec.faults, spec.latency_ms / 1000)
    if isinstance(spec, ProgramPolicy):
        from arena.programs import ProgramSeat
        from arena.seats.program import ProgramPlayer

        digest = hashlib.sha256(f"{seed}:{index}:{seat}:program".encode()).hexdigest()
        program = ProgramSeat(
            programs[policy], seed=int(digest[:8], 16), node_budget=config.run.node_budget
        )
        timeout = spec.timeout_s or game.match_format.program_timeout_s
        if timeout is None:
            raise ValueError(
                f"policy {policy!r} is a program, and programs do not play {game.name}"
            )
        return ProgramPlayer(program, timeout)
    if isinstance(spec, HumanPolicy):
        if desk is None:
            raise RuntimeError(
                f"policy {policy!r} is a person: its seats need the run's play page (arena run "
                "serves one while a run has a human policy)"
            )
        from arena.seats.human import HumanSeat

        return HumanSeat(desk.table(game, seed, index, seat), spec.deadlines())
    if not isinstance(spec, LlmPolicy) or pool is None:
        raise RuntimeError(
            f"policy {policy!r} is a model: its seats need the run's open provider pool"
        )
    from arena.seats.llm import LlmSeat, provider_specs

    replicas = [
        (pool.client(p), breakers.circuit(p) if breakers is not None else None)
        for p in provider_specs(spec)
    ]
    client, circuit = replicas[0]
    return LlmSeat(client, spec, redactor or Redactor(), circuit, replicas[1:], cache)
