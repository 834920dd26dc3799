"""Leagues through LiteLLM's proxy, in every protocol and every decoding it offers.

Every league of the module is played at once (each `arena run` is a process of its
own; the proxies serve them all), then each test reads its league: what the
replay records of every attempt against what the mock behind the proxy received,
the fallbacks' causes and sides where the mock's faults are on, a rate limit the
proxy passes on until it lifts, a key the proxy does not know, a proxy that routes
Anthropic's messages where the backend has no route, and `arena verify`.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from tests.gateways.conftest import Gateways, Received, RecordingMock
from tests.gateways.league import (
    KEY_ENV,
    Asked,
    asked,
    legal_moves,
    policy,
    prompt_of,
    run,
    sent_form,
    verify,
    write,
)
from tests.gateways.proxy import MASTER_KEY
from tests.nginx.league import Played

pytestmark = [pytest.mark.litellm, pytest.mark.usefixtures("gateway_logs")]

WRONG_KEY_ENV = "COG_GATEWAY_WRONG_KEY"
"""The variable the wrong-key league's policy names: a key the proxy never issued."""

SHORT = {"first_reply_s": 5, "retry_s": 3, "decision_s": 10}
"""The faulty leagues' deadlines: a fault costs an attempt its whole deadline (the mock
answers the same body with the same fault, however often it is asked)."""


@dataclass(frozen=True)
class League:
    """A league of the module: its policies (each with the proxy and the model group it
    asks), and how it runs."""

    policies: dict[str, dict[str, Any]]
    run: dict[str, Any] | None = None
    deadlines: dict[str, float] | None = None


TACTICIAN = {"kind": "scripted", "baseline": "tactician"}


def leagues(routed: str, plain: str) -> dict[str, League]:
    """Every league of the module, by name, against the proxies' root URLs."""
    return {
        # One model group each: the pair differs in decoding (or its form) only.
        "openai-ab": League(
            {
                "free": policy("openai", routed, "openai-ab"),
                "json": policy("openai", routed, "openai-ab", decoding="json"),
            }
        ),
        "openai-forms": League(
            {
                "strict": policy("openai", routed, "openai-forms", decoding="schema"),
                "object": policy(
                    "openai", routed, "openai-forms", decoding="schema", schema_style="json_object"
                ),
            }
        ),
        # A model group named as gateways name them: Anthropic's probe path holds it as one
        # segment, which LiteLLM has no route for (a warning, not a refusal).
        "anthropic": League(
            {
                "free": policy("anthropic", routed, "team/claude"),
                "schema": policy("anthropic", routed, "team/claude", decoding="schema"),
            }
        ),
        # LiteLLM has no Gemini model lookup: the probe's 404 is only a warning.
        "gemini": League(
            {
                "free": policy("gemini", routed, "gemini-free"),
                "json": policy("gemini", routed, "gemini-json", decoding="json"),
                "schema": policy("gemini", routed, "gemini-schema", decoding="schema"),
            }
        ),
        "faulty": League(
            {"model": policy("openai", routed, "faulty"), "tactician": TACTICIAN},
            run={"breaker_failures": 100},
            deadlines=SHORT,
        ),
        # Any infrastructure fallback makes a no-contest: the throttled games are played again.
        "throttled": League(
            {"model": policy("openai", routed, "throttled"), "tactician": TACTICIAN},
            run={"max_infra_share": 0},
            deadlines=SHORT,
        ),
        "wrong-key": League(
            {
                "model": policy("openai", routed, "keyless", api_key_env=WRONG_KEY_ENV),
                "tactician": TACTICIAN,
            }
        ),
        "routed-away": League(
            {"model": policy("anthropic", plain, "team/routed-away"), "tactician": TACTICIAN},
        ),
    }


@dataclass(frozen=True)
class Runs:
    """The module's leagues as played, and the session's proxies and mocks."""

    played: dict[str, Played]
    gateways: Gateways
    wall_s: float

    def backend(self, group: str) -> RecordingMock:
        """The mock behind a model group."""
        return self.gateways.backends[group]


@pytest.fixture(scope="module")
def runs(gateways: Gateways, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Every league of `leagues`, played at once."""
    folder = tmp_path_factory.mktemp("leagues")
    planned = leagues(gateways.routed.url, gateways.plain.url)
    began = time.monotonic()
    with pytest.MonkeyPatch.context() as env:
        env.setenv(KEY_ENV, MASTER_KEY)
        env.setenv(WRONG_KEY_ENV, "sk-not-issued-by-this-proxy")
        with ThreadPoolExecutor(len(planned)) as pool:
            futures = {
                name: pool.submit(run, write(folder, name, league.policies, run=league.run,
                                             deadlines=league.deadlines))
                for name, league in planned.items()
            }  # fmt: skip
            played = {name: future.result() for name, future in futures.items()}
    wall_s = time.monotonic() - began
    print(f"the gateway leagues took {wall_s:.1f} s")
    return Runs(played, gateways, wall_s)


EXPECTED: dict[tuple[str, str | None], tuple[str, bool]] = {
    ("openai", None): ("free", False),
    ("openai", "json"): ("json_object", False),
    ("openai", "schema-enum/json_schema"): ("json_schema", True),
    ("openai", "schema-enum/json_object"): ("json_object+schema", True),
    ("anthropic", None): ("free", False),
    ("anthropic", "schema-enum/tool"): ("tool", True),
    ("gemini", None): ("free", False),
    # LiteLLM drops Gemini's responseMimeType without a schema: it reaches the backend as a
    # plain request (docs/gateways.md). The replay records what the arena sent.
    ("gemini", "json"): ("free", False),
    ("gemini", "schema-enum/responseSchema"): ("json_schema", True),
}
"""(protocol, an attempt's recorded decoding) -> what the backend behind LiteLLM received
(`sent_form`), and whether its move is the enum of the prompt's legal moves."""

DECODED = {"free": None, "json": "json"}
"""A policy's decoding -> what its attempts record (a schema's: its kind and form)."""


def _clean(played: Played, games: int) -> list[Asked]:
    """The league played `games` games, every model decision its own first attempt; its
    attempts. `arena verify` passes."""
    assert played.returncode == 0, played.why()
    assert played.finished_games() == games, played.why()
    failed = [(a.policy, a.attempt.cause, a.attempt.error[:200]) for a in asked(played)
              if a.attempt.cause is not None]  # fmt: skip
    assert failed == []
    assert played.fallbacks() == []
    checked = verify(played)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    return list(asked(played))


def _sentence(played: Played) -> str:
    return " ".join(played.stdout.split())  # the console wraps its lines


def _check_sent(attempt: Asked, protocol: str, received: list[Received]) -> None:
    """What the backend received for `attempt` is what its record says was asked."""
    prompt = attempt.attempt.prompt or ""
    matching = [r for r in received if prompt_of(r.body) == prompt]
    assert matching, f"{attempt.policy}: no request to the backend carried the prompt"
    form, with_enum = EXPECTED[(protocol, attempt.attempt.decoding)]
    for request in matching:
        got, enum = sent_form(request.body)
        assert got == form, (attempt.policy, attempt.attempt.decoding, request.body)
        assert enum == (legal_moves(prompt) if with_enum else None)


@pytest.mark.parametrize(
    ("league", "protocol", "group"),
    [("openai-ab", "openai", "openai-ab"), ("openai-forms", "openai", "openai-forms"),
     ("anthropic", "anthropic", "team/claude")],
)  # fmt: skip
def test_each_attempt_is_what_the_backend_received(
    runs: Runs, league: str, protocol: str, group: str
) -> None:
    """OpenAI's answers, and Anthropic's through LiteLLM, carry the mock's own id: each
    attempt is matched to the very request the backend received."""
    played = runs.played[league]
    attempts = _clean(played, 2)
    backend = runs.backend(group).received
    assert len(backend) == len(attempts)  # one request an attempt: nothing retried
    by_id = {f"chatcmpl-{r.answer_id}": r for r in backend}
    for attempt in attempts:
        request = by_id[attempt.attempt.request_id or ""]
        assert prompt_of(request.body) == attempt.attempt.prompt
        _check_sent(attempt, protocol, [request])
    specs = leagues("", "")[league].policies
    recorded = {(a.policy, a.attempt.decoding) for a in attempts}
    assert recorded == {(name, _recorded(protocol, spec)) for name, spec in specs.items()}


def _recorded(protocol: str, spec: dict[str, Any]) -> str | None:
    """What a policy's attempts record: `json`, a schema's kind and form, nothing for free."""
    decoding = spec.get("decoding", "free")
    if decoding != "schema":
        return DECODED[decoding]
    form = {"anthropic": "tool", "gemini": "responseSchema"}.get(
        protocol, spec.get("schema_style", "json_schema")
    )
    return f"schema-enum/{form}"


def test_a_pair_that_differs_in_decoding_or_its_form_says_which(runs: Runs) -> None:
    assert "decoding A/B, free vs json (they differ in decoding only: free vs json)" in _sentence(
        runs.played["openai-ab"]
    )
    assert (
        "schema form A/B, strict vs object (they differ in schema form only: "
        "schema/json_schema vs schema/json_object)" in _sentence(runs.played["openai-forms"])
    )
    assert (
        "decoding A/B, free vs schema (they differ in decoding only: free vs schema/tool)"
        in _sentence(runs.played["anthropic"])
    )


def test_gemini_in_every_decoding_and_its_probe_404_is_a_warning(runs: Runs) -> None:
    """A Gemini answer through LiteLLM carries no id: each policy asks a model group of its
    own, and each attempt is matched by its prompt among its mock's requests."""
    played = runs.played["gemini"]
    attempts = _clean(played, 6)
    for name, spec in leagues("", "")["gemini"].policies.items():
        mine = [a for a in attempts if a.policy == name]
        backend = runs.backend(f"gemini-{name}").received
        assert sorted(prompt_of(r.body) for r in backend) == sorted(
            a.attempt.prompt or "" for a in mine
        )
        for attempt in mine:
            assert attempt.attempt.decoding == _recorded("gemini", spec)
            _check_sent(attempt, "gemini", backend)
    warnings = [e["detail"] for e in played.events("preflight_warning")]
    assert len(warnings) == 3
    assert all('has no model listing (HTTP 404: \'{"detail":"Not Found"}\')' in w
               for w in warnings)  # fmt: skip


def test_a_slashed_anthropic_model_group_passes_the_preflight(runs: Runs) -> None:
    played = runs.played["anthropic"]
    warnings = [e["detail"] for e in played.events("preflight_warning")]
    assert warnings
    assert all("the model name 'team/claude' is unchecked" in w for w in warnings)
    assert played.returncode == 0, played.why()


CAUSES = {
    "429": ("rate_limited", 429),
    "500": ("http_status", 500),
    "truncated": ("truncated", 200),
}
"""A mock fault -> the cause an attempt it answered fails with, and the status it records."""


def test_the_mocks_faults_through_the_proxy_fall_back_with_their_causes_and_sides(
    runs: Runs,
) -> None:
    played = runs.played["faulty"]
    assert played.returncode == 0, played.why()
    backend = runs.backend("faulty")
    # The faults this test expects are the mock's own: its count of what it injected.
    drawn = Counter(r.fault for r in backend.received if r.fault is not None)
    assert drawn == +backend.injected
    by_prompt: dict[str, set[str | None]] = {}
    for request in backend.received:
        by_prompt.setdefault(prompt_of(request.body), set()).add(request.fault)
    seen: Counter[str] = Counter()
    for attempt in asked(played):
        if attempt.policy != "model":
            continue
        record = attempt.attempt
        [fault] = by_prompt[record.prompt or ""]  # the same body, the same fault
        if fault in CAUSES:
            assert (record.cause, record.status) == CAUSES[fault], record
            seen[fault] += 1
        else:  # answered; on a loaded machine the proxy may answer after the deadline
            assert record.cause in (None, "timeout"), record
            seen[record.cause or "answered"] += 1
    assert seen["timeout"] <= seen["answered"] // 4, seen
    met = set(seen) & set(CAUSES)
    assert met == {r.fault for r in backend.received} - {None}
    assert len(met) >= 2  # the infrastructure's faults and the seat's alike
    sides = {(f.cause, f.side) for f in played.fallbacks()}
    assert sides <= {("rate_limited", "infrastructure"), ("http_status", "infrastructure"),
                     ("truncated", "seat"), ("timeout", "seat")}  # fmt: skip
    checked = verify(played)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_rate_limit_that_lifts_is_the_infrastructures_and_the_league_completes(
    runs: Runs,
) -> None:
    """The backend answers 429 to its first requests, which the proxy passes on: the
    model's first decisions fall back on the infrastructure's failure, three in a row open
    the endpoint's circuit (what was in flight is cut, nothing is sent) until a probe finds
    it answering, the spoiled games are no-contests played again, and the league ends with
    every game counted."""
    played = runs.played["throttled"]
    assert played.returncode == 0, played.why()
    backend = runs.backend("throttled")
    assert len(backend.received) > backend.throttled
    failed = [a.attempt for a in asked(played) if a.policy == "model" and a.attempt.cause]
    assert ("rate_limited", 429) in {(a.cause, a.status) for a in failed}
    assert {a.cause for a in failed} <= {"rate_limited", "not_connected", "transport"}
    assert {f.side for f in played.fallbacks()} == {"infrastructure"}
    assert played.events("endpoint_down")
    assert played.events("endpoint_up")
    replays = {r.episode: r for r in played.replays()}
    again = [e for e in replays if e.endswith("~replay1")]
    assert again  # the first play met the rate limit: a no-contest, played again
    assert all(g.result is not None for e in again for g in replays[e].games)
    checked = verify(played)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_key_the_proxy_does_not_know_stops_the_run_saying_check_api_key_env(
    runs: Runs,
) -> None:
    """LiteLLM without a database answers a key it did not issue with 400 "No connected
    db.", to the probe (a warning) and to every completion: three in a row stop the run."""
    played = runs.played["wrong-key"]
    assert played.returncode == 3, played.why()
    [event] = played.events("endpoint_misconfigured")
    assert (event["status"], event["times"]) == (400, 3)
    assert "No connected db." in event["body"]
    assert event["fix"].endswith("check api_key_env (the gateway's key)")
    assert "check api_key_env" in _sentence(played) + " ".join(played.stderr.split())
    assert runs.backend("keyless").received == []  # refused by the proxy itself
    [warning] = [e["detail"] for e in played.events("preflight_warning")]
    assert "answered the probe with HTTP 400" in warning
    assert warning.endswith("check api_key_env (the gateway's key)")


def test_anthropic_messages_routed_to_the_responses_api_stop_the_run_naming_the_path(
    runs: Runs,
) -> None:
    """Out of the box, LiteLLM passes Anthropic's messages for an `openai/...` model on to
    the backend's `/v1/responses`; the stop says so and quotes the body that shows it."""
    played = runs.played["routed-away"]
    assert played.returncode == 3, played.why()
    assert {r.path for r in runs.backend("team/routed-away").received} == {"/v1/responses"}
    [event] = played.events("endpoint_misconfigured")
    assert event["status"] == 404
    assert event["fix"].startswith(
        "a gateway routes the request elsewhere: its backend was asked for /v1/responses, "
        "not /v1/messages ("
    )
    console = " ".join(played.stderr.split()) + _sentence(played)
    assert "no mock endpoint POST /v1/responses" in console
    assert "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES=True" in console
