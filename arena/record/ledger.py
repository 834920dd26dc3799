"""The run's append-only ledger: one fsynced JSON line per event, never rewritten.

`ledger.jsonl` holds what a run commits to before it can know the outcome:
each backgammon card's commitment before its first roll and its seed once it
ends (`cards`), and each program's SHA-256 when it is registered
(`program_registered`, its commit: the program's games record the line's
number) and its whole source when its entrant retires (`program_reveal`), so
anyone can check the hash and replay its games. The bytes committed are kept
meanwhile in `program-sources/<sha256>.py`, readable by the run's user only,
so that editing or deleting the program file cannot change what is revealed;
the copy is hashed before its reveal is written, and one that is not the
program committed to stops the session (`RevealRefused`) with nothing
revealed. A retired program entrant's reveal is owed: `audit_programs`
reports one that is missing.
A kill can tear the last line; a whole line is never lost, and a torn one is
skipped.

`arena run --force-new` starts the run over, but the ledger stays: it gets a
`generation` line instead, and only the lines after the last one speak for
the run as it now stands (`current`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Protocol

from arena.config import ConfigError

__all__ = [
    "LEDGER",
    "SOURCES",
    "Registration",
    "RevealRefused",
    "append_line",
    "audit_programs",
    "commit_programs",
    "current",
    "keep_source",
    "new_generation",
    "numbered",
    "read_current",
    "read_lines",
    "reveal_program",
    "source_copy",
]

LEDGER = "ledger.jsonl"
SOURCES = "program-sources"
"""The run folder's private copies of the programs committed (`source_copy`)."""


def append_line(path: Path, record: dict[str, Any], *, private: bool = False) -> None:
    """Append one JSON line and fsync it: what is in the file survives a kill. A line a kill
    tore is ended first, so the new line never joins it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600 if private else 0o644)
    try:
        torn = os.fstat(fd).st_size > 0 and os.pread(fd, 1, os.fstat(fd).st_size - 1) != b"\n"
        line = json.dumps(record, separators=(",", ":")) + "\n"
        os.write(fd, (("\n" if torn else "") + line).encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of an append-only file; a line a kill cut short is skipped."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def current(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of the current generation: those after the last `generation` line."""
    starts = [i for i, e in enumerate(events) if e.get("event") == "generation"]
    return events[starts[-1] + 1 :] if starts else events


def read_current(out: Path) -> list[dict[str, Any]]:
    """The current generation's events of the ledger in run folder `out`."""
    return current(read_lines(out / LEDGER))


def new_generation(out: Path) -> int:
    """Start a new generation (the run starts over); returns its number, from 2."""
    ledger = out / LEDGER
    if not ledger.exists():
        return 1
    number = 1 + sum(1 for e in read_lines(ledger) if e.get("event") == "generation") + 1
    append_line(ledger, {"event": "generation", "generation": number, "time": time.time()})
    return number


class Registration(Protocol):
    """A registered program, as the ledger records it."""

    @property
    def path(self) -> Path:
        """The program file."""
        ...

    @property
    def sha256(self) -> str:
        """SHA-256 of its bytes."""
        ...


def numbered(out: Path) -> list[tuple[int, dict[str, Any]]]:
    """The current generation's events of run folder `out`'s ledger, each with its line
    number in the file (from 1; a torn line keeps its number and is skipped)."""
    path = out / LEDGER
    if not path.exists():
        return []
    found: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            found = [] if event.get("event") == "generation" else found
            found.append((number, event))
    return [(n, e) for n, e in found if e.get("event") != "generation"]


def commit_programs(out: Path, programs: Mapping[str, Registration]) -> dict[str, int]:
    """Commit to each program before it plays: its SHA-256 in the ledger (once per policy
    and program) and its bytes kept privately (`source_copy`); policy -> the line number of
    its commit, which its games record."""
    commits = {
        (e.get("policy"), e.get("sha256")): n
        for n, e in numbered(out)
        if e.get("event") == "program_registered"
    }
    out_lines: dict[str, int] = {}
    for name, info in programs.items():
        keep_source(out, info)
        if (name, info.sha256) not in commits:
            append_line(
                out / LEDGER,
                {
                    "event": "program_registered",
                    "policy": name,
                    "path": str(info.path),
                    "sha256": info.sha256,
                    "time": time.time(),
                },
            )
            commits[(name, info.sha256)] = _lines(out / LEDGER)
        out_lines[name] = commits[(name, info.sha256)]
    return out_lines


def _lines(path: Path) -> int:
    """How many lines the file has (its last one ended)."""
    return path.read_bytes().count(b"\n")


def source_copy(out: Path, sha256: str) -> Path:
    """Where the bytes of the program with `sha256` are kept until they are revealed."""
    return out / SOURCES / f"{sha256}.py"


def keep_source(out: Path, info: Registration) -> None:
    """Keep the program's bytes as committed, readable by the run's user only."""
    path = source_copy(out, info.sha256)
    if path.exists():
        return
    path.parent.mkdir(mode=0o700, exist_ok=True)
    data = info.path.read_bytes()
    if hashlib.sha256(data).hexdigest() != info.sha256:
        raise ValueError(
            f"{info.path} changed after it was checked (its SHA-256 is no longer "
            f"{info.sha256[:12]}): run again, so that the program is checked as it now is"
        )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


class RevealRefused(ConfigError):
    """A retired program's private copy is not the program it committed to (edited, or
    gone): nothing is revealed, and the session stops (`arena run` exits 3) until the copy
    is restored."""

    exit_status = 3


def reveal_program(out: Path, policy: str) -> bool:
    """Reveal a retired program's source: a `program_reveal` line with the bytes it
    committed to last (from the private copy); False if it has no commit or is revealed.
    The copy is hashed first: one that is not the program committed to raises
    `RevealRefused` and reveals nothing."""
    numbered_events = numbered(out)
    events = [e for _, e in numbered_events]
    commits = [
        (n, e)
        for n, e in numbered_events
        if e.get("event") == "program_registered" and e.get("policy") == policy
    ]
    if not commits:
        return False
    line, sha256 = commits[-1][0], str(commits[-1][1]["sha256"])
    if any(
        e.get("event") == "program_reveal"
        and e.get("policy") == policy
        and e.get("sha256") == sha256
        for e in events
    ):
        return False
    copy = source_copy(out, sha256)
    try:
        data = copy.read_bytes()
    except OSError as exc:
        raise RevealRefused(
            f"{policy!r} is retired and its source must be revealed, but its private copy "
            f"{copy} cannot be read ({exc.strerror or exc}): put back the program it committed "
            f"to ({sha256[:12]}, {LEDGER} line {line}), then run the same command to resume. "
            "Nothing was revealed"
        ) from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise RevealRefused(
            f"{policy!r} is retired and its source must be revealed, but its private copy "
            f"{copy} has SHA-256 {digest[:12]}, not the {sha256[:12]} it committed to "
            f"({LEDGER} line {line}): the copy was changed. Restore the committed bytes (the "
            "program file it was registered from, if unchanged), then run the same command "
            "to resume. Nothing was revealed"
        )
    append_line(
        out / LEDGER,
        {
            "event": "program_reveal",
            "policy": policy,
            "sha256": sha256,
            "source": data.decode("utf-8", errors="replace"),
            "time": time.time(),
        },
    )
    return True


def audit_programs(out: Path, retired: Collection[str] = ()) -> list[str]:
    """Every reveal checked against its commit (the source's SHA-256 is the one committed,
    by an earlier line of the same policy), and nothing withheld: every retired program
    entrant (an `entrant_retired` line, or a name in `retired`, those the store says are
    retired) has a `program_reveal` after its retirement of the program it committed to
    last before it."""
    problems = []
    commits: dict[tuple[str, str], int] = {}
    last: dict[str, tuple[int, str]] = {}
    owed: dict[str, tuple[int, str, int | None]] = {}
    """Policy -> (its commit's line, its SHA-256, the line that retired it) while unrevealed."""
    for n, e in numbered(out):
        policy, sha256 = str(e.get("policy")), str(e.get("sha256"))
        if e.get("event") == "program_registered":
            commits.setdefault((policy, sha256), n)
            last[policy] = (n, sha256)
        elif e.get("event") == "entrant_retired" and policy in last and policy not in owed:
            owed[policy] = (*last[policy], n)
        elif e.get("event") == "program_reveal":
            digest = hashlib.sha256(str(e.get("source", "")).encode()).hexdigest()
            if digest != sha256:
                problems.append(
                    f"line {n}: the source revealed for {policy!r} has SHA-256 {digest[:12]}, "
                    f"not the {sha256[:12]} it claims"
                )
            if (policy, sha256) not in commits:
                problems.append(f"line {n}: {policy!r} reveals a program no earlier line committed")
            elif digest == sha256 and owed.get(policy, (0, sha256))[1] == sha256:
                owed.pop(policy, None)
                last.pop(policy, None)  # revealed: a later retirement line owes nothing
    for policy in sorted(set(retired) - set(owed)):
        if policy in last:
            owed[policy] = (*last[policy], None)
    for policy, (line, sha256, at) in sorted(owed.items()):
        retired_at = f"retired at line {at}" if at is not None else "retired in the store"
        problems.append(
            f"{policy!r} is {retired_at}, but no program_reveal of the program it committed "
            f"to (line {line}, {sha256[:12]}) follows: its source is withheld"
        )
    return problems
