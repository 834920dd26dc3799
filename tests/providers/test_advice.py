"""The advice table: one sentence per problem, the same wherever it is said."""

from __future__ import annotations

import pytest

import providers
from providers.advice import advise, schema_form_refused


@pytest.mark.parametrize(
    ("status", "body", "setting", "says"),
    [
        (401, "", "LAB_KEY", "check the key in the variable LAB_KEY (api_key_env)"),
        (403, "", "", "check the key in the variable api_key_env names"),
        (404, "", "m-7", "it does not know the model 'm-7' or the path"),
        (413, "<html>413</html>", "", "client_max_body_size"),
        (429, "", "", "lower max_connections"),
        (400, "response_format is not supported", "", 'schema_style = "json_object"'),
        (500, "unknown response_format", "", 'schema_style = "json_object"'),
        (400, "No required SSL certificate was sent", "", "set client_cert (and client_key)"),
        (400, "No required SSL certificate was sent", "c.pem", "check client_cert (c.pem)"),
        (422, "bad things", "", "it refuses every completion with HTTP 422: check base_url"),
        (None, "", "", "its answers are not openai completions"),
        ("proxy_refused", "", "socks5://127.0.0.1:1080 (from ALL_PROXY)", "the proxy socks5"),
        ("proxy_auth", "", "http://p:3128 (from HTTPS_PROXY)", "rejected its credentials (407)"),
        (407, "", "http://p:3128 (from HTTPS_PROXY)", "rejected its credentials (407)"),
        ("certificate", "", "", "ca_bundle"),
        ("reset", "", "", "cut off before its body ends"),
        ("gateway_wait", "", "about 2.0 s", "proxy_read_timeout"),
    ],
)
def test_each_problem_has_its_sentence(
    status: int | providers.Problem | None, body: str, setting: str, says: str
) -> None:
    assert says in advise("openai", status, body, setting=setting)


def test_a_server_failure_has_nothing_to_change() -> None:
    # a 5xx of the server's own, or a gateway's one 504: the arena retries and waits
    assert advise("openai", 500, "oops") == ""
    assert advise("openai", 504, "<html>504 Gateway Time-out</html>") == ""
    assert advise("openai", 200) == ""


def test_the_setting_names_the_proxy_and_its_variable() -> None:
    said = advise("openai", "proxy_refused", setting="socks5://127.0.0.1:1080 (from ALL_PROXY)")
    assert said.startswith(
        "the proxy socks5://127.0.0.1:1080 (from ALL_PROXY) refused the connection"
    )


def test_a_schema_form_is_read_from_the_body() -> None:
    assert schema_form_refused("'Response_Format' must be an object")
    assert not schema_form_refused("context length exceeded")


def test_every_problem_has_a_sentence() -> None:
    from typing import get_args

    for problem in get_args(providers.Problem):
        assert advise("anthropic", problem).strip()
