"""Deprecated: this module is `arena.programs.runner` (`ProgramSeat` is `ProgramRunner`)."""

from __future__ import annotations

import warnings
from typing import Any

from arena.programs import runner as _runner

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    if name.startswith("_") or not hasattr(_runner, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"arena.programs.seat is deprecated: import {name} from arena.programs.runner",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_runner, name)
