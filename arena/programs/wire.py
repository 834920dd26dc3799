"""Deprecated: this module is `arena.programs.pipes` (`Wire` is `ChildPipes`, `WireClosed`
is `PipesClosed`): in cog-arena a wire protocol is a provider's (`providers.wire`)."""

from __future__ import annotations

from arena.programs import pipes as _pipes
from arena.programs.moved import forwarding

__all__: list[str] = []

__getattr__ = forwarding(__name__, _pipes, {"Wire": "ChildPipes", "WireClosed": "PipesClosed"})
