"""A real model against the baseline: how often it falls back, why, and what it was refused.

    python -m bench.real_model --base-url http://127.0.0.1:8080/v1 [--model NAME]
        [--games connect-four,hex,stratego,backgammon] [--matches 1] [--out DIR]
    python -m bench.real_model --read runs/local-model

Writes a run config of the model (an OpenAI-compatible endpoint; `--model`
defaults to the first one its /models lists) against each game's own
baseline (the tactician in the board games), plays it with `arena run`
(preflight on), then reads the replays and prints, per game family:

- the model's decisions by how they were made (first reply, retry) and its
  fallbacks by cause, as counts and shares of its decisions;
- tokens in and out (attempt usage), and the latency p50/p95 of its decisions;
- every refused reply (cause `empty`, `unreadable`, `illegal` or `truncated`)
  that holds, as a whole token, one of the legal moves its prompt listed
  (a run with `record_prompts = false` has none to list), with the reader's
  message, for a person to judge whether the reply should have been read.
  A token is a run of the reply between whitespace and JSON or markdown
  punctuation, normalised as the game's reader does (the board games and
  Stratego: lower-case, a-z and 0-9 only; backgammon: a play's moves, in any
  order, side by side). Identical refusals are listed once, with a count.

`--read RUN` prints the same for a run already played (every model seat of
it counts). `--games` takes game names and families (`board` is the four
board games). On a CPU the board games are quick, a backgammon card (two
whole games) is slow, and the battle and Stratego are slow too: `--wall-s`
caps their wall clock (a game it stops is adjudicated by standing). Ctrl-C
stops the run as `arena run` stops, and the games played are still counted.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

import games
from arena.record.replay import AttemptRecord, DecisionRecord, Replay, load_replay
from games.core import normalise_token

REFUSED = ("empty", "unreadable", "illegal", "truncated")
"""Attempt causes where a reply came and the arena would not play it."""
REPLY_CUT = 300
LEGAL_LINE = "LEGAL MOVES: "
STOPPED_EARLY = 130
"""`arena run`'s exit status when a stop (Ctrl-C) ended the run before its schedule."""
_TOKEN_SPLIT = re.compile(r"[\s\"'`{}\[\]:,;()<>=|]+")
_BACKGAMMON_SPLIT = re.compile(r"[\s\"'`{}\[\]:,;、<>=|]+")


@dataclass(frozen=True)
class Asked:
    """One decision of a model seat, as the figures need it."""

    family: str
    source: str
    """`reply`, `retry` or `fallback`."""
    cause: str | None
    """The fallback's cause; None when the seat made the move itself."""
    latency_s: float
    tokens_in: int
    tokens_out: int
    attempt_causes: tuple[str | None, ...]
    """Each attempt's cause, None for the one that gave the move."""


@dataclass(frozen=True)
class Refusal:
    """A refused reply that holds a legal move of its position."""

    family: str
    where: str
    cause: str
    reply: str
    error: str
    legal_found: tuple[str, ...]


@dataclass(frozen=True)
class Summary:
    """One family's figures."""

    decisions: int
    by_outcome: dict[str, int]
    """`first reply`, `retry` and `fallback: <cause>` -> decisions."""
    attempt_causes: dict[str, int]
    """Cause -> attempts that failed with it."""
    tokens_in: int
    tokens_out: int
    attempts: int
    latency_p50_s: float
    latency_p95_s: float

    @property
    def fallbacks(self) -> int:
        """Decisions the baseline made for the model, whatever the cause."""
        return sum(n for o, n in self.by_outcome.items() if o.startswith("fallback"))


# -- pure pieces ---------------------------------------------------------------


def legal_from_prompt(prompt: str) -> tuple[str, ...]:
    """The legal moves a prompt lists on its last `LEGAL MOVES:` line (a retry's repeats the
    first's); none where it lists none (Stratego's setup, the battle)."""
    lines = [line for line in prompt.splitlines() if line.startswith(LEGAL_LINE)]
    listed = lines[-1].removeprefix(LEGAL_LINE).strip() if lines else ""
    if listed.startswith("("):  # "(see the rules)"
        return ()
    return tuple(move.strip() for move in listed.split(",") if move.strip())


def board_tokens(reply: str) -> set[str]:
    """The reply's tokens as the board games' and Stratego's reader normalises a move."""
    return {t for t in (normalise_token(part) for part in _TOKEN_SPLIT.split(reply)) if t}


def backgammon_tokens(reply: str) -> list[str]:
    """The reply's moves in order, tidied as backgammon's reader does (width and case
    folded, `/`, `*` and `(n)` glued to their points), with hit marks dropped."""
    text = unicodedata.normalize("NFKC", reply).lower()
    text = re.sub(r"\s*/\s*", "/", text)
    text = re.sub(r"\s*\(\s*(\d+)\s*\)", r"(\1)", text.replace("*", ""))
    return [t.strip(".") for t in _BACKGAMMON_SPLIT.split(text) if t.strip(".")]


def legal_in_reply(reply: str, legal: Sequence[str], family: str) -> tuple[str, ...]:
    """The legal moves `reply` holds as whole tokens, in the order of `legal`."""
    if family == "backgammon":
        tokens = backgammon_tokens(reply)
        return tuple(m for m in legal if _holds_play(tokens, backgammon_tokens(m)))
    found = board_tokens(reply)
    return tuple(m for m in legal if normalise_token(m) in found)


def _holds_play(tokens: list[str], parts: list[str]) -> bool:
    """Whether the play's moves stand side by side in `tokens`, in any order."""
    width, wanted = len(parts), sorted(parts)
    return any(sorted(tokens[i : i + width]) == wanted for i in range(len(tokens) - width + 1))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile by linear interpolation (numpy's default); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def outcome_of(asked: Asked) -> str:
    """How a decision was made: `first reply`, `retry` or `fallback: <cause>`."""
    if asked.source == "fallback":
        return f"fallback: {asked.cause}"
    return "first reply" if asked.source == "reply" else "retry"


def summarise(asked: Iterable[Asked]) -> dict[str, Summary]:
    """Figures per family, in the order the families first appear."""
    grouped: dict[str, list[Asked]] = defaultdict(list)
    for a in asked:
        grouped[a.family].append(a)
    return {family: _summary(rows) for family, rows in grouped.items()}


def _summary(rows: list[Asked]) -> Summary:
    latencies = [a.latency_s for a in rows if a.attempt_causes]
    return Summary(
        decisions=len(rows),
        by_outcome=dict(Counter(outcome_of(a) for a in rows)),
        attempt_causes=dict(Counter(c for a in rows for c in a.attempt_causes if c is not None)),
        tokens_in=sum(a.tokens_in for a in rows),
        tokens_out=sum(a.tokens_out for a in rows),
        attempts=sum(len(a.attempt_causes) for a in rows),
        latency_p50_s=percentile(latencies, 50),
        latency_p95_s=percentile(latencies, 95),
    )


def group_refusals(refusals: Iterable[Refusal]) -> list[tuple[Refusal, int]]:
    """Identical refusals (family, cause, reply) once each, with how many there were, in
    the order they first came."""
    counts: Counter[tuple[str, str, str]] = Counter()
    first: dict[tuple[str, str, str], Refusal] = {}
    for r in refusals:
        key = (r.family, r.cause, r.reply)
        counts[key] += 1
        first.setdefault(key, r)
    return [(first[key], counts[key]) for key in first]


def expand_games(spec: str) -> list[str]:
    """Game names and families (`board`, `stratego`, ...) as a list of game names."""
    names, families = games.names(), games.families()
    chosen: list[str] = []
    for entry in (e.strip() for e in spec.split(",") if e.strip()):
        if entry in names:
            found = [entry]
        elif entry in families:
            found = [n for n in names if games.load(n).family == entry]
        else:
            raise SystemExit(
                f"unknown game or family {entry!r} (games: {', '.join(names)}; "
                f"families: {', '.join(families)})"
            )
        chosen += [n for n in found if n not in chosen]
    return chosen


# -- reading replays -----------------------------------------------------------


def _usage(attempt: AttemptRecord) -> tuple[int, int]:
    usage = attempt.usage or {}
    tokens_in = sum(usage.get(k) or 0 for k in ("input_uncached", "cache_read", "cache_write"))
    return tokens_in, usage.get("output") or 0


def read_replay(replay: Replay) -> tuple[list[Asked], list[Refusal]]:
    """The model seats' decisions of one replay, and their refusals holding a legal move
    (found only where the replay records its prompts)."""
    family = games.load(replay.game, **replay.params).family
    asked: list[Asked] = []
    refusals: list[Refusal] = []
    for record in replay.games:
        seats = replay.spectator.policies.get(str(record.index), [])
        mine = {i for i, name in enumerate(seats) if name in replay.models}
        causes = {(f.ply, f.seat): f.cause for f in record.fallbacks}
        for ply in record.plies:
            for d in (d for d in ply.decisions if d.seat in mine):
                asked.append(_asked(family, d, causes.get((ply.ply, d.seat))))
                for a in d.attempts:
                    if a.cause not in REFUSED:
                        continue
                    found = legal_in_reply(a.reply or "", legal_from_prompt(a.prompt or ""), family)
                    if found:
                        where = f"{replay.episode} g{record.index} ply {ply.ply} attempt {a.n}"
                        refusals.append(
                            Refusal(family, where, a.cause, a.reply or "", a.error, found)
                        )
    return asked, refusals


def _asked(family: str, d: DecisionRecord, cause: str | None) -> Asked:
    used = [_usage(a) for a in d.attempts]
    return Asked(
        family, d.source, cause, d.latency_s, sum(u[0] for u in used), sum(u[1] for u in used),
        tuple(a.cause for a in d.attempts),
    )  # fmt: skip


def read_run(run: Path) -> tuple[list[Asked], list[Refusal], list[str]]:
    """Every model seat's decisions and refusals in a run folder, and the model policies. A
    backgammon card cut by a stop counts with its finished game, which waits in
    `partial-cards/` until a resumed run stores the card."""
    asked: list[Asked] = []
    refusals: list[Refusal] = []
    models: set[str] = set()
    stored = sorted((run / "replays").glob("*.json"))
    cut = [p for p in sorted((run / "partial-cards").glob("*.json")) if not _stored(p, stored)]
    for path in [*stored, *cut]:
        replay = load_replay(path)
        models |= set(replay.models)
        more_asked, more_refused = read_replay(replay)
        asked += more_asked
        refusals += more_refused
    return asked, refusals, sorted(models)


def _stored(partial: Path, stored: list[Path]) -> bool:
    """Whether a partial card (`<episode>~a<attempt>.json`) has its replay among `stored`."""
    return any(p.stem == partial.stem.partition("~")[0] for p in stored)


# -- playing -------------------------------------------------------------------


def served_model(base_url: str) -> str:
    """The first model an OpenAI-compatible endpoint lists."""
    try:
        listed = httpx.get(f"{base_url.rstrip('/')}/models", timeout=10).json()["data"]
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        raise SystemExit(f"{base_url}/models did not list a model ({exc}): pass --model") from exc
    if not listed:
        raise SystemExit(f"{base_url}/models lists no model: pass --model")
    return str(listed[0]["id"])


def bench_config(args: argparse.Namespace, model: str, chosen: list[str]) -> str:
    """The run config, as TOML text (JSON's scalars and string lists are TOML's too)."""
    first, retry, whole = args.deadlines
    tables: dict[str, dict[str, Any]] = {
        "run": {"name": "real-model", "seed": 3, "games": chosen, "matches": args.matches,
                "concurrency": args.concurrency},
    }  # fmt: skip
    for name in chosen:
        table = {"first_reply_s": first, "retry_s": retry, "decision_s": whole}
        if name == "battle":
            table["map_size"] = 31  # the skirmish map
        if args.wall_s is not None and name in ("battle", "stratego"):
            table["episode_wall_s"] = args.wall_s
        tables[f"game.{name}"] = table
    tables["policies.baseline"] = {"kind": "scripted", "baseline": "default"}
    tables["policies.model"] = {
        "kind": "llm", "provider": "openai", "model": model, "base_url": args.base_url,
        "json_mode": args.json_mode, "max_tokens": args.max_tokens, "temperature": 0.2,
        "seed": 1, "max_connections": args.concurrency,
    }  # fmt: skip
    text = "".join(
        f"[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items()) + "\n"
        for name, table in tables.items()
    )
    tomllib.loads(text)  # a quoting slip fails here, not in the arena
    return text


def play(args: argparse.Namespace, folder: Path) -> tuple[Path, float]:
    """Write the config into `folder`, play it there; (run folder, wall seconds)."""
    chosen = expand_games(args.games)
    model = args.model or served_model(args.base_url)
    config, run, log = folder / "real-model.toml", folder / "run", folder / "arena.log"
    config.write_text(bench_config(args, model, chosen), encoding="utf-8")
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(run)]
    print(f"playing {', '.join(chosen)} with {model!r} at {args.base_url}; log: {log}", flush=True)
    began = time.monotonic()
    with log.open("w", encoding="utf-8") as handle:
        child = subprocess.Popen([*command, "--no-progress"], stdout=handle, stderr=handle)
        try:
            code = child.wait()
        except KeyboardInterrupt:  # the arena had the Ctrl-C too: its games get their grace
            code = child.wait()
    elapsed = time.monotonic() - began
    if code == STOPPED_EARLY:
        print("the run was stopped early: the figures are those of the games played", flush=True)
    elif code != 0:
        tail = log.read_text(encoding="utf-8").splitlines()[-20:]
        raise SystemExit(f"arena run failed (exit {code}):\n" + "\n".join(tail))
    return run, elapsed


# -- printing ------------------------------------------------------------------


def _share(n: int, of: int) -> str:
    return f"{n} ({n / of:.0%})" if of else str(n)


def _by_family(title: str, first: str, summaries: dict[str, Summary]) -> Table:
    table = Table(title=title, title_justify="left", min_width=64)
    table.add_column(first)
    for family in summaries:
        table.add_column(family, justify="right")
    return table


def outcome_table(summaries: dict[str, Summary]) -> Table:
    """Decisions by how they were made, fallbacks by cause, per family."""
    table = _by_family("the model's decisions (share of them)", "how", summaries)
    seen = {o for s in summaries.values() for o in s.by_outcome} | {"first reply", "retry"}
    table.add_row("decisions", *(str(s.decisions) for s in summaries.values()))
    for outcome in sorted(seen, key=_outcome_order):
        table.add_row(
            outcome,
            *(_share(s.by_outcome.get(outcome, 0), s.decisions) for s in summaries.values()),
        )
    table.add_row(
        "fallbacks in all", *(_share(s.fallbacks, s.decisions) for s in summaries.values())
    )
    return table


def attempt_table(summaries: dict[str, Summary]) -> Table:
    """Failed attempts by cause, per family (a retry that worked hides its first one)."""
    table = _by_family("the model's failed attempts (share of its attempts)", "cause", summaries)
    for cause in sorted({c for s in summaries.values() for c in s.attempt_causes}):
        table.add_row(
            cause, *(_share(s.attempt_causes.get(cause, 0), s.attempts) for s in summaries.values())
        )
    return table


def usage_table(summaries: dict[str, Summary]) -> Table:
    """Tokens and latency, per family."""
    table = Table(
        title="tokens and latency of the model's decisions", title_justify="left", min_width=64
    )
    for column in ("family", "attempts", "tokens in", "tokens out", "out/attempt", "p50", "p95"):
        table.add_column(column, justify="left" if column == "family" else "right")
    for family, s in summaries.items():
        table.add_row(
            family, str(s.attempts), f"{s.tokens_in:,}", f"{s.tokens_out:,}",
            f"{s.tokens_out / s.attempts:.0f}" if s.attempts else "-",
            f"{s.latency_p50_s:.1f} s", f"{s.latency_p95_s:.1f} s",
        )  # fmt: skip
    return table


def print_refusals(console: Console, refusals: list[Refusal]) -> None:
    """Each distinct refused reply holding a legal move, with the reader's message."""
    grouped = group_refusals(refusals)
    console.print(
        f"refused replies holding a legal move: {len(refusals)} ({len(grouped)} distinct)"
    )
    for r, count in grouped:
        reply = json.dumps(r.reply[:REPLY_CUT], ensure_ascii=False)
        cut = " (cut)" if len(r.reply) > REPLY_CUT else ""
        more = f" x{count}" if count > 1 else ""
        console.print(
            f"- [{r.family}] {r.cause}{more}, first at {r.where}; holds {', '.join(r.legal_found)}\n"
            f"  reply:  {reply}{cut}\n  reader: {r.error[:200]}",
            markup=False,
            highlight=False,
        )


def _outcome_order(outcome: str) -> tuple[int, str]:
    return ({"first reply": 0, "retry": 1}.get(outcome, 2), outcome)


def _deadlines(text: str) -> tuple[float, float, float]:
    parts = [float(p) for p in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"{text!r}: give FIRST,RETRY,WHOLE seconds, e.g. 30,20,60")
    return parts[0], parts[1], parts[2]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. .../v1")
    source.add_argument("--read", type=Path, metavar="RUN", help="a run folder already played")
    parser.add_argument("--model", help="the model name (default: the first /models lists)")
    parser.add_argument("--games", default="connect-four,hex,stratego,backgammon")
    parser.add_argument("--matches", type=int, default=1, help="matches per game (2 games each)")
    parser.add_argument("--out", type=Path, help="keep the config and run here (default: a temp)")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--deadlines", type=_deadlines, default=(30.0, 20.0, 60.0))
    parser.add_argument("--wall-s", type=float, help="wall clock of a Stratego game or battle")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--no-json-mode", dest="json_mode", action="store_false")
    args = parser.parse_args()
    console = Console(width=120)
    if args.read is not None:
        asked, refusals, models = read_run(args.read)
        console.print(f"{args.read}: model policies {', '.join(models) or 'none'}")
    else:
        with tempfile.TemporaryDirectory() as temp:
            folder = args.out or Path(temp)
            folder.mkdir(parents=True, exist_ok=True)
            run, elapsed = play(args, folder)
            asked, refusals, _ = read_run(run)
        console.print(f"played in {elapsed:.0f} s")
    summaries = summarise(asked)
    for table in (outcome_table(summaries), attempt_table(summaries), usage_table(summaries)):
        console.print(table)
    print_refusals(console, refusals)


if __name__ == "__main__":
    main()
