"""The viewer: a static site next to a run, `RUN/view/`, readable from file:// offline.

`build_site(run)` writes `view/index.html` (the league: standings, ratings, A/B pairs,
head to head, fallbacks, the games; a standing pool's opens with its
leaderboard, rating history, head-to-head heat map and entrant cards) and `view/games/<replay>.html` (one page
per replay, every ply re-derived with the engine). `serve(run, port)` serves
it on 127.0.0.1 and redraws it as a run in progress writes replays.
`main_view` is the `arena view RUN [--serve] [--port 8000]` command.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arena.viewer import server
from arena.viewer.frames import replay_data
from arena.viewer.server import serve
from arena.viewer.site import build_site, draw_site

__all__ = ["build_site", "draw_site", "main_view", "replay_data", "serve"]


def main_view(run: Path, serve: bool, port: int) -> int:
    """`arena view`: build the site of `run` (and serve it with `serve`); the exit status."""
    if not (run / "replays").is_dir():
        print(
            f"arena view: {run} has no replays folder; pass a run folder such as runs/quickstart",
            file=sys.stderr,
        )
        return 2
    if serve:
        try:
            server.serve(run, port)
        except OSError as exc:  # the port is taken: the message names --port
            print(f"arena view: {exc}", file=sys.stderr)
            return 2
        return 0
    site = draw_site(run)
    for stem, why in sorted(site.problems.items()):
        if why.startswith("cannot be read"):
            print(
                f"arena view: warning: {run / 'replays' / stem}.json {why}; it has no page "
                "(move it out of replays/)",
                file=sys.stderr,
            )
    print(f"arena view: open {(site.out / 'index.html').resolve().as_uri()}")
    return 0
