"""A run's plan: the config checked and resolved before any game starts.

Everything that can fail is checked here (`plan_run`): templates, provider
specs, program registrations, the stored config of a run being resumed. The
master seed is fixed (a seed of 0 draws one, or reuses the one a resumed run
stored), and with it the whole schedule. The plan is a value: it writes nothing.
It says what each game's episodes need (`setup_for`) and makes a session's one
seat maker (`seat_maker`); what a session writes as it starts is
`league.run`'s (`open_session`, `begin`).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from pydantic import ValidationError

import games
from arena.config import (
    Config,
    ConfigError,
    HumanPolicy,
    LlmPolicy,
    MockPolicy,
    PolicyConfig,
    ProgramPolicy,
    draw_master_seed,
)
from arena.config.settings import ASKED_AS
from arena.league.lineup import (
    RESUME_ACCEPTS,
    ConfigChanged,
    StoredRun,
    check_lineup,
    config_changes,
    holds_pool,
    stored_run,
)
from arena.league.pool import check_pool
from arena.league.schedule import match_seed, schedule
from arena.league.store import DB_NAME
from arena.play.episode import EpisodeSetup
from arena.play.fingerprint import fingerprint, played_as
from arena.play.match import Match
from arena.play.prompts import PromptError, PromptTemplate, load_template
from arena.record.hooks import EpisodeHooks, episode_hooks
from arena.redact import Redactor
from arena.seats.factory import SeatMaker

if TYPE_CHECKING:  # programs, models and the response cache: imported when a run has them
    import providers
    from arena.play.protocol import MakesSeats
    from arena.programs import ProgramInfo, ProgramRefused
    from arena.seats.breaker import Breakers
    from arena.seats.cache import ResponseCache
    from arena.seats.desk import Desk

__all__ = ["RESUME_MODES", "RunPlan", "asked_as", "entrant_authors", "matches_per_pair", "plan_run"]

log = structlog.get_logger("arena.league.plan")

RESUME_MODES = ("refuse", "anyway", "new")
"""What to do when a stored run's config differs: refuse, resume anyway, start over."""


def asked_as(spec: LlmPolicy) -> dict[str, Any]:
    """What a replay records of how a model policy was asked: its `recorded` settings
    (`arena.config.settings.ASKED_AS`), in the table's order; `schema_style` only under
    a schema (free text and JSON ask no schema in any form)."""
    asked = spec.model_dump(mode="json", include=set(ASKED_AS))
    asked["decoding"] = spec.reply_decoding  # json_mode is decoding = "json"
    keys = [k for k in ASKED_AS if k != "schema_style" or spec.reply_decoding == "schema"]
    return {key: asked[key] for key in keys}


@dataclass(frozen=True)
class RunPlan:
    """A validated run, ready to play: the config with its master seed resolved."""

    config: Config
    master_seed: int
    out: Path
    templates: dict[tuple[str, str], PromptTemplate]
    """(policy, family) -> template."""
    resume: str = "refuse"
    """One of `RESUME_MODES`."""
    programs: dict[str, ProgramInfo] = field(default_factory=dict)
    """Program policies' registrations (path, SHA-256)."""
    played: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Policy -> what decides its play (`arena.play.fingerprint.played_as`)."""
    session: int = 1
    """The session of the run folder this plan plays: 1 for a new run, one more than the
    sessions its store has begun for a resumed one. Every replay records it."""
    authors: dict[str, str | None] = field(default_factory=dict)
    """Policy -> who is behind it (`entrant_authors`): its author, a person's name, an
    authored program's author; None for nobody in particular."""
    commits: Mapping[str, int] = field(default_factory=dict)
    """Program policy -> the ledger line of its commit, which its games record: none until
    the session commits to its programs (`league.run.open_session`)."""

    @functools.cached_property
    def fingerprints(self) -> dict[str, str]:
        """Policy -> its fingerprint (`arena.play.fingerprint`)."""
        return {name: fingerprint(played) for name, played in self.played.items()}

    @property
    def pool(self) -> bool:
        """Whether the run folder is a standing pool (`[run] pool = true`)."""
        return self.config.run.pool

    @functools.cached_property
    def redactor(self) -> Redactor:
        """Replaces the run's API keys in everything it writes."""
        return Redactor(self.config.secrets())

    @functools.cached_property
    def response_cache(self) -> ResponseCache | None:
        """The store of model replies its seats share (`[run] response_cache`), or None: in
        `cache_dir` (relative to the config file's folder), else the user's cache folder."""
        if not self.config.run.response_cache:
            return None
        from arena.seats.cache import run_cache  # only a run with a response cache

        return run_cache(self.config, self.redactor)

    @property
    def policies(self) -> list[str]:
        """Policy names in config order."""
        return list(self.config.policies)

    def matches(self) -> Iterator[Match]:
        """The schedule, lazily."""
        run = self.config.run
        return schedule(self.master_seed, run.games, matches_per_pair(self.config), self.policies)

    def episode_count(self) -> int:
        """How many episodes the run plays (at most, when a rule may stop it before)."""
        n = len(self.policies)
        pairs = n * (n - 1) // 2
        total = 0
        for entry in self.config.run.games:
            for k in range(1, matches_per_pair(self.config) + 1):
                game = games.resolve_entry(entry, match_seed(self.master_seed, entry, k))
                total += pairs * (2 // games.load(game).match_format.games_per_episode)
        return total

    def resolved(self) -> dict[str, Any]:
        """The config as played: concrete master seed, per-game deadlines and parameters."""
        data = self.config.model_dump(mode="json")
        data["run"]["seed"] = self.master_seed
        data["resolved"] = {
            name: {
                "deadlines": self.config.deadlines_for(name).model_dump(),
                "episode_wall_s": self.config.wall_s_for(name),
                "params": self.config.params_for(name),
            }
            for name in self.games_played()
        }
        return data

    @property
    def people(self) -> list[str]:
        """The human policies: while there are any, the run serves a play page."""
        return [n for n, p in self.config.policies.items() if isinstance(p, HumanPolicy)]

    def policy_records(self) -> list[dict[str, Any]]:
        """Each policy as the league store keeps it: kind, author, template hash per family."""
        return [
            {
                "name": name,
                "kind": spec.kind,
                "author": self.authors.get(name, spec.author),
                "templates": {f: t.sha256 for (p, f), t in self.templates.items() if p == name},
                # a retired program is not registered again: the store keeps what it played as
                "fingerprint": None if unregistered else self.fingerprints.get(name),
                "played_as": None if unregistered else self.played.get(name),
            }
            for name, spec in self.config.policies.items()
            for unregistered in [isinstance(spec, ProgramPolicy) and name not in self.programs]
        ]

    def seat_maker(
        self,
        pool: providers.Providers | None = None,
        breakers: Breakers | None = None,
        desk: Desk | None = None,
    ) -> SeatMaker:
        """The one seat maker of a session: models' seats on the open provider `pool`,
        counted on `breakers`, people's at their tables of the play page's `desk`."""
        return SeatMaker(
            self.config,
            self.programs,
            pool=pool,
            breakers=breakers,
            desk=desk,
            redactor=self.redactor,
            response_cache=lambda: self.response_cache,
            commits=self.commits,
        )

    def setup_for(self, game_name: str, seat_maker: MakesSeats | None = None) -> EpisodeSetup:
        """Everything an episode of `game_name` needs, its seats made by the session's
        `seat_maker` (by default one with neither models' pool nor people's desk)."""
        config = self.config
        params = config.params_for(game_name)
        game = games.load(game_name, **params)
        return EpisodeSetup(
            run=config.run.name,
            game=game,
            params={**game.params(), **params},
            deadlines=config.deadlines_for(game_name),
            wall_s=config.wall_s_for(game_name),
            record_prompts=config.run.record_prompts,
            templates={p: self.templates[(p, game.family)] for p in self.policies},
            seat_maker=seat_maker if seat_maker is not None else self.seat_maker(),
            authors={
                name: self.authors.get(name, _author(spec))
                for name, spec in config.policies.items()
            },
            hooks=self.hooks(game),
            max_infra_share=config.run.max_infra_share,
            models={
                name: self.redactor.value(asked_as(spec))
                for name, spec in config.policies.items()
                if isinstance(spec, LlmPolicy)
            },
            fingerprints=self.fingerprints,
            session=self.session,
            retry_lists_moves={
                name: getattr(spec, "retry_lists_moves", False)
                for name, spec in config.policies.items()
            },
        )

    def hooks(self, game: games.Game[Any]) -> EpisodeHooks:
        """What the record does around each episode of `game` (a card's commit and reveal,
        verifiable dice), in this run folder."""
        table = self.config.game.get(game.name)
        dice = table.dice if table is not None and table.dice is not None else "verifiable"
        return episode_hooks(game.match_format.chance, self.out, dice=dice, master=self.master_seed)

    def games_played(self) -> list[str]:
        """Every game the schedule may play, by name."""
        return sorted(_games_played(self.config, self.master_seed))


def entrant_authors(config: Config) -> dict[str, str | None]:
    """Who is behind each policy: its `author`; a person, their name; a program with a
    manifest of `arena author`, its authoring policy's author or that policy's name; and
    a model or mock without `author` that wrote a program here, its own name (so a model
    and its program are same-author: their games are played, not rated)."""
    from arena.authors import author_of, read_manifest  # manifests: runs with programs only

    out = {name: _author(spec) for name, spec in config.policies.items()}
    for name, spec in config.policies.items():
        if not isinstance(spec, ProgramPolicy):
            continue
        try:
            manifest = read_manifest(config.located(spec.path))
        except ValueError as exc:
            raise ConfigError(f"policies.{name}.path: {exc}") from exc
        if manifest is None:
            continue
        out[name] = spec.author or author_of(manifest)
        writer = manifest["author_policy"]
        if writer in config.policies and out[writer] is None:
            out[writer] = writer
    return out


def _author(spec: PolicyConfig) -> str | None:
    """Who is behind a policy, for spectators: its author, or the person who plays it."""
    if spec.author is None and isinstance(spec, HumanPolicy):
        return spec.name
    return spec.author


def plan_run(
    config: Config, out: Path | None = None, *, resume: str = "refuse", discard_pool: bool = False
) -> RunPlan:
    """Check everything that can fail before a game starts, and fix the master seed.

    A run folder that already holds a league is resumed: its stored master seed is
    reused when the config says 0, and a config that differs from the stored one in a
    key that can change a result (any but `RESUME_ACCEPTS`) is refused (`resume=
    "refuse"`), resumed all the same (`"anyway"`) or started over (`"new"`, the old
    results are removed when the run starts). Other policies or prompt templates than
    the stored ones are refused in either of the first two modes (`check_lineup`). A
    standing pool takes what `league.pool.check_pool` says: never resumed anyway, and
    started over only with `discard_pool`.
    """
    out = out or Path("runs") / config.run.name
    _check_resume_mode(out, resume, discard_pool)
    stored = stored_run(out) if resume != "new" else None
    master = config.run.seed or (stored.master if stored else draw_master_seed())
    _check_endpoints(config)
    templates = _load_templates(config, master)
    programs = _register_programs(config)
    _check_executor(config)
    played = _played(config, templates, programs)
    session = stored.sessions + 1 if stored is not None else 1
    authors = entrant_authors(config) if programs else {}
    plan = RunPlan(config, master, out, templates, resume, programs, played, session, authors)
    if stored is not None:
        _check_stored(plan, stored)
    return plan


def _check_resume_mode(out: Path, resume: str, discard_pool: bool) -> None:
    """A known resume mode, and no pool started over without `discard_pool`."""
    if resume not in RESUME_MODES:
        raise ValueError(f"resume = {resume!r}: use one of {', '.join(RESUME_MODES)}")
    if resume == "new" and not discard_pool and holds_pool(out):
        raise ConfigError(
            f"{out} is a standing pool: --force-new would remove every entrant's games and "
            "ratings for good. Pass --discard-pool with --force-new to do it, or start another "
            "pool in another --out folder"
        )


def _check_endpoints(config: Config) -> None:
    """Each model replica's settings make a spec, and the certificate files it names load
    (a bad one fails before any game)."""
    for name, spec in config.policies.items():
        if not isinstance(spec, LlmPolicy):
            continue
        from arena.seats.llm import provider_specs  # the HTTP stack: runs with models only

        try:
            for replica in provider_specs(spec):
                if replica.ca_bundle is not None or replica.client_cert is not None:
                    from providers.tls import tls_context  # TLS files: endpoints naming them

                    phrase = replica.client_key_password
                    secret = phrase.get_secret_value() if phrase is not None else None
                    tls_context(
                        config.run.trust,
                        replica.ca_bundle,
                        replica.client_cert,
                        replica.client_key,
                        secret,
                    )
        except ValueError as exc:
            raise ConfigError(f"policies.{name}: {exc}") from exc


def _load_templates(config: Config, master: int) -> dict[tuple[str, str], PromptTemplate]:
    """(policy, family) -> the template it is asked with, for every family played."""
    families = {games.load(name).family for name in _games_played(config, master)}
    templates: dict[tuple[str, str], PromptTemplate] = {}
    for name, spec in config.policies.items():
        for family in families:
            try:
                templates[(name, family)] = load_template(
                    spec.template_for(family), folder=config.folder
                )
            except PromptError as exc:
                raise ConfigError(f"policies.{name}.prompt: {exc}") from exc
    return templates


def _register_programs(config: Config) -> dict[str, ProgramInfo]:
    """Each program policy's registration (path, SHA-256), but a pool's retired ones: they
    play no more, their file may be gone or edited, and their commit stays."""
    programs = {}
    for name, spec in config.policies.items():
        if not isinstance(spec, ProgramPolicy) or (spec.retired and config.run.pool):
            continue
        from arena.programs import ProgramRefused, register  # the sandbox: runs with programs

        try:
            programs[name] = register(config.located(spec.path))
        except ProgramRefused as exc:
            raise ConfigError(_program_refused(config, name, spec.path, exc)) from exc
    if programs:  # trust, uids and dice; a cluster's worker decides its own sandbox
        from arena.authors import authored_programs
        from arena.programs import admit

        local = config.run.executor == "local"
        programs = admit(config, programs, authored_programs(config), probe=local)
    return programs


def _check_executor(config: Config) -> None:
    """Ray is installed when it plays."""
    if config.run.executor == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError(
            "run.executor = 'ray' needs Ray, an optional extra: pip install -e '.[ray]' "
            "(or executor = 'local')"
        )


def _played(
    config: Config,
    templates: Mapping[tuple[str, str], PromptTemplate],
    programs: Mapping[str, ProgramInfo],
) -> dict[str, dict[str, Any]]:
    """Policy -> what decides its play (`arena.play.fingerprint.played_as`)."""
    return {
        name: played_as(
            spec,
            templates={f: t.sha256 for (p, f), t in templates.items() if p == name},
            program_sha256=programs[name].sha256 if name in programs else None,
            node_budget=config.run.node_budget,
        )
        for name, spec in config.policies.items()
    }


def _check_stored(plan: RunPlan, stored: StoredRun) -> None:
    """A pool's next session by the pool's rules; a league's resume with its policies and
    templates, and (unless resumed anyway) a config that differs only where a resume
    accepts it."""
    upgraded = _with_new_defaults(stored.config)
    if plan.config.run.pool or stored.pool:
        check_pool(plan, stored, upgraded)
        return
    db = plan.out / DB_NAME
    check_lineup(db, stored, plan.config.policies, plan.templates)
    if plan.resume == "refuse":
        changes = config_changes(upgraded, plan.resolved(), ignore=RESUME_ACCEPTS)
        if changes:
            error = ConfigChanged(db, changes)
            raise ConfigError(str(error)) from error


def _with_new_defaults(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored config as this version reads it: a setting added since it was stored takes
    its default, so an upgrade alone is not a change of config."""
    try:
        config = Config.model_validate({k: v for k, v in stored.items() if k != "resolved"})
    except ValidationError:
        return stored  # what no longer validates is shown as it was stored
    upgraded = config.model_dump(mode="json")
    upgraded["run"]["seed"] = stored.get("run", {}).get("seed")
    if "resolved" in stored:
        upgraded["resolved"] = stored["resolved"]
    return upgraded


def matches_per_pair(config: Config) -> int:
    """Matches each pair plays at most: `run.matches`, or with an SPRT its match cap."""
    run = config.run
    return run.sprt.max_matches if run.sprt is not None else run.matches


def _games_played(config: Config, master: int) -> set[str]:
    return {
        games.resolve_entry(entry, match_seed(master, entry, k))
        for entry in config.run.games
        for k in range(1, matches_per_pair(config) + 1)
    }


def _writer(config: Config, path: Path) -> str | None:
    """The llm or mock policy whose program `arena author` writes at `path`, if any."""
    for name, spec in config.policies.items():
        if isinstance(spec, LlmPolicy | MockPolicy) and path.stem.startswith(f"{name}-"):
            return name
    return None


def _program_refused(config: Config, name: str, path: Path, exc: ProgramRefused) -> str:
    """Why a program path is refused, saying where a relative path starts (and, when the
    file is where the path leads from the current folder, how to write it)."""
    message = f"policies.{name}.path: {exc}"
    if path.is_absolute() or config.located(path).exists():
        return message
    writer = _writer(config, path)
    if writer is not None:
        source = config.source or "CONFIG"
        return (
            f"{message}: it is the program {writer!r} writes; run `arena author {source} "
            f"--game {config.run.games[0]}` first (with --mock-llm for the mock server)"
        )
    message += f" (a relative path starts at the config file's folder, {config.folder})"
    if not config.located(path).exists() and path.exists():
        fixed = os.path.relpath(path.resolve(), config.folder)
        message += f"; the file is {str(path)!r} from the current folder: write path = {fixed!r}"
    return message
