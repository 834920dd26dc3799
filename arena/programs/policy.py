"""Deprecated: this module is `arena.programs.limits` (in cog-arena a policy is a config's
player: `arena.config.PolicyConfig`)."""

from __future__ import annotations

import warnings
from typing import Any

from arena.programs import limits as _limits

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    if name.startswith("_") or not hasattr(_limits, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"arena.programs.policy is deprecated: import {name} from arena.programs.limits",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_limits, name)
