"""An encrypted client key is opened with the pass phrase `client_key_password_env` names,
and never by asking on the terminal: without one the config is refused in one line naming
the key file and the setting."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import providers
from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from providers.tls import tls_context

PHRASE = "correct horse battery"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A self-signed client certificate (cert.pem) with its key encrypted (enc.key), and the
    same certificate and key in one file, encrypted (both.pem)."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl CLI to make the test key")
    folder = tmp_path_factory.mktemp("keys")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-keyout", "enc.key", "-out", "cert.pem",
            "-days", "2", "-subj", "/CN=seat", "-passout", f"pass:{PHRASE}")  # fmt: skip
    (folder / "both.pem").write_text(
        (folder / "cert.pem").read_text() + (folder / "enc.key").read_text()
    )
    return folder


def test_without_a_pass_phrase_the_error_names_the_file_and_the_setting(keys: Path) -> None:
    key = str(keys / "enc.key")
    with pytest.raises(ValueError, match="client_key_password_env") as refused:
        tls_context("certifi", None, str(keys / "cert.pem"), key)
    assert f"client_key = {key!r} is an encrypted private key" in str(refused.value)
    with pytest.raises(ValueError, match=r"client_cert = .*both\.pem.* is an encrypted"):
        tls_context("certifi", None, str(keys / "both.pem"))


def test_with_the_pass_phrase_the_key_opens_and_a_wrong_one_is_named(keys: Path) -> None:
    tls_context("certifi", None, str(keys / "cert.pem"), str(keys / "enc.key"), PHRASE)
    tls_context("certifi", None, str(keys / "both.pem"), None, PHRASE)
    with pytest.raises(ValueError, match="cannot be opened with the pass phrase") as wrong:
        tls_context("certifi", None, str(keys / "cert.pem"), str(keys / "enc.key"), "nope")
    assert "nope" not in str(wrong.value)


def _config(keys: Path, **settings: str) -> dict[str, object]:
    model = {"kind": "llm", "provider": "openai", "model": "m", "base_url": "https://127.0.0.1:9/v1",
             "client_cert": str(keys / "cert.pem"), "client_key": str(keys / "enc.key"), **settings}  # fmt: skip
    return {
        "run": {"name": "keyed", "seed": 1, "games": ["connect-four"], "matches": 1},
        "policies": {"tactician": {"kind": "scripted"}, "model": model},
    }


def test_the_config_check_refuses_an_encrypted_key_without_a_pass_phrase_in_one_line(
    keys: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as refused:
        plan_run(parse_config(_config(keys)), tmp_path / "out")
    message = str(refused.value)
    assert "\n" not in message
    assert str(keys / "enc.key") in message
    assert "client_key_password_env" in message


def test_a_pass_phrase_variable_that_is_not_set_is_named(
    keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEAT_KEY_PHRASE", raising=False)
    with pytest.raises(ConfigError, match="client_key_password_env names SEAT_KEY_PHRASE"):
        plan_run(
            parse_config(_config(keys, client_key_password_env="SEAT_KEY_PHRASE")), tmp_path / "o"
        )


def test_with_the_variable_set_the_plan_is_made_and_the_phrase_is_a_secret(
    keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEAT_KEY_PHRASE", PHRASE)
    config = parse_config(_config(keys, client_key_password_env="SEAT_KEY_PHRASE"))
    plan = plan_run(config, tmp_path / "out")
    assert PHRASE in config.secrets()
    assert (
        PHRASE not in plan.redactor.text(f"the phrase is {PHRASE}")
        if hasattr(plan, "redactor")
        else True
    )
    [spec] = config.policies["model"].specs({"SEAT_KEY_PHRASE": PHRASE})  # type: ignore[union-attr]
    assert PHRASE not in repr(spec)
    assert spec.redact(f"said {PHRASE}") == "said [redacted]"


def test_a_pass_phrase_without_a_client_certificate_is_refused() -> None:
    with pytest.raises(ValueError, match="set client_cert"):
        providers.EndpointSettings(provider="openai", model="m", client_key_password_env="X")


def test_arena_run_never_reads_standard_input(keys: Path, tmp_path: Path) -> None:
    """An encrypted key without its pass phrase, and a terminal's worth of standard input
    held open and never written: `arena run` refuses the config at once instead of waiting
    for a pass phrase there."""
    import os
    import sys

    config = tmp_path / "keyed.toml"
    config.write_text(
        f"""
[run]
name = "keyed"
seed = 1
games = ["connect-four"]
matches = 1
[policies.tactician]
kind = "scripted"
[policies.model]
kind = "llm"
provider = "openai"
model = "m"
base_url = "https://127.0.0.1:9/v1"
client_cert = "{keys / "cert.pem"}"
client_key = "{keys / "enc.key"}"
"""
    )
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(tmp_path / "o")]
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen(
        [*command, "--no-progress"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(root)},
    ) as running:  # fmt: skip
        running.wait(timeout=60)  # standard input stays open and empty until it exits
        assert running.stderr is not None
        err = running.stderr.read()
    assert running.returncode == 2, err
    assert "client_key_password_env" in err
    assert str(keys / "enc.key") in err
