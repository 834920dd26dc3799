"""`arena prompt --game GAME --seed N`: the exact prompt a seat would get at a ply."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arena.cli import argtypes

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena prompt`; its handler is `handle`."""
    parser.add_argument("--game", required=True, help="a game name (`arena games`), or rotate")
    parser.add_argument(
        "--seed",
        type=argtypes.match_seed,
        required=True,
        help="the match seed, >= 1 (rotate resolves by it); backgammon deals card 1 of a "
        '`dice = "derived"` run with this master seed, unless --card-seed names a card',
    )
    parser.add_argument(
        "--card-seed",
        type=argtypes.card_seed,
        metavar="HEX",
        help="backgammon: the card's seed, 64 hex digits (e.g. one revealed in ledger.jsonl)",
    )
    parser.add_argument(
        "--ply", type=int, default=1, help="the ply to show (baseline plays up to it)"
    )
    parser.add_argument("--game-index", type=int, choices=(1, 2), default=1)
    parser.add_argument(
        "--seat", type=int, choices=(0, 1), help="which seat, in a simultaneous game"
    )
    parser.add_argument("--config", type=Path, help="a run config, to use a policy's template")
    parser.add_argument("--policy", help="the policy whose template to use (needs --config)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena prompt` with the parsed `args`; its exit status."""
    import games  # loaded when this subcommand runs: `import arena.cli` loads no arena module
    from arena.config import ConfigError
    from arena.play.preview import preview_prompt, shown, stable_note
    from arena.play.prompts import PromptError

    known = [*games.names(), "rotate"]
    if args.game not in known:
        raise ConfigError(f"--game: unknown game {args.game!r} (known: {', '.join(known)})")
    if args.policy is not None and args.config is None:
        raise ConfigError(
            f"--policy {args.policy} is a policy of a run config: add --config CONFIG"
        )
    schema: list[dict[str, object]] = []
    try:
        prompt, chat = preview_prompt(
            game=args.game,
            seed=args.seed,
            ply=args.ply,
            game_index=args.game_index,
            seat=args.seat,
            config=args.config,
            policy=args.policy,
            card_seed=args.card_seed,
            schema_out=schema,
        )
    except PromptError as exc:  # the policy's template: missing, or one the game cannot use
        where = f"{args.config}: policies.{args.policy}.prompt: " if args.policy else ""
        raise ConfigError(f"{where}{exc}") from exc
    sys.stdout.write(shown(prompt, chat))
    for sent in schema:
        import json  # a schema preview only

        kind = sent.pop("kind")
        print(f'\n--- decoding = "schema" ({kind}): the request\'s body also holds ---')
        print(json.dumps(sent, indent=2))
    if not chat:
        print(f"arena prompt: {stable_note(prompt)}", file=sys.stderr)
    return 0
