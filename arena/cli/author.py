"""`arena author CONFIG --game G`: each model of a config writes a program of the game;
`arena author --show-brief --game G` prints the brief it is given."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli import argtypes
from arena.cli.console import stdout

if TYPE_CHECKING:
    from arena.authors import Authored
    from arena.programs import SandboxMode

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena author`; its handler is `handle`."""
    parser.add_argument(
        "config", type=Path, nargs="?", help="a run config, e.g. configs/authors.toml"
    )
    parser.add_argument("--game", required=True, help="a game programs play, e.g. connect-four")
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="P",
        help="an llm or mock policy to write a program (repeatable; default: every one)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where the programs and their manifests go (default: authored/ beside the "
        "config); never a folder `arena view` publishes",
    )
    parser.add_argument("--show-brief", action="store_true", help="print the brief, ask nothing")
    parser.add_argument(
        "--mock-llm",
        action="store_true",
        help="serve the mock LLM on 127.0.0.1:PORT meanwhile and point every llm policy at it",
    )
    parser.add_argument(
        "--mock-port",
        type=argtypes.port,
        default=8765,
        metavar="PORT",
        help="the port of --mock-llm's server (default %(default)s)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena author` with the parsed `args`; its exit status (1 if a program was refused)."""
    import anyio  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    import arena.logs
    from arena.authors import authoring_policies, brief_for, default_out, write_programs
    from arena.cli.playing import model_names, served_by_mock
    from arena.config import ConfigError, RunTable, load_config
    from arena.redact import Redactor

    if args.show_brief:
        budget = load_config(args.config).run.node_budget if args.config else None
        node_budget = budget or RunTable.model_fields["node_budget"].default
        try:
            print(brief_for(args.game, node_budget=node_budget).text, end="")
        except ValueError as exc:
            raise ConfigError(f"--game {args.game}: {exc}") from exc
        return 0
    if args.config is None:
        raise ConfigError("arena author needs a CONFIG (or --show-brief --game G)")
    config = load_config(args.config, keys=not args.mock_llm)
    _check_sandbox(config.run.sandbox)
    names = authoring_policies(config, args.policy)
    out = args.out or default_out(config)
    arena.logs.configure_logging(None, console=True, verbose=False)

    async def authored() -> list[Authored]:
        redactor = Redactor(config.secrets())
        if not args.mock_llm:
            return await write_programs(config, args.game, names, out, redactor=redactor)
        from arena.mock_llm import build_app, serving  # the mock server: only when asked

        app = build_app(models=model_names(config))
        async with serving(app, port=args.mock_port, flag="--mock-port") as url:
            served = served_by_mock(config, url)
            return await write_programs(served, args.game, names, out, redactor=redactor)

    results = anyio.run(authored)
    _print(results, out)
    return 0 if all(r.verdict == "passed" for r in results) else 1


def _check_sandbox(sandbox: SandboxMode) -> None:
    """Before any model is asked: its programs, never trusted, can be checked here."""
    from arena.config import ConfigError
    from arena.programs import SandboxUnavailable, choose_sandbox

    try:
        choose_sandbox(sandbox, trusted=False)
    except SandboxUnavailable as exc:
        raise ConfigError(f"run.sandbox: {exc}") from exc


def _print(results: list[Authored], out: Path) -> None:
    from rich.table import Table

    table = Table(title=f"programs written into {out}")
    for header in ("author", "verdict", "revisions", "tokens", "cost $", "time s", "sha256"):
        table.add_column(header, justify="left" if header in ("author", "verdict") else "right")
    for r in results:
        cost = "-" if r.cost_usd is None else f"{r.cost_usd:.4f}"
        table.add_row(
            r.policy,
            r.verdict,
            str(r.revisions),
            f"{r.tokens:,}",
            cost,
            f"{r.seconds:.1f}",
            (r.sha256 or "-")[:12],
        )
    stdout().print(table)
    for r in results:
        if r.verdict != "passed" and r.attempts:
            last = r.attempts[-1]
            print(f"{r.policy}: {r.verdict}: {last.message[:300]}", file=sys.stderr)
