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
