"""Deprecated: this module is `arena.programs.pipes` (`Wire` is `ChildPipes`, `WireClosed`
is `PipesClosed`): in cog-arena a wire protocol is a provider's (`providers.wire`)."""

from __future__ import annotations

import warnings
from typing import Any

from arena.programs import pipes as _pipes

__all__: list[str] = []

_RENAMED = {"Wire": "ChildPipes", "WireClosed": "PipesClosed"}


def __getattr__(name: str) -> Any:
    new = _RENAMED.get(name, name)
    if new.startswith("_") or not hasattr(_pipes, new):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"arena.programs.wire is deprecated: import {new} from arena.programs.pipes",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_pipes, new)
