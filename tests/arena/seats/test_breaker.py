"""The circuit breaker: three infrastructure failures in a row open an endpoint's circuit;
while it is open nothing is sent and what was in flight is cut; an answer resets the count.
On a virtual clock: "at once" is asserted as no time at all."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import providers
from arena.config import LlmPolicy
from arena.play.protocol import Question, SeatFailure
from arena.seats.breaker import Breakers, Circuit, Misconfigured, misconfiguration_fix
from arena.seats.llm import LlmSeat, provider_spec

pytestmark = [pytest.mark.anyio, pytest.mark.virtual_clock]


POLICY = LlmPolicy(kind="llm", provider="openai", model="m", base_url="http://127.0.0.1:9/v1")
QUESTION = Question("p", "move", 1, None, None, 0, ())  # type: ignore[arg-type]


def _ok() -> providers.Completion:
    return providers.Completion("x", "stop", "stop", providers.Usage(), None, 200, "r1")


class Scripted:
    """A provider doing what its script says, one step per call: "ok", "hang", or an error."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)
        self.calls = 0

    async def complete(self, request: Any, *, deadline: float) -> providers.Completion:
        step = self.steps[min(self.calls, len(self.steps) - 1)]
        self.calls += 1
        if step == "ok":
            return _ok()
        if step == "hang":
            await anyio.sleep_forever()
        raise step


def _refused() -> providers.ProviderError:
    return providers.TransportError("refused", connect_refused=True)


def _status(code: int) -> providers.ProviderError:
    return providers.HTTPStatusError(f"HTTP {code}", status=code, body_excerpt="")


def _circuit(opened: list[Circuit] | None = None) -> Circuit:
    breakers = Breakers(3, opened.append if opened is not None else None)
    return breakers.circuit(provider_spec(POLICY))


async def _ask(seat: LlmSeat) -> str:
    try:
        await seat.ask(QUESTION, deadline=anyio.current_time() + 5)
    except SeatFailure as failure:
        return failure.cause
    return "ok"


async def test_three_infrastructure_failures_in_a_row_open_it_and_nothing_more_is_sent() -> None:
    opened: list[Circuit] = []
    circuit = _circuit(opened)
    client = Scripted(_refused(), _status(500), _status(502), "ok")
    seat = LlmSeat(client, POLICY, circuit=circuit)
    assert [await _ask(seat) for _ in range(3)] == ["not_connected", "http_status", "http_status"]
    assert circuit.is_open
    assert seat.endpoint_down()
    assert opened == [circuit]  # the session is told, once
    assert await _ask(seat) == "not_connected"  # failed at once, not sent
    assert client.calls == 3
    circuit.close()
    assert await _ask(seat) == "ok"
    assert not seat.endpoint_down()


async def test_an_answer_resets_the_count_and_the_seats_own_failures_do_not_count() -> None:
    circuit = _circuit()
    seat = LlmSeat(
        Scripted(_status(500), _status(500), "ok", _status(500), _status(500), "ok"),
        POLICY,
        circuit=circuit,
    )
    for _ in range(6):
        await _ask(seat)
    assert not circuit.is_open
    # A timeout, while the circuit is closed, is the seat's: it does not count.
    slow = LlmSeat(Scripted(providers.Timeout("late")), POLICY, circuit=circuit)
    assert [await _ask(slow) for _ in range(4)] == ["timeout"] * 4
    assert not circuit.is_open


async def test_every_seat_at_the_endpoint_shares_its_circuit() -> None:
    breakers = Breakers(3)
    spec = provider_spec(POLICY)
    assert breakers.circuit(spec) is breakers.circuit(provider_spec(POLICY))
    other = provider_spec(POLICY.model_copy(update={"base_url": "http://127.0.0.1:10/v1"}))
    assert breakers.circuit(other) is not breakers.circuit(spec)
    circuit = breakers.circuit(spec)
    seats = [LlmSeat(Scripted(_refused()), POLICY, circuit=circuit) for _ in range(3)]
    for seat in seats:  # one failure each, three in a row at the endpoint
        await _ask(seat)
    assert circuit.is_open
    assert not breakers.circuit(other).is_open


async def test_a_request_in_flight_is_cut_when_the_circuit_opens() -> None:
    circuit = _circuit()
    hung = LlmSeat(Scripted("ok", "hang"), POLICY, circuit=circuit)
    failing = LlmSeat(Scripted(_refused()), POLICY, circuit=circuit)
    causes: list[str] = []
    assert await _ask(hung) == "ok"
    started = anyio.current_time()
    async with anyio.create_task_group() as tg:

        async def hang() -> None:
            causes.append(await _ask(hung))  # answered once in this game, then hangs

        tg.start_soon(hang)
        await anyio.sleep(0.05)
        for _ in range(3):
            await _ask(failing)
    assert causes == ["transport"]  # cut at once, not left to its 5 s deadline
    assert anyio.current_time() - started == pytest.approx(0.05)  # the time it hung, no more


async def test_a_cut_before_the_seat_ever_got_an_answer_is_not_connected() -> None:
    circuit = _circuit()
    hung = LlmSeat(Scripted("hang"), POLICY, circuit=circuit)
    failing = LlmSeat(Scripted(_refused()), POLICY, circuit=circuit)
    causes: list[str] = []
    async with anyio.create_task_group() as tg:

        async def hang() -> None:
            causes.append(await _ask(hung))

        tg.start_soon(hang)
        await anyio.sleep(0.05)
        for _ in range(3):
            await _ask(failing)
    assert causes == ["not_connected"]


def _misconfigured_circuit(found: list[Misconfigured]) -> Circuit:
    breakers = Breakers(3, None, lambda circuit, what: found.append(what))
    return breakers.circuit(provider_spec(POLICY))


def _refusal(code: int, body: str = "") -> providers.ProviderError:
    return providers.HTTPStatusError(f"HTTP {code}", status=code, body_excerpt=body)


@pytest.mark.parametrize("code", [401, 403, 404])
async def test_a_first_completion_refused_as_unauthorized_or_unknown_is_a_misconfiguration(
    code: int,
) -> None:
    found: list[Misconfigured] = []
    seat = LlmSeat(
        Scripted(_refusal(code, "no such thing")), POLICY, circuit=_misconfigured_circuit(found)
    )
    assert await _ask(seat) == "http_status"
    assert found == [Misconfigured(code, "no such thing", 1)]


async def test_after_an_answer_a_single_404_is_only_that_requests() -> None:
    found: list[Misconfigured] = []
    circuit = _misconfigured_circuit(found)
    seat = LlmSeat(Scripted("ok", _refusal(404), "ok"), POLICY, circuit=circuit)
    assert [await _ask(seat) for _ in range(3)] == ["ok", "http_status", "ok"]
    assert found == []


async def test_the_same_4xx_breaker_failures_times_in_a_row_is_a_misconfiguration() -> None:
    found: list[Misconfigured] = []
    circuit = _misconfigured_circuit(found)
    big = _refusal(413, "<html>413 Request Entity Too Large</html>")
    seat = LlmSeat(Scripted("ok", big, big, big), POLICY, circuit=circuit)
    assert [await _ask(seat) for _ in range(4)] == [
        "ok",
        "http_status",
        "http_status",
        "http_status",
    ]
    assert found == [Misconfigured(413, "<html>413 Request Entity Too Large</html>", 3)]
    assert not circuit.is_open  # a misconfiguration is said instead of an outage
    fix = misconfiguration_fix(circuit.spec, found[0])
    assert "client_max_body_size" in fix


async def test_a_reply_between_or_another_status_starts_the_count_again() -> None:
    found: list[Misconfigured] = []
    circuit = _misconfigured_circuit(found)
    steps = ["ok", _refusal(400), _refusal(400), "ok", _refusal(400), _refusal(413), _refusal(400)]
    seat = LlmSeat(Scripted(*steps), POLICY, circuit=circuit)
    for _ in steps:
        await _ask(seat)
    assert found == []  # a long prompt's 400 now and then never stops a league


async def test_a_5xx_or_a_rate_limit_is_an_outage_not_a_misconfiguration() -> None:
    found: list[Misconfigured] = []
    circuit = _misconfigured_circuit(found)
    steps = ["ok", _refusal(429), _refusal(503), _refusal(504)]
    seat = LlmSeat(Scripted(*steps), POLICY, circuit=circuit)
    for _ in steps:
        await _ask(seat)
    assert found == []
    assert circuit.is_open


async def test_bodies_that_are_no_completion_in_a_row_are_a_misconfiguration() -> None:
    found: list[Misconfigured] = []
    circuit = _misconfigured_circuit(found)
    unreadable = providers.InvalidResponse("answered 200 without a 'choices' list: '{}'")
    seat = LlmSeat(Scripted(unreadable), POLICY, circuit=circuit)
    assert [await _ask(seat) for _ in range(3)] == ["provider_error"] * 3
    assert [(f.status, f.times) for f in found] == [(None, 3)]
    assert "choices" in found[0].body
    assert "base_url" in misconfiguration_fix(circuit.spec, found[0])


def test_a_400_asking_for_a_client_certificate_names_client_cert() -> None:
    spec = provider_spec(POLICY)
    body = "<center>No required SSL certificate was sent</center>"
    assert "client_cert" in misconfiguration_fix(spec, Misconfigured(400, body, 3))


# LiteLLM's proxy, asked Anthropic's messages for an `openai/...` model, passes them on to
# its backend's Responses API, and answers with the backend's 404 inside its own error.
_ROUTED = (
    '{"type":"error","error":{"type":"not_found_error","message":"litellm.NotFoundError: '
    'NotFoundError: OpenAIException - {\\"error\\": {\\"message\\": \\"no mock endpoint '
    "POST /v1/responses (try POST /v1/chat/completions, /v1/messages, /v1beta/models/<m>:"
    "generateContent, GET /stats)"
)


def test_a_404_naming_another_path_says_the_gateway_routes_elsewhere_and_shows_it() -> None:
    policy = POLICY.model_copy(update={"provider": "anthropic"})
    fix = misconfiguration_fix(provider_spec(policy), Misconfigured(404, _ROUTED[:200], 1))
    assert fix.startswith("a gateway routes the request elsewhere: its backend was asked for ")
    assert "/v1/responses, not /v1/messages" in fix
    assert "no mock endpoint POST /v1/responses (try" in fix  # the part of the body that shows it
    assert "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES=True" in fix
    # The body's first path is the one asked, or there is none: the model or base_url is wrong.
    asked = '{"error": "no route for /v1/messages"}'
    for body in (asked, '{"error": {"message": "model not found"}}'):
        said = misconfiguration_fix(provider_spec(policy), Misconfigured(404, body, 1))
        assert said == "it does not know the model or the path: check the model name and base_url"
    # An OpenAI-compatible seat asked at /chat/completions is routed nowhere else by its own path.
    openai_asked = '{"detail": "no route /v1/chat/completions"}'
    assert "and base_url" in misconfiguration_fix(
        provider_spec(POLICY), Misconfigured(404, openai_asked, 1)
    )


def test_a_400_on_every_request_that_speaks_of_keys_says_check_api_key_env() -> None:
    spec = provider_spec(POLICY)
    no_db = '{"error":{"message":"No connected db.","type":"no_db_connection","code":"400"}}'
    fix = misconfiguration_fix(spec, Misconfigured(400, no_db, 3))
    assert fix == (
        "it refuses every completion with HTTP 400: check base_url, headers and params; its "
        "body speaks of keys, auth or a database: check api_key_env (the gateway's key)"
    )
    for body in ('{"error": "Authentication Error, Invalid proxy server token"}',
                 '{"error": "invalid api key"}'):  # fmt: skip
        assert fix.endswith(misconfiguration_fix(spec, Misconfigured(400, body, 3))[-60:])
    plain = misconfiguration_fix(spec, Misconfigured(400, '{"error": "max_tokens too large"}', 3))
    assert "api_key_env" not in plain
    assert "api_key_env" not in misconfiguration_fix(spec, Misconfigured(422, no_db, 3))


async def test_what_an_open_circuit_does_is_recognisable_in_the_record() -> None:
    """The gateway check (`validity.gateway_timeouts`) tells the circuit's own fallbacks by
    how their errors begin: a question not sent, and one cut in flight."""
    from arena.record.validity import BREAKER_NOTES

    circuit = _circuit()
    hanging = LlmSeat(Scripted("hang"), POLICY, circuit=circuit)
    details: list[str] = []

    async def ask_and_keep(seat: LlmSeat) -> None:
        try:
            await seat.ask(QUESTION, deadline=anyio.current_time() + 5)
        except SeatFailure as failure:
            details.append(failure.detail)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask_and_keep, hanging)
        await anyio.sleep(0.05)
        for _ in range(3):
            circuit.failure()
    await ask_and_keep(hanging)  # not sent: the circuit is open
    assert len(details) == 2
    assert details[0].startswith(BREAKER_NOTES[1])  # cut in flight
    assert details[1].startswith(BREAKER_NOTES[0])  # not sent


async def test_an_endpoints_events_name_the_endpoint_not_the_seat_that_met_it() -> None:
    import structlog
    from structlog.testing import capture_logs

    circuit = _circuit()
    bound = {"run": "r", "episode": "e-1", "game_index": 1, "alias": "cog-ee1d", "seat": 0}
    with (
        structlog.contextvars.bound_contextvars(**bound),
        capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs,
    ):
        for _ in range(3):
            circuit.failure()
        circuit.close()
        after = structlog.contextvars.get_contextvars()
    events = {e["event"]: e for e in logs}
    for name in ("endpoint_down", "endpoint_up"):
        assert events[name]["endpoint"] == circuit.endpoint
        assert events[name]["run"] == "r"
        assert not {"episode", "game_index", "alias", "seat"} & set(events[name]), name
    assert after == bound  # the seat's own events go on naming it


def _reset() -> providers.ProviderError:
    return providers.TransportError(
        "dropped the exchange (ClientPayloadError)", connect_refused=False, problem="reset"
    )


async def test_a_reset_on_every_reply_is_a_misconfiguration_not_an_outage() -> None:
    found: list[Misconfigured] = []
    circuit = _misconfigured_circuit(found)
    seat = LlmSeat(Scripted(_reset()), POLICY, circuit=circuit)
    assert [await _ask(seat) for _ in range(3)] == ["transport"] * 3
    assert [(f.status, f.times, f.problem) for f in found] == [(None, 3, "reset")]
    assert not circuit.is_open  # said once, as a misconfiguration: no probing, no flapping
    assert "cut off before its body ends" in misconfiguration_fix(circuit.spec, found[0])


async def test_a_reply_between_resets_starts_their_count_again() -> None:
    found: list[Misconfigured] = []
    circuit = _misconfigured_circuit(found)
    steps = [_reset(), _reset(), "ok", _reset(), _reset(), _status(503), _reset()]
    seat = LlmSeat(Scripted(*steps), POLICY, circuit=circuit)
    for _ in steps:
        await _ask(seat)
    assert found == []


@pytest.mark.parametrize(
    ("error", "problem", "says"),
    [
        (providers.CertificateError("certificate verify failed"), "certificate", "ca_bundle"),
        (
            providers.TransportError(
                "TLS handshake failed", connect_refused=True, tls=True, problem="tls"
            ),
            "tls",
            "client_cert",
        ),
        (
            providers.TransportError(
                "the proxy rejected its credentials (407)", connect_refused=True,
                problem="proxy_auth", proxy="http://127.0.0.1:3128 (from HTTP_PROXY)",
            ),
            "proxy_auth",
            "the proxy http://127.0.0.1:3128 (from HTTP_PROXY) rejected its credentials (407)",
        ),
    ],
)  # fmt: skip
async def test_tls_or_a_proxy_login_failing_after_the_start_is_a_misconfiguration_at_once(
    error: providers.ProviderError, problem: str, says: str
) -> None:
    found: list[Misconfigured] = []
    circuit = _misconfigured_circuit(found)
    seat = LlmSeat(Scripted("ok", error), POLICY, circuit=circuit)
    assert [await _ask(seat) for _ in range(2)] == ["ok", "transport"]
    assert [(f.times, f.problem) for f in found] == [(1, problem)]
    assert says in misconfiguration_fix(circuit.spec, found[0])
    assert not circuit.is_open
