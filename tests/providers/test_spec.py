"""Specs: default endpoints, validation that names the fix, and cost from usage."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from providers import DEFAULT_BASE_URLS, PROTOCOLS, Price, ProviderSpec, Usage


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_protocol_has_its_default_base_url(protocol: str) -> None:
    spec = ProviderSpec.model_validate({"protocol": protocol, "model": "m"})
    assert spec.base_url == DEFAULT_BASE_URLS[protocol]  # type: ignore[index]
    assert spec.api_key is None
    assert spec.max_connections == 16


def test_base_url_keeps_no_trailing_slash() -> None:
    spec = ProviderSpec(protocol="openai", model="m", base_url="http://127.0.0.1:8765/v1/")
    assert spec.base_url == "http://127.0.0.1:8765/v1"


def test_bad_base_url_names_the_value_and_the_fix() -> None:
    with pytest.raises(ValidationError, match=r"'localhost:8000' must start with http://"):
        ProviderSpec(protocol="openai", model="m", base_url="localhost:8000")


@pytest.mark.parametrize(
    "fields",
    [
        {"protocol": "cohere", "model": "m"},
        {"protocol": "openai", "model": ""},
        {"protocol": "openai", "model": "m", "max_connections": 0},
        {"protocol": "openai", "model": "m", "api_key_env": "OPENAI_API_KEY"},
    ],
)
def test_invalid_fields_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ProviderSpec.model_validate(fields)


def test_cost_uses_each_price_and_defaults_cache_prices_to_input() -> None:
    usage = Usage(input_uncached=1_000_000, cache_read=2_000_000, cache_write=100_000, output=10)
    price = Price(
        input_per_mtok=3.0,
        output_per_mtok=15.0,
        cached_input_per_mtok=0.3,
        cache_write_per_mtok=3.75,
    )
    assert price.cost_usd(usage) == pytest.approx(3.0 + 0.6 + 0.375 + 0.00015)
    plain = Price(input_per_mtok=1.0, output_per_mtok=2.0)
    assert plain.cost_usd(usage) == pytest.approx(1.0 + 2.0 + 0.1 + 0.00002)


def test_cost_is_unknown_without_prices_or_counts() -> None:
    priced = ProviderSpec(
        protocol="anthropic", model="m", price=Price(input_per_mtok=1, output_per_mtok=1)
    )
    assert priced.cost_usd(Usage()) is None
    assert priced.cost_usd(Usage(output=1_000_000)) == pytest.approx(1.0)
    assert ProviderSpec(protocol="anthropic", model="m").cost_usd(Usage(output=5)) is None


def test_specs_are_frozen() -> None:
    spec = ProviderSpec(protocol="gemini", model="m")
    with pytest.raises(ValidationError):
        spec.model = "other"  # type: ignore[misc]
