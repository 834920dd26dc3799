"""What a run shows: the console on stderr (made when first used), standard output as wide
as the terminal, the live progress bar, and plain progress lines where there is no bar."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console  # rich: only a console that shows something

    from arena.league.summary import RunResult

__all__ = ["ProgressLines", "Stderr", "progress_bar", "stdout"]


class Stderr:
    """The run's console on stderr, made when first used: a run without a live display
    says nothing before its first game, and does not wait for rich to start it."""

    def __init__(self) -> None:
        self._console: Console | None = None

    @property
    def rich(self) -> Console:
        """The rich console itself."""
        if self._console is None:
            from rich.console import Console  # rich: only a console that shows something

            self._console = Console(stderr=True)
        return self._console

    def print(self, *objects: object, **options: Any) -> None:
        """`Console.print` on stderr."""
        self.rich.print(*objects, **options)


def stdout() -> Console:
    """Standard output as wide as the terminal; written to a file or a pipe, 160 columns
    (or `COLUMNS`), so that a saved report reads as a wide terminal shows it."""
    from rich.console import Console  # rich: only a console that shows something

    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(width=160)


@contextmanager
def progress_bar(
    console: Stderr, show: bool, name: str, total: int
) -> Iterator[Callable[..., object]]:
    """A live progress bar on the console, moved by the function it yields (its keywords:
    completed, total, in_flight, fallbacks); without `show`, a function that does nothing."""
    if not show:
        yield lambda **fields: None
        return
    from rich.progress import (  # rich: only a console that shows progress
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("in flight {task.fields[in_flight]} | fallbacks {task.fields[fallbacks]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console.rich) as progress:
        task = progress.add_task(name, total=total, in_flight=0, fallbacks=0)
        yield functools.partial(progress.update, task)


class ProgressLines:
    """Without a live display (no terminal, or --no-progress), a plain line of progress
    every `EVERY_S` seconds and at the end, so a log of a long run shows it moving: `maybe`
    at every change, `tick` on a timer for the long games between changes."""

    EVERY_S = 30.0
    TICK_S = 1.0
    """How often `tick` looks."""

    def __init__(self, console: Stderr, name: str, *, json_lines: bool = False) -> None:
        self.console = console
        self.name = name
        self.json_lines = json_lines
        """Log each line as a `progress` event instead (`--log-format json`)."""
        self.starting = True
        self.started = time.monotonic()
        self.last = self.started
        self._latest: tuple[RunResult, int] | None = None
        self._said = ""

    def maybe(self, result: RunResult, total: int, *, every_s: float | None = None) -> None:
        """A line for `result` of `total` episodes, if `every_s` (`EVERY_S`) passed or the
        run is done."""
        self._latest = result, total
        done = result.played + result.skipped + len(result.failed)
        now = time.monotonic()
        if now - self.last < (self.EVERY_S if every_s is None else every_s) and done < total:
            return
        fallbacks = f"{result.fallbacks_before + result.fallbacks} fallbacks"
        if result.fallbacks_before:
            fallbacks += f" ({result.fallbacks} this session)"
        counts = (
            f"{self.name}: {done}/{total} episodes done, {result.in_flight} in flight, {fallbacks}"
        )
        if done >= total and counts == self._said:
            return  # the end, said already
        self.last, self._said = now, counts
        if self.json_lines:
            import structlog

            structlog.get_logger("arena.cli.run").info(
                "progress",
                done=done,
                total=total,
                in_flight=result.in_flight,
                fallbacks=result.fallbacks_before + result.fallbacks,
                wall_s=round(now - self.started, 3),
            )
            return
        self.console.print(
            f"{counts}, {now - self.started:.0f} s", highlight=False, markup=False, soft_wrap=True
        )

    def tick(self) -> None:
        """The line `maybe` would print for the latest counts, if `EVERY_S` (and at least
        `TICK_S`) passed."""
        if self._latest is not None:
            self.maybe(*self._latest, every_s=max(self.EVERY_S, self.TICK_S))
