"""`arena program check`: the static check, then the same game played twice.

Registration plays the program twice on the same seed, each time in
a fresh child against the game's baseline; any difference in the records
(every move and every node count) refuses it, naming the first difference.
A forfeit in either game refuses it too. The games a program plays, if not every
one program seats play, it names in a module-level `GAMES = (...)` (`declared_games`,
read from the source, never run).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

import games
from arena.programs.bwrap import SandboxMode, choose_sandbox
from arena.programs.limits import DEFAULT_NODE_BUDGET, SandboxLimits, timeout_for
from arena.programs.runner import ProgramForfeit, ProgramRunner
from arena.programs.static import ProgramRefused, register
from games import program_games

__all__ = [
    "PROGRAM_SEAT",
    "CheckGame",
    "CheckPly",
    "CheckReport",
    "check_program",
    "declared_games",
]

PROGRAM_SEAT = 0
"""The seat the checked program plays in both games; the baseline plays the other."""


@dataclass(frozen=True, slots=True)
class CheckPly:
    """One decision of a check game: who, what, and the program's nodes."""

    index: int
    seat: int
    move: str
    nodes: int | None
    """None for the baseline's moves."""
    over_budget: bool = False

    def describe(self) -> str:
        """`seat 0 played 'd1' with 312 nodes`."""
        nodes = "" if self.nodes is None else f" with {self.nodes} nodes"
        over = " (over budget)" if self.over_budget else ""
        return f"seat {self.seat} played {self.move!r}{nodes}{over}"


@dataclass(frozen=True, slots=True)
class CheckGame:
    """One of the two check games."""

    records: tuple[CheckPly, ...]
    outcome: dict[str, Any] | None
    forfeit: str | None
    """`cause: detail` if the program forfeited."""
    seconds: float
    sandbox: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What `check_program` found; `passed` is False when the program is refused."""

    path: str
    game: str
    sha256: str
    seed: int
    node_budget: int
    problems: tuple[str, ...]
    games: tuple[CheckGame, ...] = field(default=())

    @property
    def passed(self) -> bool:
        """True when the static check and the two games found nothing."""
        return not self.problems

    def summary(self) -> str:
        """Plain text for the CLI."""
        lines = [
            f"program {self.path}  sha256 {self.sha256 or '-'}",
            f"game {self.game}  seed {self.seed}  node budget {self.node_budget}",
        ]
        for number, played in enumerate(self.games, 1):
            program_moves = [r for r in played.records if r.nodes is not None]
            nodes = sum(r.nodes or 0 for r in program_moves)
            outcome = played.outcome or {}
            ending = f"forfeit ({played.forfeit})" if played.forfeit else outcome.get("ending")
            scores = outcome.get("scores") if not played.forfeit else None
            result = f", program scores {scores[PROGRAM_SEAT]:+d}" if scores else ""
            lines.append(
                f"game {number}: {len(played.records)} decisions, {len(program_moves)} by the "
                f"program, {nodes} nodes, {played.seconds:.1f} s, ending {ending}{result}"
            )
        if self.games and self.games[0].sandbox:
            box = self.games[0].sandbox
            lines.append(
                f"sandbox: {box.get('mode')}, network {box.get('network')}, uid {box.get('uid')}"
            )
        lines.append("PASSED" if self.passed else "REFUSED")
        lines.extend(f"  {problem}" for problem in self.problems)
        return "\n".join(lines)


def _first_difference(a: CheckGame, b: CheckGame) -> str | None:
    for one, two in zip(a.records, b.records, strict=False):
        if one != two:
            return (
                f"the two runs differ at decision {one.index}: run 1 {one.describe()}, "
                f"run 2 {two.describe()} (programs must be deterministic: use ctx.rng, "
                "never id(), object hashes or the order of sets of objects)"
            )
    if len(a.records) != len(b.records):
        return f"the two runs differ in length: {len(a.records)} and {len(b.records)} decisions"
    if a.outcome != b.outcome:
        return f"the two runs end differently: {a.outcome} and {b.outcome}"
    return None


async def _play(
    game: games.Game[Any],
    program: ProgramRunner,
    seed: int | str,
    timeout_s: float,
) -> CheckGame:
    """One game, the program in seat 0 against the game's baseline in seat 1."""
    records: list[CheckPly] = []
    state = game.initial(seed, game=1)
    start = anyio.current_time()
    forfeit = None
    while (to_act := game.to_act(state)) and forfeit is None:
        moves: dict[int, Any] = {}
        for who in to_act:
            if who == PROGRAM_SEAT:
                try:
                    played = await program.choose(game, state, who, timeout_s=timeout_s)
                except ProgramForfeit as exc:
                    forfeit = f"{exc.cause}: {exc.detail}"
                    break
                moves[who] = played.move
                record = CheckPly(len(records), who, played.move, played.nodes, played.over_budget)
            else:
                moves[who] = game.baseline(state, who)
                record = CheckPly(len(records), who, str(moves[who]), None)
            records.append(record)
        if forfeit is None:
            state = game.apply(state, moves)
    outcome = game.outcome(state)
    return CheckGame(
        tuple(records),
        None if outcome is None else outcome.to_json(),
        forfeit,
        anyio.current_time() - start,
        program.sandbox,
    )


async def check_program(
    path: str | Path,
    game_name: str,
    *,
    seed: int = 1,
    node_budget: int = DEFAULT_NODE_BUDGET,
    timeout_s: float | None = None,
    limits: SandboxLimits | None = None,
    sandbox: SandboxMode = "auto",
    trusted: bool = True,
) -> CheckReport:
    """Statically check the program at `path`, then play it twice on `seed` against
    `game_name`'s baseline in fresh children, confined as `sandbox` says; any difference
    refuses it. Raise SandboxUnavailable for a `bwrap` that does not work here, or an
    `auto` that would run a program not `trusted` (a model's) outside bwrap (not as root)."""
    if game_name not in program_games():
        raise ValueError(
            f"program seats do not play {game_name!r} (they play: {', '.join(program_games())})"
        )
    choose = partial(choose_sandbox, sandbox, trusted=trusted)
    await anyio.to_thread.run_sync(choose)  # the probe, off the loop, once
    report = CheckReport(str(path), game_name, "", seed, node_budget, ())
    try:
        info = register(path)
    except ProgramRefused as exc:
        return replace(report, problems=tuple(exc.problems))
    report = replace(report, sha256=info.sha256)
    game = games.load(game_name)
    game_seed = game.derived_chance(seed)  # the seed, or card 1 as a derived-dice run deals it
    if game.reply_key(game.initial(game_seed)) == "setup" and not info.plays_setup:
        return replace(
            report,
            problems=(
                f"a {game_name} program needs choose_setup(view): its games open with a setup",
            ),
        )
    runs: list[CheckGame] = []
    for _ in range(2):
        async with ProgramRunner(
            info,
            seed=seed,
            node_budget=node_budget,
            limits=limits,
            sandbox=sandbox,
            trusted=trusted,
        ) as program:
            runs.append(await _play(game, program, game_seed, timeout_s or timeout_for(game_name)))
    problems = [f"run {n} forfeited: {run.forfeit}" for n, run in enumerate(runs, 1) if run.forfeit]
    difference = _first_difference(runs[0], runs[1])
    if difference is not None:
        problems.insert(0, difference)
    return replace(report, problems=tuple(problems), games=tuple(runs))


def declared_games(path: str | Path) -> tuple[str, ...] | None:
    """The games the program at `path` names in a module-level `GAMES = (...)`, read from its
    source with `ast` (never run); None without one, or for a file that cannot be read or
    parsed (the check refuses it, naming why). Raise ProgramRefused, naming the file and the
    games programs play, for a GAMES that is not a literal tuple or list of game names or
    names a game program seats do not play."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    found = _module_value(tree, "GAMES")
    if found is None:
        return None
    known = ", ".join(program_games())
    where = f"{path} line {found.lineno}"
    elements = found.elts if isinstance(found, ast.Tuple | ast.List) else []
    names = [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if not elements or len(names) != len(elements):
        raise ProgramRefused(
            f"{where}: GAMES must be a literal tuple of game names, e.g. GAMES = "
            f'("connect-four", "hex") (program seats play: {known})'
        )
    for name in names:
        if name not in program_games():
            raise ProgramRefused(
                f"{where}: GAMES names {name!r}, which program seats do not play (they play: "
                f"{known})"
            )
    return tuple(dict.fromkeys(names))


def _module_value(tree: ast.Module, name: str) -> ast.expr | None:
    """The value last assigned to `name` at module level (as Python leaves it), if any."""
    found = None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            found = node.value
    return found
