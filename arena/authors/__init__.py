"""Models as authors (docs/authors.md): a program written by a model from a common brief.

`arena author` asks each authoring policy for a program of one game
(`authors.author`), from the brief the project's own texts make
(`authors.brief`); the mock answers with programs of its own (`authors.mock`).
Each program is written beside its manifest (`authors.manifest`), which makes
it an entrant authored by that policy.
"""

from arena.authors.author import (
    AuthorAttempt,
    Authored,
    authoring_policies,
    default_out,
    extract_program,
    write_programs,
)
from arena.authors.brief import Brief, brief_for
from arena.authors.manifest import author_of, authored_programs, manifest_path, read_manifest

__all__ = [
    "AuthorAttempt",
    "Authored",
    "Brief",
    "author_of",
    "authored_programs",
    "authoring_policies",
    "brief_for",
    "default_out",
    "extract_program",
    "manifest_path",
    "read_manifest",
    "write_programs",
]
