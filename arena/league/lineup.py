"""A run folder's lineup across sessions: who may play in it, and what a resume may change.

A league keeps the policies and templates it started with: a match's position
(`match_index`) is counted from the pairs of policies, so an added or removed
policy would give old and new matches one position, and an edited template
would mix games asked two ways under one name (`check_lineup`, refused even
with `--resume-anyway`). Other keys are compared as `config_changes` says,
`RESUME_ACCEPTS` aside.

A standing pool (`[run] pool = true`, docs/pool.md) is a run folder that lasts:
between sessions entrants are added (a new policy) and retired (`retired =
true`, or the roster rule, `retire`), and every stored game stays rated.
An entrant never changes: its fingerprint (`arena.play.fingerprint`) is stored
with it, and a policy whose fingerprint changed under the same name is refused
(`check_pool`), naming what changed: a new version is a new name. Nothing else
may change between sessions but what neither decides play nor is compared in
a league; a pool is never resumed anyway, and a league becomes a pool once,
when every entrant is unchanged. Its schedule is `league.rounds.PoolRounds`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import structlog

import games
from arena.config import CONNECTION_SETTINGS, Config, ConfigError
from arena.league.store import DB_NAME, RESOLVED, LeagueStore
from arena.play.prompts import PromptTemplate
from arena.record.ledger import LEDGER, append_line, reveal_program

__all__ = [
    "BY_CONFIG",
    "POOL_ACCEPTS",
    "RESUME_ACCEPTS",
    "ConfigChanged",
    "LineupChanged",
    "PlannedRun",
    "PoolRefused",
    "StoredRun",
    "check_lineup",
    "check_pool",
    "config_changes",
    "holds_pool",
    "read_resolved",
    "retire",
    "reveal",
    "stored_run",
]

RESUME_ACCEPTS = (
    "run.concurrency", "run.executor", "run.endpoint_down_s", "run.budget_usd", "run.budget_tokens",
    "run.budget_matches", "run.sprt.max_matches", "run.response_cache", "run.cache_dir",
    "run.trust", "run.sandbox", "run.metrics_port", "run.otlp_endpoint", "run.trace_content",
    "author", *(f"policies.*.{key}" for key in CONNECTION_SETTINGS),
)  # fmt: skip
"""The config keys a resumed run may change without `--resume-anyway`: none can change a
finished game's result. Ratings are applied in schedule order, whatever the concurrency;
an episode plays the same game in this process or on a cluster's worker;
how long a run waits for an endpoint that is down only decides when it stops
(resumably), not what a game in flight meets; a budget or the SPRT's match cap only
decides how many matches are played, in schedule order; the response cache only spares
a request whose reply is already known; how a model's endpoint is reached (its TLS trust,
client certificate, gateway headers, idle connections) decides whether a request
arrives, never what the model answers; how a program's child is held (the sandbox)
decides what a hostile program could reach, never a move a program plays by the rules
(replays are the same in both modes); how a run is watched (its metrics and traces)
changes nothing it plays; `[author]` is read by `arena author` only. Everything else (seeds, games, policies,
deadlines, the test's hypotheses, the validity rules, what a replay records) is
compared."""


class ConfigChanged(Exception):
    """The run's stored config differs from the one given; `changes` names the fields."""

    def __init__(self, db: Path, changes: list[str]) -> None:
        shown = "; ".join(changes[:8]) + (
            f"; and {len(changes) - 8} more" if len(changes) > 8 else ""
        )
        super().__init__(
            f"{db} was played with a different config ({shown}). Pass --resume-anyway to continue "
            "it with the new config, or --force-new to start the run over (the old results are removed)"
        )
        self.changes = changes


def config_changes(
    old: Any, new: Any, path: str = "", *, ignore: Collection[str] = ()
) -> list[str]:
    """Where two JSON documents differ, as `path: old -> new` lines; the dotted paths in
    `ignore` (e.g. `run.concurrency`; `*` stands for any one key, as in
    `policies.*.ca_bundle`) are not compared."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted({*old, *new}):
            where = f"{path}.{key}" if path else str(key)
            if where in ignore or any(_matches(where, pattern) for pattern in ignore):
                continue
            if key not in old:
                out.append(f"{where}: added")
            elif key not in new:
                out.append(f"{where}: removed")
            else:
                out.extend(config_changes(old[key], new[key], where, ignore=ignore))
        return out
    return [] if old == new else [f"{path}: {json.dumps(old)} -> {json.dumps(new)}"]


def _matches(where: str, pattern: str) -> bool:
    """Whether the dotted path `where` is `pattern`, each `*` of it standing for one key."""
    if "*" not in pattern:
        return False
    parts, wanted = where.split("."), pattern.split(".")
    return len(parts) == len(wanted) and all(
        w in ("*", p) for p, w in zip(parts, wanted, strict=True)
    )


def read_resolved(out: Path) -> tuple[Config, int, dict[str, Any]]:
    """The config run folder `out` was played with: (config, master seed, the whole file)."""
    path = out / RESOLVED
    if not path.exists():
        raise ConfigError(f"{out} has no {RESOLVED}: is it a run folder of `arena run`?")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        config = Config.model_validate({k: v for k, v in data.items() if k != "resolved"})
        return config, int(data["run"]["seed"]), data
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} cannot be read ({exc}): was it edited by hand?") from exc


@dataclass(frozen=True)
class StoredRun:
    """What a run folder's store says of the sessions before this one."""

    master: int
    config: dict[str, Any]
    """The resolved config it stored last."""
    templates: dict[str, dict[str, str]]
    """Policy -> family -> SHA-256 of the template it was asked with."""
    entrants: list[dict[str, Any]]
    """`LeagueStore.entrants()`: every stored policy, in the order first stored."""
    rules: dict[str, set[int]]
    """Game -> the rules versions its stored games were played under."""
    sessions: int
    """How many sessions were begun (the highest session number)."""

    @property
    def pool(self) -> bool:
        """Whether the folder is a standing pool already."""
        return bool(self.config.get("run", {}).get("pool", False))


def stored_run(out: Path) -> StoredRun | None:
    """What the store in `out` holds of earlier sessions, or None (no store, or no run)."""
    if not (out / DB_NAME).exists():
        return None
    store = LeagueStore.open_readonly(out)
    try:
        run = store.stored_run()
        if run is None:
            return None
        return StoredRun(
            run[0], run[1], store.stored_templates(), store.entrants(), store.rules_versions(),
            max(store.sessions(), default=0),
        )  # fmt: skip
    finally:
        store.close()


def holds_pool(out: Path) -> bool:
    """Whether the run folder `out` holds a standing pool."""
    try:
        stored = stored_run(out)
    except (OSError, ConfigError):
        return False  # a damaged store is not a pool anyone can lose more of
    return stored is not None and stored.pool


_NEW_FOLDER = (
    "start a new run folder instead: another --out folder, "
    "or --force-new to start this one over (its old results are removed)"
)


class LineupChanged(ConfigError):
    """A resumed config whose policies or templates differ from the run folder's."""


def check_lineup(
    db: Path,
    stored_policies: Mapping[str, object],
    stored_templates: Mapping[str, Mapping[str, str]],
    policies: Mapping[str, object],
    templates: Mapping[tuple[str, str], PromptTemplate],
) -> None:
    """Refuse a resumed run whose set of policies, or whose templates, differ from the
    stored ones (`stored_templates`: policy -> family -> SHA-256, as the store keeps them;
    `templates`: (policy, family) -> the template this config loads); even
    `--resume-anyway` cannot continue it. A match's position (`match_index`) is counted from
    the run's pairs of policies, so a policy added or removed would give old and new matches
    the same positions; an edited template would mix games asked two ways under one name. A
    family only one side has is not compared."""
    added = sorted(set(policies) - set(stored_policies))
    removed = sorted(set(stored_policies) - set(policies))
    if added or removed:
        said = [f"adds {_names(added)}"] if added else []
        said += [f"removes {_names(removed)}"] if removed else []
        raise LineupChanged(
            f"{db} was played by policies {_names(sorted(stored_policies))}; this config "
            f"{' and '.join(said)}. A run folder keeps the policies it started with, even with "
            "--resume-anyway: match positions are counted from the pairs of policies, so old "
            "and new matches would share positions. To add entrants to a league over the "
            "months, make it a standing pool: [run] pool = true (docs/pool.md). To play "
            f"another set of policies, {_NEW_FOLDER}"
        )
    changed = [
        f"{name!r}'s {family} template {templates[name, family].path!r} "
        f"(SHA-256 {old[:12]} -> {new[:12]})"
        for name, family in sorted(templates)
        if (new := templates[name, family].sha256)
        != (old := stored_templates.get(name, {}).get(family, new))
    ]
    if changed:
        raise LineupChanged(
            f"{db} was played with other prompt templates: {'; '.join(changed)} changed. "
            "A run folder keeps the templates it started with, even with --resume-anyway: "
            "a policy's games would be asked two ways under one name. "
            f"Restore the template, or {_NEW_FOLDER}"
        )


def _names(names: list[str]) -> str:
    return ", ".join(repr(name) for name in names)


log = structlog.get_logger("arena.league.lineup")

_NEW_POOL = "start a new pool in another --out folder"

BY_CONFIG = "retired = true in the config"
"""Why an entrant the config retires is retired (the roster rule says its own why)."""

POOL_ACCEPTS = (
    *RESUME_ACCEPTS, "policies.*.retired", "policies.*.base_url", "policies.*.api_key_env",
    "policies.*.max_connections", "policies.*.price",
)  # fmt: skip
"""What a pool's next session may change of the stored entrants' config besides adding and
retiring them: what a league's resume accepts, and where and at what price a model is
reached (none of it is in a fingerprint: it never decides what the model answers)."""

_CONVERSION = (
    "run.pool", "run.placement_matches", "run.roster_cap", "run.schedule", "run.matches",
    "run.round_matches", "run.target",
)  # fmt: skip
"""What a league's config may change as it becomes a pool: how it schedules from then on
(the league's own schedule is over; its stored games keep their places)."""


class PoolRefused(ConfigError):
    """A pool's next session refused: a changed entrant, a removed one, another config."""


def check_pool(plan: PlannedRun, stored: StoredRun, upgraded: dict[str, Any]) -> None:
    """Refuse a session of the pool in `plan.out` that would rate unlike things alike:
    `stored` is what its store holds, `upgraded` its stored config as this version reads
    it. A finished league becomes a pool once, when every entrant is unchanged."""
    db, config = plan.out / DB_NAME, plan.config
    if plan.resume == "anyway":
        raise PoolRefused(
            f"{db} is a standing pool: --resume-anyway is refused in a pool, whose ratings "
            "must mean the same entrants in every session. Leave it out; to change an "
            "entrant, add its new version under a new name and set retired = true on the old"
        )
    if stored.pool and not config.run.pool:
        raise PoolRefused(f"{db} holds a standing pool: keep [run] pool = true in its config")
    entrants = {e["name"]: e for e in stored.entrants}
    converting = not stored.pool
    if converting:
        _check_conversion(db, stored, upgraded, config.run.games)
    removed = [name for name in entrants if name not in config.policies]
    if removed:
        raise PoolRefused(
            f"{db}: this config removes entrants {', '.join(map(repr, removed))}; a pool keeps "
            "every entrant it rated. Keep each in the config with retired = true: it plays no "
            "more, and its games and ratings stay"
        )
    for name, entrant in entrants.items():
        _check_entrant(db, plan, name, entrant)
    for game, versions in sorted(stored.rules.items()):
        engine = games.load(game).rules_version
        if versions != {engine}:
            raise PoolRefused(
                f"{db}'s {game} games were played under rules version "
                f"{', '.join(map(str, sorted(versions)))}; this engine's is {engine}: games of two "
                f"rules versions do not rate together. {_NEW_POOL.capitalize()}"
            )
    ignore = [*POOL_ACCEPTS, *(_CONVERSION if converting else ())]
    changes = config_changes(_known(upgraded, entrants), _known(plan.resolved(), entrants),
                             ignore=ignore)  # fmt: skip
    if changes:
        shown = "; ".join(changes[:8]) + (
            f"; and {len(changes) - 8} more" if len(changes) > 8 else ""
        )
        raise PoolRefused(
            f"{db} is a standing pool played with another config ({shown}). Between sessions a "
            f"pool takes new entrants and retirements only: restore the rest, or {_NEW_POOL}"
        )


def _check_conversion(
    db: object, stored: StoredRun, upgraded: dict[str, Any], entries: list[str]
) -> None:
    """A league becomes a pool only over one games entry, every entrant fingerprinted."""
    if upgraded.get("run", {}).get("games") != entries:
        raise PoolRefused(
            f"{db} is a league of games {upgraded.get('run', {}).get('games')}; a pool plays one "
            f"entry, the league's own: only a league of one entry becomes a pool. {_NEW_POOL.capitalize()}"
        )
    unknown = [e["name"] for e in stored.entrants if not e["fingerprint"]]
    if unknown:
        raise PoolRefused(
            f"{db}: the games of {', '.join(map(repr, unknown))} were stored before fingerprints "
            "were kept, so nothing shows they were played by the entrants this config names: "
            f"{_NEW_POOL}"
        )


def _check_entrant(db: object, plan: PlannedRun, name: str, entrant: dict[str, Any]) -> None:
    """Refuse an entrant whose play changed under its name, or a retirement undone."""
    before, now = entrant["fingerprint"], plan.fingerprints[name]
    retiring = plan.config.policies[name].retired  # it plays no more: its record is what stays
    if before is not None and before != now and not retiring:
        changed = config_changes(entrant["played_as"] or {}, plan.played[name])
        raise PoolRefused(
            f"{db}: policy {name!r} is not the entrant the pool rated under that name "
            f"(fingerprint {before[:12]} -> {now[:12]}: {'; '.join(changed) or 'what decides its play'}). "
            f"An entrant never changes: give the new version a new name (e.g. {name}-v2), and set "
            f"retired = true on {name!r}"
        )
    retired = entrant["retired"]
    if (
        retired is not None
        and retired["why"] == BY_CONFIG
        and not plan.config.policies[name].retired
    ):
        raise PoolRefused(
            f"{db}: {name!r} was retired in session {retired['session']}, and a retirement is for "
            "good: keep retired = true on it; to play it again, add it under a new name"
        )


def _known(config: dict[str, Any], entrants: dict[str, Any]) -> dict[str, Any]:
    """`config` with only the stored entrants among its policies (new ones are welcome)."""
    return {
        **config,
        "policies": {n: p for n, p in config.get("policies", {}).items() if n in entrants},
    }


class PlannedRun(Protocol):
    """What the pool's checks read of a run's plan (`arena.league.plan.RunPlan` is one)."""

    @property
    def out(self) -> Path:
        """The run folder."""
        ...

    @property
    def config(self) -> Config:
        """The config of this session."""
        ...

    @property
    def resume(self) -> str:
        """How a changed config is taken: refuse, anyway or new."""
        ...

    @property
    def fingerprints(self) -> dict[str, str]:
        """Policy -> its fingerprint."""
        ...

    @property
    def played(self) -> dict[str, dict[str, Any]]:
        """Policy -> what decides its play."""
        ...

    def resolved(self) -> dict[str, Any]:
        """The config as played."""
        ...


def retire(out: Path, store: LeagueStore, name: str, why: str, session: int) -> bool:
    """Retire a pool's entrant for good: in the store, a ledger line and an event, then a
    program's source revealed (`reveal`); False if it was retired already."""
    if not store.retire(name, why, session):
        return False
    append_line(out / LEDGER, {
        "event": "entrant_retired", "policy": name, "why": why, "session": session,
        "time": time.time(),
    })  # fmt: skip
    log.warning("entrant_retired", policy=name, why=why, session=session)
    reveal(out, name)
    return True


def reveal(out: Path, name: str) -> None:
    """A retired program's source in the ledger, once (`record.ledger.reveal_program`): a
    session killed between a retirement and its reveal reveals at the next one's start."""
    if reveal_program(out, name):
        log.info("program_revealed", policy=name)
