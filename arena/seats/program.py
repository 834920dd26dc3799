"""A program in a seat: the seat protocol over a sandboxed program (`arena.programs`).

No retry (programs are deterministic): an illegal reply, a crash, an
exception or the hard timeout forfeits the game; a move over the node budget
becomes the first legal move, recorded as a fallback, and the third such move
in one game forfeits it (docs/rules.md#program-seats).

The first program seat of a process says how its children are confined
(`program_sandbox`, once per process: a cluster's worker says it for itself),
a warning when that is without bwrap.
"""

from __future__ import annotations

from typing import Any

import anyio
import structlog

from arena.play.protocol import Decision, DecisionRequest, Seat
from arena.programs import ProgramForfeit, ProgramRunner, bwrap_problem

__all__ = ["PROCESS_MODE_GAPS", "ProgramPlayer"]

log = structlog.get_logger("arena.seats.program")

PROCESS_MODE_GAPS = (
    "a program that gets past the child's run-time refusals can read what the child's "
    "user can read, use the network where the kernel refused a namespace, connect to "
    "socket files, read the clock, and see the machine's other processes"
)
"""What the `process` mode does not contain (docs/program-seats.md)."""
_announced: list[str] = []


def _announce(program: ProgramRunner) -> None:
    """`program_sandbox`, once per process: the mode its program seats' children get."""
    if _announced:
        return
    _announced.append(program.mode)
    if program.mode == "bwrap":
        log.info("program_sandbox", mode="bwrap", requested=program.requested)
        return
    fallback = f"{bwrap_problem()}: auto falls back to process mode"
    why = "asked for" if program.requested == "process" else fallback
    log.warning(
        "program_sandbox",
        mode="process",
        requested=program.requested,
        why=why,
        not_contained=PROCESS_MODE_GAPS,
    )


class ProgramPlayer(Seat):
    """A program seat of one game, with its hard timeout per move."""

    def __init__(
        self, program: ProgramRunner, timeout_s: float, *, commit: int | None = None
    ) -> None:
        self.program = program
        self.timeout_s = timeout_s
        self.commit = commit
        """The ledger line committing to the program (None: a run without a ledger)."""
        _announce(program)

    async def decide(self, request: DecisionRequest) -> Decision:
        """The program's move; over budget, the first legal move as a fallback; a forfeit
        comes back as a decision with source `forfeit`."""
        started = anyio.current_time()
        try:
            chosen = await self.program.choose(
                request.game, request.state, request.seat, timeout_s=self.timeout_s
            )
        except ProgramForfeit as forfeit:
            latency = anyio.current_time() - started
            log.warning(
                "program_forfeited", seat=request.seat, cause=forfeit.cause, detail=forfeit.detail
            )
            return Decision(
                request.seat, None, "forfeit", latency, forfeit=forfeit.cause, error=forfeit.detail
            )
        latency = anyio.current_time() - started
        if chosen.over_budget:
            return Decision(
                request.seat,
                chosen.move,
                "fallback",
                latency,
                cause="over_budget",
                nodes=chosen.nodes,
            )
        return Decision(request.seat, chosen.move, "reply", latency, nodes=chosen.nodes)

    def describe(self) -> dict[str, Any]:
        """The program's SHA-256, seed, node budget, timeout and the ledger line of its
        commit, for the game's record."""
        seat = self.program
        described: dict[str, Any] = {
            "sha256": seat.program.sha256,
            "seed": seat.seed,
            "node_budget": seat.node_budget,
            "timeout_s": self.timeout_s,
        }
        if self.commit is not None:
            described["commit"] = self.commit
        return described

    async def aclose(self) -> None:
        """End the program's child process."""
        await self.program.aclose()
