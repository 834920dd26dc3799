"""Run configuration: TOML in, validated pydantic models out.

Every error names the field, the offending value and the fix, and all of it
is checked before any game starts: each table by its model (`config.models`),
what spans tables by `config.checks`. The user's TOML is never rewritten: the
resolved config (a drawn master seed, concrete deadlines per game) is what the
run stores next to its results.
"""

from __future__ import annotations

import secrets
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arena.config import checks
from arena.config.authoring import AuthorTable
from arena.config.models import (
    MOCK_FAULTS,
    Config,
    ConfigError,
    Deadlines,
    GameTable,
    HumanPolicy,
    LlmPolicy,
    MockPolicy,
    PolicyConfig,
    ProgramPolicy,
    RunTable,
    ScriptedPolicy,
    SprtTable,
)
from arena.config.settings import CONNECTION_SETTINGS
from games import program_games as program_games  # the registry's, kept here for callers

__all__ = [
    "CONNECTION_SETTINGS",
    "MOCK_FAULTS",
    "AuthorTable",
    "Config",
    "ConfigError",
    "Deadlines",
    "GameTable",
    "HumanPolicy",
    "LlmPolicy",
    "MockPolicy",
    "PolicyConfig",
    "ProgramPolicy",
    "RunTable",
    "ScriptedPolicy",
    "SprtTable",
    "draw_master_seed",
    "load_config",
    "parse_config",
]


_KINDS = ("scripted", "mock", "llm", "program", "human")
"""A policy's `kind`: the tag pydantic puts in an error's location, which the file lacks."""


def _where(loc: tuple[int | str, ...]) -> str:
    """An error's location as the file spells it: `policies.coach.prompt`, without the
    union's tag (`policies.coach.llm.prompt`) or a validator's name."""
    parts = [str(part) for part in loc if not str(part).startswith("function-")]
    if len(parts) > 2 and parts[0] == "policies" and parts[2] in _KINDS:
        del parts[2]
    return ".".join(parts)


def _describe(error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        where = _where(item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] in ("literal_error", "enum") and isinstance(item.get("input"), str):
            message += f" (it says {item['input']!r})"  # what was written, beside what may be
        if item["type"] == "extra_forbidden":
            message = f"unknown key {where.rsplit('.', 1)[-1]!r}: remove it or check its spelling"
        elif item["type"] == "missing":
            message = "is required: add it"
        elif item["type"] == "union_tag_invalid":
            message = f"{message} (kind is one of scripted, mock, llm, program, human)"
        lines.append(f"  {where}: {message}")
    return "\n".join(lines)


def parse_config(data: dict[str, Any], *, source: str = "config", keys: bool = True) -> Config:
    """Validate a decoded TOML document; raise ConfigError naming every bad field. Without
    `keys` the API keys need not be set (for what sends nothing, like `arena prompt`)."""
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source} is not a valid run config:\n{_describe(exc)}") from exc
    checks.check_semantics(config, source, keys)
    return config


def load_config(path: str | Path, *, keys: bool = True) -> Config:
    """Read and validate a TOML run config (`keys`: see `parse_config`)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist: check the path") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}): a run config is a "
            "TOML text file; check that this is the file you meant"
        ) from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"{path} is a folder: give the path of a TOML run config") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    config = parse_config(data, source=str(path), keys=keys)
    folder = path.resolve().parent
    located = {
        name: policy.located(folder)
        for name, policy in config.policies.items()
        if isinstance(policy, LlmPolicy)
    }
    if located:
        config = config.model_copy(update={"policies": {**config.policies, **located}})
    config._folder = folder
    config._source = path
    return config


def draw_master_seed() -> int:
    """A concrete master seed in [1, 2**31) for a run configured with seed 0."""
    return secrets.randbelow(2**31 - 1) + 1
