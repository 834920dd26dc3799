"""`arena verify RUN`: everything a run folder claims, checked, every problem reported.

Each replay is re-derived from its seed and moves (`record.verify`), its
prompts against their hashes; each replay file against the digest the league
store kept when it was stored (an edited reply or `say` is caught); every
stored episode against its replay and every replay against its row, results
and scores included; no two stored games of different matches at one
position (match index, game index), which the standings would read as one
match; the backgammon ledger (`cards.audit_ledger`); each program seat's
commit (the ledger line its game names commits to its SHA-256, before the
game was stored), each reveal against its commit, and every retired program
entrant's reveal (none withheld: `ledger.audit_programs`). A file in replays/
that is not a replay is one problem, and the audit goes on with the rest. The run
digest, one SHA-256 over every replay's digest in schedule order, is what a
user publishes: checking a folder against it (`--expect`) still tells an
edited replay after someone rewrote both the replays and the store.

The store is the league's (`arena.league.store`), which sits above the record:
the caller opens it read-only and hands it in as `StoredEpisodes`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena.record.cards import audit_ledger
from arena.record.ledger import LEDGER, audit_programs, numbered
from arena.record.replay import Replay, ReplayUnreadable, load_replay, results_digest
from arena.record.verify import VerifyError, verify_replay

__all__ = ["RunAudit", "StoredEpisodes", "audit_run", "run_digest"]


class StoredEpisodes(Protocol):
    """What a run's league store claims of its episodes; the store
    (`arena.league.store.LeagueStore`, opened read-only) is one."""

    def episode_rows(self) -> list[dict[str, Any]]:
        """Every stored episode: id, match index, match id, replay path and digest."""
        ...

    def stored_results(self) -> dict[str, dict[int, tuple[object, ...]]]:
        """Episode -> game index -> (scores, reason, ending, plies), as stored."""
        ...


@dataclass
class RunAudit:
    """What `audit_run` found: replays checked, good and bad, every problem, the digest."""

    replays: int = 0
    good: int = 0
    problems: list[str] = field(default_factory=list)
    digest: str = ""
    """The run digest: SHA-256 over every replay's digest in schedule order."""
    results: str = ""
    """The results digest: the same over each replay with its timings masked, so two runs of
    one config with the same replies have the same, locally or on a cluster."""

    @property
    def bad(self) -> int:
        """Replays with a problem of their own."""
        return self.replays - self.good


def run_digest(digests: list[tuple[int, str, str]]) -> str:
    """The run digest of (match index, episode, replay digest) entries, in schedule order."""
    lines = "".join(f"{episode}:{digest}\n" for _, episode, digest in sorted(digests))
    return hashlib.sha256(lines.encode()).hexdigest()


def audit_run(
    out: Path, db: Path, store: StoredEpisodes | None, *, retired: Collection[str] = ()
) -> RunAudit:
    """Check run folder `out` whole (see the module docstring) against its league store, the
    file `db`: `store` is it opened read-only, None where `db` is missing (a problem, unless
    there are no replays either); `retired`, the entrants the store says are retired (each
    program among them owes a reveal)."""
    audit = RunAudit()
    files = {p.stem: p for p in sorted((out / "replays").glob("*.json"))}
    stored = _stored(out, db, store, audit) if store is not None or files else None
    audit.problems.extend(_shared_positions(db, stored or {}))
    digests: list[tuple[int, str, str]] = []
    results: list[tuple[int, str, str]] = []
    finished_cards: dict[tuple[str, int], str] = {}
    ledger = dict(numbered(out))
    for episode, path in files.items():
        audit.replays += 1
        row = stored.pop(episode, None) if stored is not None else None
        read = _read(path)
        if isinstance(read, str):  # not a replay at all: one line, and on with the rest
            audit.problems.append(read)
            continue
        replay: Replay | None = read[0]
        raw = read[1]
        digest = hashlib.sha256(raw).hexdigest()
        problems = []
        try:
            verify_replay(read[0], where=str(path), run_folder=out)
        except VerifyError as exc:
            problems.append(str(exc))
            replay = None
        if stored is not None and row is None:
            problems.append(f"{path}: no episode of the league store holds this replay")
        if row is not None and row["digest"] not in (None, digest):
            problems.append(f"{path}: the file differs from the replay stored (its digest)")
        if replay is not None:
            digests.append((replay.match.index, episode, digest))
            results.append((replay.match.index, episode, results_digest(raw.decode("utf-8"))))
            _note_card(replay, finished_cards)
            if row is not None:
                problems.extend(_result_differences(path, replay, row["results"]))
            problems.extend(_commits(path, replay, ledger, row))
        audit.problems.extend(problems)
        audit.good += not problems
    for episode in stored or {}:
        audit.problems.append(f"{db}: episode {episode} is stored, its replay is missing")
    if (out / LEDGER).exists():
        audit.problems.extend(f"ledger: {p}" for p in audit_ledger(out, finished_cards))
        audit.problems.extend(f"ledger: {p}" for p in audit_programs(out, retired))
    elif finished_cards:
        audit.problems.append(
            f"{out / LEDGER} is missing: the cards' commitments cannot be checked against it"
        )
    audit.digest = run_digest(digests)
    audit.results = run_digest(results)
    return audit


def _read(path: Path) -> tuple[Replay, bytes] | str:
    """The replay in `path` and the file's bytes, or why it is not a replay (one line)."""
    try:
        return load_replay(path), path.read_bytes()
    except ReplayUnreadable as exc:
        return f"{path}: cannot be read as a replay: {exc.reason}; move it out of replays/"
    except OSError as exc:
        return f"{path}: cannot be read ({exc.strerror or exc})"


def _stored(
    out: Path, db: Path, store: StoredEpisodes | None, audit: RunAudit
) -> dict[str, dict[str, Any]] | None:
    """The store's episodes by id, or None (and a problem) without a store to compare."""
    if store is None:
        audit.problems.append(
            f"{db} is missing: `arena rebuild {out}` re-creates it from the replays"
        )
        return None
    rows = {str(r["id"]): r for r in store.episode_rows()}
    results = store.stored_results()
    for episode, row in rows.items():
        row["results"] = results.get(episode, {})
    return rows


def _shared_positions(db: Path, stored: dict[str, dict[str, Any]]) -> list[str]:
    """Stored games of different matches at one position (match index, game index): the
    standings read the games at one match index as one match, so theirs would be mixed."""
    held: dict[tuple[int, int], dict[str, str]] = {}
    for episode, row in stored.items():
        for game in row["results"]:
            at = held.setdefault((int(row["match_index"]), int(game)), {})
            at.setdefault(str(row.get("match_id", episode)), episode)
    return [
        f"{db}: episodes {' and '.join(sorted(at.values()))} are different matches "
        f"({', '.join(sorted(at))}) stored at one position, match {index} game {game}: "
        "the standings would read them as one match"
        for (index, game), at in sorted(held.items())
        if len(at) > 1
    ]


def _result_differences(path: Path, replay: Replay, stored: object) -> list[str]:
    """Where the store's results of an episode differ from its replay's."""
    recorded = {
        g.index: (g.result.scores, g.result.reason, g.result.ending, g.result.plies)
        for g in replay.games
        if g.result is not None
    }
    if recorded == stored:
        return []
    return [f"{path}: the league store's results {stored} differ from the replay's {recorded}"]


def _commits(
    path: Path, replay: Replay, ledger: dict[int, dict[str, Any]], row: dict[str, Any] | None
) -> list[str]:
    """Each program seat's commit: the ledger line its game names commits to that program
    (its policy and SHA-256), before the episode was stored."""
    problems = []
    for game in replay.games:
        for seat, block in game.programs.items():
            if "commit" not in block:
                continue  # a replay from before commits were recorded
            line, policy = (
                int(block["commit"]),
                replay.spectator.policies[str(game.index)][int(seat)],
            )
            event = ledger.get(line, {})
            where = f"{path}: game {game.index}, seat {seat} ({policy})"
            if event.get("event") != "program_registered" or event.get("policy") != policy:
                problems.append(f"{where}: ledger line {line} commits to no program of {policy!r}")
            elif event.get("sha256") != block.get("sha256"):
                problems.append(
                    f"{where}: played {str(block.get('sha256'))[:12]}, but ledger line {line} "
                    f"commits to {str(event.get('sha256'))[:12]}"
                )
            elif (
                row is not None
                and row.get("finished")
                and float(event.get("time", 0)) > float(row["finished"])
            ):
                problems.append(
                    f"{where}: its commit, ledger line {line}, came after the game was stored"
                )
    return problems


def _note_card(replay: Replay, finished_cards: dict[tuple[str, int], str]) -> None:
    block = replay.integrity
    if "card" in block and block.get("status") != "cancelled":
        finished_cards[(str(block["card"]), int(block["attempt"]))] = str(block["card_seed"])
