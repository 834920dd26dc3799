"""Gemini generateContent: the exact request, and the reading of real-shaped replies."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import respx

from providers import CompletionRequest, Providers, ProviderSpec, RateLimited, Usage
from providers import gemini as wire

pytestmark = pytest.mark.anyio

SPEC = ProviderSpec(protocol="gemini", model="gemini-2.5-flash", api_key="AIza-test")
URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"


def reply(finish: str | None = "STOP") -> dict[str, Any]:
    """A generateContent body as Gemini sends it, with a thought part and cached tokens."""
    candidate: dict[str, Any] = {
        "content": {
            "parts": [
                {"text": "Weighing e4 against d4.", "thought": True},
                {"text": '{"move": "e4"}'},
            ],
            "role": "model",
        },
        "index": 0,
    }
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": 2100,
            "candidatesTokenCount": 12,
            "totalTokenCount": 2412,
            "cachedContentTokenCount": 2048,
            "thoughtsTokenCount": 300,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 2100}],
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mIu9aPWuDoKZ1MkPqs3H8QM",
    }


@respx.mock
async def test_request_has_header_key_and_generation_config(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    route = respx.post(URL).respond(json=reply())
    request = CompletionRequest(
        prompt="your move",
        system="you play hex",
        max_tokens=300,
        temperature=0.0,
        seed=11,
        json_object=True,
    )
    await pool.client(SPEC).complete(request, deadline=deadline(2))
    sent = route.calls.last.request
    assert sent.method == "POST"
    assert sent.headers["x-goog-api-key"] == "AIza-test"
    assert "key=" not in str(sent.url)
    assert json.loads(sent.content) == {
        "contents": [{"role": "user", "parts": [{"text": "your move"}]}],
        "systemInstruction": {"parts": [{"text": "you play hex"}]},
        "generationConfig": {
            "maxOutputTokens": 300,
            "temperature": 0.0,
            "seed": 11,
            "responseMimeType": "application/json",
        },
    }


def test_models_prefix_is_not_doubled() -> None:
    spec = ProviderSpec(protocol="gemini", model="models/gemini-2.5-flash")
    assert wire.build_request(spec, CompletionRequest("go", 5)).url == URL


@respx.mock
async def test_reply_skips_thoughts_and_bills_them_as_output(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    respx.post(URL).respond(json=reply())
    completion = await pool.client(SPEC).complete(CompletionRequest("go", 50), deadline=deadline(2))
    assert completion.text == '{"move": "e4"}'
    assert completion.usage == Usage(
        input_uncached=52, cache_read=2048, cache_write=None, output=312, reasoning=300
    )
    assert completion.request_id == "mIu9aPWuDoKZ1MkPqs3H8QM"
    assert completion.model == "gemini-2.5-flash"


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "error"),
        ("OTHER", "unknown"),
        ("FINISH_REASON_UNSPECIFIED", "unknown"),
        ("SOMETHING_NEW", "unknown"),
        (None, "unknown"),
    ],
)
def test_finish_reasons_map_and_unknown_never_becomes_stop(
    finish: str | None, expected: str
) -> None:
    completion = wire.parse_response(SPEC, 200, {}, json.dumps(reply(finish)).encode())
    assert completion.stop_reason == expected
    assert completion.raw_stop_reason == finish


def test_blocked_prompt_is_a_content_filter_stop() -> None:
    body = {
        "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
    }
    completion = wire.parse_response(SPEC, 200, {}, json.dumps(body).encode())
    assert completion.stop_reason == "content_filter"
    assert completion.raw_stop_reason == "promptFeedback.blockReason=SAFETY"
    assert completion.text == ""
    assert completion.usage == Usage(input_uncached=8)


def quota_error(delay: str) -> dict[str, Any]:
    """A 429 body as Gemini sends it, with its RetryInfo detail."""
    return {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{"quotaMetric": "generate_content_free_tier_requests"}],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
            ],
        }
    }


@pytest.mark.parametrize(
    ("delay", "seconds"), [("37s", 37.0), ("0.050s", 0.05), ("1.5s", 1.5), ("soon", None)]
)
def test_retry_delay_is_read_from_the_error_body(delay: str, seconds: float | None) -> None:
    assert wire.retry_after_from_body(json.dumps(quota_error(delay)).encode()) == seconds


def test_bodies_without_retry_info_give_no_delay() -> None:
    assert wire.retry_after_from_body(b"not json") is None
    assert wire.retry_after_from_body(b'{"error": {"code": 500}}') is None


@respx.mock
async def test_retry_info_is_the_wait_before_the_next_attempt(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    respx.post(URL).mock(
        side_effect=[
            respx.MockResponse(429, json=quota_error("0.030s")),
            respx.MockResponse(200, json=reply()),
        ]
    )
    completion = await pool.client(SPEC).complete(CompletionRequest("go", 50), deadline=deadline(2))
    assert [(a.status, a.wait_s) for a in completion.attempts] == [(429, 0.03), (200, 0.0)]
    assert completion.latency_s >= 0.03


@respx.mock
async def test_retry_info_past_the_deadline_fails_at_once(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    route = respx.post(URL).respond(429, json=quota_error("37s"))
    with pytest.raises(RateLimited) as caught:
        await pool.client(SPEC).complete(CompletionRequest("go", 50), deadline=deadline(5))
    assert caught.value.retry_after == 37.0
    assert route.call_count == 1
