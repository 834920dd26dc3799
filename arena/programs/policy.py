"""Deprecated: this module is `arena.programs.limits` (in cog-arena a policy is a config's
player: `arena.config.PolicyConfig`)."""

from __future__ import annotations

from arena.programs import limits as _limits
from arena.programs.moved import forwarding

__all__: list[str] = []

__getattr__ = forwarding(__name__, _limits)
