"""The errors a provider call can end with.

Error tree::

    ProviderError             any failed call; the message names the endpoint
    ├── TransportError        no usable HTTP exchange (connect_refused: never connected)
    │   └── CertificateError  the server's certificate failed verification (never connected)
    ├── Timeout               the caller's deadline passed (slot wait included)
    ├── HTTPStatusError       an error status (status, body_excerpt, retry_after)
    │   ├── RateLimited       429: the provider asked us to slow down
    │   └── AuthError         401 / 403: the key is missing, wrong or not allowed
    └── InvalidResponse       a 2xx whose body is not the protocol's shape

The HTTP stack's exceptions (httpx's, and aiohttp's under its transport) are
translated into this tree in exactly one place
(`providers.client.translate_httpx_errors`) and re-raised `from` the original,
so nothing above `providers/` ever catches an `httpx` exception. Messages,
excerpts and reprs never carry an API key: the client redacts the key from
everything a server sends back before it builds an error.

Every error raised by `Provider.complete` carries `attempts`: the transport
attempts made before it gave up, in order.
"""

from __future__ import annotations

from typing import Any, Self

from providers.advice import Problem
from providers.completion import TransportAttempt

__all__ = [
    "AuthError",
    "CertificateError",
    "HTTPStatusError",
    "InvalidResponse",
    "ProviderError",
    "RateLimited",
    "Timeout",
    "TransportError",
]


class ProviderError(Exception):
    """A provider call that produced no completion."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.attempts: tuple[TransportAttempt, ...] = ()
        """Transport attempts made before giving up (filled by the client)."""

    def restated(self, message: str) -> Self:
        """The same error (its class and fields), saying `message` instead."""
        error = type(self).__new__(type(self))
        error.__dict__.update(self.__dict__)
        error.args = (message,)
        return error

    def __reduce__(self) -> tuple[Any, ...]:
        # Copies and pickles are rebuilt from the fields, not by calling __init__ with the
        # message alone (Exception's way), which the subclasses' keyword-only fields
        # (connect_refused, status, ...) would fail.
        return (_rebuilt, (type(self), self.args), self.__dict__)


def _rebuilt(kind: type[ProviderError], args: tuple[Any, ...]) -> ProviderError:
    error = kind.__new__(kind)
    error.args = args
    return error


class TransportError(ProviderError):
    """The request never got an HTTP answer: refused, reset, dropped mid-reply."""

    def __init__(
        self,
        message: str,
        *,
        connect_refused: bool,
        tls: bool = False,
        problem: Problem | None = None,
        proxy: str = "",
    ) -> None:
        super().__init__(message)
        self.connect_refused = connect_refused
        """True when no connection could be opened at all (refused, unreachable,
        unknown host): the server is not there, as opposed to a dropped reply."""
        self.tls = tls
        """True when the server is there but TLS could not be set up with it (a handshake
        refused, a certificate not trusted): no connection, for a reason of settings."""
        self.problem = problem
        """What went wrong, as `providers.advise` tells it: `refused`, `reset` (an exchange
        dropped after it began), `tls`, `certificate`, `proxy_refused`, `proxy_auth`."""
        self.proxy = proxy
        """The proxy the request went through and its variable, when the failure was the
        proxy's (`providers.pool.shown_proxy`), else ''."""


class CertificateError(TransportError):
    """The server's TLS certificate failed verification: it is there, but not trusted (a
    private CA not in the trust, an expired or mismatched certificate)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, connect_refused=True, tls=True, problem="certificate")


class Timeout(ProviderError):
    """The caller's deadline passed before a usable reply arrived, and nothing of the
    infrastructure failed meanwhile (a call that was recovering from a failure when its
    deadline passed ends with that failure instead)."""


class HTTPStatusError(ProviderError):
    """The provider answered with an error status."""

    def __init__(
        self, message: str, *, status: int, body_excerpt: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status code."""
        self.body_excerpt = body_excerpt
        """The start of the response body, key redacted."""
        self.retry_after = retry_after
        """Seconds the provider asked us to wait before retrying, if it said."""


class RateLimited(HTTPStatusError):
    """HTTP 429: too many requests or tokens for this key or model."""


class AuthError(HTTPStatusError):
    """HTTP 401 or 403: the API key is missing, wrong or lacks access to the model."""


class InvalidResponse(ProviderError):
    """A successful status whose body does not have the protocol's shape."""
