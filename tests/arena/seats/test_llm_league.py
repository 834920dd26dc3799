"""Real games through real sockets: LLM seats of all three protocols against `arena mock-llm`.

Every fault the server injects must show up in the replays: as a provider-level
retry (429, 500, 529 retried inside the deadline) or as a failed attempt with
the right cause; and no decision may run past its deadline by more than a
small margin.
"""

from __future__ import annotations

import socket
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.mock_llm import build_app, serving
from arena.play.protocol import Question, SeatFailure
from arena.record.replay import load_replay
from arena.record.verify import verify_replay
from arena.seats.llm import LlmSeat
from tests.arena.fakes import stored_games
from tests.timing import MARGIN_S

pytestmark = pytest.mark.anyio

FAULTS = "429=0.05,500=0.03,529=0.02,hang=0.02,slow=0.02,garbage=0.03,truncated=0.03,prose=0.03,illegal=0.05"
DEADLINES = {"first_reply_s": 1.0, "retry_s": 1.0, "decision_s": 2.2}
"""Wide enough that a sound answer is never late on a loaded machine; a `slow` answer
(SLOW_MS) comes well after the whole decision."""
SLOW_MS = 3500


def _config(url: str, out_name: str) -> dict[str, Any]:
    return {
        # Breakthrough: every position has moves shaped like the legal ones that are not
        # legal, so the mock's `illegal` fault is always a move the game refuses as illegal.
        "run": {
            "name": out_name,
            "seed": 13,
            "games": ["breakthrough"],
            "matches": 2,
            "concurrency": 16,
            # About one answer in seven fails on the endpoint's side here, so three in a row
            # come by chance and the default breaker would open (and cut what is in flight):
            # this test is about how each fault is recorded, not about outages.
            "breaker_failures": 1000,
        },
        "deadlines": DEADLINES,
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "openai": {"kind": "llm", "provider": "openai", "model": "m", "base_url": f"{url}/v1"},
            "anthropic": {
                "kind": "llm",
                "provider": "anthropic",
                "model": "m",
                "base_url": url,
                "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
            },
            "gemini": {"kind": "llm", "provider": "gemini", "model": "m", "base_url": url},
        },
    }


async def test_injected_faults_show_up_as_retries_or_fallback_causes(tmp_path: Path) -> None:
    app = build_app(faults=FAULTS, slow_ms=SLOW_MS, seed=5)
    async with serving(app) as url:
        plan = plan_run(parse_config(_config(url, "llm")), tmp_path)
        result = await execute(plan)
    assert not result.failed
    replays = [load_replay(p) for p in sorted((tmp_path / "replays").glob("*.json"))]
    causes: Counter[str] = Counter()
    statuses: Counter[int] = Counter()
    costs = []
    cut = 0
    for replay in replays:
        verify_replay(replay)
        for game in replay.games:
            for ply in game.plies:
                for decision in ply.decisions:
                    assert decision.latency_s < DEADLINES["decision_s"] + MARGIN_S
                    for attempt in decision.attempts:
                        causes[attempt.cause or "ok"] += 1
                        statuses.update(r["status"] for r in attempt.retries if r["status"])
                        if attempt.cause == "timeout" and attempt.status is None:
                            # Cut off by the arena's own scope with a request in flight: its
                            # status never came (the server drew it, then the client left).
                            cut += 1
                        if attempt.cost_usd is not None:
                            costs.append(attempt.cost_usd)
    injected = app.injected
    assert sum(injected.values()) > 20, injected
    assert causes["provider_error"] == injected["garbage"]
    assert causes["truncated"] == injected["truncated"]
    assert causes["unreadable"] == injected["prose"]
    assert causes["illegal"] == injected["illegal"]
    # Every hang and slow answer is a timeout (a 429/5xx retried until time ran out may add
    # more). The provider lists every status it saw; an attempt the arena's own scope cut off
    # (a loaded machine) loses the one status its request in flight was to bring.
    assert causes["timeout"] >= injected["hang"] + injected["slow"], (causes, injected)
    missing = 0
    for status in (429, 500, 529):
        assert statuses[status] <= injected[str(status)], (status, statuses, injected)
        missing += injected[str(status)] - statuses[status]
    assert missing <= cut, (statuses, injected, cut)
    assert costs
    assert all(c > 0 for c in costs)


async def test_refused_connection_is_not_connected_then_transport(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = _config(f"http://127.0.0.1:{port}", "refused")
    data["run"]["games"] = ["connect-four"]
    data["run"]["matches"] = 1
    del data["run"]["breaker_failures"]  # the default: its circuit opens, and stays open
    data["run"]["endpoint_down_s"] = 1.0
    data["policies"] = {k: v for k, v in data["policies"].items() if k in ("tactician", "openai")}
    # Past the preflight (which would stop the run before any game), the seat tells apart
    # a server that never connected from one that dropped after answering.
    result = await execute(plan_run(parse_config(data), tmp_path), check_endpoints=False)
    assert not result.failed
    assert "has been down for" in result.stopped
    causes = {c for g in stored_games(tmp_path) for seat in g.seats for c in seat.fallbacks}
    assert causes == {"not_connected"}


async def test_seat_reports_transport_after_it_has_connected() -> None:
    import providers
    from arena.config import LlmPolicy

    class Flaky:
        def __init__(self) -> None:
            self.calls = 0

        async def complete(self, request: Any, *, deadline: float) -> Any:
            self.calls += 1
            if self.calls == 1:
                return providers.Completion("x", "stop", "stop", providers.Usage(), None, 200, "r1")
            raise providers.TransportError("refused", connect_refused=True)

    policy = LlmPolicy(kind="llm", provider="openai", model="m")
    seat = LlmSeat(Flaky(), policy)
    question = Question("p", "move", 1, None, None, 0, ())  # type: ignore[arg-type]
    await seat.ask(question, deadline=anyio.current_time() + 1)
    with pytest.raises(SeatFailure) as failure:
        await seat.ask(question, deadline=anyio.current_time() + 1)
    assert failure.value.cause == "transport"


async def test_one_config_twice_against_the_mock_gives_identical_replays(tmp_path: Path) -> None:
    from tests.golden import replay_digest

    # Faults that answer at once: what is drawn depends on the request alone, so the
    # order in which sixteen games' requests arrive changes nothing.
    app = build_app(faults="429=0.05,500=0.05,garbage=0.04,prose=0.05,illegal=0.05", seed=2)
    digests = []
    async with serving(app) as url:
        for run in ("first", "second"):
            data = _config(url, run)
            data["run"]["name"] = "twice"
            # Wide deadlines: no answer may be late, however loaded the machine.
            data["deadlines"] = {"first_reply_s": 10, "retry_s": 5, "decision_s": 15}
            plan = plan_run(parse_config(data), tmp_path / run)
            assert not (await execute(plan)).failed
            replays = sorted((tmp_path / run / "replays").glob("*.json"))
            digests.append({p.name: replay_digest(p) for p in replays})
    # 24 games scheduled; a game the endpoint's faults made a no-contest is played again
    # (`~replayN`), as often as the draws (which follow the prompts' text) say.
    assert len([name for name in digests[0] if "~replay" not in name]) == 24
    assert digests[0] == digests[1]
