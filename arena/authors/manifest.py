"""An authored program's manifest: who wrote it, from which brief, and every attempt.

`arena author` writes `<policy>-<game>.py` and, beside it, `<policy>-<game>.json`:
the authoring policy and its fingerprint, the brief's SHA-256, each attempt
(its prompt, reply, tokens, cost, the check's verdict and message) and the
final program's SHA-256. A `kind = "program"` policy whose file has a manifest
is that policy's program: its author is the authoring policy's `author`, or
the authoring policy's name when it has none (`author_of`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.config import Config, ConfigError, ProgramPolicy

__all__ = ["MANIFEST_SUFFIX", "author_of", "authored_programs", "manifest_path", "read_manifest"]

MANIFEST_SUFFIX = ".json"


def manifest_path(program: Path) -> Path:
    """Where the manifest of the program at `program` is: beside it, `.json` for `.py`."""
    return program.with_suffix(MANIFEST_SUFFIX)


def read_manifest(program: Path) -> dict[str, Any] | None:
    """The manifest beside `program`, or None (a program written by hand has none)."""
    path = manifest_path(program)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} cannot be read as a program's manifest ({exc})") from exc
    if not isinstance(data, dict) or "author_policy" not in data:
        raise ValueError(f"{path} is not a manifest of `arena author` (no author_policy)")
    return data


def author_of(manifest: dict[str, Any]) -> str:
    """Who wrote an authored program: its authoring policy's author, else that policy."""
    return str(manifest.get("author") or manifest["author_policy"])


def authored_programs(config: Config) -> list[str]:
    """The program policies of `config` a model wrote: those with a manifest beside their
    file (ConfigError for a manifest that cannot be read)."""
    found = []
    for name, spec in config.policies.items():
        if not isinstance(spec, ProgramPolicy) or spec.retired:
            continue
        try:
            manifest = read_manifest(config.located(spec.path))
        except ValueError as exc:
            raise ConfigError(f"policies.{name}.path: {exc}") from exc
        if manifest is not None:
            found.append(name)
    return found
