"""What to do about an endpoint that answers wrongly: one table for every message.

The preflight's reading of a probe, the provider's error for a status, the
circuit breaker's stop for a misconfigured endpoint and a model seat's refused
schema request all tell the user what to change; every such sentence comes
from `advise`, so the four never disagree. A problem is an HTTP status, or one
of the `Problem` names for what is no status (a body that is no completion, a
reply reset before its end, a certificate, a proxy, ...). The body (its start,
as an error keeps it) picks between sentences for one status: a refused schema
form, a client certificate asked for, a gateway's own page.

`setting` is what the caller knows of the setting in question, when it knows
it: the variable `api_key_env` names (401, 403), the model (404), the client
certificate file (a certificate asked for), the proxy's URL and variable
(`proxy_*`), the waits seen (`gateway_wait`). Without it the sentence names the
setting only.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "ASKED_PATHS",
    "GATEWAY_WAITS",
    "Problem",
    "advise",
    "key_hint",
    "names_missing_model",
    "no_listing_warning",
    "routed_elsewhere",
    "schema_form_refused",
]

Problem = Literal[
    "not_completion",
    "schema_form",
    "reset",
    "refused",
    "tls",
    "certificate",
    "proxy_refused",
    "proxy_auth",
    "gateway_wait",
    "unknown_model",
]
"""What went wrong when it was no HTTP status (or more than one): a 2xx body that is no
completion; a schema request refused as a form (whatever the status and body); every
reply dropped before its body ended; no connection opened; a TLS handshake refused; the
server's certificate not trusted; a proxy that refused the connection or the credentials
(407); a gateway that gives up before the model answers (502/504 on every retry); a 404
whose body is the protocol's own "no such model" (`names_missing_model`)."""

GATEWAY_WAITS = frozenset({502, 504})
"""The statuses a gateway answers when the server behind it took longer than it waits."""

_SCHEMA_WORDS = ("response_format", "json_schema", "schema")


def schema_form_refused(body: str) -> bool:
    """Whether an error body reads as a refused schema request (it names the schema form)."""
    lowered = body.lower()
    return any(word in lowered for word in _SCHEMA_WORDS)


def advise(
    protocol: str, status: int | Problem | None, body: str = "", *, setting: str = ""
) -> str:
    """What to change for an endpoint of `protocol` that answered `status` (an HTTP status,
    a `Problem`, or None for a body that is no completion) with `body`: one clause, what it
    means then what to do ("it refuses the key: check ..."), without a final full stop; ''
    when nothing is to be changed (a 5xx of the server's own: the arena retries and waits).
    A 502 or 504 as such is that too; that a gateway's wait is too short shows only over
    many (`"gateway_wait"`)."""
    if status is None:
        status = "not_completion"
    if isinstance(status, str):
        return _PROBLEMS[status](protocol, setting)
    lowered = body.lower()
    if status in (401, 403):
        where = (
            f"the variable {setting} (api_key_env)" if setting else "the variable api_key_env names"
        )
        return (
            f"it refuses the key: check the key in {where}, and headers_env for a gateway's own key"
        )
    if status == 404:
        model = f"the model {setting!r}" if setting else "the model"
        elsewhere = routed_elsewhere(protocol, body)
        return (
            elsewhere or f"it does not know {model} or the path: check the model name and base_url"
        )
    if status == 407:
        return _proxy_auth(protocol, setting)
    if status == 413:
        return (
            "it refuses request bodies this large: raise the gateway's limit (nginx: "
            "client_max_body_size), or shorten the prompt template"
        )
    if status == 429:
        return "it limits the rate: lower max_connections or raise this key's rate limit"
    if schema_form_refused(lowered) and 400 <= status < 600:
        return _schema_form(protocol, setting)
    if status >= 500 or status < 400:
        return ""  # the server's own failure (or no failure): nothing to change here
    if "certificate" in lowered:
        fix = (
            f"check client_cert ({setting}) and client_key"
            if setting
            else "set client_cert (and client_key) on the policy"
        )
        return f"it asks for a client certificate: {fix}"
    refused = f"it refuses every completion with HTTP {status}: check base_url, headers and params"
    return refused + key_hint(lowered) if status == 400 else refused


ASKED_PATHS = {
    "openai": "/chat/completions",
    "anthropic": "/v1/messages",
    "gemini": ":generateContent",
}
"""The end of the path each protocol's completion is asked at."""
_PATH = re.compile(r"/v1(?:beta)?/[\w./:-]*\w")
_AROUND = 60
"""How much of the body either side of the path a fix line quotes."""


def routed_elsewhere(protocol: str, body: str) -> str | None:
    """The fix for a 404 whose body names another path than the one asked: a gateway passed
    the request on to a route its backend has not (LiteLLM's proxy sends Anthropic's
    `/v1/messages` for an `openai/...` model to `/v1/responses`). None when the body names
    no path, or first the one asked."""
    found = _PATH.search(body)
    if found is None or found.group().endswith(ASKED_PATHS.get(protocol, "\0")):
        return None
    start, end = max(found.start() - _AROUND, 0), found.end() + _AROUND
    # A gateway quotes its backend's JSON inside its own: its quotes come escaped.
    part = body[start:end].replace('\\"', '"')
    quoted = ("..." if start else "") + part + ("..." if end < len(body) else "")
    return (
        f"a gateway routes the request elsewhere: its backend was asked for {found.group()}, "
        f"not {ASKED_PATHS[protocol]} (the answer: {quoted}); have the gateway send it to a "
        "route the backend serves (LiteLLM, for Anthropic's messages: "
        "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES=True; docs/gateways.md)"
    )


_KEY_WORDS = (
    "api key",
    "api_key",
    "api-key",
    "invalid key",
    "auth",
    "credential",
    "database",
    " db",
)


def key_hint(body: str) -> str:
    """What a 400 on every request adds when its (lowercased) `body` speaks of keys, auth or
    a database: a gateway that answers a key it does not know with 400 (LiteLLM's proxy
    without a database: "No connected db.")."""
    if not any(word in body for word in _KEY_WORDS):
        return ""
    return "; its body speaks of keys, auth or a database: check api_key_env (the gateway's key)"


def names_missing_model(protocol: str, model: str, body: str) -> bool:
    """Whether a probe's 404 `body` is the protocol's own "no such model": Anthropic's
    `not_found_error` naming the model, Gemini's `NOT_FOUND` status, OpenAI's
    `model_not_found`. Any other 404 (a gateway's or a web framework's "no such route",
    `{"detail":"Not Found"}`) says nothing of the model."""
    if protocol == "anthropic":
        named = re.search(rf"(?<![\w/.:-]){re.escape(model)}(?![\w/.:-])", body)
        return "not_found_error" in body and named is not None
    if protocol == "gemini":
        return '"NOT_FOUND"' in body
    return "model_not_found" in body


def no_listing_warning(url: str, model: str, body: str) -> str:
    """The warning of a probe's 404 that is no model error: the endpoint (a gateway, often)
    has no such route, and the model is checked by the first completion instead."""
    return (
        f"{url} has no model listing (HTTP 404: {body[:80]!r}): the model name {model!r} is "
        "unchecked, the first completion will tell"
    )


def _not_completion(protocol: str, setting: str) -> str:
    return (
        f"its answers are not {protocol} completions: check that base_url points at a "
        f"{protocol}-compatible endpoint (an OpenAI-compatible one usually ends in /v1)"
    )


def _schema_form(protocol: str, setting: str) -> str:
    return (
        'it refuses the form of a schema request (decoding = "schema"): set schema_style = '
        '"json_object" for llama-cpp-python\'s server, "json_schema" for the others, or '
        'decoding = "json"'
    )


def _reset(protocol: str, setting: str) -> str:
    return (
        "every reply is cut off before its body ends: check the gateway or proxy in front of "
        "the model (its logs, buffering and timeouts) and that base_url is the endpoint"
    )


def _refused(protocol: str, setting: str) -> str:
    return "start the server, or correct base_url"


def _tls(protocol: str, setting: str) -> str:
    return (
        "check the server's TLS settings, and client_cert / client_key if it asks for a client "
        "certificate"
    )


def _certificate(protocol: str, setting: str) -> str:
    return (
        "if it is signed by a private CA, name that CA's PEM file in the policy's ca_bundle "
        '(ca_bundle = "ca.pem"; it adds to the default trust), or set [run] trust = "system" '
        "to trust the machine's own store"
    )


def _proxy(setting: str) -> str:
    return f"the proxy {setting}" if setting else "the proxy"


def _proxy_refused(protocol: str, setting: str) -> str:
    return (
        f"{_proxy(setting)} refused the connection: start the proxy, or correct or unset "
        "the variable"
    )


def _proxy_auth(protocol: str, setting: str) -> str:
    return (
        f"{_proxy(setting)} rejected its credentials (407): put the right user and password "
        "in the proxy URL of the variable"
    )


def _unknown_model(protocol: str, setting: str) -> str:
    model = f"the model {setting!r}" if setting else "the model"
    return f"it does not know {model}: check the model name (the endpoint's own model list)"


def _gateway_wait(protocol: str, setting: str) -> str:
    seen = f"; {setting}" if setting else ""
    return (
        f"the gateway in front of the model gives up (HTTP 502/504{seen}) before the model "
        "answers: raise the gateway's timeout (nginx: proxy_read_timeout) above first_reply_s "
        "and retry_s, or lower them below it"
    )


_PROBLEMS = {
    "not_completion": _not_completion,
    "schema_form": _schema_form,
    "reset": _reset,
    "refused": _refused,
    "tls": _tls,
    "certificate": _certificate,
    "proxy_refused": _proxy_refused,
    "proxy_auth": _proxy_auth,
    "gateway_wait": _gateway_wait,
    "unknown_model": _unknown_model,
}
