"""Specs: default endpoints, validation that names the fix, and cost from usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from providers import (
    DEFAULT_BASE_URLS,
    PROTOCOLS,
    EndpointSettings,
    Price,
    ProviderSpec,
    Usage,
)


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


def test_settings_make_a_spec_per_replica_with_the_secrets_of_the_environment() -> None:
    settings = EndpointSettings(
        provider="openai", model="m", base_url=["http://a:1/v1/", "http://b:2/v1"],
        api_key_env="KEY", headers={"x-tenant": "lab"}, headers_env={"api-key": "GATEWAY"},
        client_cert=Path("client.pem"), params={"top_p": 0.5}, max_connections=3,
    )  # fmt: skip
    first, second = settings.specs({"KEY": "sk-1", "GATEWAY": "g-2"})
    assert (first.base_url, second.base_url) == ("http://a:1/v1", "http://b:2/v1")
    assert first.protocol == "openai"
    assert first.reveal_key() == "sk-1"
    assert first.extra_headers() == {"x-tenant": "lab", "api-key": "g-2"}
    assert first.client_cert == "client.pem"
    assert first.params == {"top_p": 0.5}
    assert first.max_connections == 3
    (default,) = EndpointSettings(provider="gemini", model="m").specs({})
    assert default.base_url == DEFAULT_BASE_URLS["gemini"]
    assert default.api_key is None


def test_settings_paths_are_read_from_the_config_folder_unless_absolute() -> None:
    settings = EndpointSettings(
        provider="openai", model="m", ca_bundle=Path("ca.pem"), client_cert=Path("/etc/c.pem")
    )
    located = settings.located(Path("/configs"))
    assert located.ca_bundle == Path("/configs/ca.pem")
    assert located.client_cert == Path("/etc/c.pem")


@pytest.mark.parametrize(
    ("fields", "refusal"),
    [
        ({"params": {"stream": True}}, "params.stream is a field the arena sets itself"),
        ({"client_key": "k.pem"}, "client_key is the private key of client_cert"),
        ({"headers": {"bad name": "v"}}, "header name 'bad name' is not an HTTP token"),
        ({"headers": {"Host": "h"}}, "header 'Host' is written by the HTTP client"),
        ({"headers": {"x-a": "1", "X-A": "2"}}, "header 'x-a' is given twice"),
        ({"headers": {"x-a": "1\r\nx-b: 2"}}, "a header value holds a line break"),
    ],
)
def test_settings_and_a_spec_made_by_hand_refuse_alike(
    fields: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(ValidationError, match=refusal):
        EndpointSettings.model_validate({"provider": "openai", "model": "m", **fields})
    with pytest.raises(ValidationError, match=refusal):
        ProviderSpec.model_validate({"protocol": "openai", "model": "m", **fields})


def test_a_secret_header_from_the_environment_is_checked_when_the_spec_is_made() -> None:
    settings = EndpointSettings(provider="openai", model="m", headers_env={"api-key": "GW"})
    with pytest.raises(ValidationError, match="a header value holds a line break"):
        settings.specs({"GW": "s3cret\r\nx-evil: 1"})


def test_a_secret_header_named_like_a_plain_one_is_refused_once_written() -> None:
    with pytest.raises(ValidationError, match="header 'x-a' is given twice"):
        EndpointSettings(
            provider="openai", model="m", headers={"X-A": "1"}, headers_env={"x-a": "A"}
        )
