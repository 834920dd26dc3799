"""`arena author`: a model writes a program from the game's brief; the check decides.

For each authoring policy, at once: the brief (`authors.brief`) is sent as one
request, through the same seat a game decision uses (`arena.seats.llm.LlmSeat`:
providers, retries, redaction, price, the run's response cache) with the
`[author]` table's token cap and `author_s` per request; a `kind = "mock"`
policy answers in-process (`authors.mock`). The first fenced code block of the
reply is the program. It is checked as a program is registered (the static
check, then two games on one seed against the baseline, which must be the
same); on a refusal the model is asked again, shown its program and the
check's message, at most `revisions` times. A request that fails ends that
author's attempts. The run's `budget_usd` stops new requests once spent.

What is written, in `out`: `<policy>-<game>.py` when a program passed, and
always `<policy>-<game>.json`, the manifest (`authors.manifest`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
import structlog

import games
import providers
from arena.authors.brief import Brief, brief_for
from arena.authors.manifest import manifest_path
from arena.authors.mock import program_reply
from arena.config import Config, ConfigError, LlmPolicy, MockPolicy
from arena.play.fingerprint import fingerprint, played_as
from arena.play.protocol import Answer, Question, SeatFailure
from arena.programs import check_program
from arena.record.replay import write_atomic
from arena.redact import Redactor

__all__ = [
    "AuthorAttempt",
    "Authored",
    "authoring_policies",
    "default_out",
    "extract_program",
    "write_programs",
]

log = structlog.get_logger("arena.authors")

_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\r?\n(.*?)```", re.DOTALL)


@dataclass
class AuthorAttempt:
    """One request for a program and what the check said of its reply."""

    n: int
    prompt: str
    reply: str | None
    verdict: str
    """`passed`, `refused` (the check refused the program), `no_code` (no code block) or
    `failed` (the request got no reply)."""
    message: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    cached: bool = False
    latency_s: float = 0.0
    sha256: str | None = None


@dataclass
class Authored:
    """One author's program for one game, as `arena author` leaves it."""

    policy: str
    game: str
    program: Path
    brief: Brief
    verdict: str = "refused"
    """`passed`, `refused`, `failed` (a request failed) or `budget` (budget_usd spent)."""
    attempts: list[AuthorAttempt] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def sha256(self) -> str | None:
        """The passed program's SHA-256 (None unless it passed)."""
        return self.attempts[-1].sha256 if self.verdict == "passed" and self.attempts else None

    @property
    def revisions(self) -> int:
        """How many times the program was asked for again."""
        return max(0, len(self.attempts) - 1)

    @property
    def tokens(self) -> int:
        """Tokens in and out over every attempt."""
        return sum(a.tokens_in + a.tokens_out for a in self.attempts)

    @property
    def cost_usd(self) -> float | None:
        """The attempts' cost (None when no reply had a price)."""
        priced = [a.cost_usd for a in self.attempts if a.cost_usd is not None]
        return sum(priced) if priced else None


def authoring_policies(config: Config, names: Sequence[str] = ()) -> list[str]:
    """The policies that author: those `names`, or every `llm` and `mock` policy."""
    kinds = (LlmPolicy, MockPolicy)
    if not names:
        found = [n for n, p in config.policies.items() if isinstance(p, kinds)]
        if not found:
            raise ConfigError("the config has no llm or mock policy to write a program")
        return found
    for name in names:
        spec = config.policies.get(name)
        if spec is None:
            raise ConfigError(
                f"--policy {name}: no such policy (known: {', '.join(config.policies)})"
            )
        if not isinstance(spec, kinds):
            raise ConfigError(
                f"--policy {name} is a {spec.kind} policy: only llm and mock ones author"
            )
    return list(dict.fromkeys(names))


def extract_program(reply: str) -> str | None:
    """The first fenced code block of a reply, or None."""
    found = _FENCE.search(reply)
    return found.group(1) if found else None


async def write_programs(
    config: Config, game: str, names: Sequence[str], out: Path, *, redactor: Redactor
) -> list[Authored]:
    """Every policy of `names` writes a program of `game` into `out`, all at once."""
    if game not in games.program_games():
        raise ConfigError(
            f"--game {game}: programs do not play it (they play {', '.join(games.program_games())})"
        )
    await anyio.Path(out).mkdir(parents=True, exist_ok=True)
    brief = brief_for(game, node_budget=config.run.node_budget)
    spent = _Spent(config.run.budget_usd)
    results = [Authored(n, game, out / f"{n}-{game}.py", brief) for n in names]
    async with providers.Providers(trust=config.run.trust) as pool:
        cache = None
        if config.run.response_cache:
            from arena.seats.cache import run_cache  # a cached run only

            cache = run_cache(config, redactor)
        async with anyio.create_task_group() as tg:
            for authored in results:
                ask = _asker(config, authored.policy, pool, redactor, cache)
                tg.start_soon(_author, config, authored, ask, spent, redactor)
    return results


@dataclass
class _Spent:
    budget_usd: float | None
    usd: float = 0.0

    @property
    def over(self) -> bool:
        return self.budget_usd is not None and self.usd >= self.budget_usd


async def _author(
    config: Config, authored: Authored, ask: Any, spent: _Spent, redactor: Redactor
) -> None:
    """Ask, check, ask again with the check's message, at most `revisions` times."""
    started = time.monotonic()
    prompt = authored.brief.text
    table = config.author
    game = games.load(authored.game)
    for n in range(1, table.revisions + 2):
        if spent.over:
            authored.verdict = "budget"
            break
        question = Question(prompt, "program", n, game, None, 0, ())
        asked = time.monotonic()
        try:
            answer: Answer = await ask(question, deadline=anyio.current_time() + table.author_s)
        except SeatFailure as failure:
            authored.attempts.append(
                AuthorAttempt(
                    n,
                    prompt,
                    None,
                    "failed",
                    f"{failure.cause}: {failure.detail}",
                    latency_s=time.monotonic() - asked,
                )
            )
            authored.verdict = "failed"
            break
        attempt = _attempt(n, prompt, answer, time.monotonic() - asked)
        spent.usd += attempt.cost_usd or 0.0
        code = extract_program(answer.text)
        if code is None:
            attempt.verdict, attempt.message = "no_code", "the reply has no fenced code block"
        else:
            await _check(config, authored, attempt, code)
        authored.attempts.append(attempt)
        log.info(
            "program_authored",
            policy=authored.policy,
            game=authored.game,
            attempt=n,
            verdict=attempt.verdict,
        )
        if attempt.verdict == "passed":
            authored.verdict = "passed"
            break
        prompt = _revision(authored.brief, code, attempt.message)
    authored.seconds = time.monotonic() - started
    _write(config, authored, redactor)


def _attempt(n: int, prompt: str, answer: Answer, latency_s: float) -> AuthorAttempt:
    usage = answer.usage or {}
    tokens_in = sum(int(usage.get(k) or 0) for k in ("input_uncached", "cache_read", "cache_write"))
    return AuthorAttempt(
        n,
        prompt,
        answer.text,
        "refused",
        "",
        tokens_in,
        int(usage.get("output") or 0),
        answer.cost_usd,
        answer.cached,
        latency_s,
    )


async def _check(config: Config, authored: Authored, attempt: AuthorAttempt, code: str) -> None:
    """The registration check of `code`, its verdict and message in `attempt`."""
    trial = authored.program.with_name(f".{authored.program.stem}.attempt{attempt.n}.py")
    trial.write_text(code, encoding="utf-8")
    try:
        report = await check_program(
            trial,
            authored.game,
            node_budget=config.run.node_budget,
            sandbox=config.run.sandbox,
            trusted=False,  # a model's program: never trusted
        )
    finally:
        trial.unlink(missing_ok=True)
    attempt.sha256 = hashlib.sha256(code.encode()).hexdigest()
    if report.passed:
        attempt.verdict, attempt.message = "passed", "passed the static check and the two runs"
        authored.program.write_text(code, encoding="utf-8")
    else:
        attempt.verdict = "refused"
        attempt.message = "; ".join(
            p.replace(str(trial), authored.program.name) for p in report.problems
        )


def _revision(brief: Brief, code: str | None, message: str) -> str:
    """The brief again, with the refused program and why it was refused."""
    shown = f"```python\n{code}```" if code is not None else "(no code block)"
    return (
        f"{brief.text}\nYOUR LAST REPLY\n{shown}\n\nWAS REFUSED\n{message}\n\n"
        "Write the whole program again, corrected, in the reply format above.\n"
    )


def _write(config: Config, authored: Authored, redactor: Redactor) -> None:
    """The manifest, always; the program only if it passed (a stale one is removed)."""
    if authored.verdict != "passed":
        authored.program.unlink(missing_ok=True)
    spec = config.policies[authored.policy]
    played = played_as(spec, templates={"author": authored.brief.sha256})
    manifest = {
        "program": authored.program.name,
        "game": authored.game,
        "author_policy": authored.policy,
        "author": spec.author,
        "fingerprint": fingerprint(played),
        "played_as": played,
        "brief_sha256": authored.brief.sha256,
        "verdict": authored.verdict,
        "sha256": authored.sha256,
        "revisions": authored.revisions,
        "seconds": round(authored.seconds, 3),
        "attempts": [redactor.value(asdict(a)) for a in authored.attempts],
    }
    write_atomic(manifest_path(authored.program), json.dumps(manifest, indent=2) + "\n")


def _asker(
    config: Config, name: str, pool: providers.Providers, redactor: Redactor, cache: Any
) -> Any:
    """How policy `name` is asked for a program: its model's seat, or the in-process mock."""
    spec = config.policies[name]
    if isinstance(spec, MockPolicy):
        return _MockAuthor(name, spec).ask
    assert isinstance(spec, LlmPolicy)  # authoring_policies let only these two through
    from arena.seats.llm import LlmSeat, provider_specs  # the HTTP stack: model authors only

    asked = spec.model_copy(update={"max_tokens": config.author.max_tokens})
    replicas = [(pool.client(p), None) for p in provider_specs(asked)]
    return LlmSeat(replicas[0][0], asked, redactor, None, replicas[1:], cache).ask


class _MockAuthor:
    """A mock policy writing programs in-process, its faults drawn at its rates."""

    def __init__(self, name: str, spec: MockPolicy) -> None:
        self.name, self.spec = name, spec

    async def ask(self, question: Question, *, deadline: float) -> Answer:
        digest = hashlib.sha256(f"{self.name}\n{question.prompt}".encode()).hexdigest()
        rng = random.Random(digest)
        fault = self._fault(rng)
        if self.spec.latency_ms:
            await anyio.sleep(self.spec.latency_ms / 1000)
        if fault == "silent":
            await anyio.sleep(max(0.0, deadline - anyio.current_time()))
            raise SeatFailure("timeout", "the mock author did not reply before the deadline")
        if fault == "error":
            raise SeatFailure("provider_error", "mock provider failed (HTTP 500 from the mock)")
        program_fault = {"empty": "no_code", "unreadable": "no_code", "slow": "slow"}.get(
            fault or ""
        )
        if fault == "illegal":
            program_fault = rng.choice(("syntax", "forbidden", "nondeterministic"))
        text = "" if fault == "empty" else program_reply(rng, program_fault)
        words = len(question.prompt.split())
        usage = {"input_uncached": words, "output": len(text.split())}
        return Answer(text=text, provider="mock", model="mock", usage=usage)

    def _fault(self, rng: random.Random) -> str | None:
        roll = rng.random()
        for name, rate in self.spec.faults.items():
            if roll < rate:
                return name
            roll -= rate
        return None


def default_out(config: Config) -> Path:
    """Where authored programs go by default: `authored/` beside the config file."""
    return config.folder / "authored"
