"""An entrant's fingerprint: the SHA-256 of what decides how a policy plays.

A standing pool (docs/pool.md) rates an entrant across sessions and months, so
the name must keep meaning the same player. The fingerprint is the SHA-256 of
a canonical JSON (sorted keys, no whitespace) of the policy's settings that
`plays` (`arena.config.settings`: the one table of what each setting does),
with every setting at its default left out, so a setting added in a later
version does not change the fingerprints of the entrants before it. A few enter
as what they decide rather than as written (`_DERIVED`):

- a model's `provider` as its `protocol`; `json_mode` and `decoding` as the
  decoding asked for (left out when free), `schema_style` under a schema only;
- a text seat's (model or mock) `prompt` as the SHA-256 of each template it is
  asked with, and `PROMPT_PROTOCOL`, the version of the text the arena writes
  into its prompts;
- a program's `path` as its file's SHA-256, with the run's node budget.

Left out, since they are `connects`, `runs` or `counts`: endpoint URLs, keys,
TLS settings, gateway headers, connection limits, prices, Anthropic's prompt
cache, the author.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from arena.config import LlmPolicy, MockPolicy, PolicyConfig, ProgramPolicy, RunTable
from arena.config.settings import policy_settings
from arena.play.prompts import PROMPT_PROTOCOL

__all__ = ["fingerprint", "played_as", "plays", "short"]

_DERIVED = ("kind", "provider", "json_mode", "decoding", "schema_style", "prompt", "path")
"""The `plays` settings that enter a fingerprint as what they decide, not as written."""

_PLAYS = tuple(key for key, setting in policy_settings() if setting.effect == "plays")


def plays(model: type[PolicyConfig]) -> tuple[str, ...]:
    """The keys of a policy model that decide its play, as the settings table says."""
    return tuple(key for key in _PLAYS if key in model.model_fields)


def played_as(
    spec: PolicyConfig,
    *,
    templates: Mapping[str, str],
    program_sha256: str | None = None,
    node_budget: int = RunTable.model_fields["node_budget"].default,
) -> dict[str, Any]:
    """What decides `spec`'s play, settings at their default left out: `templates` is
    family -> SHA-256 of the template it is asked with in the run's games, `program_sha256`
    a program's file hash, `node_budget` the run's."""
    out: dict[str, Any] = {"kind": spec.kind}
    if isinstance(spec, LlmPolicy):
        out["protocol"] = spec.provider
    out |= _set(spec, tuple(key for key in plays(type(spec)) if key not in _DERIVED))
    if isinstance(spec, LlmPolicy | MockPolicy):
        if spec.reply_decoding != "free":
            out["decoding"] = spec.reply_decoding
        if isinstance(spec, LlmPolicy) and spec.reply_decoding == "schema":
            out |= _set(spec, ("schema_style",))
        out["templates"] = dict(sorted(templates.items()))
        out["prompt_protocol"] = PROMPT_PROTOCOL
    if isinstance(spec, ProgramPolicy):
        out["sha256"] = program_sha256
        if node_budget != RunTable.model_fields["node_budget"].default:
            out["node_budget"] = node_budget
    return out


def _set(spec: PolicyConfig, keys: tuple[str, ...]) -> dict[str, Any]:
    """The `keys` of `spec` whose value is not the field's default, as JSON values."""
    fields = type(spec).model_fields
    values = spec.model_dump(mode="json", include=set(keys))
    return {key: values[key] for key in keys if getattr(spec, key) != fields[key].default}


def fingerprint(played: Mapping[str, Any]) -> str:
    """The SHA-256 of `played` (a `played_as`) as canonical JSON."""
    canonical = json.dumps(played, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def short(value: str | None) -> str:
    """A fingerprint as tables show it: its first 12 hex digits."""
    return value[:12] if value else "-"
