"""Backgammon cards with dice anyone can verify: draw, commit, reveal, cancel, replace.

A card is one episode of two games. Its seed is drawn when the card starts,
never before, and its commitment `sha256(utf8(seed))` goes to the run's
append-only ledger before the first roll (`docs/rules.md#backgammon`). The
seed itself is kept with the run, readable by its owner only, until it is
revealed in the ledger and the replay when the card ends or is cancelled.
With `dice = "derived"` the seed derives from the master seed instead, for
reproducible research runs, and the ledger says so.

The lifecycle, as the episode hooks of every game whose chance is a card:

- `open`: draw the seed, keep it privately, commit it; the block's end reveals
  it, `finished` or, if the card was cut short, `cancelled`;
- `keep`: after the card's first game, its replay so far waits in
  `partial-cards/` so a card cut later keeps that finished game;
- `resume`: a session killed mid-card left a commitment without a reveal:
  the card is revealed as cancelled, stored with its finished games and the
  cut one `no-contest` (out of the ratings), and a new card with a new seed
  (attempt 2, 3, ...) is played in its place;
- `verify`: the commitment, the seed, every roll and every board of a card's
  replay (`verify_card_replay`, the four steps `games.backgammon.verify` runs).
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

import games
from arena.record.ledger import LEDGER, append_line, current, read_current, read_lines
from arena.record.replay import GameRecord, GameResult, Replay, load_replay, write_atomic
from games.backgammon import PlyRecord, VerifyFailure, commitment, derived_card_seed, verify_card

__all__ = [
    "PARTIAL",
    "SECRETS",
    "Card",
    "CardEpisodes",
    "cancelled_card_replay",
    "cancelled_cards",
    "reveal_interrupted",
    "verify_card_replay",
]

log = structlog.get_logger("arena.record.cards")

SECRETS = "card-secrets.jsonl"
PARTIAL = "partial-cards"
"""Where a card's finished games wait until the card ends: a cut card keeps them."""


@dataclass(frozen=True, slots=True)
class Card:
    """One card in play: its id (the episode's), seed and commitment."""

    id: str
    seed: str
    commitment: str
    dice: str
    attempt: int
    partial: Path | None
    """Where its finished games wait while it is in play (None: nowhere, in a test)."""

    @property
    def chance(self) -> str:
        """The card seed: each game derives its own seed from it."""
        return self.seed

    def keep(self, replay: Replay) -> None:
        """Keep the card's finished games; the seed stays out of them until the reveal."""
        if self.partial is not None:
            kept = replay.model_copy(
                update={"integrity": {"card": self.id, "attempt": self.attempt}}
            )
            write_atomic(self.partial, kept.model_dump_json())

    def integrity(self) -> dict[str, Any]:
        """The card's integrity block for its replay, seed revealed."""
        return {
            "card": self.id,
            "dice": self.dice,
            "attempt": self.attempt,
            "commitment": self.commitment,
            "card_seed": self.seed,
        }


class CardEpisodes:
    """The episode hooks of a card game: draws, commits and reveals the cards of one run."""

    def __init__(self, out: Path | None, dice: str = "verifiable", master: int = 0) -> None:
        if dice not in ("verifiable", "derived"):
            raise ValueError(f"dice = {dice!r}: use 'verifiable' or 'derived'")
        self.out = out
        self.dice = dice
        self.master = master
        self._commits: Counter[str] | None = None

    def _attempt(self, card_id: str, ledger: Path) -> int:
        """1 for a card never committed in this run folder, then 2, 3, ... for its replacements."""
        if self._commits is None:  # the ledger is read once; later commits are counted here
            events = current(read_lines(ledger))
            self._commits = Counter(
                str(e.get("card")) for e in events if e.get("event") == "commit"
            )
        self._commits[card_id] += 1
        return self._commits[card_id]

    @contextmanager
    def open(self, episode: str, k: int, seed: int) -> Iterator[Card]:
        """Draw and commit a card; reveal it when the block ends, as finished or cancelled."""
        if self.out is None:
            raise ValueError("a card needs the run folder that holds its ledger")
        ledger, secrets_file = self.out / LEDGER, self.out / SECRETS
        attempt = self._attempt(episode, ledger)
        if self.dice == "verifiable":
            card_seed = secrets.token_hex(32)
        else:
            card_seed = derived_card_seed(self.master, k, attempt)
        partial = self.out / PARTIAL / f"{episode}~a{attempt}.json"
        card = Card(episode, card_seed, commitment(card_seed), self.dice, attempt, partial)
        append_line(
            secrets_file, {"card": episode, "attempt": attempt, "seed": card_seed}, private=True
        )
        commit: dict[str, Any] = {
            "event": "commit", "card": episode, "attempt": attempt, "commitment": card.commitment,
            "dice": self.dice, "time": time.time(),
        }  # fmt: skip
        if self.dice == "derived":
            commit["note"] = (
                "derived dice: the seed follows from the master seed; this commitment proves nothing"
            )
        append_line(ledger, commit)
        log.info("card_committed", commitment=card.commitment, dice=card.dice)
        status = "cancelled"
        try:
            yield card
            status = "finished"
        finally:
            append_line(ledger, {
                "event": "reveal", "card": episode, "attempt": attempt, "seed": card_seed,
                "status": status, "time": time.time(),
            })  # fmt: skip
            if status == "finished":
                partial.unlink(missing_ok=True)

    def resume(self, store: Callable[[Replay], object]) -> None:
        """Reveal every card a killed session left open; store the cut cards' finished games."""
        if self.out is None:
            return
        for card in reveal_interrupted(self.out):
            log.warning("card_cancelled", card=card, reason="the run stopped mid-card")
        for path, reveal in cancelled_cards(self.out):
            replay = cancelled_card_replay(load_replay(path), reveal)
            store(replay)
            path.unlink()
            log.warning("card_kept_cancelled", card=replay.episode, games=len(replay.games))

    def verify(self, replay: Replay) -> str | None:
        """The card's four verification steps, the commitment from the ledger; the problem
        starts with where it is (` game 1 ply 7`), then `: ` and what failed."""
        ledger = self.out / LEDGER if self.out is not None else None
        failure = verify_card_replay(replay, ledger)
        if failure is None:
            return None
        at = f" game {failure.game} ply {failure.ply}" if failure.game is not None else ""
        return f"{at}: verification step {failure.step} failed: {failure.message}"


def reveal_interrupted(out: Path) -> list[str]:
    """Reveal, as cancelled, every card the ledger committed but never revealed (a killed run).

    Such a card is cancelled and its seed revealed; the arena plays a new card,
    with a new seed, in its place. Returns the cards revealed.
    """
    events = read_current(out)
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
        (e["card"], e["attempt"]): e for e in read_current(out) if e.get("event") == "reveal"
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


def cancelled_card_replay(kept: Replay, reveal: dict[str, Any]) -> Replay:
    """The replay of a card cut short: its finished games, the cut one no-contest."""
    played = {g.index for g in kept.games}
    seat_names = games.load(kept.game).match_format
    cut = [
        GameRecord(
            index=index,
            aliases=list(seat_names.aliases(kept.match.seed, index)),
            result=GameResult(
                scores=None,
                reason=games.COMPLETE,
                ending="no-contest",
                detail=f"card cancelled: {reveal.get('reason', 'stopped mid-card')}",
                plies=0,
            ),
        )
        for index in (1, 2)
        if index not in played
    ]
    integrity = {
        **kept.integrity, "dice": reveal.get("dice"), "card_seed": reveal.get("seed"),
        "status": "cancelled",
    }  # fmt: skip
    return kept.model_copy(
        update={"episode": f"{kept.episode}~cancelled-a{kept.integrity.get('attempt')}",
                "games": [*kept.games, *cut], "integrity": integrity}
    )  # fmt: skip


def _records(replay: Replay) -> list[PlyRecord]:
    """The per-ply records (dice, board before, play, board after) of a card's replay."""
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


def verify_card_replay(replay: Replay, ledger: Path | None = None) -> VerifyFailure | None:
    """The four verification steps over a card's replay (commitment, seed, dice, boards), the
    commitment taken from the ledger if given."""
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
    for event in current(read_lines(ledger)):
        if event.get("card") != card or event.get("attempt") != attempt:
            continue
        if event.get("event") == "commit":
            committed = event.get("commitment")
        elif event.get("event") == "reveal" and committed is None:
            return None
    return committed
