"""Capped bodies: the arena's peak memory with endless response bodies in flight.

    python -m bench.bodies [--in-flight 8] [--rounds 5]

The hostile test server (`tests/chaos/hostile.py`, its own process) answers
every request with an endless chunked body as fast as the socket takes it;
`--in-flight` requests read it at once, `--rounds` times over, each stopping at
the default `max_response_bytes` (4 MiB). Printed: the process's peak RSS
against the target of 300 MB, and how each request ended.
"""

from __future__ import annotations

import argparse
import resource
from collections import Counter

import anyio
from rich.console import Console
from rich.table import Table

import providers
from providers import CompletionRequest, ProviderSpec
from tests.chaos.hostile import hostile_process

TARGET_MB = 300


async def _rounds(in_flight: int, rounds: int) -> Counter[str]:
    ended: Counter[str] = Counter()
    async with hostile_process() as url, providers.Providers() as pool:
        client = pool.client(
            ProviderSpec(protocol="openai", model="m", base_url=f"{url}/endless/v1")
        )

        async def one() -> None:
            try:
                await client.complete(
                    CompletionRequest("x", 16), deadline=anyio.current_time() + 30
                )
                ended["a completion (!)"] += 1
            except providers.ProviderError as error:
                ended[
                    type(error).__name__ + (": over the cap" if "over" in str(error) else "")
                ] += 1

        for _ in range(rounds):
            async with anyio.create_task_group() as tg:
                for _ in range(in_flight):
                    tg.start_soon(one)
    return ended


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ended = anyio.run(_rounds, args.in_flight, args.rounds)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    table = Table(title=f"{args.in_flight} endless bodies in flight, {args.rounds} rounds")
    for column in ("figure", "value", "target"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    table.add_row("peak RSS", f"{peak:.0f} MB", f"< {TARGET_MB} MB")
    table.add_row("RSS before the first request", f"{before:.0f} MB", "")
    for how, count in sorted(ended.items()):
        table.add_row(f"requests ended: {how}", str(count), "")
    Console(width=100).print(table)


if __name__ == "__main__":
    main()
