"""Every link into the project's own docs, from the code and the docs, lands on a heading."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"(?:docs/)?([a-z-]+\.md)#([a-z0-9-]+)")
"""`rules.md#validity`, `docs/rules.md#cut-cards`, ..."""


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    return {
        _slug(line.lstrip("#")) for line in doc.read_text().splitlines() if line.startswith("#")
    }


def _sources() -> list[Path]:
    code = [p for d in ("arena", "games", "providers") for p in (ROOT / d).rglob("*.py")]
    return [*code, ROOT / "README.md", *(ROOT / "docs").glob("*.md")]


def test_every_docs_anchor_exists() -> None:
    anchors = {doc.name: _anchors(doc) for doc in (ROOT / "docs").glob("*.md")}
    broken = []
    for source in _sources():
        for match in LINK.finditer(source.read_text()):
            doc, anchor = match.groups()
            if doc in anchors and anchor not in anchors[doc]:
                broken.append(f"{source.relative_to(ROOT)}: {match.group(0)}")
    assert not broken, broken


def test_the_slug_is_githubs() -> None:
    assert _slug(" Results and the 1,000-ply no-contest") == "results-and-the-1000-ply-no-contest"
    assert _slug(" say and notes") == "say-and-notes"
