"""The run config's models: each table of the TOML and the checks within one table.

What spans tables (a baseline against the games played, a program against the
games programs play, the keys in the environment) is `arena.config.checks`'.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

import games
from arena.config.authoring import AuthorTable
from arena.config.watch import WatchSettings
from providers import EndpointSettings, Trust

__all__ = [
    "MOCK_FAULTS",
    "Config",
    "ConfigError",
    "Deadlines",
    "Decoding",
    "GameTable",
    "HumanPolicy",
    "LlmPolicy",
    "MockPolicy",
    "PolicyConfig",
    "ProgramPolicy",
    "RunTable",
    "ScriptedPolicy",
    "SprtTable",
]

MOCK_FAULTS = ("slow", "silent", "empty", "unreadable", "illegal", "error", "schema_ignored")
"""The faults a mock policy may draw (`faults = { name = rate }`), in order of drawing."""


_Uid = Annotated[int, Field(ge=1, le=2**32 - 2)]


class ConfigError(ValueError):
    """A config the arena refuses, with the field and the fix in the message."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SprtTable(_Strict):
    """`[run.sprt]`: a sequential A/B test of a run's two policies (docs/efficiency.md):
    H0, the first policy is not stronger than the second by more than `elo0` (logistic
    Elo), against H1, it is stronger by at least `elo1`, at error rates `alpha` (accepting
    H1 when H0 holds) and `beta` (accepting H0 when H1 holds)."""

    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    beta: float = Field(default=0.05, gt=0, lt=0.5)
    max_matches: int = Field(default=2000, ge=1)
    """No new match starts past this many, verdict or not."""

    @model_validator(mode="after")
    def _ordered(self) -> SprtTable:
        if self.elo1 <= self.elo0:
            raise ValueError(
                f"elo1 = {self.elo1} is not above elo0 = {self.elo0}: H1 must claim more than H0"
            )
        return self


class RunTable(WatchSettings, _Strict):
    """`[run]`: what to play and how much (and how it is watched: `WatchSettings`)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    seed: int = Field(default=0, ge=0, lt=2**31)
    games: list[str] = Field(min_length=1)
    matches: int = Field(default=1, ge=1)
    concurrency: int = Field(default=8, ge=1, le=1024)
    executor: Literal["local", "ray"] = "local"
    """Where episodes are played: this process, or a Ray cluster (docs/cluster.md)."""
    record_prompts: bool = True
    node_budget: int = Field(default=20_000, ge=1)
    sandbox: Literal["auto", "bwrap", "process"] = "auto"
    """How program seats' children are confined: `bwrap`, `process`, or `auto` (bwrap where it
    works; docs/program-seats.md#the-two-sandbox-modes). Never recorded in a replay."""
    program_uids: tuple[_Uid, _Uid] = (2_000_000_000, 2_000_065_535)
    """As root: the block [first, last] each program child gets a uid of its own from."""
    accept_predictable_dice: bool = False
    """Let derived dice play with a model's program, which could compute them in advance."""
    max_infra_share: float = Field(default=0.25, ge=0, le=1)
    """A game where more of a seat's decisions than this fell back on the infrastructure's
    failures is a no-contest, and is played again (docs/rules.md#validity)."""
    replay_no_contest: int = Field(default=2, ge=0)
    """How many times such a game is played again before it stays a no-contest (0: never)."""
    breaker_failures: int = Field(default=3, ge=1)
    """Consecutive infrastructure failures of an endpoint that open its circuit."""
    endpoint_down_s: float = Field(default=300.0, gt=0)
    """How long an endpoint may stay down before the run stops (resumable)."""
    sprt: SprtTable | None = None
    """Stop as soon as a sequential test settles which of two policies is stronger."""
    schedule: Literal["round-robin", "adaptive"] = "round-robin"
    """`adaptive`: play in rounds the pairs whose order is least certain, each pair at most
    `matches` matches (docs/efficiency.md)."""
    target: float = Field(default=0.90, gt=0, lt=1)
    """Adaptive: stop once the whole ranking is right with this probability."""
    round_matches: int = Field(default=8, ge=1)
    """Adaptive: matches picked per round."""
    budget_usd: float | None = Field(default=None, gt=0)
    """No new match starts once the run's replies cost this much (every model priced)."""
    budget_tokens: int | None = Field(default=None, ge=1)
    """No new match starts once the run's replies used this many tokens (in and out)."""
    budget_matches: int | None = Field(default=None, ge=1)
    """No new match starts once this many matches have started."""
    response_cache: bool = False
    """Reuse a stored reply to an identical request instead of asking the provider again."""
    cache_dir: Path | None = None
    """Where the response cache lives (default: the user's cache folder, `cog-arena/`)."""
    trust: Trust = "certifi"
    """The CAs that TLS connections to model endpoints trust: certifi's bundle of public
    CAs, or `system`, the operating system's own store (a company's managed machines)."""
    pool: bool = False
    """A standing pool (docs/pool.md): entrants added and retired between sessions, every
    stored game rated; one `games` entry, its own schedule, `matches` capping any pair."""
    placement_matches: int = Field(default=4, ge=1)
    """Pool: the matches a new entrant plays against each active entrant before any other."""
    roster_cap: int | None = Field(default=None, ge=1)
    """Pool: at most this many active entrants per `author` (past it, the lowest rated goes)."""

    @field_validator("games")
    @classmethod
    def _known_games(cls, value: list[str]) -> list[str]:
        known = [*games.names(), "rotate"]
        for entry in value:
            if entry not in known:
                raise ValueError(f"unknown game {entry!r} (known: {', '.join(known)})")
        if len(set(value)) != len(value):
            raise ValueError(f"a game is listed twice in {value}: list each once")
        return value


class Deadlines(_Strict):
    """Seconds for one decision: first reply, the one retry, the whole decision."""

    first_reply_s: float = Field(default=30.0, gt=0)
    retry_s: float = Field(default=15.0, gt=0)
    decision_s: float = Field(default=45.0, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> Deadlines:
        if self.first_reply_s > self.decision_s:
            raise ValueError(
                f"first_reply_s = {self.first_reply_s} exceeds decision_s = {self.decision_s}: "
                "the first reply must fit inside the decision"
            )
        return self


class GameTable(_Strict):
    """`[game.<name>]`: one game's deadlines, wall clock and engine parameters."""

    model_config = ConfigDict(extra="allow", frozen=True)

    first_reply_s: float | None = Field(default=None, gt=0)
    retry_s: float | None = Field(default=None, gt=0)
    decision_s: float | None = Field(default=None, gt=0)
    episode_wall_s: float | None = Field(default=None, gt=0)
    dice: Literal["verifiable", "derived"] | None = None
    """Games whose chance is a card (backgammon): where card seeds come from."""

    def engine_params(self) -> dict[str, Any]:
        """The keys that are neither deadlines, the wall clock nor the dice mode."""
        return dict(self.model_extra or {})


class _PolicyBase(_Strict):
    author: str | None = None
    prompt: str | dict[str, str] | None = None
    retired: bool = False
    """Pool: the entrant plays no more; its games and ratings stay."""

    def template_for(self, family: str) -> str:
        """The template path for a game family: named, or `<family>/default.md`."""
        if isinstance(self.prompt, str):
            return self.prompt if self.prompt.startswith(f"{family}/") else f"{family}/default.md"
        if isinstance(self.prompt, dict) and family in self.prompt:
            return self.prompt[family]
        return f"{family}/default.md"

    @field_validator("prompt")
    @classmethod
    def _families(cls, value: str | dict[str, str] | None) -> str | dict[str, str] | None:
        families = games.families()
        if isinstance(value, dict):
            for family in value:
                if family not in families:
                    raise ValueError(
                        f"unknown prompt family {family!r} (known: {', '.join(families)})"
                    )
        elif isinstance(value, str) and value.startswith(("./", "../", "/")):
            raise ValueError(
                f"prompt = {value!r} is a template beside the config, which is given per "
                f'family: write prompt = {{ board = "{value}" }} (families: {", ".join(families)})'
            )
        elif isinstance(value, str) and value.split("/", 1)[0] not in families:
            raise ValueError(
                f"prompt = {value!r} names no family: a template under prompts/ is "
                f"<family>/<file> (e.g. board/terse.md; families: {', '.join(families)}), "
                f'one beside the config is given per family: prompt = {{ board = "./{value}" }}'
            )
        return value


class ScriptedPolicy(_PolicyBase):
    """A scripted baseline: the game's own (`default`), one a game names, or `random`."""

    kind: Literal["scripted"]
    baseline: Literal["default", "random", "tactician", "pincer", "flank"] = "default"


Decoding = Literal["free", "json", "schema"]
"""How a text seat's reply is decoded (docs/decoding.md): free text, a JSON object, or one
whose reply key a schema constrains."""


class MockPolicy(_PolicyBase):
    """An in-process seat that answers through the LLM text path, with seeded faults."""

    kind: Literal["mock"]
    decoding: Decoding = "free"
    """Under `schema` its unreadable, illegal and empty faults become legal choices."""
    retry_lists_moves: bool = False
    """A template without `$legal_moves`: list them in the retry all the same."""

    @property
    def reply_decoding(self) -> Decoding:
        """The decoding asked for."""
        return self.decoding

    # An empty dict as the default (pydantic copies it for each model), not
    # `default_factory=dict`: pydantic reads a factory's signature, and a builtin's is
    # parsed from its text by the tokenizer, whose patterns take a while to compile.
    faults: dict[str, float] = Field(default={})
    latency_ms: float = Field(default=0.0, ge=0)

    @field_validator("faults")
    @classmethod
    def _fault_rates(cls, value: dict[str, float]) -> dict[str, float]:
        for name, rate in value.items():
            if name not in MOCK_FAULTS:
                raise ValueError(f"unknown fault {name!r} (known: {', '.join(MOCK_FAULTS)})")
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"fault rate {name} = {rate} is not in [0, 1]")
        if sum(value.values()) > 1.0:
            raise ValueError(f"fault rates sum to {sum(value.values()):.3f}; they must sum to <= 1")
        return value


class LlmPolicy(EndpointSettings, _PolicyBase):
    """A model behind one of the wire protocols: its endpoint's settings (the keys of
    `providers.EndpointSettings`, checked there) and how each request asks it."""

    kind: Literal["llm"]
    max_tokens: int = Field(default=1024, ge=1)
    temperature: float | None = Field(default=None, ge=0)
    seed: int | None = None
    """A sampling seed, sent where the protocol has one (OpenAI-compatible, Gemini)."""
    json_mode: bool = False
    """Ask the provider to enforce a JSON object reply, where its protocol can: read as
    `decoding = "json"` (the older name; not both)."""
    decoding: Decoding = "free"
    """How the reply is decoded (docs/decoding.md): `free`, `json` or `schema`."""
    retry_lists_moves: bool = False
    """List the moves in the retry though the template leaves `$legal_moves` out."""
    schema_style: Literal["json_schema", "json_object"] = "json_schema"
    """An OpenAI-compatible server's schema form: `json_schema`, or `json_object` with the
    schema beside it (llama-cpp-python's server)."""
    layout: Literal["single", "chat"] = "single"
    """`chat`: the template's stable part goes as the system message, the rest as the
    user message (what a provider's prompt cache can keep); `single`: one user message."""

    @model_validator(mode="after")
    def _cache_needs_chat(self) -> LlmPolicy:
        if self.prompt_cache and self.layout != "chat":
            raise ValueError('prompt_cache caches the system message: set layout = "chat" with it')
        if self.json_mode and "decoding" in self.model_fields_set:
            raise ValueError(
                'json_mode = true is decoding = "json": set decoding alone (json_mode is its '
                "older name)"
            )
        if (
            self.reply_decoding == "schema"
            and self.provider == "anthropic"
            and "thinking" in self.params
        ):
            raise ValueError(
                'decoding = "schema" forces a tool, which Anthropic refuses with thinking: '
                'remove params.thinking, or use decoding = "free"'
            )
        return self

    @property
    def reply_decoding(self) -> Decoding:
        """The decoding asked for: `decoding`, or `json` where `json_mode` is set."""
        return "json" if self.json_mode else self.decoding


class ProgramPolicy(_PolicyBase):
    """A sandboxed Python player (docs/program-seats.md)."""

    kind: Literal["program"]
    path: Path
    timeout_s: float | None = Field(default=None, gt=0)
    """Hard timeout per move; a move past it forfeits the game (default: the game's own)."""
    trusted: bool | None = None
    """May run outside bwrap where `auto` falls back (default: yes, unless a model wrote it)."""


class HumanPolicy(_PolicyBase):
    """A person on the run's play page (docs/human-play.md): in a game, only a seat's alias."""

    kind: Literal["human"]
    name: str | None = None
    """Who plays, shown to spectators only (the replay's spectator block, the viewer)."""
    first_reply_s: float | None = Field(default=None, gt=0)
    """How long a decision waits for the person's first try (default: `decision_s`)."""
    decision_s: float = Field(default=120.0, gt=0)
    """A decision's whole time: refused tries may be followed by others until then."""
    first_open_s: float = Field(default=300.0, gt=0)
    """The most a game's first decision waits for the play page before its clock starts."""

    @model_validator(mode="after")
    def _ordered(self) -> HumanPolicy:
        if self.first_reply_s is not None and self.first_reply_s > self.decision_s:
            raise ValueError(
                f"first_reply_s = {self.first_reply_s} exceeds decision_s = {self.decision_s}: "
                "the first try must fit inside the decision"
            )
        return self

    def deadlines(self) -> Deadlines:
        """The person's deadlines, where the game lets a seat have its own."""
        first = self.first_reply_s if self.first_reply_s is not None else self.decision_s
        return Deadlines(first_reply_s=first, retry_s=self.decision_s, decision_s=self.decision_s)


PolicyConfig = Annotated[
    ScriptedPolicy | MockPolicy | LlmPolicy | ProgramPolicy | HumanPolicy,
    Field(discriminator="kind"),
]


_NOT_IN_NAMES = ("-vs-", "/")
"""What a policy name may not contain: match ids and replay paths are made of names."""


class Config(_Strict):
    """A whole run: `[run]`, `[deadlines]`, `[game.<name>]` and `[policies.<name>]`."""

    run: RunTable
    deadlines: Deadlines = Deadlines()
    author: AuthorTable = AuthorTable()
    game: dict[str, GameTable] = Field(default={})  # a copy for each, as `faults`
    policies: dict[str, PolicyConfig]
    _folder: Path = PrivateAttr(default_factory=Path)
    """Where the config's relative paths start: its file's folder (`load_config`)."""
    _source: Path | None = PrivateAttr(default=None)
    """The config file it was read from (`load_config`), if any."""

    @property
    def source(self) -> Path | None:
        """The config file this config was read from (None when built in memory)."""
        return self._source

    @property
    def folder(self) -> Path:
        """The folder a relative path of this config (a program's) starts from."""
        return self._folder

    def located(self, path: Path) -> Path:
        """A path written in the config, as the file system finds it: a relative one from
        the config file's folder, not from wherever `arena` was started."""
        return path if path.is_absolute() else self._folder / path

    @field_validator("policies")
    @classmethod
    def _two_or_more(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(value) < 2:
            raise ValueError(
                f"a run needs at least two policies, got {len(value)}: add a [policies.<name>] table"
            )
        for name in value:
            if found := [part for part in _NOT_IN_NAMES if part in name]:
                raise ValueError(
                    f"policy name {name!r} contains {' and '.join(map(repr, found))}: a match id "
                    "is <game>-k<n>-<first>-vs-<second> and names the replay files, so a name "
                    "may hold neither '-vs-' (two pairs' ids could read alike) nor '/' (a path "
                    "separator); rename the policy"
                )
        return value

    @model_validator(mode="after")
    def _pool(self) -> Config:
        run = self.run
        retired = [name for name, spec in self.policies.items() if spec.retired]
        if not run.pool:
            if retired:
                raise ValueError(
                    f"policies {', '.join(retired)} set retired = true, which only a standing "
                    "pool knows: set [run] pool = true, or remove the key"
                )
            return self
        if len(run.games) != 1:
            raise ValueError(
                f"a pool plays exactly one games entry, got {run.games}: keep one (rotate "
                "counts as one), or start one pool per game"
            )
        if run.sprt is not None:
            raise ValueError(
                "a pool schedules by itself (placement, then adaptive rounds up to target): "
                "remove [run.sprt], or run the A/B test as a league without pool = true"
            )
        if len(self.policies) - len(retired) < 2:
            raise ValueError(
                f"a pool needs at least two active policies; {len(retired)} of "
                f"{len(self.policies)} are retired: add an entrant"
            )
        return self

    @field_validator("game")
    @classmethod
    def _game_tables(cls, value: dict[str, GameTable]) -> dict[str, GameTable]:
        for name in value:
            if name not in games.names():
                raise ValueError(
                    f"[game.{name}] names an unknown game (known: {', '.join(games.names())})"
                )
        return value

    def deadlines_for(self, game: str) -> Deadlines:
        """The game's own defaults, then `[deadlines]` where the game takes it (the board
        games and Stratego), then `[game.<name>]`."""
        fmt = games.load(game).match_format
        first, retry, whole = fmt.deadlines
        base = Deadlines(first_reply_s=first, retry_s=retry, decision_s=whole)
        if fmt.run_deadlines:
            base = Deadlines(
                **{**base.model_dump(), **self.deadlines.model_dump(exclude_unset=True)}
            )
        table = self.game.get(game)
        if table is None:
            return base
        overrides = {
            key: getattr(table, key)
            for key in ("first_reply_s", "retry_s", "decision_s")
            if getattr(table, key) is not None
        }
        return Deadlines(**{**base.model_dump(), **overrides})

    def wall_s_for(self, game: str) -> float | None:
        """The game's wall-clock stop in seconds, or None where it has none."""
        table = self.game.get(game)
        if table is not None and table.episode_wall_s is not None:
            return table.episode_wall_s
        return games.load(game).match_format.wall_s

    def secrets(self) -> list[str]:
        """The values of the API keys and secret headers the policies name: no output shows."""
        found = []
        for policy in self.policies.values():
            if not isinstance(policy, LlmPolicy):
                continue
            found += [os.environ[n] for n in policy.secret_variables() if os.environ.get(n)]
        return found

    def params_for(self, game: str) -> dict[str, Any]:
        """Engine parameters of `[game.<name>]`."""
        table = self.game.get(game)
        return table.engine_params() if table is not None else {}
