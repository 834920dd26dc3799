"""Backgammon cards with dice anyone can verify: draw, commit, reveal, cancel, replace.

A card is one episode of two games. Its seed is drawn when the card starts,
never before, and its commitment `sha256(utf8(seed))` goes to the run's
append-only ledger before the first roll (`docs/rules.md#backgammon`). The
seed itself is kept with the run, readable by its owner only, until it is
revealed in the ledger. With `dice = "derived"` the seed derives from the
master seed instead, for reproducible research runs, and the ledger says so.

The lifecycle, as the episode hooks of every game whose chance is a card:

- `open`: draw the seed, keep it privately, commit it;
- `keep`: after the card's first game, its replay so far waits in
  `partial-cards/` so a card cut later keeps that finished game;
- `stored`: the card's replay and row are durable, and only then is its seed
  revealed as `finished`: a result is never lost after its seed is out, so
  stopping a run cannot choose the dice;
- cut short (an exception or a cancellation ends the card's block): the seed
  is revealed as `cancelled`; the card is stored with its finished games and
  the cut one `no-contest` (out of the ratings), and a new card with a new
  seed (attempt 2, 3, ...) is played in its place;
- `cut`: a card whose worker was lost mid-run is cut short as above, and
  its kept games are stored at once; a new card replaces it in the same run;
- `resume`: a session killed mid-card left a commitment without a reveal. A
  card whose replay was written is stored if it was not, and revealed as
  `finished`; any other is revealed as `cancelled` and replaced. No card is
  revealed twice;
- `verify`: the commitment, the seed, every roll and every board of a card's
  replay (`verify_card_replay`, the four steps `games.backgammon.verify` runs),
  and `audit_ledger` over a whole run folder.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import structlog

import games
from arena.record.crash import crash_point
from arena.record.ledger import LEDGER, append_line, current, read_current, read_lines
from arena.record.replay import GameRecord, GameResult, Replay, load_replay, write_atomic
from games.backgammon import CardPly, VerifyFailure, commitment, derived_card_seed, verify_card

__all__ = [
    "CANCELLED_MARK",
    "PARTIAL",
    "SECRETS",
    "Card",
    "CardEpisodes",
    "audit_ledger",
    "cancelled_card_replay",
    "cancelled_cards",
    "verify_card_replay",
]

log = structlog.get_logger("arena.record.cards")

SECRETS = "card-secrets.jsonl"
CANCELLED_MARK = "~cancelled-a"
"""How the id of a cut card's replay ends: `~cancelled-a<attempt>`."""
PARTIAL = "partial-cards"
"""Where a card's finished games wait until the card ends: a cut card keeps them."""


@dataclass(frozen=True, slots=True)
class Card:
    """One card in play: its id (the episode's first play), seed and commitment."""

    id: str
    seed: str
    commitment: str
    dice: str
    attempt: int
    """1, then 2, 3, ... for each card dealt again under the same id: a replacement for a
    card cut short, or a replay of an episode the infrastructure spoiled."""
    partial: Path | None
    """Where its finished games wait while it is in play (None: nowhere, in a test)."""
    episode: str = ""
    """The episode that plays it (its replay's file stem); the id when empty."""

    @property
    def chance(self) -> str:
        """The card seed: each game derives its own seed from it."""
        return self.seed

    async def keep(self, replay: Replay) -> None:
        """Keep the card's finished games; the seed stays out of them until the reveal."""
        if self.partial is not None:
            kept = replay.model_copy(
                update={"integrity": {"card": self.id, "attempt": self.attempt}}
            )
            await anyio.to_thread.run_sync(write_atomic, self.partial, kept.model_dump_json())
            crash_point("game")

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

    def _folder(self) -> Path:
        if self.out is None:
            raise ValueError("a card needs the run folder that holds its ledger")
        return self.out

    def _attempt(self, card_id: str) -> int:
        """1 for a card never committed in this run folder, then 2, 3, ... for its replacements."""
        if self._commits is None:  # the ledger is read once; later commits are counted here
            events = read_current(self._folder())
            self._commits = Counter(
                str(e.get("card")) for e in events if e.get("event") == "commit"
            )
        self._commits[card_id] += 1
        return self._commits[card_id]

    def _draw(self, episode: str, base: str, k: int) -> Card:
        out = self._folder()
        attempt = self._attempt(base)
        if self.dice == "verifiable":
            card_seed = secrets.token_hex(32)
        else:
            card_seed = derived_card_seed(self.master, k, attempt)
        partial = out / PARTIAL / f"{episode}~a{attempt}.json"
        return Card(base, card_seed, commitment(card_seed), self.dice, attempt, partial, episode)

    def _commit(self, card: Card) -> None:
        out = self._folder()
        secret = {"card": card.id, "attempt": card.attempt, "seed": card.seed}
        append_line(out / SECRETS, secret, private=True)
        commit: dict[str, Any] = {
            "event": "commit",
            "card": card.id,
            "attempt": card.attempt,
            "episode": card.episode or card.id,
            "commitment": card.commitment,
            "dice": self.dice,
            "time": time.time(),
        }
        if self.dice == "derived":
            commit["note"] = (
                "derived dice: the seed follows from the master seed; this commitment proves nothing"
            )
        append_line(out / LEDGER, commit)

    @asynccontextmanager
    async def open(self, episode: str, base: str, k: int, seed: int) -> AsyncIterator[Card]:
        """Draw and commit a card for `episode` (a play of `base`, whose id the card takes);
        if the block ends in an exception or a cancellation, the card is cut short and
        revealed as cancelled (a finished one waits for `stored`). Each play gets a new
        card: a seed once revealed is never dealt again."""
        card = self._draw(episode, base, k)
        await anyio.to_thread.run_sync(self._commit, card)
        log.info("card_committed", commitment=card.commitment, dice=card.dice)
        crash_point("commit")
        try:
            yield card
        except BaseException:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(
                    _reveal, self._folder(), card.id, card.attempt, card.seed, "cancelled", ""
                )
            raise

    def stored(self, replay: Replay) -> None:
        """The card's result is durable: reveal its seed as finished, once. A cut card's
        replay was revealed when it was cut: its kept games are no longer needed."""
        block = replay.integrity
        if self.out is None:
            return
        if block.get("status") == "cancelled":
            played = replay.episode.removesuffix(f"{CANCELLED_MARK}{block.get('attempt')}")
            (self.out / PARTIAL / f"{played}~a{block.get('attempt')}.json").unlink(missing_ok=True)
            return
        card, attempt = str(block["card"]), int(block["attempt"])
        _reveal(self.out, card, attempt, str(block["card_seed"]), "finished", "")
        (self.out / PARTIAL / f"{replay.episode}~a{attempt}.json").unlink(missing_ok=True)

    def resume(self, store: Callable[[Replay], object], finished: set[str]) -> None:
        """Settle every card a killed session left open, then store the cut cards' games
        (`finished`: the episodes the store holds)."""
        if self.out is None:
            return
        for card, attempt, seed, episode in _open_cards(self.out):
            replay = _written_card(self.out, episode, attempt)
            if replay is None:
                _reveal(self.out, card, attempt, seed, "cancelled", "the run stopped mid-card")
                log.warning("card_cancelled", card=card, reason="the run stopped mid-card")
                continue
            if episode not in finished:
                store(replay)
            _reveal(self.out, card, attempt, seed, "finished", "revealed on resume")
            (self.out / PARTIAL / f"{episode}~a{attempt}.json").unlink(missing_ok=True)
            log.warning("card_recovered", card=card, attempt=attempt)
        for path, reveal in cancelled_cards(self.out):
            replay = cancelled_card_replay(load_replay(path), reveal)
            if replay.episode not in finished:  # stored, then killed before this cleanup
                store(replay)
            path.unlink()
            log.warning("card_kept_cancelled", card=replay.episode, games=len(replay.games))

    def cut(self, episode: str) -> Replay | None:
        """The replay to store for `episode`, whose last card was cut short mid-run (its
        worker lost): the games it finished, the cut one no-contest; None if it finished
        none. The card was revealed as cancelled when it was cut."""
        if self.out is None:
            return None
        events = read_current(self.out)
        commits = [
            e
            for e in events
            if e.get("event") == "commit" and e.get("episode", e["card"]) == episode
        ]
        if not commits:
            return None
        card, attempt = commits[-1]["card"], commits[-1]["attempt"]
        reveal = next(
            (
                e
                for e in events
                if e.get("event") == "reveal" and (e["card"], e["attempt"]) == (card, attempt)
            ),
            None,
        )
        path = self.out / PARTIAL / f"{episode}~a{attempt}.json"
        if reveal is None or reveal.get("status") != "cancelled" or not path.exists():
            return None
        return cancelled_card_replay(load_replay(path), reveal)

    def verify(self, replay: Replay) -> str | None:
        """The card's four verification steps, the commitment from the ledger; the problem
        starts with where it is (` game 1 ply 7`), then `: ` and what failed."""
        ledger = self.out / LEDGER if self.out is not None else None
        failure = verify_card_replay(replay, ledger)
        if failure is None:
            return None
        at = f" game {failure.game} ply {failure.ply}" if failure.game is not None else ""
        return f"{at}: verification step {failure.step} failed: {failure.message}"


def _reveal(out: Path, card: str, attempt: int, seed: str | None, status: str, reason: str) -> None:
    event: dict[str, Any] = {
        "event": "reveal",
        "card": card,
        "attempt": attempt,
        "seed": seed,
        "status": status,
        "time": time.time(),
    }
    if reason:
        event["reason"] = reason
    append_line(out / LEDGER, event)


def _open_cards(out: Path) -> list[tuple[str, int, str | None, str]]:
    """(card, attempt, seed, episode) of every card the current generation committed and
    never revealed."""
    events = read_current(out)
    revealed = {(e["card"], e["attempt"]) for e in events if e.get("event") == "reveal"}
    seeds = {(s["card"], s["attempt"]): s["seed"] for s in read_lines(out / SECRETS)}
    return [
        (e["card"], e["attempt"], seeds.get((e["card"], e["attempt"])), e.get("episode", e["card"]))
        for e in events
        if e.get("event") == "commit" and (e["card"], e["attempt"]) not in revealed
    ]


def _written_card(out: Path, episode: str, attempt: int) -> Replay | None:
    """The card's whole replay, if its writer got as far as writing it."""
    path = out / "replays" / f"{episode}.json"
    try:
        replay = load_replay(path)
    except (OSError, ValueError):
        return None
    block = replay.integrity
    whole = block.get("attempt") == attempt and block.get("status") != "cancelled"
    return replay if whole and len(replay.games) == 2 else None


def audit_ledger(out: Path, finished_cards: Mapping[tuple[str, int], str]) -> list[str]:
    """What is wrong with the current generation's cards: each commitment revealed exactly
    once, each revealed seed matching its commitment, each finished card's replay present
    (`finished_cards`: (card, attempt) -> seed of the finished card replays), each
    cancelled card replaced by a later attempt. An empty list: nothing."""
    events = read_current(out)
    commits = {(e["card"], e["attempt"]): e for e in events if e.get("event") == "commit"}
    reveals: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for e in events:
        if e.get("event") == "reveal":
            reveals.setdefault((e["card"], e["attempt"]), []).append(e)
    problems = [
        f"card {c} attempt {a}: revealed but never committed"
        for c, a in reveals
        if (c, a) not in commits
    ]
    for (card, attempt), commit in commits.items():
        shown = reveals.get((card, attempt), [])
        where = f"card {card} attempt {attempt}"
        if len(shown) != 1:
            problems.append(
                f"{where}: revealed {len(shown)} times (exactly once is right)"
                + ("; run the same command again to settle it" if not shown else "")
            )
            continue
        reveal = shown[0]
        seed = reveal.get("seed")
        if not isinstance(seed, str) or commitment(seed) != commit.get("commitment"):
            problems.append(f"{where}: the revealed seed does not match its commitment")
        kept = finished_cards.get((card, attempt))
        if reveal.get("status") == "finished" and kept is None:
            problems.append(f"{where}: revealed as finished, but no replay of it is kept")
        elif reveal.get("status") == "finished" and kept != seed:
            problems.append(f"{where}: its replay's seed is not the seed the ledger revealed")
        if reveal.get("status") == "cancelled" and (card, attempt + 1) not in commits:
            problems.append(f"{where}: cancelled, but no card replaced it")
    return problems


def cancelled_cards(out: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Kept games of cards that ended cancelled: (partial replay file, the card's reveal)."""
    events = read_current(out)
    played = {  # (episode, attempt) -> card
        (e.get("episode", e["card"]), e["attempt"]): e["card"]
        for e in events
        if e.get("event") == "commit"
    }
    reveals = {(e["card"], e["attempt"]): e for e in events if e.get("event") == "reveal"}
    found = []
    for path in sorted((out / PARTIAL).glob("*.json")):
        episode, _, attempt = path.stem.rpartition("~a")
        card = played.get((episode, int(attempt))) if attempt.isdigit() else None
        reveal = reveals.get((card, int(attempt))) if card is not None else None
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
        **kept.integrity,
        "dice": reveal.get("dice"),
        "card_seed": reveal.get("seed"),
        "status": "cancelled",
    }
    return kept.model_copy(
        update={
            "episode": f"{kept.episode}{CANCELLED_MARK}{kept.integrity.get('attempt')}",
            "games": [*kept.games, *cut],
            "integrity": integrity,
        }
    )


def _records(replay: Replay) -> list[CardPly]:
    """The per-ply records (dice, board before, play, board after) of a card's replay."""
    records = []
    for game in replay.games:
        board = game.integrity.get("board")
        roll = game.integrity.get("roll")
        for ply in game.plies:
            if roll is None or board is None:
                break
            (decision,) = ply.decisions
            records.append(
                CardPly(
                    game.index,
                    roll[0],
                    roll[1],
                    (roll[2], roll[3]),
                    board,
                    str(decision.move),
                    ply.integrity.get("board", {}),
                )
            )
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
