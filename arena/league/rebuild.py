"""`arena rebuild RUN`: the league store re-created from the replays, which are the truth.

The store is what a run resumes from and what reports read; the replays hold
everything it holds. A damaged or deleted `league.db` is therefore rebuilt by
storing every replay again, in schedule order, and working out the ratings
anew. The digests the new store keeps are those of the replays as they are
now: after a rebuild, only a run digest published earlier still tells whether
a replay was edited.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from arena.config import ConfigError
from arena.league.lock import hold_run_folder
from arena.league.store import DB_NAME, LeagueStore, read_resolved
from arena.record.replay import load_replay
from arena.results.tables import league_tables

__all__ = ["rebuild_store"]


def rebuild_store(out: Path) -> int:
    """Re-create `out/league.db` from `out/replays/`; returns the episodes stored."""
    config, master, resolved = read_resolved(out)
    paths = sorted((out / "replays").glob("*.json"))
    if not paths:
        raise ConfigError(f"{out} has no replays to rebuild its store from")
    replays = []
    for path in paths:
        try:
            replays.append((load_replay(path), path))
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"{path} cannot be read as a replay ({exc}): move it out of replays/ to rebuild "
                "without it"
            ) from exc
    replays.sort(key=lambda item: (item[0].match.index, item[0].episode))
    with hold_run_folder(out):
        for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
            (out / name).unlink(missing_ok=True)
        store = LeagueStore.open_for_run(out)
        try:
            policies: list[dict[str, Any]] = [
                {"name": n, "kind": p.kind, "author": p.author, "templates": {}}
                for n, p in config.policies.items()
            ]
            store.begin_run(config.run.name, master, resolved, policies)
            for replay, path in replays:
                store.record(replay, path, hashlib.sha256(path.read_bytes()).hexdigest())
            tables = league_tables(store.game_summaries(), config, master)
            store.store_ratings([(i, r) for i, r in tables["ratings"]["elo_history"]])
        finally:
            store.close()
    return len(replays)
