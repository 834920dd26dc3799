"""Whether a run folder holds a whole run or one cut short, in one sentence for every reader.

A session that ends by itself, or by Ctrl-C, writes its summary and marks
itself ended in the store; one killed (`kill -9`, a power cut, a crash) never
does, and its session row stays open. Either way what was played is kept and
the same command resumes it. `verify`, `report` and the league page say so
with `RunStatus.sentence`: "played 8 of at most 80; the last session did not
finish: run the same command to resume". A run that a budget, the SPRT or a
pool's target stopped is whole: it played what its rules let it.

`foreign_store` tells a league store that is not the one of the folder's
replays (copied from another run folder, say), whose standings would not be
these games'.
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from arena.config import ConfigError
from arena.league.lock import holder_of
from arena.league.store import DB_NAME, RESOLVED
from arena.league.summary import SUMMARY_NAME, read_summary_head
from arena.play.match import REPLAY_MARK

__all__ = ["RunStatus", "foreign_store", "run_status"]


@dataclass(frozen=True)
class RunStatus:
    """How far a run folder's run went."""

    played: int
    """Episodes played (first plays: an episode played again after a no-contest is one)."""
    planned: int | None
    """The most episodes the run plans; None where its config cannot be read."""
    died: bool
    """Its last session began and never ended (killed, or crashed)."""
    stopped: bool
    """Its last session was stopped before the schedule's end (Ctrl-C, an endpoint)."""

    @property
    def partial(self) -> bool:
        """Cut short: the same command would play on."""
        return self.died or (self.stopped and not self.whole)

    @property
    def whole(self) -> bool:
        """Every planned episode played."""
        return self.planned is not None and self.played >= self.planned

    def sentence(self) -> str | None:
        """What to tell a reader of a run cut short; None for a run that is not."""
        if not self.partial:
            return None
        at_most = f" of at most {self.planned}" if self.planned is not None else ""
        why = "did not finish" if self.died else "was stopped before the schedule's end"
        return (
            f"played {self.played}{at_most}; the last session {why}: run the same command to resume"
        )


def run_status(out: Path) -> RunStatus:
    """How far the run in folder `out` went: its store's episodes (else its replays), its
    plan's count, and how its last session ended."""
    db = out / DB_NAME
    died, stored = False, None
    if db.exists():
        try:
            with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
                stored = [row[0] for row in connection.execute("SELECT id FROM episodes")]
                died = _open_session(connection) and holder_of(out) is None  # else: playing
        except sqlite3.Error:
            stored = None
    if stored is None:
        stored = [p.stem for p in (out / "replays").glob("*.json")]
    played = len({episode.partition(REPLAY_MARK)[0] for episode in stored})
    summary = read_summary_head(out / SUMMARY_NAME) or {}
    return RunStatus(played, _planned(out), died, bool(summary.get("interrupted")))


def _open_session(connection: sqlite3.Connection) -> bool:
    """Whether the store's last session never ended (a store from before sessions were
    marked ended cannot say: False)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(sessions)")}
    if "ended" not in columns:
        return False
    row = connection.execute("SELECT ended FROM sessions ORDER BY number DESC LIMIT 1").fetchone()
    return row is not None and row[0] is None


def _planned(out: Path) -> int | None:
    """The most episodes the run in `out` plans (as summary.json says it), or None."""
    from arena.league.lineup import read_resolved
    from arena.league.plan import RunPlan

    if not (out / RESOLVED).exists():
        return None
    try:
        config, master, _ = read_resolved(out)
        return RunPlan(config, master, out, templates={}).episode_count()
    except (ConfigError, ValueError, KeyError):
        return None


def foreign_store(out: Path, *, sample: int = 16) -> str | None:
    """Why the league store of `out` is not the store of its replays, or None: it names
    another run or seed than the folder's config, none of its episodes has its replay file
    there, or none of the files is the one it stored (checked on about `sample` episodes
    spread over the run; one edited replay is `arena verify`'s to find, not a foreign
    store)."""
    db = out / DB_NAME
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            run = connection.execute("SELECT name, master_seed FROM run").fetchone()
            rows = connection.execute("SELECT id, digest FROM episodes ORDER BY rowid").fetchall()
    except sqlite3.Error:
        return None  # a damaged store says so itself when it is opened
    fix = f"`arena rebuild {out}` re-creates it from the replays (the old one is kept beside it)"
    config = _resolved_run(out)
    if run is not None and config is not None and (run[0], run[1]) != config:
        return (
            f"{db} belongs to another run: run {run[0]!r}, seed {run[1]}, while "
            f"{out / RESOLVED} is run {config[0]!r}, seed {config[1]}; {fix}"
        )
    missing = [e for e, _ in rows if not (out / "replays" / f"{e}.json").exists()]
    if rows and len(missing) == len(rows):
        return (
            f"{db} does not belong to the replays in {out / 'replays'}: none of its "
            f"{len(rows)} episode(s) has a replay there (e.g. {missing[0]}); {fix}"
        )
    sampled = [(e, d) for e, d in rows[:: max(1, len(rows) // sample)] if d and e not in missing]
    differing = [e for e, digest in sampled if _digest(out / "replays" / f"{e}.json") != digest]
    if sampled and len(differing) == len(sampled):
        return (
            f"{db} does not belong to the replays in {out / 'replays'}: the replay files of "
            f"its episodes are not the ones it stored (e.g. {differing[0]}); {fix}"
        )
    return None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _resolved_run(out: Path) -> tuple[str, int] | None:
    """(run name, master seed) of the folder's resolved config, or None."""
    from arena.league.lineup import read_resolved

    try:
        config, master, _ = read_resolved(out)
    except ConfigError:
        return None
    return config.run.name, master
