"""What each setting of a run config does to a run: the one table the arena derives from.

Every key of every config table is declared here once, with its effect:

- `plays`: decides how a policy plays, or the games themselves (seeds, deadlines,
  engine parameters). A policy's `plays` settings make its fingerprint
  (`arena.play.fingerprint`); a resumed league and a pool's next session refuse a
  change to any of them.
- `counts`: decides which games are played and what they count for, alike for every
  policy (the schedule, the validity rules, the test's hypotheses, who is whose author,
  what a replay records). Refused like `plays`, and in no policy's fingerprint: it is
  not the policy's own.
- `connects`: where and how requests go (URLs, keys, TLS, headers, idle connections):
  it decides whether a request arrives, never what the model answers. Accepted on
  resume and between a pool's sessions, never in a fingerprint.
- `runs`: how the run is carried out or reported (concurrency, executor, budgets, how
  long an endpoint may stay down, connection limits, prices, the response cache,
  Anthropic's prompt cache). Accepted like `connects`.

A setting may also be `recorded` (a model policy's replays record it, as "asked as",
in the order of this table), and say what a pool takes of it besides (`pool`): a
raise between sessions (`raise`: more matches, a higher target, larger rounds), a
change as a finished league becomes a pool (`raise` and `schedule`), or a retirement
(`retire`). The resume and pool checks (`arena.league.lineup`, `arena.league.pool`)
and the replay's record (`arena.league.plan`) are derived from this table; a test
walks every field of every config model and fails on one that is not declared.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ACCEPTED",
    "ASKED_AS",
    "CONNECTION_SETTINGS",
    "EFFECTS",
    "SETTINGS",
    "Effect",
    "PoolTakes",
    "Setting",
    "policy_settings",
    "pool_takes",
]

Effect = Literal["plays", "counts", "connects", "runs"]
"""What a setting does to a run (see the module docstring)."""

EFFECTS: tuple[Effect, ...] = ("plays", "counts", "connects", "runs")
"""Every `Effect`."""

PoolTakes = Literal["raise", "schedule", "retire"]
"""What a pool takes of a setting it otherwise refuses to change (module docstring)."""


@dataclass(frozen=True)
class Setting:
    """One setting's declared effect."""

    effect: Effect
    recorded: bool = False
    """A model policy's replay records it (`asked as`)."""
    pool: PoolTakes | None = None
    """What a pool takes of a change to it (None: what its effect says)."""

    @property
    def accepted(self) -> bool:
        """Whether a resume and a pool's next session take a change to it as it is."""
        return self.effect in ("connects", "runs")


PLAYS, COUNTS, CONNECTS, RUNS = (Setting(effect) for effect in EFFECTS)
_RECORDED = Setting("plays", recorded=True)

_POLICY = "policies.*."
"""A policy's settings: `*` stands for any policy name."""

# A table laid out by hand, one line a group of settings:
# fmt: off
SETTINGS: dict[str, Setting] = {
    # [run]
    "run.name": COUNTS, "run.seed": PLAYS, "run.games": PLAYS,
    "run.matches": Setting("counts", pool="raise"),
    "run.target": Setting("counts", pool="raise"),
    "run.round_matches": Setting("counts", pool="raise"),
    "run.schedule": Setting("counts", pool="schedule"),
    "run.pool": Setting("counts", pool="schedule"),
    "run.placement_matches": Setting("counts", pool="schedule"),
    "run.roster_cap": Setting("counts", pool="schedule"),
    "run.node_budget": PLAYS,  # in a program's fingerprint
    "run.breaker_failures": PLAYS,  # an open circuit makes a seat fall back at once
    "run.record_prompts": COUNTS, "run.max_infra_share": COUNTS, "run.replay_no_contest": COUNTS,
    "run.sprt": COUNTS,
    "run.concurrency": RUNS, "run.executor": RUNS, "run.endpoint_down_s": RUNS,
    "run.sandbox": RUNS, "run.budget_usd": RUNS, "run.budget_tokens": RUNS,
    "run.budget_matches": RUNS, "run.response_cache": RUNS, "run.cache_dir": RUNS,
    "run.trust": CONNECTS,
    # how the run is watched (docs/ops.md): changes nothing it plays
    "run.metrics_port": RUNS, "run.otlp_endpoint": RUNS, "run.trace_content": RUNS,
    # how a program's child is held, and whether predictable dice may meet a model's program
    "run.program_uids": RUNS, "run.accept_predictable_dice": RUNS,
    # [run.sprt]: the hypotheses are the test; the match cap only how long it may go on
    "run.sprt.elo0": COUNTS, "run.sprt.elo1": COUNTS, "run.sprt.alpha": COUNTS,
    "run.sprt.beta": COUNTS, "run.sprt.max_matches": RUNS,
    # [deadlines] and [game.<name>] (whose other keys are the engine's parameters: plays)
    "deadlines.first_reply_s": PLAYS, "deadlines.retry_s": PLAYS, "deadlines.decision_s": PLAYS,
    "game.*.first_reply_s": PLAYS, "game.*.retry_s": PLAYS, "game.*.decision_s": PLAYS,
    "game.*.episode_wall_s": PLAYS, "game.*.dice": PLAYS,
    # [author]: read by `arena author` only
    "author.author_s": RUNS, "author.revisions": RUNS, "author.max_tokens": RUNS,
    # every policy
    "policies.*.kind": PLAYS, "policies.*.prompt": PLAYS,  # its templates
    "policies.*.author": COUNTS,  # same-author games are played, not rated
    "policies.*.retired": Setting("counts", pool="retire"),
    # a model: what its replays record, in the order they record it
    "policies.*.provider": _RECORDED, "policies.*.model": _RECORDED,
    "policies.*.base_url": Setting("connects", recorded=True),
    "policies.*.max_tokens": _RECORDED, "policies.*.temperature": _RECORDED,
    "policies.*.seed": _RECORDED, "policies.*.json_mode": _RECORDED,
    "policies.*.decoding": _RECORDED, "policies.*.schema_style": _RECORDED,
    "policies.*.params": _RECORDED, "policies.*.layout": _RECORDED,
    "policies.*.prompt_cache": Setting("runs", recorded=True),  # the same reply, cheaper
    # a model: the rest
    "policies.*.max_response_bytes": PLAYS, "policies.*.retry_lists_moves": PLAYS,
    "policies.*.api_key_env": CONNECTS, "policies.*.ca_bundle": CONNECTS,
    "policies.*.client_cert": CONNECTS, "policies.*.client_key": CONNECTS,
    "policies.*.client_key_password_env": CONNECTS,
    "policies.*.headers": CONNECTS, "policies.*.headers_env": CONNECTS,
    "policies.*.idle_expiry_s": CONNECTS,
    "policies.*.max_connections": RUNS, "policies.*.price": RUNS,
    # a mock, a program, a scripted seat, a person
    "policies.*.faults": PLAYS, "policies.*.latency_ms": PLAYS,
    "policies.*.path": PLAYS,  # its file's SHA-256
    "policies.*.trusted": RUNS,  # whether it may run outside bwrap: not how it plays
    "policies.*.timeout_s": PLAYS, "policies.*.baseline": PLAYS, "policies.*.name": PLAYS,
    "policies.*.first_reply_s": PLAYS, "policies.*.decision_s": PLAYS,
    "policies.*.first_open_s": RUNS,  # when a clock starts if the page is not open
}
# fmt: on
"""Every setting of a run config, by dotted path (`*`: any one key), with its effect."""

ACCEPTED: tuple[str, ...] = tuple(path for path, s in SETTINGS.items() if s.accepted)
"""The paths a resumed league and a pool's next session take a change to: `connects`
and `runs`."""


def policy_settings() -> Iterator[tuple[str, Setting]]:
    """(key, setting) of every policy setting, in the order of the table."""
    for path, setting in SETTINGS.items():
        if path.startswith(_POLICY):
            yield path.removeprefix(_POLICY), setting


ASKED_AS: tuple[str, ...] = tuple(key for key, s in policy_settings() if s.recorded)
"""What a replay records of how a model policy was asked, in the order it records it."""

CONNECTION_SETTINGS: tuple[str, ...] = tuple(
    key for key, s in policy_settings() if s.effect == "connects"
)
"""A model policy's keys that decide how its endpoint is reached, never what it answers."""


def pool_takes(*kinds: PoolTakes) -> tuple[str, ...]:
    """The paths whose setting a pool takes as one of `kinds`."""
    return tuple(path for path, s in SETTINGS.items() if s.pool in kinds)
