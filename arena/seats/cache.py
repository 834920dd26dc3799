"""The response cache: a model's replies kept on disk, and asked for again from there.

With `[run] response_cache = true`, every reply a provider sends back for a
model policy is stored under the key of its request, and an identical
request later (in this run, a resumed one, or the same config run into
another folder) is answered from the store: no request is sent, and the
replay marks the attempt `cached` (docs/efficiency.md#the-response-cache).

The key is the SHA-256 of the canonical JSON of the wire protocol, the
policy's configured endpoints (every replica's base URL, sorted: not the one
that happened to answer), the model, the params, and the exact request body
the protocol sends (built for the first of those endpoints). It never holds
an API key: the key goes in headers, and the parts pass the run's redactor
before they are hashed. One file per key, `<folder>/<2 hex>/<sha256>.json`,
holds the key's parts and the reply, written through the redactor.

Stored: a reply the provider answered with success, whatever the arena makes
of it (an empty, unreadable, illegal or cut-off reply is the model's answer to
that request). Never stored: a provider failure (timeout, transport, HTTP
status, rate limit, a body that is not a reply), a reply whose stop reason
says generation failed (`error`), and a reply that came too late to play. A
cached attempt costs nothing now: `cost_usd` is 0 (None for a policy without a
price, as for its other replies); its `usage` is what the reply took when it
was made.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import structlog
from pydantic import ValidationError

import providers
from arena.config import Config, LlmPolicy
from arena.play.protocol import Answer
from arena.record.replay import write_atomic
from arena.redact import Redactor
from providers.pool import WIRE_PROTOCOLS

__all__ = [
    "FORMAT",
    "RequestKey",
    "ResponseCache",
    "default_cache_dir",
    "request_key",
    "run_cache",
]

log = structlog.get_logger("arena.seats.cache")

FORMAT = 1
"""The version of a cache file's layout; a file of another version is a miss."""

_STORED = set(Answer.model_fields) - {"retries", "cost_usd", "cached"}
"""What a file keeps of a reply: all but this call's transport attempts and its cost."""


def run_cache(config: Config, redactor: Redactor) -> ResponseCache | None:
    """The response cache a run's model seats share (`[run] response_cache`), or None: in
    `cache_dir` (relative to the config file's folder), else the user's cache folder."""
    run = config.run
    if not run.response_cache:
        return None
    folder = config.located(run.cache_dir) if run.cache_dir else default_cache_dir()
    return ResponseCache(folder, redactor)


def default_cache_dir() -> Path:
    """Where the cache lives unless `cache_dir` says: `$XDG_CACHE_HOME/cog-arena/responses`,
    or `~/.cache/cog-arena/responses` (a relative XDG_CACHE_HOME is ignored, as the XDG
    spec says)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return root / "cog-arena" / "responses"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class RequestKey:
    """One request's key: its parts (redacted) and their digest, the file's name."""

    parts: dict[str, Any]
    digest: str


def request_key(
    policy: LlmPolicy, request: providers.CompletionRequest, redactor: Redactor | None = None
) -> RequestKey:
    """The key of `request` to `policy`'s model: the same whichever replica answers it."""
    # An empty environment: no key, which the body never holds, so the spec cannot leak it.
    specs = sorted(policy.specs({}), key=lambda spec: spec.base_url)
    body = WIRE_PROTOCOLS[policy.provider].build_request(specs[0], request).json
    parts = (redactor or Redactor()).value(
        {
            "protocol": policy.provider,
            "endpoints": [spec.base_url for spec in specs],
            "model": policy.model,
            "params": policy.params,
            "body": body,
        }
    )
    return RequestKey(parts, hashlib.sha256(_canonical(parts).encode()).hexdigest())


class ResponseCache:
    """A run's stored replies in `folder`, shared by all its model seats.

    Identical requests in flight at once are asked once: the later ones wait
    for the first and take its reply from the store (or, if it failed, ask
    themselves). So even a sampled reply is the same everywhere it is reused.
    """

    def __init__(self, folder: Path, redactor: Redactor | None = None) -> None:
        self.folder = folder
        """Where the files are (created when the first reply is stored)."""
        self._redactor = redactor or Redactor()
        self._asking: dict[str, anyio.Event] = {}
        self._write_failed = False
        log.info("response_cache_opened", folder=str(folder))

    def path(self, key: RequestKey) -> Path:
        """The file that holds (or would hold) the reply to `key`."""
        return self.folder / key.digest[:2] / f"{key.digest}.json"

    async def reply(
        self,
        policy: LlmPolicy,
        request: providers.CompletionRequest,
        ask: Callable[[], Awaitable[Answer]],
        *,
        deadline: float,
    ) -> Answer:
        """The stored reply to `request`, marked `cached`; else `ask()`'s, stored if it came
        before `deadline` (anyio's clock). A failure of `ask` is raised and never stored."""
        key = request_key(policy, request, self._redactor)
        while True:
            stored = self.load(key)
            if stored is not None:  # free now: what a user comparing costs expects
                cost = 0.0 if policy.price is not None else None
                return stored.model_copy(update={"cost_usd": cost})
            asking = self._asking.get(key.digest)
            if asking is None:
                break
            await asking.wait()  # the caller's cancel scope bounds the wait
        self._asking[key.digest] = asking = anyio.Event()
        try:
            answer = await ask()
            if anyio.current_time() <= deadline and answer.stop_reason != "error":
                self.store(key, answer)
            return answer
        finally:
            del self._asking[key.digest]
            asking.set()

    def load(self, key: RequestKey) -> Answer | None:
        """The stored reply to `key` as an answer marked `cached` (its cost unset), or None:
        no file, or one that cannot be read (logged, and replaced when the reply comes)."""
        path = self.path(key)
        try:
            return _read(path, key)
        except FileNotFoundError:
            return None
        except _Unreadable as exc:
            log.warning("cached_reply_ignored", path=str(path), error=str(exc))
            return None

    def store(self, key: RequestKey, answer: Answer) -> None:
        """Write the reply to `key`, through the redactor, atomically; a failure is logged
        (once) and the run goes on without it."""
        reply = self._redactor.value(answer.model_dump(mode="json", include=_STORED))
        text = json.dumps({"format": FORMAT, "key": key.parts, "reply": reply}, indent=1)
        try:
            # Not durable: a file a crash tore reads as a miss, and the event loop never
            # waits on the disk.
            write_atomic(self.path(key), text, durable=False)
        except OSError as exc:
            if not self._write_failed:
                self._write_failed = True
                log.warning(
                    "cached_reply_not_stored",
                    folder=str(self.folder),
                    error=f"{type(exc).__name__}: {exc}",
                    fix="make cache_dir a folder this user can write, or set response_cache "
                    "= false (further failures are not logged)",
                )


class _Unreadable(Exception):
    """A cache file that is not the reply to its key; the message says why."""


def _read(path: Path, key: RequestKey) -> Answer:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, ValueError, RecursionError) as exc:  # unreadable, not UTF-8, not JSON
        raise _Unreadable(f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _Unreadable(f"not a cache file of format {FORMAT}")
    stored_key = data.get("key")
    if not isinstance(stored_key, dict) or _canonical(stored_key) != _canonical(key.parts):
        raise _Unreadable("it holds the reply to another request")
    reply = data.get("reply")
    if not isinstance(reply, dict) or set(reply) - _STORED:
        raise _Unreadable("its reply has fields a stored reply does not have")
    try:
        return Answer.model_validate({**reply, "cached": True})
    except ValidationError as exc:
        raise _Unreadable(f"its reply does not read as one ({exc.error_count()} errors)") from exc
