"""The table of settings declares every key of every config model once, and the
fingerprint, the replay's record and the resume check are what it says."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

import arena.config
import arena.config.models as models
from arena.config import AuthorTable, PolicyConfig
from arena.config.settings import ACCEPTED, ASKED_AS, CONNECTION_SETTINGS, SETTINGS, pool_takes
from arena.config.watch import WatchSettings
from arena.league.lineup import RESUME_ACCEPTS
from arena.league.pool import POOL_ACCEPTS
from arena.play.fingerprint import fingerprint, played_as, plays
from providers import EndpointSettings

WHERE: dict[type[BaseModel], str] = {
    models.Config: "",
    models.RunTable: "run.",
    models.SprtTable: "run.sprt.",
    AuthorTable: "author.",
    WatchSettings: "run.",  # the keys RunTable takes from it
    models.Deadlines: "deadlines.",
    models.GameTable: "game.*.",
    models.ScriptedPolicy: "policies.*.",
    models.MockPolicy: "policies.*.",
    models.LlmPolicy: "policies.*.",
    models.ProgramPolicy: "policies.*.",
    models.HumanPolicy: "policies.*.",
    EndpointSettings: "policies.*.",
}
"""Where each config model's keys sit in a config document."""


def _config_models() -> list[type[BaseModel]]:
    """Every pydantic model of the modules of `arena.config` (each its own, not imported)
    and the endpoint settings an `llm` policy is made of."""
    modules = [
        importlib.import_module(f"arena.config.{info.name}")
        for info in pkgutil.iter_modules(arena.config.__path__)
    ]
    found = [
        cls
        for module in modules
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseModel) and cls.__module__ == module.__name__
    ]
    return [*found, EndpointSettings]


@pytest.mark.parametrize("model", _config_models(), ids=lambda m: m.__name__)
def test_every_key_of_every_config_model_is_declared(model: type[BaseModel]) -> None:
    if model.__name__.startswith("_"):
        return  # a base: its keys are its subclasses'
    assert model in WHERE, f"{model.__name__}: say where its keys sit in WHERE and declare them"
    prefix = WHERE[model]
    tables = {p.split(".")[0] for p in WHERE.values() if p}
    for key in model.model_fields:
        path = f"{prefix}{key}"
        if model is models.Config:
            assert key in tables, f"Config.{key} is a table no model in WHERE stands for"
            continue
        assert path in SETTINGS, f"{path} is not in arena.config.settings.SETTINGS: declare it"


def test_every_declared_setting_is_a_key_of_some_config_model() -> None:
    keys = {f"{WHERE[m]}{key}" for m in _config_models() if m in WHERE for key in m.model_fields}
    assert sorted(set(SETTINGS) - keys) == []


def test_what_a_replay_records_of_a_model_stays_as_it_was() -> None:
    # A replay records these, in this order: a shipped config's replays must not change.
    assert ASKED_AS == (
        "provider", "model", "base_url", "max_tokens", "temperature", "seed", "json_mode",
        "decoding", "schema_style", "params", "layout", "prompt_cache",
    )  # fmt: skip


def test_what_a_resume_and_a_pool_take_is_what_the_table_says() -> None:
    assert set(RESUME_ACCEPTS) == {
        p for p, s in SETTINGS.items() if s.effect in ("connects", "runs")
    }
    assert set(POOL_ACCEPTS) == {*ACCEPTED, "policies.*.retired"}
    assert set(pool_takes("raise")) == {"run.matches", "run.target", "run.round_matches"}
    for path in ("policies.*.base_url", "policies.*.api_key_env", "policies.*.headers",
                 "policies.*.max_connections", "policies.*.price", "policies.*.prompt_cache",
                 "run.concurrency", "run.executor", "run.endpoint_down_s", "run.trust"):  # fmt: skip
        assert path in RESUME_ACCEPTS, path
    for path in ("policies.*.model", "policies.*.temperature", "policies.*.author", "run.seed",
                 "run.matches", "deadlines.decision_s", "run.max_infra_share"):  # fmt: skip
        assert path not in RESUME_ACCEPTS, path
    assert set(CONNECTION_SETTINGS) == {
        "base_url", "api_key_env", "ca_bundle", "client_cert", "client_key",
        "client_key_password_env", "headers", "headers_env", "idle_expiry_s",
    }  # fmt: skip


POLICY: TypeAdapter[Any] = TypeAdapter(PolicyConfig)
CHANGED: dict[str, Any] = {
    "kind": None, "prompt": None, "provider": "gemini", "model": "other",
    "max_tokens": 9, "temperature": 0.5, "seed": 3, "json_mode": True, "decoding": "json",
    "schema_style": "json_object", "params": {"top_p": 0.5}, "layout": "chat",
    "max_response_bytes": 2048, "retry_lists_moves": True, "faults": {"illegal": 0.5},
    "latency_ms": 5, "path": None, "timeout_s": 3, "baseline": "random", "name": "Ada",
    "first_reply_s": 10, "decision_s": 20,
}  # fmt: skip
"""A value other than the default for each policy key that plays (None: not as written)."""

BASE: dict[str, dict[str, Any]] = {
    "llm": {"kind": "llm", "provider": "openai", "model": "m"},
    "mock": {"kind": "mock"},
    "program": {"kind": "program", "path": "p.py"},
    "scripted": {"kind": "scripted"},
    "human": {"kind": "human"},
}


@pytest.mark.parametrize("kind", sorted(BASE))
def test_each_setting_that_plays_moves_the_fingerprint_and_no_other_does(kind: str) -> None:
    spec = POLICY.validate_python(BASE[kind])
    base = fingerprint(played_as(spec, templates={"board": "a" * 64}))
    for key in type(spec).model_fields:
        value = CHANGED.get(key)
        setting = SETTINGS[f"policies.*.{key}"]
        if setting.effect == "plays" and value is None:
            continue  # kind, prompt (its template's hash) and path (its file's) enter as such
        if key == "schema_style":
            other = {**BASE[kind], "decoding": "schema", "schema_style": value}
            schema = fingerprint(played_as(POLICY.validate_python({**BASE[kind], "decoding": "schema"}),
                                           templates={"board": "a" * 64}))  # fmt: skip
            moved = fingerprint(
                played_as(POLICY.validate_python(other), templates={"board": "a" * 64})
            )
            assert moved != schema, key
            continue
        if setting.effect == "plays":
            changed = {**BASE[kind], key: value}
            if key == "json_mode":
                changed.pop("decoding", None)
            other = POLICY.validate_python(changed)
            assert fingerprint(played_as(other, templates={"board": "a" * 64})) != base, key
            assert key in plays(type(spec))


def test_settings_that_do_not_play_leave_the_fingerprint_alone() -> None:
    spec = {"kind": "llm", "provider": "anthropic", "model": "m", "layout": "chat"}
    base = fingerprint(played_as(POLICY.validate_python(spec), templates={}))
    for other in (
        {"base_url": "http://b.example/v1"}, {"api_key_env": "KEY"}, {"max_connections": 2},
        {"price": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}, {"prompt_cache": True},
        {"headers": {"x-team": "a"}}, {"idle_expiry_s": 1.0}, {"author": "lab"},
    ):  # fmt: skip
        changed = POLICY.validate_python({**spec, **other})
        assert fingerprint(played_as(changed, templates={})) == base, other
