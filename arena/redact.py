"""Secrets never reach an output: one redaction step for everything a run writes.

A run's secrets are the values of the API keys its policies name (through
`api_key_env`). Wherever outside text enters the arena (a model's reply, a
provider's error) and wherever the arena writes a line (the console, the
events file), every secret is replaced by `[redacted]`; replays, the league
store, the summary, reports and the viewer are written from what already
passed. A value shorter than `MIN_SECRET` characters is not treated as a
secret: dummy keys for local servers (`x`, `none`, `local`) would otherwise
mangle ordinary text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["MIN_SECRET", "REDACTED", "Redactor"]

MIN_SECRET = 8
"""Secrets shorter than this are not redacted (see the module docstring)."""
REDACTED = "[redacted]"


class Redactor:
    """Replaces every secret it was given, in text or in a JSON value."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        kept = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, kept))) if kept else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        """`text` with every secret replaced."""
        if self._pattern is None:
            return text
        return self._pattern.sub(REDACTED, text)

    def value(self, value: Any) -> Any:
        """A JSON value with every secret in its strings (keys too) replaced."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        return value
