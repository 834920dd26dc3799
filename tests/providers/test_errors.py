"""Every provider error survives a copy and a pickle with all its fields."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import pytest

from providers import (
    AuthError,
    CertificateError,
    HTTPStatusError,
    InvalidResponse,
    ProviderError,
    RateLimited,
    Timeout,
    TransportAttempt,
    TransportError,
)

ERRORS: list[ProviderError] = [
    ProviderError("failed"),
    TransportError("dropped", connect_refused=False),
    TransportError("refused", connect_refused=True),
    CertificateError("untrusted"),
    Timeout("late"),
    HTTPStatusError("bad gateway", status=502, body_excerpt="<html>"),
    RateLimited("slow down", status=429, body_excerpt="{}", retry_after=1.5),
    AuthError("no key", status=401, body_excerpt="{}"),
    InvalidResponse("not json"),
]


def _round_trip(error: ProviderError) -> ProviderError:
    copied: ProviderError = pickle.loads(pickle.dumps(error))
    return copied


@pytest.mark.parametrize(
    "duplicate", [copy.copy, copy.deepcopy, _round_trip], ids=["copy", "deepcopy", "pickle"]
)
@pytest.mark.parametrize("error", ERRORS, ids=lambda e: f"{type(e).__name__}:{e}")
def test_an_error_copies_and_pickles_with_its_fields(
    error: ProviderError, duplicate: Callable[[ProviderError], ProviderError]
) -> None:
    error.attempts = (TransportAttempt(None, "reset", 0.01),)
    twin = duplicate(error)
    assert type(twin) is type(error)
    assert twin.args == error.args
    assert vars(twin) == vars(error)  # connect_refused, status, retry_after, attempts, ...
    assert twin is not error
