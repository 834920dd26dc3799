"""`arena verify PATH...`: replays re-derived, and everything a run folder claims checked
(store, ledger, digests)."""

from __future__ import annotations

import argparse
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the store and the audit are imported when a run folder is checked
    from collections.abc import Iterator

    from arena.record.audit import RunAudit
    from arena.record.replay import Replay

__all__ = ["add_arguments", "audit_folder", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena verify`; its handler is `handle`."""
    parser.add_argument("paths", type=Path, nargs="+", help="replay files or run folders")
    parser.add_argument(
        "--expect",
        metavar="DIGEST",
        help="the run digest a run folder must have (as published when it was played)",
    )
    parser.add_argument(
        "--programs",
        action="store_true",
        help="also play again every game of each revealed program from its source and compare "
        "its moves (it costs those games' time again)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena verify` with the parsed `args`; its exit status (1 if something failed to
    verify, 2 if a path is neither a replay file nor a run folder)."""
    from arena.league.lock import holder_of
    from arena.record.verify import (  # loaded when this subcommand runs: `import arena.cli` loads no arena module
        VerifyError,
        verify_file,
    )

    failed = misnamed = False
    for target in args.paths:
        if _run_folder(target) and (holder := holder_of(target)) is not None:
            print(
                f"arena verify: {target} is being played now (process {holder}): no digest is "
                "given for a run in progress; verify it once that run has ended",
                file=sys.stderr,
            )
            misnamed = True
        elif _run_folder(target):
            failed = _verify_folder(target, args) or failed
        elif not target.exists() or target.is_dir():
            print(f"arena verify: {_not_verifiable(target)}", file=sys.stderr)
            misnamed = True
        else:
            try:
                verify_file(target)
                print(f"arena verify: {target}: re-derived, all fields match")
            except VerifyError as exc:
                print(f"arena verify: FAILED: {exc}", file=sys.stderr)
                failed = True
    return 2 if misnamed else 1 if failed else 0


_RUN_FILES = ("replays", "league.db", "config.resolved.json", "events.jsonl")
"""What `arena run` writes in a run folder: one is there once a run has begun (a run stopped
before its first game has no replays/ yet)."""


def _run_folder(target: Path) -> bool:
    """Whether `target` is a run folder (`_RUN_FILES`)."""
    return target.is_dir() and any((target / name).exists() for name in _RUN_FILES)


def _verify_folder(target: Path, args: argparse.Namespace) -> bool:
    """Run folder `target` verified and told on the console; whether something failed."""
    from arena.league.summary import run_status

    audit = audit_folder(target)
    problems = list(audit.problems)
    if args.expect and args.expect != audit.digest:
        problems.append(f"the run digest {audit.digest} is not the expected {args.expect}")
    if args.programs:
        problems += _revealed_games(target)
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)
    if not (target / "replays").is_dir():
        print(
            f"arena verify: {target}: 0 replays; the run stopped before its first game (see "
            f"{target / 'events.jsonl'}); {len(problems)} problem(s)"
        )
        return bool(problems)
    print(
        f"arena verify: {target}: {audit.replays} replay(s), {audit.good} good, "
        f"{audit.bad} bad; {len(problems)} problem(s)"
    )
    status = run_status(target)
    said = status.sentence() or _played_of_planned(target)
    if said:
        print(said)
    print(
        f"run digest: {audit.digest}" + (" (as expected)" if args.expect and not problems else "")
    )
    print(
        f"results digest: {audit.results} (timings masked: a run of the same config "
        "with the same replies has the same, locally or on a cluster)"
    )
    return bool(problems)


def _not_verifiable(target: Path) -> str:
    """Why `target` is neither a replay file nor a run folder, and what to pass instead."""
    if not target.exists():
        return f"{target} does not exist; pass a run folder (e.g. runs/quickstart) or a replay file"
    return (
        f"{target} is not a run folder (it has no replays/ folder); pass the folder `arena run` "
        "wrote (e.g. runs/quickstart) or a replay file in its replays/"
    )


def _played_of_planned(run: Path) -> str | None:
    """For a run that ended before its schedule did (a budget, the SPRT, a pool's target):
    how many episodes it played of at most how many, and why it stopped. None for a run that
    played its whole schedule, whatever stopped it (a pool's pairs at `run.matches`)."""
    import json  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    try:
        summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
        played = len({g["episode"] for g in summary.get("games", [])})
        planned, why = int(summary["episodes"]), summary.get("stopped_by")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if played >= planned:
        return None
    said = f" ({why})" if why else ""
    return (
        f"{played} episode(s) played of at most {planned}: the run ended before its schedule{said}"
    )


def _revealed_games(run: Path) -> list[str]:
    """`--programs`: every revealed program's games played again from its source."""
    import anyio  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    from arena.programs.reveal import replay_revealed
    from arena.record.ledger import read_current

    sources = {
        (str(e["policy"]), str(e["sha256"])): str(e["source"])
        for e in read_current(run)
        if e.get("event") == "program_reveal"
    }
    found = anyio.run(replay_revealed, _readable(run), sources)
    print(
        f"arena verify --programs: {len(sources)} revealed program(s): {found.games} game(s) "
        f"played again from their sources, {found.moves} move(s) compared"
    )
    return found.problems


def _readable(run: Path) -> Iterator[tuple[Path, Replay]]:
    """Each replay of `run` that can be read, one at a time (the audit lists the others)."""
    from arena.record.replay import ReplayUnreadable, load_replay

    for path in sorted((run / "replays").glob("*.json")):
        try:
            yield path, load_replay(path)
        except (ReplayUnreadable, OSError):
            continue


def audit_folder(run: Path) -> RunAudit:
    """Run folder `run` checked whole (`record.audit`) against its league store, opened
    read-only (a missing store is one of the problems)."""
    from arena.league.store import (  # loaded when this subcommand runs: `import arena.cli` loads no arena module
        DB_NAME,
        LeagueStore,
    )
    from arena.record.audit import audit_run

    db = run / DB_NAME
    if not db.exists():
        return audit_run(run, db, None)
    with closing(LeagueStore.open_readonly(run)) as store:
        retired = {str(e["name"]) for e in store.entrants() if e["retired"] is not None}
        return audit_run(run, db, store, retired=retired)
