"""A run folder's lineup across sessions: who may play in it, and what a resume may change.

A league keeps the policies and templates it started with: a match's position
(`match_index`) is counted from the pairs of policies, so an added or removed
policy would give old and new matches one position, and an edited template
would mix games asked two ways under one name (`check_lineup`, refused even
with `--resume-anyway`). Other keys are compared as `config_changes` says,
`RESUME_ACCEPTS` aside.

What a resume takes without `--resume-anyway` is what the settings table
(`arena.config.settings`) declares `connects` or `runs`: the same a standing
pool's next session takes, whose own rules are `league.pool`'s.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import games
from arena.config import Config, ConfigError, LlmPolicy, MockPolicy
from arena.config.settings import ACCEPTED
from arena.league.store import DB_NAME, RESOLVED, LeagueStore
from arena.play.prompts import PromptTemplate

__all__ = [
    "RESUME_ACCEPTS",
    "ConfigChanged",
    "LineupChanged",
    "StoredRun",
    "TemplateChange",
    "check_lineup",
    "config_changes",
    "holds_pool",
    "names_said",
    "read_resolved",
    "reads_prompt",
    "shown_changes",
    "stored_run",
    "stored_template_paths",
    "template_changes",
]

RESUME_ACCEPTS: tuple[str, ...] = ACCEPTED
"""The config keys a resumed run may change without `--resume-anyway`: the settings the
table (`arena.config.settings`) declares `connects` or `runs`, none of which can change a
finished game's result. Ratings are applied in schedule order, whatever the concurrency;
an episode plays the same game in this process or on a cluster's worker; how long a run
waits for an endpoint that is down only decides when it stops (resumably); a budget or
the SPRT's match cap only decides how many matches are played, in schedule order; the
response cache only spares a request whose reply is already known; where and how a
model's endpoint is reached (its URL, key, TLS, gateway headers, connections, price, the
prompt cache) decides whether and how cheaply a request arrives, never what the model
answers; the sandbox decides what a hostile program could reach, never a move a program
plays by the rules; `[author]` is read by `arena author` only. Everything else (seeds,
games, policies, deadlines, the test's hypotheses, the validity rules, what a replay
records) is compared."""


class ConfigChanged(Exception):
    """The run's stored config differs from the one given; `changes` names the fields."""

    def __init__(self, db: Path, changes: list[str]) -> None:
        super().__init__(
            f"{db} was played with a different config ({shown_changes(changes)}). Pass --resume-anyway to continue "
            "it with the new config, or --force-new to start the run over (the old results are removed)"
        )
        self.changes = changes


def shown_changes(changes: list[str]) -> str:
    """The first eight of `config_changes`' lines, and how many more there are."""
    more = len(changes) - 8
    return "; ".join(changes[:8]) + (f"; and {more} more" if more > 0 else "")


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
            run[0],
            run[1],
            store.stored_templates(),
            store.entrants(),
            store.rules_versions(),
            max(store.sessions(), default=0),
        )
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
    stored: StoredRun,
    policies: Mapping[str, object],
    templates: Mapping[tuple[str, str], PromptTemplate],
) -> None:
    """Refuse a resumed run whose set of policies, or whose templates, differ from the
    ones `stored` holds (`templates`: (policy, family) -> the template this config loads); even
    `--resume-anyway` cannot continue it. A match's position (`match_index`) is counted from
    the run's pairs of policies, so a policy added or removed would give old and new matches
    the same positions; an edited template would mix games asked two ways under one name. A
    family only one side has is not compared, nor a policy that reads no prompt
    (`reads_prompt`). The message names every changed template at once, by file name."""
    stored_policies: Mapping[str, object] = stored.config.get("policies", {})
    stored_templates, stored_paths = stored.templates, stored_template_paths(stored.config)
    reads_prompts = {name for name, spec in policies.items() if reads_prompt(spec)}
    added = sorted(set(policies) - set(stored_policies))
    removed = sorted(set(stored_policies) - set(policies))
    if added or removed:
        said = [f"adds {names_said(added)}"] if added else []
        said += [f"removes {names_said(removed)}"] if removed else []
        raise LineupChanged(
            f"{db} was played by policies {names_said(sorted(stored_policies))}; this config "
            f"{' and '.join(said)}. A run folder keeps the policies it started with, even with "
            "--resume-anyway: match positions are counted from the pairs of policies, so old "
            "and new matches would share positions. To add entrants to a league over the "
            "months, make it a standing pool: [run] pool = true (docs/pool.md). To play "
            f"another set of policies, {_NEW_FOLDER}"
        )
    changed = [
        TemplateChange(name, stored_paths.get((name, family)), old, template.path, new)
        for name in policies  # in the config's order
        for (policy, family), template in sorted(templates.items())
        if policy == name
        and name in reads_prompts
        and (new := template.sha256) != (old := stored_templates.get(name, {}).get(family, new))
    ]
    if changed:
        raise LineupChanged(
            f"{db} was played with other prompt templates: {'; '.join(template_changes(changed))}. "
            "A run folder keeps the templates it started with, even with --resume-anyway: "
            "a policy's games would be asked two ways under one name. "
            f"Restore the template, or {_NEW_FOLDER}"
        )


@dataclass(frozen=True)
class TemplateChange:
    """A policy asked with another template than the stored one: by file and SHA-256."""

    policy: str
    old_path: str | None
    """The file the stored config named (None where it cannot be read any more)."""
    old_sha256: str
    new_path: str
    new_sha256: str


def template_changes(changes: list[TemplateChange]) -> list[str]:
    """`changes` as a person reads them, one line a file: an edited file once, with every
    policy that reads it; a policy that reads another file, both files with their hashes."""
    edited: dict[tuple[str, str, str], list[str]] = {}
    swapped: dict[tuple[str, str, str, str], list[str]] = {}
    for c in changes:
        if c.old_path in (None, c.new_path):
            edited.setdefault((c.new_path, c.old_sha256, c.new_sha256), []).append(c.policy)
        else:
            key = (c.old_path, c.old_sha256, c.new_path, c.new_sha256)
            swapped.setdefault(key, []).append(c.policy)
    lines = [
        f"{path} was edited (SHA-256 {old[:12]} -> {new[:12]}); it is read by {names_said(names)}"
        for (path, old, new), names in edited.items()
    ]
    lines += [
        f"{names_said(names)} now {'reads' if len(names) == 1 else 'read'} {new_path} (SHA-256 "
        f"{new[:12]}) in place of {old_path} (SHA-256 {old[:12]})"
        for (old_path, old, new_path, new), names in swapped.items()
    ]
    return lines


def stored_template_paths(config: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(policy, family) -> the template file a stored config names for each family, or
    nothing where the stored config no longer reads as a config."""
    try:
        stored = Config.model_validate({k: v for k, v in config.items() if k != "resolved"})
    except ValueError:
        return {}
    families = games.families()
    return {
        (name, family): spec.template_for(family)
        for name, spec in stored.policies.items()
        for family in families
    }


def reads_prompt(spec: object) -> bool:
    """Whether a policy is asked with a prompt template: a model or a mock (a scripted
    baseline, a program or a person reads none)."""
    return isinstance(spec, LlmPolicy | MockPolicy)


def names_said(names: list[str]) -> str:
    """Names as a sentence gives them: 'a', 'b' and 'c'."""
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"
