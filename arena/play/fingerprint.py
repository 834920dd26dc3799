"""An entrant's fingerprint: the SHA-256 of what decides how a policy plays.

A standing pool (docs/pool.md) rates an entrant across sessions and months, so
the name must keep meaning the same player. The fingerprint is the SHA-256 of
a canonical JSON (sorted keys, no whitespace) of the settings that decide its
play, with every setting at its default left out, so a setting added in a
later version does not change the fingerprints of the entrants before it:

- every policy: its kind;
- a model (`llm`): protocol, model, params, token cap, temperature, sampling
  seed, decoding (`json_mode` is `decoding = "json"`; with `schema`, its
  schema style), layout, the most bytes a reply may have, and the SHA-256 of
  each template it is asked with;
- a mock: its faults, latency, decoding and templates;
- a text seat (model or mock): `PROMPT_PROTOCOL`, the version of the text the
  arena writes into its prompts;
- a program: its file's SHA-256, the node budget and its move timeout;
- a scripted seat: its baseline; a person: their name.

Left out, because they decide whether a request arrives but never what the
model answers: endpoint URLs, keys, TLS settings, gateway headers, connection
limits and prices.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from arena.config import (
    HumanPolicy,
    LlmPolicy,
    MockPolicy,
    PolicyConfig,
    ProgramPolicy,
    RunTable,
    ScriptedPolicy,
)
from arena.play.prompts import PROMPT_PROTOCOL

__all__ = ["fingerprint", "played_as", "short"]

_MODEL_KEYS = (
    "model", "params", "max_tokens", "temperature", "seed", "layout", "max_response_bytes",
)  # fmt: skip
"""A model policy's keys that decide its play, besides its protocol and templates."""


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
        out |= _set(spec, _MODEL_KEYS)
        if spec.reply_decoding != "free":
            out["decoding"] = spec.reply_decoding
        if spec.reply_decoding == "schema":
            out |= _set(spec, ("schema_style",))
    elif isinstance(spec, MockPolicy):
        out |= _set(spec, ("faults", "latency_ms", "decoding"))
    elif isinstance(spec, ProgramPolicy):
        out["sha256"] = program_sha256
        if node_budget != RunTable.model_fields["node_budget"].default:
            out["node_budget"] = node_budget
        out |= _set(spec, ("timeout_s",))
    elif isinstance(spec, ScriptedPolicy):
        out |= _set(spec, ("baseline",))
    elif isinstance(spec, HumanPolicy):
        out |= _set(spec, ("name",))
    if isinstance(spec, LlmPolicy | MockPolicy):
        out |= _set(spec, ("retry_lists_moves",))
        out["templates"] = dict(sorted(templates.items()))
        out["prompt_protocol"] = PROMPT_PROTOCOL
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
