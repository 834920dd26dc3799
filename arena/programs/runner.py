"""A program run for one game: its child process, asked one move at a time.

`ProgramRunner` is the arena's handle on that child (the seat it plays
through is `arena.seats.program.ProgramPlayer`). `ProgramRunner.choose` sends
the seat's view to the child and answers the program's helper calls until it
replies, counting one node per call. There is no retry (programs are deterministic): an illegal reply, a crash, an
exception or a reply past the hard timeout forfeits the game. A move that
runs out of nodes is replaced by the first legal move and marked
`over_budget`; the third such move in one game forfeits it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import partial
from types import TracebackType
from typing import Any

import anyio
import anyio.to_thread

import games
from arena.programs.bwrap import SandboxMode, choose_sandbox
from arena.programs.engine import EngineHelpers, HelperRefused, helper_names
from arena.programs.limits import (
    ALLOWED_MODULES,
    DEFAULT_NODE_BUDGET,
    PRELOADED_MODULES,
    SandboxLimits,
)
from arena.programs.pipes import BUDGET_REFUSAL, refusal_line, result_line
from arena.programs.sandbox import ChildGone, ChildProcess
from arena.programs.static import ProgramInfo
from arena.programs.uids import DEFAULT_PROGRAM_UIDS, UidLease, lease
from arena.record.causes import FORFEIT_CAUSES, ForfeitCause

__all__ = [
    "OVER_BUDGET_FORFEIT",
    "ProgramForfeit",
    "ProgramMove",
    "ProgramRunner",
]

OVER_BUDGET_FORFEIT = 3
"""The over-budget move that forfeits the game (seed: the third in one game)."""
_DETAIL_CHARS = 800
"""A failure's detail as the child reports it, at most (the child cuts the message)."""


@dataclass(frozen=True, slots=True)
class ProgramMove:
    """The move a program played, the nodes it used, and whether it ran out of them."""

    move: str
    nodes: int
    over_budget: bool


class ProgramForfeit(Exception):
    """The program lost the game by its own fault; `cause` is one of `arena.record.causes.FORFEIT_CAUSES`."""

    def __init__(self, cause: ForfeitCause, detail: str) -> None:
        if cause not in FORFEIT_CAUSES:
            raise ValueError(
                f"unknown forfeit cause {cause!r} (known: {', '.join(FORFEIT_CAUSES)})"
            )
        super().__init__(f"{cause}: {detail}")
        self.cause = cause
        self.detail = detail


class ProgramRunner:
    """One program's child process for one seat of one game, asked one move at a time;
    start it lazily, always `aclose` it.

    `seed` seeds the program's `ctx.rng` (and Stratego's sampled worlds); `sandbox` is
    `[run] sandbox`, resolved here once (`mode`; SandboxUnavailable for a `bwrap` that
    does not work, or for an `auto` that would run a program not `trusted` outside it).
    As root, the child gets a uid of its own from `program_uids` (`uids.lease`).
    """

    def __init__(
        self,
        program: ProgramInfo,
        *,
        seed: int,
        node_budget: int = DEFAULT_NODE_BUDGET,
        limits: SandboxLimits | None = None,
        sandbox: SandboxMode = "auto",
        program_uids: tuple[int, int] = DEFAULT_PROGRAM_UIDS,
        trusted: bool = True,
    ) -> None:
        if node_budget < 1:
            raise ValueError(f"node_budget {node_budget} must be at least 1")
        self.program = program
        self.seed = seed
        self.node_budget = node_budget
        self.limits = limits or SandboxLimits()
        self.requested = sandbox
        self.program_uids = program_uids
        self.mode = choose_sandbox(sandbox, trusted=trusted)
        """How the child is confined: `bwrap` or `process`."""
        self.over_budget_moves = 0
        self.sandbox: dict[str, Any] | None = None
        """What the child reported of its confinement (network, uid, ...), once started."""
        self._child: ChildProcess | None = None
        self._next_handle = 1
        self._forfeit: ProgramForfeit | None = None
        self._broken = ""

    async def __aenter__(self) -> ProgramRunner:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._child.pid if self._child is not None else None

    async def choose(
        self, game: games.Game[Any], state: Any, seat: int, *, timeout_s: float
    ) -> ProgramMove:
        """The program's move (or Stratego setup) for `seat`; raise ProgramForfeit."""
        if self._forfeit is not None:
            raise ProgramForfeit(self._forfeit.cause, f"already forfeited: {self._forfeit.detail}")
        if self._broken:
            raise RuntimeError(self._broken)
        try:
            with anyio.move_on_after(timeout_s):
                return await self._choose(game, state, seat)
            raise self._forfeited(
                "timeout", f"no reply within the hard timeout of {timeout_s:g} s; killed"
            )
        except ProgramForfeit:
            await self._end()
            raise
        except ChildGone as exc:
            await self._end()
            raise self._forfeited("crash", f"the program's process failed: {exc}") from None
        except BaseException:
            self._broken = "the seat was cancelled in the middle of a move; it cannot go on"
            await self._end()
            raise

    async def aclose(self) -> None:
        """End the child (bounded); safe to call more than once."""
        child, self._child = self._child, None
        if child is not None:
            await child.close()

    async def _end(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            await child.kill()

    def _forfeited(self, cause: ForfeitCause, detail: str) -> ProgramForfeit:
        self._forfeit = ProgramForfeit(cause, detail)
        return self._forfeit

    async def _start(self, game: games.Game[Any], seat: int) -> ChildProcess:
        drops = os.geteuid() == 0 and self.limits.uid is not None
        held: UidLease | None = None
        if drops:
            alone = self.mode == "process"  # under bwrap nothing it makes outlives it
            take = partial(lease, self.program_uids, workdir=alone, sweep=alone)
            held = await anyio.to_thread.run_sync(take)
        try:
            child = await ChildProcess.spawn(self.mode, drops_privileges=drops, lease=held)
        except BaseException:
            if held is not None:
                held.reclaim()
            raise
        self._child = child
        limits = replace(self.limits, uid=held.uid) if held is not None else self.limits
        message = await child.exchange(
            {
                "op": "hello",
                "source": self.program.source,
                "filename": self.program.path.name,
                "seed": self.seed,
                "game": game.name,
                "seat": seat,
                "node_budget": self.node_budget,
                "helpers": list(helper_names(game)),
                "allowed_modules": sorted(ALLOWED_MODULES),
                "preload": list(PRELOADED_MODULES),
                "limits": limits.to_json(),
                "sandbox": self.mode,
                # Under bwrap the child's parent is the PID namespace's init, dead with us.
                "parent_pid": os.getpid() if self.mode == "process" else None,
            }
        )
        if message.get("op") == "failed":
            raise self._failure(message, "starting (create)")
        if message.get("op") != "ready" or not isinstance(message.get("sandbox"), dict):
            raise ChildGone(f"it answered hello with {str(message)[:200]}")
        self.sandbox = {"mode": self.mode, **message["sandbox"], "limits": limits.to_json()}
        return child

    async def _choose(self, game: games.Game[Any], state: Any, seat: int) -> ProgramMove:
        child = self._child or await self._start(game, seat)
        kind = "setup" if game.reply_key(state) == "setup" else "move"
        helpers = EngineHelpers(
            game, state, seat, first_handle=self._next_handle, world_seed=self.seed
        )
        legal = list(game.legal_moves(state, seat))
        view = {
            **game.view(state, seat),
            "legal_moves": legal,
            "state": helpers.root,
            "node_budget_left": self.node_budget,
        }
        calls = _MoveCalls(helpers, self.node_budget)
        try:
            message = await child.exchange(
                {"op": "choose", "kind": kind, "view": view}, calls.answer
            )
        finally:
            self._next_handle = helpers.next_handle
        return self._judge(game, state, seat, kind, message, helpers.nodes, calls.over)

    def _judge(
        self,
        game: games.Game[Any],
        state: Any,
        seat: int,
        kind: str,
        message: dict[str, Any],
        nodes: int,
        over: bool,
    ) -> ProgramMove:
        op = message.get("op")
        if op == "failed":
            if over and message.get("kind") == "budget":
                return self._over_budget(game, state, seat, nodes)
            raise self._failure(message, f"choosing a {kind}")
        if op != "reply":
            raise ChildGone(f"it sent an unknown message {str(message)[:200]}")
        if over:
            return self._over_budget(game, state, seat, nodes)
        move = message.get("move")
        if not isinstance(move, str) or message.get("is_text") is not True:
            raise self._forfeited("illegal", f"the {kind} must be text, got {move}")
        if kind == "setup":
            try:
                return ProgramMove(str(game.parse(state, seat, move)), nodes, False)
            except games.MoveError as exc:
                raise self._forfeited("illegal", f"setup {move[:60]!r}: {exc}") from None
        legal = game.legal_moves(state, seat)
        if move not in legal:
            shown = ", ".join(legal[:8]) + (", ..." if len(legal) > 8 else "")
            raise self._forfeited("illegal", f"{move[:60]!r} is not in the legal list ({shown})")
        return ProgramMove(move, nodes, False)

    def _over_budget(self, game: games.Game[Any], state: Any, seat: int, nodes: int) -> ProgramMove:
        self.over_budget_moves += 1
        if self.over_budget_moves >= OVER_BUDGET_FORFEIT:
            raise self._forfeited(
                "over_budget",
                f"move {self.over_budget_moves} over the node budget of {self.node_budget} "
                "in this game",
            )
        legal = game.legal_moves(state, seat)
        move = legal[0] if legal else str(game.baseline(state, seat))
        return ProgramMove(move, nodes, True)

    def _failure(self, message: dict[str, Any], doing: str) -> ProgramForfeit:
        """The forfeit for a `failed` message: the exception's type and message, and where
        in the program; never a source line, nor what the program printed."""
        kind = message.get("kind")
        detail = str(message.get("detail", ""))[:_DETAIL_CHARS]
        if kind == "memory":
            limit = f"the memory limit of {self.limits.memory_mb} MiB"
            return self._forfeited("crash", f"{doing}: the program reached {limit} ({detail})")
        return self._forfeited("exception", f"{doing}: {detail}")


class _MoveCalls:
    """One move's answers to the program's helper calls, under its node budget (run in
    the move's thread on the pipes)."""

    def __init__(self, helpers: EngineHelpers, node_budget: int) -> None:
        self.helpers = helpers
        self.node_budget = node_budget
        self.over = False
        """Whether a call was refused for the budget: the move is then over budget."""

    def answer(self, fn: object, args: object) -> bytes:
        """The line that answers one call: its value, or why it was refused."""
        helpers = self.helpers
        cost = helpers.cost(fn, args)
        if helpers.nodes + cost > self.node_budget:
            self.over = True  # a batch that would pass the budget is refused whole
            return BUDGET_REFUSAL
        try:
            return result_line(helpers.call(fn, args, cost=cost))
        except HelperRefused as exc:
            return refusal_line(str(exc))
