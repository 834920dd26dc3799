"""structlog, configured once: JSON lines to the run's events file, a console on a terminal.

This module is the one place structlog is configured: a run's own process
calls `configure_logging`, a cluster's worker `forward_logging`, whose events
the driver logs again through `relay`.

Events are snake_case past-tense facts with fields (`decision_requested`,
`reply_received`, `fallback_recorded`, `game_finished`, ...). Context (run,
episode, game, seat) is bound with `structlog.contextvars` per task, so every
event carries where it happened. The console shows what an operator watches
(the run starting and ending, warnings, failures; every event with
`--verbose`), a value of several lines (a program's traceback) as an indented
block under its line; the JSON file keeps everything at info and above.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO


@contextmanager
def _rich_hidden() -> Iterator[None]:
    """While structlog is first imported, rich cannot be: structlog loads rich's traceback
    and pretty-printer (and with them pygments and attrs) to offer rich tracebacks, and the
    arena never shows one (the console shows plain tracebacks: a traceback's locals can hold
    a request's headers, and with them a key). Rich itself is left as it was."""
    if "structlog" in sys.modules:
        yield
        return
    before = sys.modules.get("rich")
    sys.modules["rich"] = None  # type: ignore[assignment]  # an import of rich now fails
    try:
        yield
    finally:
        if before is None:
            del sys.modules["rich"]
        else:
            sys.modules["rich"] = before


with _rich_hidden():
    import structlog

from arena.redact import Redactor  # noqa: E402

__all__ = [
    "Observer",
    "close_logging",
    "configure_logging",
    "forward_logging",
    "observing",
    "relay",
    "stamp",
    "verbose_logging",
]

_CONSOLE_EVENTS = frozenset(
    {
        "run_started",
        "run_finished",
        "episode_failed",
        "endpoint_up",
        # said as lines by the console's run; logged as these events only with --log-format json
        "progress",
        "run_resuming",
        "pool_resuming",
        "mock_llm_serving",
        "play_page_serving",
        "run_watched",
        "run_ended",
    }
)
_JSON_LINE = json.JSONEncoder(default=str, separators=(",", ":"))
"""One encoder for every event line (made once: `json.dumps` with options makes one per call)."""


Observer = Callable[[MutableMapping[str, Any]], None]
"""What watches a run's events as they are logged (`arena.observe`): told each event the
sink writes, before it is written; it reads the event and never changes it."""
_observers: list[Observer] = []


@contextmanager
def observing(observer: Observer) -> Iterator[None]:
    """`observer` is told every event logged (a cluster's relayed ones too) inside the block."""
    _observers.append(observer)
    try:
        yield
    finally:
        _observers.remove(observer)


class _EventSink:
    """The final stage: one JSON line to the events file, and a short line to the console
    (or, with `json_console`, the event's JSON line itself)."""

    def __init__(
        self,
        events: TextIO | None,
        console: bool,
        verbose: bool,
        redactor: Redactor,
        json_console: bool = False,
    ) -> None:
        self.events = events
        self.console = console
        self.verbose = verbose
        self.redactor = redactor
        self.json_console = json_console
        # A traceback's locals can hold a request's headers, and with them a key: never shown.
        self._console_renderer = structlog.dev.ConsoleRenderer(
            colors=console and sys.stderr.isatty(),
            exception_formatter=structlog.dev.plain_traceback,
        )

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> str:
        for observe in _observers:
            observe(event)
        line = ""
        if self.events is not None:
            line = self.redactor.text(_JSON_LINE.encode(event))
            self.events.write(line + "\n")
        if self.console and (
            self.verbose
            or method in ("warning", "error", "critical")
            or event.get("event") in _CONSOLE_EVENTS
        ):
            if self.json_console:  # the same line as the events file's, for a log collector
                sys.stderr.write((line or self.redactor.text(_JSON_LINE.encode(event))) + "\n")
                raise structlog.DropEvent
            # sys.stderr is looked up now: a live progress display swaps it for its own.
            shown = {k: v for k, v in event.items() if k != "timestamp"}
            blocks = {k: v for k, v in shown.items() if isinstance(v, str) and "\n" in v}
            line = self._console_renderer(
                logger, method, {k: v for k, v in shown.items() if k not in blocks}
            )
            for key, text in blocks.items():  # a traceback reads as lines, not as escapes
                line += f"\n  {key}:\n" + textwrap.indent(text.rstrip("\n"), "    ")
            sys.stderr.write(self.redactor.text(line) + "\n")
        raise structlog.DropEvent


_open_files: list[TextIO] = []
_verbose = [False]


def verbose_logging() -> bool:
    """Whether debug events are logged (`--verbose`): a cluster's workers then log them too."""
    return _verbose[0]


_second = [-1, ""]
"""The last whole second stamped, and its text up to the seconds."""


def _utc_now() -> str:
    """Now as ISO 8601 in UTC, as structlog's `TimeStamper(fmt="iso", utc=True)` writes it
    (`2026-01-31T12:00:00.123456Z`, no fraction on a whole second), the date and time of
    day formatted once a second."""
    now = time.time()
    second = int(now)
    micro = round((now - second) * 1_000_000)
    if micro == 1_000_000:
        second, micro = second + 1, 0
    if second != _second[0]:
        _second[:] = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
    return f"{_second[1]}.{micro:06d}Z" if micro else f"{_second[1]}Z"


def stamp(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The event's time, unless it has one: an event relayed from a cluster's worker keeps
    the time it happened there."""
    if "timestamp" not in event:
        event["timestamp"] = _utc_now()
    return event


class _Dropped:
    """The logger under every bound logger: the sink drops each event before it would be
    written, so one instance serves all (structlog otherwise makes one per event)."""

    def msg(self, message: str) -> None:
        """Never called: the sink raises `DropEvent`."""


_DROPPED = _Dropped()


def _dropped_logger(*args: Any) -> _Dropped:
    return _DROPPED


_relay_log = structlog.get_logger("arena.relay")
_LEVELS = ("debug", "info", "warning", "error", "critical")


def relay(event: MutableMapping[str, Any]) -> None:
    """An event logged in another process (a cluster's worker), logged here as it came: its
    fields and time kept, to the events file and the console like any event of this one."""
    fields = dict(event)
    name = str(fields.pop("event", "event"))
    level = str(fields.pop("level", "info"))
    getattr(_relay_log, level if level in _LEVELS else "info")(name, **fields)


def configure_logging(
    events_path: Path | None = None,
    *,
    console: bool = True,
    verbose: bool = False,
    fresh: bool = False,
    redactor: Redactor | None = None,
    json_console: bool = False,
) -> None:
    """Send events to `events_path` (JSON lines, appended; started afresh with `fresh`) and,
    if asked, to stderr: short lines for people, or with `json_console` each as its JSON
    line (the events file's, for a platform that collects the process's stream)."""
    close_logging()
    events: TextIO | None = None
    if events_path is not None:
        events_path.parent.mkdir(parents=True, exist_ok=True)
        events = events_path.open("w" if fresh else "a", encoding="utf-8", buffering=1)
        _open_files.append(events)
    sink = _EventSink(events, console, verbose, redactor or Redactor(), json_console)
    _configure([stamp, sink], verbose)


def forward_logging(send: Callable[[str], None], *, verbose: bool) -> None:
    """A cluster worker's logging: each event, as one JSON line, handed to `send` (the
    worker's outbox), for the driver to log through `relay`; an exception is formatted
    here, where its traceback is."""
    _configure([stamp, structlog.processors.format_exc_info, _Forward(send)], verbose)


class _Forward:
    """The final stage of a worker's events: the JSON line, sent on."""

    def __init__(self, send: Callable[[str], None]) -> None:
        self.send = send

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> str:
        self.send(_JSON_LINE.encode(event))
        raise structlog.DropEvent


def _configure(stages: list[Any], verbose: bool) -> None:
    """Structlog with the context and the level first, then `stages`, the last of which
    writes the event and drops it; debug events only if `verbose`."""
    _verbose[0] = verbose
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            *stages,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.DEBUG if verbose else logging.INFO
        ),
        logger_factory=_dropped_logger,
        cache_logger_on_first_use=False,
    )


def close_logging() -> None:
    """Flush and close the events file; later events go nowhere until reconfigured."""
    while _open_files:
        _open_files.pop().close()
    _verbose[0] = False
    # No level filter here, so that structlog.testing.capture_logs still sees every event.
    structlog.configure(
        processors=[structlog.processors.add_log_level, _EventSink(None, False, False, Redactor())],
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
    )
