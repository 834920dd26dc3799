"""What the browser tests share: Chromium's flags, the built sites, a tab that records its page.

Chromium: $COG_CHROMIUM or /usr/bin/chromium. The fixtures (conftest.py) skip
the browser tests without one, unless COG_REQUIRE_BROWSER=1 (CI), where a
missing browser fails. Screenshots go to /tmp/cog-screens/ for people to look at.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.record.replay import Replay

SCREENS = Path("/tmp/cog-screens")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PIECES = """() => Object.fromEntries([...document.querySelectorAll('#board [data-piece][data-cell]')]
    .map((e) => [e.dataset.cell, e.dataset.piece]))"""


def chromium_path() -> str | None:
    """The Chromium the tests drive, or None when there is none."""
    path = os.environ.get("COG_CHROMIUM", "/usr/bin/chromium")
    return path if Path(path).is_file() else None


@dataclass
class Sites:
    """The built sites of the tiny runs, and their replays by file stem."""

    runs: dict[str, Path]
    replays: dict[str, dict[str, Replay]] = field(default_factory=dict)

    def url(self, kind: str, stem: str, hash_: str = "") -> str:
        """The page of replay `stem` in the site of run `kind`."""
        return (self.runs[kind] / "view" / "games" / f"{stem}.html").as_uri() + hash_

    def league_url(self, kind: str = "board") -> str:
        """The league page of run `kind`."""
        return (self.runs[kind] / "view" / "index.html").as_uri()


@dataclass
class Tab:
    """A page with its console errors and requests recorded."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def open(self, url: str) -> None:
        """Go to `url` and wait until the page has drawn itself."""
        self.page.goto(url)
        self.page.wait_for_selector("#board svg, #games")

    def ply(self) -> int:
        """The ply the page shows."""
        return int(self.page.evaluate("document.body.dataset.ply"))

    def pieces(self) -> dict[str, str]:
        """Cell -> piece of everything drawn on the board."""
        found: dict[str, str] = self.page.evaluate(PIECES)
        return found

    def shoot(self, name: str) -> None:
        """A full-page screenshot, SCREENS/<name>.png."""
        SCREENS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)

    def assert_clean(self) -> None:
        """No console errors, and no request beyond the page's own files."""
        assert not self.errors, f"console errors: {self.errors}"
        foreign = [u for u in self.requests if not u.startswith(("file://", "data:"))]
        assert not foreign, f"requests beyond the page's own files: {foreign}"
