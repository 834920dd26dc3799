"""A run with a person's seat, played in a thread of its own while a test drives Chromium.

`LiveRun(folder, config)` plans the run, then, in a thread, opens its play
page (`arena.viewer.play.play_page`) and executes it with the page's desk,
as `arena run` does. `url` is the page's address, token included. The run
plays until its games are over (`wait`) or the test leaves the block,
which cancels it; the page stays up until then, so a test can look at the
last positions. The Playwright side stays in the test's own thread: its
sync API holds that thread's event loop.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import anyio

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import RunResult, execute
from arena.seats.desk import Desk
from arena.viewer.play import play_page

START_S = 30.0


class LiveRun:
    """A run with a play page in a background thread; a context manager."""

    def __init__(self, folder: Path, config: dict[str, Any]) -> None:
        self.folder = folder
        self.plan = plan_run(parse_config(config), folder)
        self.url = ""
        self._desk: Desk | None = None
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self._started: queue.Queue[str] = queue.Queue()
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._main, name="live-run", daemon=True)

    def __enter__(self) -> LiveRun:
        self._thread.start()
        try:
            self.url = self._started.get(timeout=START_S)
        except queue.Empty:
            raise RuntimeError(f"the play page did not start: {self.error!r}") from self.error
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    @property
    def desk(self) -> Desk:
        """The run's desk (its tables are read, never changed, from the test's thread)."""
        assert self._desk is not None, "the play page has not started"
        return self._desk

    def wait(self, timeout_s: float = 60.0) -> RunResult:
        """The run's result once its games are over; raises what the run raised."""
        if not self._done.wait(timeout_s):
            raise TimeoutError(f"the run was not over after {timeout_s} s")
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result

    @property
    def over(self) -> bool:
        """The run has ended (its games played, or it failed)."""
        return self._done.is_set()

    @property
    def replays(self) -> list[Path]:
        """The replay files written so far."""
        return sorted((self.folder / "replays").glob("*.json"))

    def _main(self) -> None:
        try:
            anyio.run(self._serve)
        except BaseException as exc:  # handed to the test's thread by `wait`
            self.error = exc
            self._done.set()

    async def _serve(self) -> None:
        async with play_page(self.plan.config.run.name) as page, anyio.create_task_group() as group:
            self._desk = page.desk

            async def play() -> None:
                try:
                    self.result = await execute(self.plan, desk=page.desk)
                except Exception as exc:
                    self.error = exc
                finally:
                    self._done.set()

            group.start_soon(play)
            self._started.put(page.url)
            await anyio.to_thread.run_sync(self._stop.wait)
            group.cancel_scope.cancel()
