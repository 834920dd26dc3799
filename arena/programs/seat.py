"""Deprecated: this module is `arena.programs.runner` (`ProgramSeat` is `ProgramRunner`)."""

from __future__ import annotations

from arena.programs import runner as _runner
from arena.programs.moved import forwarding

__all__: list[str] = []

__getattr__ = forwarding(__name__, _runner)
