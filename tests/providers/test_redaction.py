"""A planted API key never shows in a repr, a dump, an error message or a log event."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
import respx
from structlog.testing import capture_logs

from providers import (
    PROTOCOLS,
    AuthError,
    CompletionRequest,
    InvalidResponse,
    ProviderError,
    ProviderSpec,
    WireProtocolName,
)
from providers.pool import WIRE_PROTOCOLS
from tests.providers.conftest import mockable

pytestmark = pytest.mark.anyio

KEY = "sk-PLANTED-9f8e7d6c5b4a"
REQUEST = CompletionRequest("go", 16)


def planted(protocol: WireProtocolName) -> ProviderSpec:
    return ProviderSpec(protocol=protocol, model="m", base_url="http://llm.test", api_key=KEY)


def assert_clean(*texts: str) -> None:
    for text in texts:
        assert KEY not in text, text


def error_texts(error: ProviderError) -> list[str]:
    attempts = [a.error or "" for a in error.attempts]
    return [str(error), repr(error), getattr(error, "body_excerpt", ""), *attempts]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_spec_reprs_and_dumps_hide_the_key(protocol: WireProtocolName) -> None:
    spec = planted(protocol)
    assert_clean(repr(spec), str(spec), spec.model_dump_json(), str(spec.model_dump()), spec.label)
    assert spec.reveal_key() == KEY


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_key_is_sent_but_not_echoed_back_in_errors(protocol: WireProtocolName) -> None:
    spec = planted(protocol)
    url = WIRE_PROTOCOLS[protocol].build_request(spec, REQUEST).url
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}."}}
    with respx.mock:
        route = respx.post(url).respond(401, json=echo)
        async with mockable() as pool:
            model = pool.client(spec)
            assert_clean(repr(model))
            with pytest.raises(AuthError) as caught:
                await model.complete(REQUEST, deadline=anyio.current_time() + 2)
    assert KEY in json.dumps(dict(route.calls.last.request.headers))
    assert "[redacted]" in caught.value.body_excerpt
    assert_clean(*error_texts(caught.value))


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_invalid_bodies_and_retry_logs_hide_the_key(protocol: WireProtocolName) -> None:
    spec = planted(protocol)
    url = WIRE_PROTOCOLS[protocol].build_request(spec, REQUEST).url
    with respx.mock, capture_logs() as events:
        respx.post(url).mock(
            side_effect=[
                httpx.Response(500, text=f"upstream rejected key {KEY}"),
                httpx.ConnectError(f"cannot reach proxy with {KEY}"),
                httpx.Response(200, text=f"<html>key {KEY} is fine</html>"),
            ]
        )
        async with mockable() as pool:
            with pytest.raises(InvalidResponse) as caught:
                await pool.client(spec).complete(REQUEST, deadline=anyio.current_time() + 2)
    assert len(caught.value.attempts) == 3
    assert_clean(*error_texts(caught.value), repr(events))
    assert [e["event"] for e in events] == ["provider_retry_scheduled"] * 2
