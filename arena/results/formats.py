"""What `arena report` shows (`--what`) and how (`--format`): names the command line needs
before anything else is imported."""

from __future__ import annotations

__all__ = ["FORMATS", "WHATS"]

WHATS = ("standings", "h2h", "fallbacks", "games", "sprt", "entrants", "authors")
FORMATS = ("table", "json", "csv")
