"""Re-deriving a replay from its seed and moves: the check `arena verify` runs on every
replay (what else a run folder claims is checked by `arena.record.audit`).

Every state-dependent field is recomputed and compared: the resolved game,
the aliases, who had to act at each ply, that each recorded move is legal,
that each fallback played the baseline's move, the standings after every
ply, and the result. The first difference is reported with where it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import games
from arena.record.hooks import episode_hooks
from arena.record.replay import (
    GameRecord,
    Replay,
    ReplayUnreadable,
    load_replay,
    move_json,
    prompt_sha256,
)
from arena.record.validity import infrastructure_no_contest, side_error

__all__ = ["VerifyError", "replay_paths", "verify_file", "verify_replay"]


class VerifyError(Exception):
    """The first difference between a replay and its re-derivation."""


def replay_paths(target: Path) -> list[Path]:
    """A replay file, or every replay under a run folder."""
    if target.is_dir():
        found = sorted(target.glob("replays/*.json")) or sorted(target.glob("*.json"))
        found = [p for p in found if p.name not in ("summary.json", "config.resolved.json")]
        if not found:
            raise VerifyError(f"{target}: no replays found (expected {target}/replays/*.json)")
        return found
    if not target.exists():
        raise VerifyError(f"{target} does not exist")
    return [target]


def verify_file(path: Path) -> Replay:
    """Load and verify one replay file; raise VerifyError naming the first difference."""
    try:
        replay = load_replay(path)
    except ReplayUnreadable as exc:
        raise VerifyError(f"{path}: cannot be read as a replay: {exc.reason}") from exc
    except OSError as exc:
        raise VerifyError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    run_folder = path.parent.parent if path.parent.name == "replays" else None
    verify_replay(replay, where=str(path), run_folder=run_folder)
    return replay


def verify_replay(replay: Replay, *, where: str = "replay", run_folder: Path | None = None) -> None:
    """Re-derive every game of the replay; `run_folder` holds its run's ledger, if any. What
    the engines cannot take (a game, parameters or moves no play could have recorded) is a
    VerifyError too, never another exception: a replay file can hold anything."""
    try:
        _rederive(replay, where, run_folder)
    except VerifyError:
        raise
    except Exception as exc:  # the file's content reached an engine that refuses it
        raise VerifyError(
            f"{where}: cannot be re-derived ({type(exc).__name__}: {str(exc)[:300]})"
        ) from exc


def _rederive(replay: Replay, where: str, run_folder: Path | None) -> None:
    seed = replay.match.seed
    expected_game = games.resolve_entry(replay.match.entry, seed)
    if expected_game != replay.game:
        raise VerifyError(
            f"{where}: game is {replay.game!r}, but entry and seed resolve to {expected_game!r}"
        )
    game = games.load(replay.game, **replay.params)
    if game.rules_version != replay.rules_version:
        raise VerifyError(
            f"{where}: recorded under rules_version {replay.rules_version}, this engine is {game.rules_version}"
        )
    problem = episode_hooks(game.match_format.chance, run_folder).verify(replay)
    if problem is not None:
        raise VerifyError(f"{where}{problem}")
    for record in replay.games:
        if _never_started(replay, record):
            continue
        at = f"{where} game {record.index}"
        _verify_game(game, seed, replay.chance, record, at, replay.max_infra_share)


def _never_started(replay: Replay, record: GameRecord) -> bool:
    """A game of a cancelled episode (a cut card) that never started: nothing to re-derive."""
    cancelled = replay.integrity.get("status") == "cancelled"
    ending = record.result.ending if record.result is not None else None
    return cancelled and not record.plies and ending == "no-contest"


def _verify_game(
    game: games.Game[Any],
    seed: int,
    chance: int | str,
    record: GameRecord,
    where: str,
    max_share: float | None,
) -> None:
    expected_aliases = list(game.match_format.aliases(seed, record.index))
    if record.aliases != expected_aliases:
        raise VerifyError(f"{where}: aliases {record.aliases} differ from {expected_aliases}")
    fallbacks = {(f.ply, f.seat): f for f in record.fallbacks}
    _check_prompts(record, where)
    state = game.initial(chance, game=record.index)
    if game.integrity(state) != record.integrity:
        raise VerifyError(
            f"{where}: the game's starting integrity data differ from the re-derivation"
        )
    for ply in record.plies:
        at = f"{where} ply {ply.ply}"
        seats = game.to_act(state)
        recorded = tuple(sorted(d.seat for d in ply.decisions))
        if recorded != tuple(sorted(seats)):
            raise VerifyError(f"{at}: seats {list(recorded)} moved, but {list(seats)} were to act")
        moves = {}
        for d in ply.decisions:
            try:
                moves[d.seat] = game.parse(state, d.seat, d.move)
            except games.MoveError as exc:
                raise VerifyError(
                    f"{at}: seat {d.seat}'s move {d.move!r} is refused: {exc}"
                ) from exc
            _check_fallback(
                game, state, d.seat, d.source, move_json(moves[d.seat]), fallbacks, ply.ply, at
            )
        state = game.apply(state, moves)
        standings = [game.standing(state, 0), game.standing(state, 1)]
        if standings != ply.standings:
            raise VerifyError(f"{at}: standings {ply.standings} recorded, {standings} re-derived")
        integrity = game.integrity(state)
        if integrity != ply.integrity:
            differing = sorted(
                k for k in {*integrity, *ply.integrity} if integrity.get(k) != ply.integrity.get(k)
            )
            raise VerifyError(f"{at}: integrity data {differing} differ from the re-derivation")
    if max_share is not None:  # replays from before the rule record no sides
        _check_sides(record, where)
    _check_result(game, state, record, where, max_share)


def _check_sides(record: GameRecord, where: str) -> None:
    """Every fallback's side, and each of its attempts', is one its cause allows: a seat's
    own failure never passes for the infrastructure's, so no edit makes a game a no-contest."""
    for f in record.fallbacks:
        problems = [side_error(f.cause, f.side)]
        problems += [side_error(a.cause, a.side) for a in f.attempts if a.cause is not None]
        if f.attempts and f.attempts[-1].side != f.side:
            problems.append(f"its side {f.side!r} is not its last attempt's")
        problem = next((p for p in problems if p is not None), None)
        if problem is not None:
            raise VerifyError(f"{where} ply {f.ply} seat {f.seat}: {problem}")


def _check_prompts(record: GameRecord, where: str) -> None:
    """Every recorded prompt is the one its hash names (an edited prompt is caught)."""
    for ply in record.plies:
        for d in ply.decisions:
            for a in d.attempts:
                if (
                    a.prompt is not None
                    and prompt_sha256(a.prompt, a.system_chars) != a.prompt_sha256
                ):
                    raise VerifyError(
                        f"{where} ply {ply.ply}: seat {d.seat}'s attempt {a.n} prompt differs "
                        "from its recorded hash"
                    )


def _check_fallback(
    game: games.Game[Any],
    state: Any,
    seat: int,
    source: str,
    move: Any,
    fallbacks: dict[tuple[int, int], Any],
    ply: int,
    at: str,
) -> None:
    record = fallbacks.get((ply, seat))
    if (source == "fallback") != (record is not None):
        raise VerifyError(
            f"{at}: seat {seat}'s source is {source!r} but a fallback record is {'missing' if record is None else 'present'}"
        )
    if record is not None:
        legal = game.legal_moves(state, seat)
        if record.cause == "over_budget" and legal:
            expected = legal[0]  # a program over its node budget plays the first legal move
        else:
            expected = move_json(game.baseline(state, seat))
        if move != expected or record.move != expected:
            raise VerifyError(f"{at}: fallback played {move!r}, the rules give {expected!r}")


def _check_result(
    game: games.Game[Any], state: Any, record: GameRecord, where: str, max_share: float | None
) -> None:
    if record.result is None:
        raise VerifyError(f"{where}: has no result")
    spoiled = infrastructure_no_contest(record, max_share) if max_share is not None else None
    if spoiled is not None:  # the game did not measure a seat, however it ended
        if record.result.scores is not None or record.result.detail != spoiled:
            raise VerifyError(f"{where}: {spoiled}, yet the result is {record.result.model_dump()}")
        return
    outcome = game.outcome(state)
    if record.result.ending == "forfeit":
        _check_forfeit(game, state, record, where)
        return
    if record.result.reason == games.DEADLINE:
        if outcome is not None:
            raise VerifyError(
                f"{where}: recorded as stopped by the wall clock, but the game had ended ({outcome.ending})"
            )
        outcome = game.adjudicate(state)
    if outcome is None:
        raise VerifyError(
            f"{where}: the recorded moves do not finish the game, yet a result is recorded"
        )
    expected = {**outcome.to_json(), "plies": len(record.plies)}
    if record.result.model_dump() != expected:
        raise VerifyError(
            f"{where}: result {record.result.model_dump()} recorded, {expected} re-derived"
        )


def _check_forfeit(game: games.Game[Any], state: Any, record: GameRecord, where: str) -> None:
    """A forfeit ends a game the rules had not ended, and the forfeiting seat was to act."""
    result = record.result
    if result is None or game.outcome(state) is not None:
        raise VerifyError(f"{where}: recorded as a forfeit, but the game had already ended")
    scores = result.scores
    losers = [seat for seat in (0, 1) if scores and scores[seat] < 0]
    if scores not in ([-1, 1], [1, -1], [0, 0]) or not set(losers) <= set(game.to_act(state)):
        raise VerifyError(
            f"{where}: forfeit scores {scores} do not fit the seats to act {list(game.to_act(state))}"
        )
    if result.plies != len(record.plies):
        raise VerifyError(
            f"{where}: result says {result.plies} plies, the record has {len(record.plies)}"
        )
