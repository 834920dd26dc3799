"""Writing the static site: `RUN/view/index.html` and one page per replay.

Pages work from `file://` with no network: Chromium refuses a file:// page's
fetch() of its neighbours, so each page carries its data inline in a
`<script type="application/json" id="page-data">` block, and the script and
style sheet are plain files under `view/static/` (script and link tags load
from file:// fine). A league's games beyond the first `GAMES_PAGE` are written
as pages of their own, `view/data/games-NNNN.js` (a script tag loads one when
the page shows it or a filter needs it): a league of 100,000 games opens as
fast as one of a few hundred. A `Site` remembers which replays it has drawn, so the
server can redraw only what changed while a run goes on.
"""

from __future__ import annotations

import html
import itertools
import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import structlog

from arena.record.replay import ReplayUnreadable, load_replay, write_atomic, write_atomic_lines
from arena.viewer.boards import DRAWERS
from arena.viewer.frames import replay_data
from arena.viewer.league import Drawn, league_data

__all__ = [
    "ASSETS",
    "GAMES_PAGE",
    "Site",
    "build_site",
    "draw_site",
    "embed_json",
    "write_game_pages",
]

ASSETS = ("viewer.css", "boards.js", "pool.js", "league.js", "replay.js")
"""Files copied from the package's `static/` folder into `view/static/`."""

log = structlog.get_logger("arena.viewer")

GAMES_PAGE = 500
"""Games a league page carries inline, and games in each page file of the rest."""


def embed_json(data: Any) -> str:
    """JSON that is safe inside a <script> element: no `<` can close it early."""
    return json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def _static_text(name: str) -> str:
    return resources.files("arena.viewer").joinpath("static", name).read_text(encoding="utf-8")


@dataclass
class Site:
    """The view folder of one run, kept up to date with its replays."""

    run: Path
    live: bool = False
    """Served over HTTP: the league page then reloads itself when `live.json` changes."""
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Replay file stem -> (mtime_ns, size) when its page was written."""
    replays: dict[str, Drawn] = field(default_factory=dict)
    """Replay file stem -> what the league page needs of it (not the replay itself)."""
    problems: dict[str, str] = field(default_factory=dict)
    """Replay file stem -> why it has no page."""
    stamp: int = 0

    @property
    def out(self) -> Path:
        """Where the site is written."""
        return self.run / "view"

    def update(self) -> list[str]:
        """Draw the pages of new or changed replays, then the league page; the stems drawn."""
        if not self.run.is_dir():
            raise FileNotFoundError(f"{self.run} is not a run folder (expected RUN/replays/*.json)")
        self._copy_assets()
        drawn = []
        for path in sorted((self.run / "replays").glob("*.json")):
            stat = path.stat()
            key = (stat.st_mtime_ns, stat.st_size)
            if self.seen.get(path.stem) == key:
                continue
            self.seen[path.stem] = key
            drawn.append(path.stem)
            self._draw_replay(path)
        if drawn or self.stamp == 0:
            self.stamp += 1
            self._draw_league()
        return drawn

    def _copy_assets(self) -> None:
        target = self.out / "static"
        target.mkdir(parents=True, exist_ok=True)
        for name in ASSETS:
            text = _static_text(name)
            path = target / name
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                write_atomic(path, text)

    def _draw_replay(self, path: Path) -> None:
        try:
            replay = load_replay(path)
        except (OSError, ReplayUnreadable) as exc:
            why = exc.reason if isinstance(exc, ReplayUnreadable) else str(exc)
            self.problems[path.stem] = f"cannot be read as a replay: {why}"
            self.replays.pop(path.stem, None)
            return
        self.replays[path.stem] = Drawn.of(replay)
        if replay.game not in DRAWERS:
            self.problems[path.stem] = f"the viewer cannot draw {replay.game!r} yet"
            return
        try:
            data = replay_data(replay)
        except Exception as exc:  # a move the engine refuses, or worse: verify tells more
            self.problems[path.stem] = f"cannot be re-derived ({exc}); run `arena verify` on it"
            log.warning("replay_not_drawn", replay=str(path), error=str(exc))
            return
        self.problems.pop(path.stem, None)
        title = f"{replay.game} · {replay.episode}"
        _write_page(self.out / "games" / f"{path.stem}.html", title, "../", ("replay.js",), data)

    def _draw_league(self) -> None:
        pages = {stem for stem in self.replays if stem not in self.problems}
        data, games = league_data(self.run, self.replays, pages)
        data["problems"] = self.problems
        data["live"] = self.live
        title = f"{data['run']} · {data['kind']}"
        scripts = ("pool.js", "league.js")  # league.js draws a pool's sections with pool.js
        first, data["games_pages"] = write_game_pages(self.out / "data", games)
        _write_page(self.out / "index.html", title, "", scripts, data, games=first)
        if self.live:  # after the page: a reload prompted by the stamp finds the new page
            write_atomic(self.out / "live.json", json.dumps({"stamp": self.stamp}))


def write_game_pages(
    folder: Path, games: Iterable[dict[str, Any]], size: int = GAMES_PAGE
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The league page's games, `size` a page: the first page's rows (the page carries them
    inline) and what the page needs to show the rest: `total`, `size`, `pages` (page n
    > 0 is `folder/games-NNNN.js`, which hands its rows to `CogGames.page(n, rows)`),
    and the games, policies and endings found (for the filters). Read a row at a
    time: one page is in memory, never the league's games."""
    folder.mkdir(parents=True, exist_ok=True)
    first: list[dict[str, Any]] = []
    page: list[dict[str, Any]] = []
    found: dict[str, set[str]] = {"games": set(), "policies": set(), "endings": set()}
    total = pages = 0

    def flush() -> None:
        nonlocal pages
        if pages:
            rows = ",\n".join(embed_json(row) for row in page)
            write_atomic(
                folder / f"games-{pages:04d}.js", f"CogGames.page({pages}, [\n{rows}\n]);\n"
            )
        else:
            first.extend(page)
        pages += 1
        page.clear()

    for row in games:
        page.append(row)
        total += 1
        found["games"].add(str(row["game"]))
        found["policies"].update(str(p) for p in row["policies"])
        found["endings"].add(str(row["ending"]))
        if len(page) == size:
            flush()
    if page or not pages:
        flush()
    for stale in folder.glob("games-*.js"):  # pages of a larger league drawn here before
        if int(stale.stem.rpartition("-")[2]) >= pages:
            stale.unlink(missing_ok=True)
    index = {key: sorted(values) for key, values in found.items()}
    return first, {"total": total, "size": size, "pages": pages, **index}


def _write_page(
    path: Path,
    title: str,
    root: str,
    scripts: tuple[str, ...],
    data: dict[str, Any],
    *,
    games: Iterable[dict[str, Any]] | None = None,
) -> None:
    """A page carrying `data` and loading `scripts` (after boards.js) from `root`/static/;
    `games`, if given, becomes its last key, written a row at a time (a league of
    thousands of games is never one string in memory)."""
    tags = "\n".join(f'<script src="{root}static/{name}"></script>' for name in scripts)
    page = Template(_static_text("page.html")).substitute(
        title=html.escape(title), root=root, scripts=tags, data="\x00"
    )
    head, _, tail = page.partition("\x00")
    if games is None:
        write_atomic(path, head + embed_json(data) + tail)
        return
    opening = embed_json(data)[:-1] + ',"games":['  # the object, reopened for its last key
    rows = (("," if n else "") + embed_json(row) for n, row in enumerate(games))
    write_atomic_lines(path, itertools.chain([head, opening], rows, ["]}", tail]))


def build_site(run: Path) -> Path:
    """Write the static site of run folder `run` into `run/view/`; return that folder."""
    return draw_site(run).out


def draw_site(run: Path) -> Site:
    """`build_site`, returning the site drawn (its `problems`: the replays without a page)."""
    site = Site(run)
    if (site.out / "games").is_dir():
        shutil.rmtree(site.out / "games")  # pages of replays that are gone must go too
    site.update()
    return site
