"""Whatever a server sends, parsing ends in a Completion or a typed error, never a crash."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import PROTOCOLS, InvalidResponse, ProviderSpec, WireProtocolName
from providers.pool import WIRE_PROTOCOLS
from providers.retry import retry_after_from_headers

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.sampled_from(
            ["choices", "message", "content", "candidates", "parts", "text", "usage", "type",
             "finish_reason", "stop_reason", "finishReason", "usageMetadata", "error", "details",
             "prompt_tokens", "cached_tokens", "promptFeedback", "blockReason", "retryDelay"]
        ),
        children,
        max_size=5,
    ),
    max_leaves=20,
)  # fmt: skip


@pytest.mark.parametrize("protocol", PROTOCOLS)
@settings(max_examples=150, deadline=None)
@given(body=json_values)
def test_any_json_body_parses_or_is_invalid(protocol: WireProtocolName, body: Any) -> None:
    spec = ProviderSpec(protocol=protocol, model="m")
    wire = WIRE_PROTOCOLS[protocol]
    raw = json.dumps(body).encode()
    try:
        completion = wire.parse_response(spec, 200, {}, raw)
    except InvalidResponse:
        return
    assert isinstance(completion.text, str)
    assert completion.stop_reason in (
        "stop",
        "length",
        "content_filter",
        "refusal",
        "error",
        "unknown",
    )
    hint = wire.retry_after_from_body(raw)
    assert hint is None or hint >= 0


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["retry-after", "retry-after-ms"]), st.text(max_size=40)))
def test_any_retry_header_reads_as_a_wait_or_nothing(headers: dict[str, str]) -> None:
    wait = retry_after_from_headers(headers)
    assert wait is None or 0 <= wait < float("inf")


@given(seconds=st.integers(0, 10**6), millis=st.integers(0, 10**9) | st.none())
def test_a_numeric_retry_header_reads_as_its_value(seconds: int, millis: int | None) -> None:
    headers = {"retry-after": str(seconds)}
    if millis is not None:
        headers["retry-after-ms"] = str(millis)  # the finer one wins
    expected = millis / 1000 if millis is not None else seconds
    assert retry_after_from_headers(headers) == expected


BODIES = {
    "openai": '{{"choices": [{{"message": {{"content": "{text}"}}, "finish_reason": "stop"}}]}}',
    "anthropic": '{{"content": [{{"type": "text", "text": "{text}"}}], "stop_reason": "end_turn"}}',
    "gemini": '{{"candidates": [{{"content": {{"parts": [{{"text": "{text}"}}]}}}}]}}',
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_lone_surrogate_escape_becomes_a_replacement_character(
    protocol: WireProtocolName,
) -> None:
    spec = ProviderSpec(protocol=protocol, model="m")
    raw = BODIES[protocol].format(text='\\ud800 {\\"move\\": \\"d\\"}').encode()
    completion = WIRE_PROTOCOLS[protocol].parse_response(spec, 200, {}, raw)
    assert completion.text == '\ufffd {"move": "d"}'
    completion.text.encode("utf-8")  # what the writer will do: it must not raise


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_undecodable_bytes_are_replaced_not_refused(protocol: WireProtocolName) -> None:
    spec = ProviderSpec(protocol=protocol, model="m")
    raw = BODIES[protocol].format(text="caf\xe9 d").encode("latin-1")
    completion = WIRE_PROTOCOLS[protocol].parse_response(spec, 200, {}, raw)
    assert completion.text == "caf\ufffd d"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_json_nested_too_deep_is_an_invalid_response(protocol: WireProtocolName) -> None:
    spec = ProviderSpec(protocol=protocol, model="m")
    deep = b'{"a": ' * 100_000 + b"1" + b"}" * 100_000
    with pytest.raises(InvalidResponse, match="not a JSON object"):
        WIRE_PROTOCOLS[protocol].parse_response(spec, 200, {}, deep)
    assert WIRE_PROTOCOLS[protocol].retry_after_from_body(deep) is None
