"""The one transport retry loop: which failures are transient, how long to wait.

Retried: failures to connect or dropped connections, and statuses 408, 429
and 5xx (529 "overloaded" included). Never retried: other 4xx (a bad request,
key or model does not get better by asking again), TLS that cannot be set up
(an untrusted certificate, a refused handshake), invalid bodies, timeouts.
The wait is the provider's hint when it gives one (`retry-after-ms`,
`retry-after` in seconds or as an HTTP date, Gemini's `RetryInfo`), else a
bounded jittered exponential backoff; when the wait would pass the caller's
deadline the loop stops at once and raises the last error. Attempts are
bounded too: a deadline alone would let a fast-failing server be hammered.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from providers.errors import HTTPStatusError, TransportError

__all__ = ["RetryPolicy", "is_transient", "retry_after_from_headers"]


@dataclass(frozen=True)
class RetryPolicy:
    """How many transport attempts a call may make and how far apart."""

    max_attempts: int = 4
    """Attempts per call, the first included."""
    backoff_initial_s: float = 0.25
    """Upper bound of the first backoff wait (when the provider gives no hint)."""
    backoff_max_s: float = 8.0
    """Upper bound of any backoff wait."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if not 0 < self.backoff_initial_s <= self.backoff_max_s:
            raise ValueError(
                f"backoff needs 0 < backoff_initial_s <= backoff_max_s, "
                f"got {self.backoff_initial_s} and {self.backoff_max_s}"
            )

    def wait_s(self, error: BaseException | None, attempt_number: int) -> float:
        """The wait after failed attempt `attempt_number`: the provider's hint, else backoff."""
        hint = error.retry_after if isinstance(error, HTTPStatusError) else None
        if hint is not None:
            return hint
        ceiling = min(self.backoff_max_s, self.backoff_initial_s * 2 ** (attempt_number - 1))
        # Jitter keeps many seats hitting one rate limit from retrying in lockstep.
        return random.uniform(ceiling / 2, ceiling)

    def retrying(
        self,
        deadline: float,
        before_sleep: Callable[[RetryCallState], None],
        *,
        retry_refused: bool = True,
    ) -> AsyncRetrying:
        """A tenacity loop that retries transient errors and never sleeps past `deadline`;
        without `retry_refused`, a refused connection is final (another endpoint can take
        the request at once)."""

        def wait(state: RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome else None
            return self.wait_s(error, state.attempt_number)

        def stop(state: RetryCallState) -> bool:
            wake = anyio.current_time() + (state.upcoming_sleep or 0.0)
            return state.attempt_number >= self.max_attempts or wake >= deadline

        def transient(error: BaseException) -> bool:
            refused = isinstance(error, TransportError) and error.connect_refused
            return is_transient(error) and (retry_refused or not refused)

        return AsyncRetrying(
            retry=retry_if_exception(transient),
            wait=wait,
            stop=stop,
            sleep=anyio.sleep,
            before_sleep=before_sleep,
            reraise=True,
        )


def is_transient(error: BaseException) -> bool:
    """Whether asking again may succeed: dropped connections, 408, 429 and 5xx."""
    if isinstance(error, TransportError):
        return not error.tls  # a certificate or a handshake refused: the same next time
    if isinstance(error, HTTPStatusError):
        return error.status in (408, 429) or 500 <= error.status <= 599
    return False


def retry_after_from_headers(
    headers: Mapping[str, str], now: datetime | None = None
) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or HTTP date)."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and 0 <= number < float("inf") else None
