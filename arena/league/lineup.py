"""What a run folder keeps for good: its policies and their prompt templates.

A match's position (`match_index`) is counted from the run's pairs of
policies, so a policy added or removed between two sessions would give old
and new matches the same positions, and the store keeps one game per
position. A template edited between sessions would mix games asked two ways
under one policy's name. Neither is a config change `--resume-anyway` may
accept: `check_lineup` refuses both before any game starts, and the stored
folder is left as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from arena.config import ConfigError
from arena.play.prompts import PromptTemplate

__all__ = ["LineupChanged", "check_lineup"]

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
    `--resume-anyway` cannot continue it. A family only one side has is not compared."""
    added = sorted(set(policies) - set(stored_policies))
    removed = sorted(set(stored_policies) - set(policies))
    if added or removed:
        said = [f"adds {_names(added)}"] if added else []
        said += [f"removes {_names(removed)}"] if removed else []
        raise LineupChanged(
            f"{db} was played by policies {_names(sorted(stored_policies))}; this config "
            f"{' and '.join(said)}. A run folder keeps the policies it started with, even with "
            "--resume-anyway: match positions are counted from the pairs of policies, so old "
            f"and new matches would share positions. To play another set of policies, {_NEW_FOLDER}"
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
