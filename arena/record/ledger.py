"""The run's append-only ledger: one fsynced JSON line per event, never rewritten.

`ledger.jsonl` holds what a run commits to before it can know the outcome:
each backgammon card's commitment before its first roll and its seed once it
ends (`cards`), and each program's SHA-256 when it is registered. A kill can
tear the last line; a whole line is never lost, and a torn one is skipped.

`arena run --force-new` starts the run over, but the ledger stays: it gets a
`generation` line instead, and only the lines after the last one speak for
the run as it now stands (`current`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "LEDGER",
    "Registration",
    "append_line",
    "current",
    "new_generation",
    "read_current",
    "read_lines",
    "register_programs",
]

LEDGER = "ledger.jsonl"


def append_line(path: Path, record: dict[str, Any], *, private: bool = False) -> None:
    """Append one JSON line and fsync it: what is in the file survives a kill."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600 if private else 0o644)
    try:
        os.write(fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())
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


def register_programs(out: Path, programs: Mapping[str, Registration]) -> None:
    """Record each program's SHA-256 in the ledger, once per policy and program: the
    source stays private while the hash commits to it."""
    ledger = out / LEDGER
    known = {
        (e.get("policy"), e.get("sha256"))
        for e in read_current(out)
        if e.get("event") == "program_registered"
    }
    for name, info in programs.items():
        if (name, info.sha256) not in known:
            append_line(ledger, {
                "event": "program_registered", "policy": name, "path": str(info.path),
                "sha256": info.sha256, "time": time.time(),
            })  # fmt: skip
