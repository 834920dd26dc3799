"""Leagues through nginx over TLS: a gateway with a private CA, and one that asks for a client
certificate (mutual TLS).

nginx serves HTTP/2 and HTTP/1.1 on the TLS port (ALPN picks one) with a certificate
for `localhost` signed by the tests' own CA, which no default trust holds.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.nginx.conftest import Gateway, StartMock
from tests.nginx.league import assert_clean, llm_policy, play, write_league

pytestmark = pytest.mark.nginx


def _mutual(certificates: Path) -> str:
    return f"ssl_client_certificate {certificates / 'ca.pem'};\nssl_verify_client on;"


@pytest.mark.parametrize("trust", ["certifi", "system"])
def test_a_private_ca_in_ca_bundle_is_trusted_beside_the_default_trust(
    tmp_path: Path,
    mock_llm: StartMock,
    gateway: Gateway,
    certificates: Path,
    trust: str,
) -> None:
    upstream = mock_llm()
    nginx = gateway(upstream.port, tls=certificates)
    shutil.copy(certificates / "ca.pem", tmp_path / "gateway-ca.pem")
    # A path relative to the config's folder (arena runs from the repository).
    model = llm_policy(f"{nginx.url}/v1", ca_bundle="gateway-ca.pem")
    played = play(write_league(tmp_path, "private-ca", model, run={"trust": trust}))
    assert_clean(played)
    completions = [r for r in nginx.access() if r["method"] == "POST"]
    assert len(completions) == upstream.app.requests > 0
    assert {r["status"] for r in completions} == {200}


def test_without_ca_bundle_the_preflight_stops_the_run_naming_ca_bundle(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway, certificates: Path
) -> None:
    upstream = mock_llm()
    nginx = gateway(upstream.port, tls=certificates)
    played = play(write_league(tmp_path, "untrusted", llm_policy(f"{nginx.url}/v1")))
    assert played.returncode == 2, played.why()  # a config error: before any game
    assert "ca_bundle" in played.stderr, played.why()
    assert "policies.model" in played.stderr, played.why()
    assert played.replays() == []
    assert upstream.app.requests == 0


def test_an_untrusted_certificate_met_in_the_run_is_a_misconfiguration_not_an_outage(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway, certificates: Path
) -> None:
    """Without the preflight, the first completion meets the certificate nothing trusts: the
    run stops at once (exit 3, one endpoint_misconfigured event naming ca_bundle and trust),
    instead of waiting it out as an outage until endpoint_down_s."""
    upstream = mock_llm()
    nginx = gateway(upstream.port, tls=certificates)
    config = write_league(tmp_path, "untrusted-in-run", llm_policy(f"{nginx.url}/v1"),
                          run={"endpoint_down_s": 60})  # fmt: skip
    played = play(config, more=("--no-preflight",))
    assert played.returncode == 3, played.why()
    [event] = played.events("endpoint_misconfigured")
    assert "ca_bundle" in event["fix"]
    assert "trust" in event["fix"]
    assert played.events("endpoint_down") == []
    assert "certificate" in played.stderr
    assert upstream.app.requests == 0


def test_without_client_cert_a_gateway_asking_for_one_stops_the_run(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway, certificates: Path
) -> None:
    """The gateway answers 400 ("No required SSL certificate was sent") to every request: the run
    stops at the preflight, or at the completions as a misconfigured endpoint (exit 3); either
    way naming the status and client_cert as the fix."""
    upstream = mock_llm()
    nginx = gateway(upstream.port, tls=certificates, server=_mutual(certificates))
    model = llm_policy(f"{nginx.url}/v1", ca_bundle=str(certificates / "ca.pem"))
    played = play(write_league(tmp_path, "no-client-cert", model))
    if played.returncode == 2:  # the preflight's
        assert "400" in played.stderr, played.why()
        assert "client_cert" in played.stderr, played.why()
        assert played.replays() == []
    else:
        assert played.returncode == 3, played.why()
        events = played.events("endpoint_misconfigured")
        assert len(events) == 1, events
        assert events[0]["status"] == 400
        assert events[0]["policy"] == "model"
        assert "client_cert" in events[0]["fix"]
    assert upstream.app.requests == 0  # nginx turned every request away
    assert {r["client_verify"] for r in nginx.access()} == {"NONE"}


def test_with_client_cert_and_key_a_gateway_asking_for_one_plays(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway, certificates: Path
) -> None:
    upstream = mock_llm()
    nginx = gateway(upstream.port, tls=certificates, server=_mutual(certificates))
    model = llm_policy(
        f"{nginx.url}/v1",
        ca_bundle=str(certificates / "ca.pem"),
        client_cert=str(certificates / "client.pem"),
        client_key=str(certificates / "client.key"),
    )
    played = play(write_league(tmp_path, "client-cert", model))
    assert_clean(played)
    seen = nginx.access()
    assert seen
    assert {r["client_verify"] for r in seen} == {"SUCCESS"}
    assert {r["status"] for r in seen} == {200}


def test_an_encrypted_client_key_plays_with_its_pass_phrase_from_the_environment(
    tmp_path: Path,
    mock_llm: StartMock,
    gateway: Gateway,
    certificates: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client key encrypted with a pass phrase: client_key_password_env names the variable
    that holds it, the run plays (nothing asks on a terminal), and the phrase is in no file
    the run writes."""
    phrase = "tls-pass-phrase-0417"
    key = tmp_path / "client-encrypted.key"
    subprocess.run(
        ["openssl", "pkey", "-in", str(certificates / "client.key"), "-aes256", "-out", str(key),
         "-passout", f"pass:{phrase}"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    assert b"ENCRYPTED" in key.read_bytes()
    monkeypatch.setenv("SEAT_KEY_PHRASE", phrase)
    upstream = mock_llm()
    nginx = gateway(upstream.port, tls=certificates, server=_mutual(certificates))
    model = llm_policy(
        f"{nginx.url}/v1",
        ca_bundle=str(certificates / "ca.pem"),
        client_cert=str(certificates / "client.pem"),
        client_key=str(key),
        client_key_password_env="SEAT_KEY_PHRASE",
    )
    played = play(write_league(tmp_path, "encrypted-key", model))
    assert_clean(played)
    assert {r["client_verify"] for r in nginx.access()} == {"SUCCESS"}
    written = [p for p in played.out.rglob("*") if p.is_file()]
    assert written
    assert [p for p in written if phrase.encode() in p.read_bytes()] == []
    assert phrase not in played.stdout + played.stderr
