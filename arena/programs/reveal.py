"""A revealed program's games played again from its source: `arena verify --programs`.

Once a program's entrant retires, the ledger holds its whole source
(`program_reveal`), committed to by SHA-256 before it played. Anyone can then
check that the games recorded for it are the games that source plays: each
game is walked again from the replay, and wherever the program decided, the
revealed source is asked in a fresh child with the same seed, node budget and
timeout; its move (or its running out of nodes) must be the one recorded. A
game the program forfeited is compared up to the forfeit (a hard timeout's
move never came).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import games
from arena.programs.runner import ProgramForfeit, ProgramRunner
from arena.programs.static import ProgramRefused, register
from arena.record.replay import GameRecord, Replay

__all__ = ["ReplayedPrograms", "replay_revealed"]


@dataclass
class ReplayedPrograms:
    """What `replay_revealed` found: the games played again, the moves compared, problems."""

    games: int = 0
    moves: int = 0
    problems: list[str] = field(default_factory=list)


async def replay_revealed(
    replays: Iterable[tuple[Path, Replay]], sources: Mapping[tuple[str, str], str]
) -> ReplayedPrograms:
    """Play again every game of a revealed program (`sources`: (policy, SHA-256) -> the
    source revealed) among `replays` (path, replay), and compare its moves."""
    found = ReplayedPrograms()
    with tempfile.TemporaryDirectory(prefix="cog-revealed-") as folder:
        files = _files(Path(folder), sources, found)
        for path, replay in replays:
            for record in replay.games:
                for seat, block in record.programs.items():
                    policy = replay.spectator.policies[str(record.index)][int(seat)]
                    file = files.get((policy, str(block.get("sha256"))))
                    if file is None:
                        continue
                    where = f"{path}: game {record.index}, seat {seat} ({policy})"
                    found.games += 1
                    await _replay_game(replay, record, int(seat), block, file, where, found)
    return found


def _files(
    folder: Path, sources: Mapping[tuple[str, str], str], found: ReplayedPrograms
) -> dict[tuple[str, str], Path]:
    """Each revealed source as a file, if it is the program its SHA-256 says."""
    files = {}
    for (policy, sha256), source in sources.items():
        if hashlib.sha256(source.encode()).hexdigest() != sha256:
            found.problems.append(f"{policy}: the revealed source is not the program {sha256[:12]}")
            continue
        file = folder / f"{sha256}.py"
        file.write_text(source, encoding="utf-8")
        files[(policy, sha256)] = file
    return files


async def _replay_game(
    replay: Replay,
    record: GameRecord,
    seat: int,
    block: Mapping[str, Any],
    file: Path,
    where: str,
    found: ReplayedPrograms,
) -> None:
    """One game walked again, the revealed program asked at each of its decisions."""
    try:
        info = register(file)
    except ProgramRefused as exc:
        found.problems.append(f"{where}: the revealed source is refused: {exc}")
        return
    game = games.load(replay.game, **replay.params)
    state = game.initial(replay.chance, game=record.index)
    timeout = float(block.get("timeout_s") or 30.0)
    runner = ProgramRunner(info, seed=int(block["seed"]), node_budget=int(block["node_budget"]))
    async with runner:
        for ply in record.plies:
            moves = {}
            for decision in ply.decisions:
                if decision.seat == seat:
                    problem = await _compare(game, state, seat, decision, runner, timeout)
                    found.moves += 1
                    if problem is not None:
                        found.problems.append(f"{where} ply {ply.ply}: {problem}")
                        return
                moves[decision.seat] = game.parse(state, decision.seat, decision.move)
            state = game.apply(state, moves)


async def _compare(
    game: games.Game[Any],
    state: Any,
    seat: int,
    decision: Any,
    runner: ProgramRunner,
    move_s: float,
) -> str | None:
    """Why the program's move here is not the recorded one, or None."""
    try:
        played = await runner.choose(game, state, seat, timeout_s=move_s)
    except ProgramForfeit as exc:
        return f"the revealed program forfeits ({exc.cause}) where the game recorded a move"
    fell_back = decision.source == "fallback"
    if played.over_budget != fell_back:
        said = "ran out of nodes" if played.over_budget else "stayed within its nodes"
        return f"the revealed program {said}, unlike the recorded move {decision.move!r}"
    if not fell_back and played.move != decision.move:
        return f"the revealed program plays {played.move!r}, the game recorded {decision.move!r}"
    return None
