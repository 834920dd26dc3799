"""What a session leaves for readers: `summary.json` and `games.jsonl`.

`summary.json` is one plain JSON document: the run, the session's counts, the
stopping rules, the tables, and every stored game's result (its last key).
`games.jsonl` holds the same games, one JSON object per line, for readers that
take a game at a time (pandas, jq). Both are written atomically.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.record.replay import write_atomic, write_atomic_lines

if TYPE_CHECKING:
    from arena.league.plan import RunPlan
    from arena.league.run import RunResult
    from arena.league.standings import GameSummary

__all__ = ["GAMES_NAME", "SUMMARY_NAME", "EpisodeFailure", "read_summary_head", "write_summary"]

SUMMARY_NAME = "summary.json"
GAMES_NAME = "games.jsonl"


@dataclass(frozen=True)
class EpisodeFailure:
    """An episode that failed: its id and the error, as the summary lists it."""

    episode: str
    error: str

    def to_json(self) -> dict[str, str]:
        """As `summary.json`'s `failed` list holds it."""
        return {"episode": self.episode, "error": self.error}


def write_summary(plan: RunPlan, result: RunResult, games: Iterable[GameSummary]) -> None:
    """`summary.json` and `games.jsonl` for the session that produced `result`."""
    rows = [g.to_json(latencies=False) for g in games]
    write_atomic_lines(plan.out / GAMES_NAME, (json.dumps(row) + "\n" for row in rows))
    document = {
        "run": plan.config.run.name,
        "seed": plan.master_seed,
        "episodes": plan.episode_count(),
        "played_this_session": result.played,
        "failed": [failure.to_json() for failure in result.failed],
        "interrupted": result.interrupted,
        "stopped_by": result.stopped_by or None,
        **result.stopping,
        "wall_s": round(result.wall_s, 3),
        **result.tables,
        "games": rows,
    }
    write_atomic(plan.out / SUMMARY_NAME, json.dumps(document, indent=2) + "\n")


def read_summary_head(path: Path) -> dict[str, Any] | None:
    """`summary.json` without its games (None if there is none, or it cannot be read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    data.pop("games", None)
    return data
