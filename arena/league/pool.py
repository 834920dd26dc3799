"""A standing pool's rules (docs/pool.md): what may change between its sessions, who
retires and why, and what each session plays.

A pool is a run folder that lasts: between sessions entrants are added (a new
policy) and retired (`retired = true`, or the roster rule), and every stored game
stays rated. An entrant never changes: its fingerprint (`arena.play.fingerprint`) is
stored with it, and a policy whose fingerprint changed under the same name is refused
(`check_pool`), naming what changed: a new version is a new name. Between sessions a
pool takes what a league's resume takes (`connects` and `runs` settings in
`arena.config.settings`), and besides new entrants, retirements, and a raised
`matches`, `target` or `round_matches`, so a pool that stopped on them plays on; a
pool is never resumed anyway, and a league becomes a pool once, when every entrant
is unchanged.

Each session plays placement first (every pair of active entrants short of
`placement_matches` matches), then adaptive rounds over the active entrants
(`PoolRounds`), the roster rule retiring an author's lowest rated entrant past
`roster_cap`. A retirement is a `Retirement`: by the config or by the roster rule,
and why, in the store and the ledger.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import structlog

import games
from arena.config import Config, ConfigError
from arena.config.settings import ACCEPTED, pool_takes
from arena.league.lineup import (
    StoredRun,
    TemplateChange,
    config_changes,
    names_said,
    shown_changes,
    stored_template_paths,
    template_changes,
)
from arena.league.schedule import kth_match
from arena.league.store import DB_NAME, LeagueStore
from arena.play.match import Match
from arena.record.crash import crash_point
from arena.record.ledger import LEDGER, append_line, reveal_program

if TYPE_CHECKING:
    from arena.play.prompts import PromptTemplate
    from arena.programs import ProgramInfo
    from arena.results.standings import GameSummary

__all__ = [
    "CONFIG_WHY",
    "POOL_ACCEPTS",
    "PlannedRun",
    "PoolRefused",
    "PoolRounds",
    "Retirement",
    "check_pool",
    "retire",
    "reveal",
    "settle_retirements",
]

log = structlog.get_logger("arena.league.pool")

_NEW_POOL = "start a new pool in another --out folder"

CONFIG_WHY = "retired = true in the config"
"""Why an entrant the config retires is retired (the roster rule says its own why)."""


@dataclass(frozen=True)
class Retirement:
    """Why an entrant plays no more: who decided (`kind`), in words, and when."""

    kind: Literal["config", "roster"]
    """`config`: `retired = true`; `roster`: the roster rule (`roster_cap`)."""
    why: str
    session: int | None
    """The session that retired it (None where no store says yet)."""

    @classmethod
    def by_config(cls, session: int | None) -> Retirement:
        """A retirement the config asks for (`retired = true`)."""
        return cls("config", CONFIG_WHY, session)

    def to_json(self) -> dict[str, Any]:
        """As the store and the ledger's `entrant_retired` line keep it."""
        return {"kind": self.kind, "why": self.why, "session": self.session}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Retirement:
        """A stored retirement; one stored before retirements had a kind is the config's
        when it says so, else the roster rule's (the only other)."""
        kind: Literal["config", "roster"] = data.get("kind") or (
            "config" if data.get("why") in (CONFIG_WHY, "config") else "roster"
        )
        if kind not in ("config", "roster"):
            raise ValueError(f"retirement kind {kind!r} is neither 'config' nor 'roster'")
        session = data.get("session")
        return cls(kind, str(data.get("why")), None if session is None else int(session))


POOL_ACCEPTS: tuple[str, ...] = (*ACCEPTED, *pool_takes("retire"))
"""What a pool's next session may change of its stored entrants' config as it is, besides
adding entrants: what a league's resume accepts, and retirements (`check_pool`); a raise
of `pool_takes("raise")` is taken too."""

_RAISED = pool_takes("raise")
_CONVERSION = pool_takes("raise", "schedule")
"""What a league's config may change as it becomes a pool: how it schedules from then on
(the league's own schedule is over; its stored games keep their places)."""


class PoolRefused(ConfigError):
    """A pool's next session refused: a changed entrant, a removed one, another config."""


class PlannedRun(Protocol):
    """What the pool reads of a run's plan (`arena.league.plan.RunPlan` is one)."""

    @property
    def out(self) -> Path:
        """The run folder."""
        ...

    @property
    def config(self) -> Config:
        """The config of this session."""
        ...

    @property
    def resume(self) -> str:
        """How a changed config is taken: refuse, anyway or new."""
        ...

    @property
    def master_seed(self) -> int:
        """The pool's master seed."""
        ...

    @property
    def session(self) -> int:
        """The session this plan plays."""
        ...

    @property
    def programs(self) -> dict[str, ProgramInfo]:
        """Program policies' registrations (the active ones)."""
        ...

    @property
    def authors(self) -> dict[str, str | None]:
        """Policy -> who is behind it, where it differs from its `author`."""
        ...

    @property
    def fingerprints(self) -> dict[str, str]:
        """Policy -> its fingerprint."""
        ...

    @property
    def played(self) -> dict[str, dict[str, Any]]:
        """Policy -> what decides its play."""
        ...

    @property
    def templates(self) -> dict[tuple[str, str], PromptTemplate]:
        """(policy, family) -> the template it is asked with."""
        ...

    def resolved(self) -> dict[str, Any]:
        """The config as played."""
        ...


def check_pool(plan: PlannedRun, stored: StoredRun, upgraded: dict[str, Any]) -> None:
    """Refuse a session of the pool in `plan.out` that would rate unlike things alike:
    `stored` is what its store holds, `upgraded` its stored config as this version reads
    it. A finished league becomes a pool once, when every entrant is unchanged."""
    db, config = plan.out / DB_NAME, plan.config
    if plan.resume == "anyway":
        raise PoolRefused(
            f"{db} is a standing pool: --resume-anyway is refused in a pool, whose ratings "
            "must mean the same entrants in every session. Leave it out; to change an "
            "entrant, add its new version under a new name and set retired = true on the old"
        )
    if stored.pool and not config.run.pool:
        raise PoolRefused(f"{db} holds a standing pool: keep [run] pool = true in its config")
    entrants = {e["name"]: e for e in stored.entrants}
    converting = not stored.pool
    if converting:
        _check_conversion(db, stored, upgraded, config.run.games)
    removed = [name for name in entrants if name not in config.policies]
    if removed:
        raise PoolRefused(
            f"{db}: this config removes entrants {', '.join(map(repr, removed))}; a pool keeps "
            "every entrant it rated. Keep each in the config with retired = true: it plays no "
            "more, and its games and ratings stay"
        )
    _check_entrants(db, plan, entrants, stored_template_paths(upgraded))
    for name, entrant in entrants.items():
        _check_retirement(db, plan, name, entrant)
    _check_rules(db, stored)
    old, new = _known(upgraded, entrants), _known(plan.resolved(), entrants)
    ignore = [*POOL_ACCEPTS, *(_CONVERSION if converting else _RAISED)]
    changes = config_changes(old, new, ignore=ignore)
    if not converting:
        changes += _lowered(old, new)
    if changes:
        raise PoolRefused(
            f"{db} is a standing pool played with another config ({shown_changes(changes)}). "
            "Between sessions a pool takes new entrants, retirements, a raised matches, target "
            "or round_matches, and what decides no one's play (connection and run settings): "
            f"restore the rest, or {_NEW_POOL}"
        )


def _lowered(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The settings a pool takes only raised (`run.matches`, ...) that were lowered."""
    out = []
    for path in _RAISED:
        section, key = path.split(".")
        before, after = old.get(section, {}).get(key), new.get(section, {}).get(key)
        if before is not None and after is not None and after < before:
            out.append(f"{path}: {before} -> {after} (a pool takes it raised only)")
    return out


def _check_rules(db: Path, stored: StoredRun) -> None:
    """Games of two rules versions do not rate together."""
    for game, versions in sorted(stored.rules.items()):
        engine = games.load(game).rules_version
        if versions != {engine}:
            raise PoolRefused(
                f"{db}'s {game} games were played under rules version "
                f"{', '.join(map(str, sorted(versions)))}; this engine's is {engine}: games of two "
                f"rules versions do not rate together. {_NEW_POOL.capitalize()}"
            )


def _check_conversion(
    db: Path, stored: StoredRun, upgraded: dict[str, Any], entries: list[str]
) -> None:
    """A league becomes a pool only over one games entry, every entrant fingerprinted."""
    if upgraded.get("run", {}).get("games") != entries:
        raise PoolRefused(
            f"{db} is a league of games {upgraded.get('run', {}).get('games')}; a pool plays one "
            f"entry, the league's own: only a league of one entry becomes a pool. {_NEW_POOL.capitalize()}"
        )
    unknown = [e["name"] for e in stored.entrants if not e["fingerprint"]]
    if unknown:
        raise PoolRefused(
            f"{db}: the games of {', '.join(map(repr, unknown))} were stored before fingerprints "
            "were kept, so nothing shows they were played by the entrants this config names: "
            f"{_NEW_POOL}"
        )


def _check_entrants(
    db: Path,
    plan: PlannedRun,
    entrants: dict[str, dict[str, Any]],
    stored_paths: Mapping[tuple[str, str], str],
) -> None:
    """Refuse every entrant whose play changed under its name, at once: an edited template
    once, by file name, with every entrant that reads it (`lineup.template_changes`)."""
    changed: list[str] = []
    templates: list[TemplateChange] = []
    lines: list[str] = []
    for name, entrant in entrants.items():
        before, now = entrant["fingerprint"], plan.fingerprints[name]
        if before is None or before == now or plan.config.policies[name].retired:
            continue  # a retiring entrant plays no more: its record is what stays
        changed.append(name)
        old, new = entrant["played_as"] or {}, plan.played[name]
        for family, sha in sorted(new.get("templates", {}).items()):
            was = old.get("templates", {}).get(family, sha)
            if was != sha:
                path = plan.templates[name, family].path
                templates.append(
                    TemplateChange(name, stored_paths.get((name, family)), was, path, sha)
                )
        rest = config_changes(
            {k: v for k, v in old.items() if k != "templates"},
            {k: v for k, v in new.items() if k != "templates"},
        )
        if rest or not any(t.policy == name for t in templates):
            lines.append(
                f"{name!r} (fingerprint {before[:12]} -> {now[:12]}: "
                f"{'; '.join(rest) or 'what decides its play'})"
            )
    if not changed:
        return
    lines = template_changes(templates) + lines
    who = (
        f"policy {changed[0]!r} is not the entrant"
        if len(changed) == 1
        else f"policies {names_said(changed)} are not the entrants"
    )
    raise PoolRefused(
        f"{db}: {who} the pool rated under {'that name' if len(changed) == 1 else 'their names'}: "
        f"{'; '.join(lines)}. An entrant never changes: restore what changed, or give "
        f"{'the' if len(changed) == 1 else 'each'} new version a new name (e.g. "
        f"{changed[0]}-v2), and set retired = true on "
        f"{names_said(changed)}"
    )


def _check_retirement(db: Path, plan: PlannedRun, name: str, entrant: dict[str, Any]) -> None:
    """Refuse a retirement undone."""
    if entrant["retired"] is None or plan.config.policies[name].retired:
        return
    retired = Retirement.from_json(entrant["retired"])
    if retired.kind == "config":
        raise PoolRefused(
            f"{db}: {name!r} was retired in session {retired.session}, and a retirement is for "
            "good: keep retired = true on it; to play it again, add it under a new name"
        )


def _known(config: dict[str, Any], entrants: dict[str, Any]) -> dict[str, Any]:
    """`config` with only the stored entrants among its policies (new ones are welcome)."""
    return {
        **config,
        "policies": {n: p for n, p in config.get("policies", {}).items() if n in entrants},
    }


def settle_retirements(plan: PlannedRun, store: LeagueStore) -> None:
    """At a pool session's start: retire the entrants the config retires, and reveal the
    source of every retired program not revealed yet (a session killed between a
    retirement and its reveal)."""
    for name, spec in plan.config.policies.items():
        if spec.retired:
            retire(plan.out, store, name, Retirement.by_config(plan.session))
    for entrant in store.entrants():  # a retired program is no longer registered: every one
        if entrant["retired"] is not None:
            reveal(plan.out, entrant["name"])


def retire(out: Path, store: LeagueStore, name: str, retirement: Retirement) -> bool:
    """Retire a pool's entrant for good: in the store, a ledger line and an event, then a
    program's source revealed (`reveal`); False if it was retired already."""
    if not store.retire(name, retirement.to_json()):
        return False
    said = {"policy": name, **retirement.to_json()}
    append_line(out / LEDGER, {"event": "entrant_retired", **said, "time": time.time()})
    log.warning("entrant_retired", **said)
    reveal(out, name)
    return True


def reveal(out: Path, name: str) -> None:
    """A retired program's source in the ledger, once (`record.ledger.reveal_program`): a
    session killed between a retirement and its reveal reveals at the next one's start."""
    if reveal_program(out, name):
        log.info("program_revealed", policy=name)


class PoolRounds:
    """What one session of a pool plays, a round at a time: the matches a killed session
    left, then placement, then adaptive rounds over the active entrants (the module
    docstring); the same interface as the adaptive league's `AdaptiveRounds`."""

    def __init__(self, plan: PlannedRun, store: LeagueStore) -> None:
        run = plan.config.run
        self.plan, self.store, self.session = plan, store, plan.session
        self.entry = run.games[0]
        self.target = run.target
        self.k = run.round_matches
        self.cap = run.matches
        self.placement = min(run.placement_matches, run.matches)
        if not store.scheduled_matches():
            store.adopt_league()  # a league become a pool: its matches keep their places
        self._earlier = store.scheduled_matches()
        self.index = max((m.index for m in self._earlier), default=-1) + 1
        """The sequence number of the next match scheduled."""
        self.played: Counter[tuple[str, str]] = Counter((m.first, m.second) for m in self._earlier)
        self.probability = 0.0
        """The active entrants' ranking's probability of being right before the last round."""
        self.placed = 0
        """Placement matches scheduled in this session."""
        self.retired: list[str] = []
        """Entrants the roster rule retired in this session."""

    def next_round(self, stored: Iterable[GameSummary]) -> list[Match] | str:
        """The next round's matches, stored before they are returned, or why none follows.
        The first round of a session is every match scheduled before it (what a killed
        session left unplayed is played; the rest is skipped as finished)."""
        from arena.league.adaptive import pick_round_from_view, round_view  # numpy's fits
        from arena.results.tables import match_outcomes

        if self._earlier:
            earlier, self._earlier = self._earlier, []
            return earlier
        games_so_far = list(stored)
        order, active = self._entrants()
        placement = self._placement(list(itertools.combinations(active, 2)))
        if placement:
            self.placed += len(placement)
            return self._schedule(placement, "placement")
        crash_point("placed")
        active = self._roster(games_so_far, order, active)
        rated_elsewhere = [p for p in order if p not in active]
        view = round_view(
            match_outcomes(games_so_far), active, seed=self.plan.master_seed, others=rated_elsewhere
        )
        self.probability = view.probability
        if view.probability >= self.target:
            return (
                f"the ranking of the {len(active)} active entrants is right with probability "
                f"{view.probability:.3f} (target {self.target:g})"
            )
        played = {pair: self.played[pair] for pair in itertools.combinations(active, 2)}
        pairs = pick_round_from_view(view, played, k=self.k, cap=self.cap)
        if not pairs:
            return f"every pair of active entrants has played its {self.cap} matches (run.matches)"
        return self._schedule(pairs, "round")

    def _entrants(self) -> tuple[list[str], list[str]]:
        """Every entrant in the order the pool first stored it, and the active ones."""
        rows = self.store.entrants()
        order = [e["name"] for e in rows if e["name"] in self.plan.config.policies]
        active = [e["name"] for e in rows if e["name"] in order and e["retired"] is None]
        return order, active

    def _placement(self, pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Each pair of active entrants still short of `placement` matches, topped up: by
        level (every such pair's next match, then the one after), in entrant order."""
        counts = {pair: self.played[pair] for pair in pairs}
        picks = []
        for level in range(self.placement):
            for pair in pairs:
                if counts[pair] == level:
                    picks.append(pair)
                    counts[pair] += 1
        return picks

    def _roster(self, stored: list[GameSummary], order: list[str], active: list[str]) -> list[str]:
        """The roster rule: an author past `roster_cap` active entrants loses the lowest
        rated one (ties: the earliest added; never one without a rated match)."""
        from arena.results.ratings import bradley_terry  # numpy's fits
        from arena.results.tables import match_outcomes

        cap = self.plan.config.run.roster_cap
        if cap is None:
            return active
        outcomes = match_outcomes(stored)
        rated = {p for m in outcomes if m.rated for p in (m.first, m.second)}
        ratings = bradley_terry(outcomes, seed=self.plan.master_seed, resamples=1)
        authors = {
            name: self.plan.authors.get(name, spec.author)
            for name, spec in self.plan.config.policies.items()
        }
        for author in sorted({a for n in active if (a := authors[n])}):
            mine = [n for n in active if authors[n] == author]
            while len(mine) > cap:
                candidates = [n for n in mine if n in rated and n in ratings]
                if not candidates:
                    break
                lowest = min(candidates, key=lambda n: (ratings[n].rating, order.index(n)))
                why = (
                    f"roster: author {author!r} had {len(mine)} active entrants (roster_cap = "
                    f"{cap}); {lowest!r} rated lowest ({ratings[lowest].rating:.0f})"
                )
                retire(self.plan.out, self.store, lowest, Retirement("roster", why, self.session))
                self.retired.append(lowest)
                mine.remove(lowest)
                active = [n for n in active if n != lowest]
        return active

    def _schedule(self, pairs: list[tuple[str, str]], phase: str) -> list[Match]:
        """The pairs' next matches, numbered and stored before any of them starts."""
        out = []
        for first, second in pairs:
            self.played[(first, second)] += 1
            k = self.played[(first, second)]
            out.append(kth_match(self.index, self.plan.master_seed, self.entry, k, first, second))
            self.index += 1
        self.store.schedule(out, self.session, phase)
        crash_point("scheduled")
        log.info(
            "pool_scheduled",
            phase=phase,
            matches=len(out),
            first_index=out[0].index,
            ranking_probability=round(self.probability, 4),
        )
        return out

    def to_json(self) -> dict[str, Any]:
        """What summary.json shows: the target, the ranking's probability before the last
        round, the matches scheduled so far, this session's placement matches and the
        entrants the roster rule retired."""
        return {
            "target": self.target,
            "probability": self.probability,
            "matches": self.index,
            "placement_matches": self.placed,
            "retired_by_roster": self.retired,
        }
