"""Replays: the versioned record of an episode, and the truth about it.

One JSON document per episode: one game in the board gauntlet and Stratego,
both games of a match for the battle and a backgammon card. It carries the
seed, the resolved game and parameters, the aliases, the hash of every prompt
template, every decision with every attempt, every fallback and the result.
Policy names appear only in the `spectator` block. Files are written
atomically (a temporary file, then a rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "INFRASTRUCTURE",
    "REASONING_CUT",
    "SCHEMA_VERSION",
    "SEAT",
    "TIMINGS",
    "AttemptRecord",
    "DecisionRecord",
    "FallbackAttempt",
    "FallbackRecord",
    "GameRecord",
    "GameResult",
    "MatchRecord",
    "PlyRecord",
    "Replay",
    "ReplyReport",
    "Side",
    "Spectator",
    "load_replay",
    "move_json",
    "prompt_sha256",
    "results_digest",
    "write_atomic",
    "write_atomic_lines",
]

SCHEMA_VERSION = 1


def prompt_sha256(prompt: str, system_chars: int | None = None) -> str:
    """The hash a replay records of a prompt: of its text when it went as one message; in
    the chat layout, of the two messages with their roles (as canonical JSON), so that
    moving the split is an edit `arena verify` sees."""
    if system_chars is None:
        return hashlib.sha256(prompt.encode()).hexdigest()
    messages = [
        {"role": "system", "content": prompt[:system_chars]},
        {"role": "user", "content": prompt[system_chars:]},
    ]
    canonical = json.dumps(messages, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _empty(value: object) -> bool:
    """Whether a field added to the schema later is at its empty default: then it is not
    written, so a replay that has nothing to say in it reads as before."""
    return not value


class _Model(BaseModel):
    # Built when first used (a game's first record), not when a run imports them.
    model_config = ConfigDict(extra="forbid", defer_build=True)


Side = Literal["seat", "infrastructure"]
"""Whose failure a fallback was (docs/rules.md#validity): the seat's own (what it returned,
or no reply while its endpoint was up), or the infrastructure's (the provider, the network,
the endpoint down). The battle's clock rule (`llm_off`) is neither: the seat was not asked."""
SEAT: Side = "seat"
INFRASTRUCTURE: Side = "infrastructure"


REASONING_CUT = 20_000
"""The most characters of a reply's reasoning an attempt record keeps."""


class ReplyReport(_Model):
    """What the provider said about one reply, beside its text; the one list of these fields
    (a seat's `Answer` carries them, an `AttemptRecord` keeps them)."""

    provider: str = ""
    model: str = ""
    reasoning: str | None = None
    """Reasoning the model returned apart from its reply (a provider's reasoning field or
    thinking blocks, or a leading <think> block), cut at `REASONING_CUT` characters; never
    searched for the move, never in any prompt."""
    usage: dict[str, Any] | None = None
    """Normalised usage: input_uncached, cache_read, cache_write, output, reasoning."""
    raw_usage: dict[str, Any] | None = None
    stop_reason: str | None = None
    raw_stop_reason: str | None = None
    request_id: str | None = None
    status: int | None = None
    """The HTTP status of the last response, if one came."""
    retries: list[dict[str, Any]] = Field(default_factory=list)
    """The provider's transport attempts before this one: status, error, latency, wait."""
    cost_usd: float | None = None
    decoding: str | None = Field(default=None, exclude_if=_empty)
    """How the reply was asked when not free text (docs/decoding.md): `json`, or a schema's
    kind and the form it was sent in (`schema-enum/json_schema`, `schema-shape/tool`,
    `schema-enum/responseSchema`; the in-process mock's, which sends nothing, `schema-enum`
    or `schema-shape`); not written for free text."""
    cached: bool = False
    """The reply came from the response cache (docs/efficiency.md#the-response-cache): no
    request was sent, `cost_usd` is 0 (None without a price), `usage` is what it took when
    it was made."""


class _AttemptFacts(_Model):
    n: int
    prompt_sha256: str
    prompt: str | None = None
    """The exact prompt, unless the run sets `record_prompts = false`."""
    system_chars: int | None = None
    """In the chat layout: the prompt's first `system_chars` characters went as the system
    message, the rest as the user message (`prompt_sha256` covers both, with roles)."""
    reply: str | None = None
    latency_s: float
    cause: str | None = None
    error: str = ""


class AttemptRecord(ReplyReport, _AttemptFacts):
    """One question to a seat and what came back: the attempt's facts, then the provider's
    report (the bases in this order keep the attempt's own fields first in the JSON)."""


class DecisionRecord(_Model):
    """One seat's part of one ply."""

    seat: int
    alias: str
    move: Any
    """The move as the engine re-reads it on verification."""
    source: Literal["reply", "retry", "fallback"]
    say: str = ""
    latency_s: float
    attempts: list[AttemptRecord] = Field(default_factory=list)
    nodes: int | None = None
    """Program seats: the engine helper calls the move cost."""


class PlyRecord(_Model):
    """A ply (a command turn in the battle): the decisions and the standings after it."""

    ply: int
    decisions: list[DecisionRecord]
    standings: list[int]
    integrity: dict[str, Any] = Field(default_factory=dict)


class FallbackAttempt(_Model):
    """One attempt of a decision that fell back, as its fallback record keeps it."""

    n: int
    latency_s: float
    cause: str | None
    error: str
    status: int | None
    reply: str | None
    """The raw reply, cut at 2,000 characters."""
    side: Side | None = None
    """Whose failure the attempt was; None when it gave a move."""


class FallbackRecord(_Model):
    """A decision the seat did not make itself, and why (docs/rules.md#the-decision-protocol)."""

    run: str
    episode: str
    game_index: int
    ply: int
    seat: int
    alias: str
    cause: str
    side: Side | None = None
    """Whose failure the fallback was (that of its last attempt); None for `llm_off`."""
    last_error: str
    attempts: list[FallbackAttempt]
    move: Any


class GameResult(_Model):
    """How a game ended, as its replay and the league store keep it."""

    scores: list[int] | None
    """One score per seat, summing to zero; None for a no-contest."""
    reason: str
    """`complete`, or `deadline` when the wall clock stopped the game."""
    ending: str
    detail: str = ""
    plies: int


class GameRecord(_Model):
    """One game of the episode."""

    index: int
    aliases: list[str]
    plies: list[PlyRecord] = Field(default_factory=list)
    fallbacks: list[FallbackRecord] = Field(default_factory=list)
    result: GameResult | None = None
    """None while unfinished."""
    integrity: dict[str, Any] = Field(default_factory=dict)
    programs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Seat -> the program's SHA-256, seed, node budget and timeout, for program seats."""
    listed: dict[str, dict[str, bool]] = Field(default_factory=dict, exclude_if=_empty)
    """Seat -> whether its prompt and its retry listed the legal moves, for a seat whose
    template leaves them out (finding them is part of its test); not written otherwise."""
    wall_s: float = 0.0


class Spectator(_Model):
    """What only spectators see: who played."""

    policies: dict[str, list[str]]
    """Game index -> the policy names at seats 0 and 1."""
    authors: dict[str, str | None] = Field(default_factory=dict)
    fingerprints: dict[str, str] = Field(default_factory=dict, exclude_if=_empty)
    """Policy -> its fingerprint, what decides its play (`arena.play.fingerprint`); empty in
    replays from before fingerprints, and then not written."""


class MatchRecord(_Model):
    """The match an episode belongs to: its place in the schedule, seed and policies."""

    id: str
    index: int
    """Position in the league's schedule, from 0; ratings follow it."""
    entry: str
    """The game entry as the config wrote it (`rotate` stays `rotate`)."""
    k: int
    seed: int
    first: str
    second: str


class Replay(_Model):
    """An episode, re-derivable by `arena verify`."""

    schema_version: int = SCHEMA_VERSION
    run: str
    episode: str
    match: MatchRecord
    game: str
    rules_version: int
    params: dict[str, Any]
    deadlines: dict[str, float | None]
    record_prompts: bool
    max_infra_share: float | None = None
    """The share of a seat's decisions the infrastructure's fallbacks may take before the
    game is a no-contest; None in replays from before the rule."""
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Each model policy of the match and how it was asked: provider, model, base URLs,
    the `params` merged into its requests, layout, prompt cache, token cap, sampling."""
    session: int = Field(default=0, exclude_if=lambda value: value == 0)
    """The session of the run folder that played the episode, from 1 (ratings after each
    session are rebuilt from it); 0 in replays from before sessions, and then not written."""
    templates: dict[str, str] = Field(default_factory=dict)
    """Template SHA-256 -> its path under `prompts/`."""
    games: list[GameRecord]
    spectator: Spectator
    integrity: dict[str, Any] = Field(default_factory=dict)
    """Episode-wide integrity data: a backgammon card's commitment and revealed seed."""

    @property
    def chance(self) -> int | str:
        """What each game's `initial` was given: the revealed card seed of a card, else the
        match seed."""
        card_seed = self.integrity.get("card_seed")
        return str(card_seed) if card_seed is not None else self.match.seed


def move_json(move: Any) -> Any:
    """A move as the replay stores it (engines give structured moves a `to_json`)."""
    to_json = getattr(move, "to_json", None)
    return to_json() if callable(to_json) else move


TIMINGS = frozenset({"latency_s", "wall_s", "wait_s"})
"""A replay's keys measured on the wall clock: all else follows from the config, the seeds
and the seats' replies."""


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: None if k in TIMINGS else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def results_digest(text: str) -> str:
    """The SHA-256 of a replay's canonical JSON (sorted keys) with every timing masked and
    without the session that played it: the same for two plays of one game with the same
    replies, wherever and whenever played (a run stopped and resumed included)."""
    data = _masked(json.loads(text))
    if isinstance(data, dict):
        data.pop("session", None)  # which session played it says when the run was resumed
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def write_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """Write `text` so that readers see the old file or the new one, never half of one;
    `durable`: the new file and its name are on the disk when this returns (see
    `write_atomic_lines`)."""
    write_atomic_lines(path, (text,), durable=durable)


def write_atomic_lines(path: Path, chunks: Iterable[str], *, durable: bool = True) -> None:
    """`write_atomic` of text given in `chunks`, written as they come (a large file need
    never be whole in memory). `durable` fsyncs the file before it takes the old one's name
    and the folder after, so a power cut keeps the new file or the old one; without it
    (a cache, where a torn file only reads as a miss) nothing waits on the disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(chunks)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(temp, 0o644)  # mkstemp makes it private; what is written here is for all
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    if durable:
        _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (where the system lets a folder be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse a folder's fsync: the rename is as durable as they get
    finally:
        os.close(fd)


def load_replay(path: Path) -> Replay:
    """Read a replay file; a newer schema than this arena knows is an error."""
    data = json.loads(path.read_text(encoding="utf-8"))
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ValueError(
            f"{path}: replay schema_version {version!r}; this arena reads {SCHEMA_VERSION}"
        )
    return Replay.model_validate(data)
