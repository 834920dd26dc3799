"""What a module that moved leaves behind: a `__getattr__` that forwards its old names."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["forwarding"]


def forwarding(
    old: str, new: ModuleType, renamed: Mapping[str, str] | None = None
) -> Callable[[str], Any]:
    """The module `__getattr__` of `old`, which moved to `new`: each public name of `new`
    (by its old name where `renamed` maps it), with a DeprecationWarning naming the new place."""
    renamed = renamed or {}

    def __getattr__(name: str) -> Any:
        current = renamed.get(name, name)
        if current.startswith("_") or not hasattr(new, current):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old} is deprecated: import {current} from {new.__name__}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(new, current)

    return __getattr__
