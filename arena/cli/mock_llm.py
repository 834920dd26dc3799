"""`arena mock-llm`: the local mock server speaking the OpenAI, Anthropic and Gemini
protocols, with seeded faults, latency and outages."""

from __future__ import annotations

import argparse
import sys

from arena.cli import argtypes

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena mock-llm`; its handler is `handle`."""
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default %(default)s)"
    )
    parser.add_argument(
        "--port",
        type=argtypes.port,
        default=8765,
        help="the port to listen on (default %(default)s)",
    )
    parser.add_argument("--latency-ms", type=int, default=0, help="added to every answer")
    parser.add_argument(
        "--faults",
        default="",
        help='seeded fault rates, e.g. "429=0.05,500=0.02,529=0.01,hang=0.01,slow=0.02,'
        'garbage=0.02,truncated=0.02,prose=0.02,illegal=0.05"',
    )
    parser.add_argument("--slow-ms", type=int, default=2000, help="how late a `slow` answer comes")
    parser.add_argument(
        "--seed", type=int, default=0, help="seeds the faults and answers (default %(default)s)"
    )
    parser.add_argument(
        "--reasoning",
        choices=("off", "apart", "think"),
        default="off",
        help="answers carry reasoning: in the protocol's own field or blocks (apart), or as a "
        "leading <think> block (think)",
    )
    parser.add_argument(
        "--down-after",
        type=float,
        metavar="S",
        help="an outage: after S seconds the port closes (connections refused)",
    )
    parser.add_argument(
        "--down-for", type=float, default=8.0, metavar="S", help="how long it is down"
    )
    parser.add_argument(
        "--models",
        default="",
        metavar="A,B",
        help="model names its model list gives beside mock-1 (it answers for any name all the "
        "same; the preflight warns of a configured model the list lacks)",
    )
    parser.add_argument("--flap", action="store_true", help="go down and come back again and again")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena mock-llm` with the parsed `args`; its exit status."""
    from arena.mock_llm import (  # loaded when this subcommand runs: `import arena.cli` loads no arena module
        main_mock_llm,
        parse_faults,
    )

    try:
        parse_faults(args.faults)
    except ValueError as exc:
        print(f"arena mock-llm: --faults: {exc}", file=sys.stderr)
        return 2
    from arena.asgi import listen

    # Bound and let go at once: a busy port is refused (one line, by main) before the
    # banner says it serves; the server binds it again in a moment.
    listen(args.host, args.port, what="mock LLM", flag="--port").close()
    print(
        f"mock LLM on http://{args.host}:{args.port} (OpenAI: /v1/chat/completions, "
        f"Anthropic: /v1/messages, Gemini: /v1beta/models/M:generateContent); Ctrl-C stops it"
    )
    from arena.mock_llm.outage import (
        Outage,  # loaded when this subcommand runs: `import arena.cli` loads no arena module
    )

    outage = None if args.down_after is None else Outage(args.down_after, args.down_for, args.flap)
    main_mock_llm(
        args.host,
        args.port,
        args.latency_ms,
        args.faults,
        args.slow_ms,
        args.seed,
        outage,
        args.reasoning,
        [m.strip() for m in args.models.split(",") if m.strip()],
    )
    return 0
