"""`[author]`: how `arena author` asks a model to write a program (docs/authors.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AuthorTable"]


class AuthorTable(BaseModel):
    """`[author]`: how `arena author` asks a model to write a program (docs/authors.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    author_s: float = Field(default=600.0, gt=0)
    """Seconds one request for a program may take."""
    revisions: int = Field(default=2, ge=0)
    """How many times a refused program is asked for again, with the check's message."""
    max_tokens: int = Field(default=8192, ge=1)
    """The token cap of a request for a program (a program is longer than a move)."""
