"""Backgammon cards with dice anyone can verify (SPEC 7): seed, commitment, ledger, reveal.

A card's seed is drawn when the card starts, never before, and its
commitment `sha256(utf8(seed))` goes to the run's append-only ledger
(`ledger.jsonl`, one fsynced JSON line per event, never rewritten) before the
first roll. The seed itself is kept with the run, readable by its owner only,
until it is revealed in the ledger and the replay when the card ends or is
cancelled; a run killed mid-card reveals it on resume. With
`[game.backgammon] dice = "derived"` the seed derives from the master seed
instead, for reproducible research runs, and the ledger says so.

`verify_card_replay` runs the seed's steps 1-4 over a card's replay.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games.backgammon import PlyRecord, VerifyFailure, commitment, derived_card_seed, verify_card

__all__ = [
    "LEDGER",
    "Card",
    "CardDealer",
    "append_line",
    "cancelled_cards",
    "read_lines",
    "reveal_interrupted",
    "verify_card_replay",
]

LEDGER = "ledger.jsonl"
SECRETS = "card-secrets.jsonl"
PARTIAL = "partial-cards"
"""Where a card's finished games wait until the card ends: a cut card keeps them (SPEC 7)."""


def append_line(path: Path, record: dict[str, Any], *, private: bool = False) -> None:
    """Append one JSON line and fsync it: what is in the file survives a kill."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600 if private else 0o644)
    try:
        os.write(fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Card:
    """One card in play: its id (the episode's), seed and commitment."""

    id: str
    seed: str
    commitment: str
    dice: str
    attempt: int

    def revealed(self) -> dict[str, Any]:
        """The card's integrity block for its replay, seed revealed."""
        return {
            "card": self.id,
            "dice": self.dice,
            "attempt": self.attempt,
            "commitment": self.commitment,
            "card_seed": self.seed,
        }


class CardDealer:
    """Draws, commits and reveals the cards of one run."""

    def __init__(self, out: Path, dice: str, master: int) -> None:
        if dice not in ("verifiable", "derived"):
            raise ValueError(f"dice = {dice!r}: use 'verifiable' or 'derived'")
        self.ledger = out / LEDGER
        self.secrets = out / SECRETS
        self.dice = dice
        self.master = master
        self.partial = out / PARTIAL
        self._commits: Counter[str] | None = None

    def _attempt(self, card_id: str) -> int:
        """1 for a card never committed in this run folder, then 2, 3, ... for its replacements."""
        if self._commits is None:  # the ledger is read once; later commits are counted here
            events = read_lines(self.ledger)
            self._commits = Counter(
                str(e.get("card")) for e in events if e.get("event") == "commit"
            )
        self._commits[card_id] += 1
        return self._commits[card_id]

    @contextmanager
    def card(self, card_id: str, k: int) -> Iterator[Card]:
        """Draw and commit a card; reveal it when the block ends, as finished or cancelled."""
        attempt = self._attempt(card_id)
        if self.dice == "verifiable":
            seed = secrets.token_hex(32)
        else:
            seed = derived_card_seed(self.master, k, attempt)
        card = Card(card_id, seed, commitment(seed), self.dice, attempt)
        append_line(self.secrets, {"card": card_id, "attempt": attempt, "seed": seed}, private=True)
        commit: dict[str, Any] = {
            "event": "commit", "card": card_id, "attempt": attempt, "commitment": card.commitment,
            "dice": self.dice, "time": time.time(),
        }  # fmt: skip
        if self.dice == "derived":
            commit["note"] = (
                "derived dice: the seed follows from the master seed; this commitment proves nothing"
            )
        append_line(self.ledger, commit)
        status = "cancelled"
        try:
            yield card
            status = "finished"
        finally:
            append_line(self.ledger, {
                "event": "reveal", "card": card_id, "attempt": attempt, "seed": seed,
                "status": status, "time": time.time(),
            })  # fmt: skip
            if status == "finished":
                self.partial_path(card).unlink(missing_ok=True)

    def partial_path(self, card: Card) -> Path:
        """Where the card's finished games are kept while it is in play."""
        return self.partial / f"{card.id}~a{card.attempt}.json"


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of an append-only file; a line a kill cut short is skipped."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    # A kill can cut the last line short; a whole line is never lost, a torn one is ignored.
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def reveal_interrupted(out: Path) -> list[str]:
    """Reveal, as cancelled, every card the ledger committed but never revealed (a killed run).

    SPEC 7: such a card is cancelled and its seed revealed; the arena plays a
    new card, with a new seed, in its place. Returns the cards revealed.
    """
    events = read_lines(out / LEDGER)
    revealed = {(e["card"], e["attempt"]) for e in events if e.get("event") == "reveal"}
    open_cards = [(e["card"], e["attempt"]) for e in events if e.get("event") == "commit"]
    open_cards = [c for c in open_cards if c not in revealed]
    seeds = {(s["card"], s["attempt"]): s["seed"] for s in read_lines(out / SECRETS)}
    for card, attempt in open_cards:
        append_line(out / LEDGER, {
            "event": "reveal", "card": card, "attempt": attempt, "seed": seeds.get((card, attempt)),
            "status": "cancelled", "reason": "the run stopped mid-card", "time": time.time(),
        })  # fmt: skip
    return [card for card, _ in open_cards]


def cancelled_cards(out: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Kept games of cards that ended cancelled: (partial replay file, the card's reveal)."""
    reveals = {
        (e["card"], e["attempt"]): e for e in read_lines(out / LEDGER) if e.get("event") == "reveal"
    }
    found = []
    for path in sorted((out / PARTIAL).glob("*.json")):
        card, _, attempt = path.stem.rpartition("~a")
        reveal = reveals.get((card, int(attempt))) if attempt.isdigit() else None
        if reveal is None or reveal.get("status") == "finished":
            path.unlink()  # a finished card is stored whole; an unknown one was never committed
            continue
        found.append((path, reveal))
    return found


def _records(replay: Any) -> list[PlyRecord]:
    """The seed's per-ply records (dice, board before, play, board after) from a card's replay."""
    records = []
    for game in replay.games:
        board = game.integrity.get("board")
        roll = game.integrity.get("roll")
        for ply in game.plies:
            if roll is None or board is None:
                break
            (decision,) = ply.decisions
            records.append(PlyRecord(
                game.index, roll[0], roll[1], (roll[2], roll[3]), board, str(decision.move),
                ply.integrity.get("board", {}),
            ))  # fmt: skip
            board, roll = ply.integrity.get("board"), ply.integrity.get("roll")
    return records


def verify_card_replay(replay: Any, ledger: Path | None = None) -> VerifyFailure | None:
    """Steps 1-4 of the seed over a card's replay, the commitment taken from the ledger if given."""
    block = replay.integrity
    committed = block.get("commitment")
    if ledger is not None and ledger.exists():
        committed = _ledger_commitment(ledger, block.get("card"), block.get("attempt"))
        if committed is None:
            return VerifyFailure(
                1, f"the ledger {ledger} has no commitment for card {block.get('card')!r}"
            )
    return verify_card(str(committed), str(block.get("card_seed", "")), _records(replay))


def _ledger_commitment(ledger: Path, card: object, attempt: object) -> str | None:
    """The card's commitment, provided the ledger committed it before revealing it."""
    committed: str | None = None
    for event in read_lines(ledger):
        if event.get("card") != card or event.get("attempt") != attempt:
            continue
        if event.get("event") == "commit":
            committed = event.get("commitment")
        elif event.get("event") == "reveal" and committed is None:
            return None
    return committed
