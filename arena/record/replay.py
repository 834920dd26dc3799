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

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena.record.causes import CAUSES, Cause, Side

__all__ = [
    "MAX_REPLAY_BYTES",
    "MAX_REPLAY_DEPTH",
    "REASONING_CUT",
    "REPLY_END",
    "REPLY_KEPT",
    "SCHEMA_VERSION",
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
    "ReplayUnreadable",
    "ReplyReport",
    "Spectator",
    "fsync_folder",
    "kept_reply",
    "load_replay",
    "move_json",
    "prompt_sha256",
    "read_replay_json",
    "results_digest",
    "validation_problems",
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


REASONING_CUT = 20_000
"""The most characters of a reply's reasoning an attempt record keeps."""

REPLY_KEPT = 8192
"""The most characters of a reply an attempt record keeps whole. A longer one keeps its
first and last `REPLY_END` characters, with its length and SHA-256 beside them."""
REPLY_END = 2048


def kept_reply(text: str) -> tuple[str, int | None, str | None]:
    """What an attempt record keeps of a reply: (the text, or its two ends with a mark of
    the cut between them; the whole's length and SHA-256, or None when kept whole). The
    move read from the whole is the decision's `move`, so a cut never hides what was
    played: the engine re-derives every move from it."""
    if len(text) <= REPLY_KEPT:
        return text, None, None
    cut = len(text) - 2 * REPLY_END
    mark = f"\n[... {cut:,} characters of the reply left out: see reply_chars, reply_sha256 ...]\n"
    whole = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return text[:REPLY_END] + mark + text[-REPLY_END:], len(text), whole


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
    """The reply, whole up to `REPLY_KEPT` characters; a longer one by its two ends."""
    reply_chars: int | None = Field(default=None, exclude_if=_empty)
    """A reply cut by `kept_reply`: the whole reply's length in characters."""
    reply_sha256: str | None = Field(default=None, exclude_if=_empty)
    """A reply cut by `kept_reply`: the SHA-256 of the whole reply (UTF-8)."""
    latency_s: float
    cause: Cause | None = None
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
    cause: Cause | None
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
    cause: Cause
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


def write_atomic(path: Path, text: str, *, durable: bool = True, folder: bool = True) -> None:
    """Write `text` so that readers see the old file or the new one, never half of one;
    `durable`: the new file and its name are on the disk when this returns (see
    `write_atomic_lines`); `folder=False` leaves the name's fsync to the caller (one
    `fsync_folder` after a group of files)."""
    write_atomic_lines(path, (text,), durable=durable, folder=folder)


def write_atomic_lines(
    path: Path, chunks: Iterable[str], *, durable: bool = True, folder: bool = True
) -> None:
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
    if durable and folder:
        fsync_folder(path.parent)


def fsync_folder(folder: Path) -> None:
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


MAX_REPLAY_BYTES = 256 * 1024 * 1024
"""The largest replay file the arena reads (a 4,000-ply game with every prompt recorded is a
few megabytes): a larger file is refused, not read into memory."""
MAX_REPLAY_DEPTH = 64
"""How deeply a replay's JSON may nest (the schema needs about a dozen levels; a structured
move a few more): deeper is refused before anything walks it."""


class ReplayUnreadable(ValueError):
    """A file that cannot be read as a replay: `path`, and why (`reason`); the message is
    both."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def read_replay_json(path: Path) -> dict[str, Any]:
    """A replay file's JSON object, refused with `ReplayUnreadable` (naming the file) when it
    is too large, not UTF-8, not JSON, nested deeper than `MAX_REPLAY_DEPTH`, not an
    object, or of another schema version than this arena reads."""
    try:
        size = path.stat().st_size
        if size > MAX_REPLAY_BYTES:
            raise ReplayUnreadable(
                path, f"{size:,} bytes, more than a replay may have ({MAX_REPLAY_BYTES:,})"
            )
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ReplayUnreadable(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        data = json.loads(text)
    except RecursionError as exc:
        raise ReplayUnreadable(
            path, f"its JSON nests deeper than a replay may ({MAX_REPLAY_DEPTH} levels)"
        ) from exc
    except ValueError as exc:
        raise ReplayUnreadable(path, f"not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ReplayUnreadable(
            path, f"a JSON {type(data).__name__}, not the JSON object a replay is"
        )
    if _depth(data) > MAX_REPLAY_DEPTH:
        raise ReplayUnreadable(
            path, f"its JSON nests deeper than a replay may ({MAX_REPLAY_DEPTH} levels)"
        )
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ReplayUnreadable(
            path, f"replay schema_version {version!r}; this arena reads {SCHEMA_VERSION}"
        )
    return data


def _depth(data: dict[str, Any]) -> int:
    """How deeply `data` nests (an object of scalars is 1), walked without recursion; it
    stops counting past `MAX_REPLAY_DEPTH`."""
    deepest = 0
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(data, 1)]
    while stack and deepest <= MAX_REPLAY_DEPTH:
        value, level = stack.pop()
        deepest = max(deepest, level)
        items = value.values() if isinstance(value, dict) else value
        stack.extend((v, level + 1) for v in items if isinstance(v, dict | list))
    return deepest


def load_replay(path: Path) -> Replay:
    """Read a replay file (`read_replay_json`, then the schema); whatever the file holds, a
    file that is not a replay raises `ReplayUnreadable` naming it, or `OSError`."""
    data = read_replay_json(path)
    try:
        return Replay.model_validate(data)
    except ValidationError as exc:
        raise ReplayUnreadable(
            path, f"not a replay of this arena ({validation_problems(exc)})"
        ) from exc


def validation_problems(error: ValidationError) -> str:
    """A replay's validation errors in one line: each field's path and what is wrong with it
    (an unknown cause named as such, with the known ones)."""
    said: list[str] = []
    for found in error.errors(include_url=False):
        where = ".".join(str(part) for part in found["loc"])
        if found["loc"] and found["loc"][-1] == "cause" and found["type"] == "literal_error":
            said.append(f"{where}: unknown cause {found['input']!r} (known: {', '.join(CAUSES)})")
        else:
            said.append(f"{where}: {found['msg']} (found {found.get('input')!r:.80})")
    return "; ".join(said)
