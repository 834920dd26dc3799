"""LLM throughput: N games in flight against the mock LLM server with a fixed latency.

    python -m bench.throughput [--in-flight 64] [--latency-ms 200] [--runs 3]
                               [--previous-cpu-ms MS] [--metrics-overhead]
    python -m bench.throughput --compare REV [--rounds 4] ...   (bench/compare.py)

The mock server runs in its own process (`arena mock-llm`) on this machine;
the arena plays connect-four between two OpenAI-protocol policies with
`concurrency` = N and `max_connections` >= N. Printed per run and as medians:
decisions per second while every slot is busy (the first 60% of the run,
before the schedule runs dry), against the ideal N / L, with the target of at
least 95% of it; the arena process's CPU time per decision (prompt, request,
parse, apply, record, log), with the target of at most 1.35x what the previous
HTTP path (our own HTTP/1.1 client, before commit dfc14c7) cost in this same
benchmark on the same machine: run this file at that commit and pass its median
as `--previous-cpu-ms` for a verdict; and the mock server's CPU time per
request it served (it shares the machine's cores with the arena; read from
/proc, so shown only where there is one).

With --metrics-overhead, only the league, run alternately without and with
its Prometheus metrics served (and scraped every second): the arena's CPU per
decision of each, and the rise, whose target is at most 5%.

Then the HTTP path alone, at 16 and at 64 requests in flight against the same
server: CPU per request through a provider as a run asks (`providers.Providers()`
-> `HTTPProvider.complete`, on aiohttp's pool through the httpx-aiohttp
transport), the same provider on httpx's own pool (`httpx.AsyncHTTPTransport`
with no connection limit), and the floor, a bare `aiohttp.ClientSession`. Each
way first sends one untimed request per worker (opening the connections a run
would keep), then times the rest: the steady state of a long run.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import httpx
from rich.console import Console
from rich.table import Table

import providers
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.logs import close_logging, configure_logging


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(latency_ms: int, faults: str = "") -> tuple[subprocess.Popen[bytes], str]:
    """`arena mock-llm` in its own process on a free port; (process, base URL)."""
    port = _free_port()
    command = [
        sys.executable, "-m", "arena.cli", "mock-llm", "--port", str(port),
        "--latency-ms", str(latency_ms), "--faults", faults,
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/stats", timeout=0.5)
            return server, url
        except httpx.HTTPError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the mock LLM server did not start within 20 s")


def _config(url: str, in_flight: int, episodes: int) -> dict[str, Any]:
    llm = {
        "kind": "llm",
        "provider": "openai",
        "model": "m",
        "base_url": f"{url}/v1",
        "max_connections": 2 * in_flight,
    }
    return {
        "run": {"name": "throughput", "seed": 1, "games": ["connect-four"], "matches": episodes // 2,
                "concurrency": in_flight, "record_prompts": True},
        "deadlines": {"first_reply_s": 10, "retry_s": 5, "decision_s": 15},
        "policies": {"llm-a": llm, "llm-b": dict(llm)},
    }  # fmt: skip


def _steady_rate(events: Path) -> tuple[int, float]:
    """Decisions per second over the first 60% of the run, while every slot is busy."""
    stamps = []
    for line in events.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "reply_received" and event.get("cause") is None:
            stamps.append(datetime.fromisoformat(event["timestamp"]).timestamp())
    start, end = min(stamps), max(stamps)
    window_end = start + 0.6 * (end - start)
    inside = sum(1 for s in stamps if s <= window_end)
    return len(stamps), inside / (window_end - start)


def process_cpu_s(pid: int) -> float | None:
    """User and system CPU seconds of process `pid` so far, or None without /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def served(url: str) -> int:
    """Completion requests the mock server has answered so far."""
    return int(httpx.get(f"{url}/stats", timeout=5).json()["requests"])


COLLECTOR_CPU_S = [0.0]
"""CPU seconds the garbage collector's passes took in the last `one_run`."""


@contextlib.contextmanager
def _collector_timed() -> Iterator[None]:
    """The CPU time of every collector pass in the block, into `COLLECTOR_CPU_S`."""
    began = [0.0]
    COLLECTOR_CPU_S[0] = 0.0

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.process_time()
        else:
            COLLECTOR_CPU_S[0] += time.process_time() - began[0]

    gc.callbacks.append(timed)
    try:
        yield
    finally:
        gc.callbacks.remove(timed)


def one_run(
    url: str, in_flight: int, episodes: int, metrics: bool = False
) -> tuple[int, float, float]:
    """One league: (decisions, steady decisions per second, arena CPU seconds per decision);
    with `metrics`, its Prometheus metrics served as `arena run --metrics-port` does (and
    scraped once a second, as a busy Prometheus would). The collector's share of that CPU
    is left in `COLLECTOR_CPU_S`."""
    with tempfile.TemporaryDirectory() as temp, _collector_timed():
        out = Path(temp) / "run"
        config = parse_config(_config(url, in_flight, episodes))
        plan = plan_run(config, out)
        configure_logging(out / "events.jsonl", console=False)
        cpu = time.process_time()
        try:
            if metrics:
                from arena.observe.metrics import serving_metrics

                with serving_metrics(config, _free_port()) as page:
                    anyio.run(_scraped, plan, page)
            else:
                anyio.run(execute, plan)
        finally:
            close_logging()
        cpu = time.process_time() - cpu
        decisions, rate = _steady_rate(out / "events.jsonl")
    return decisions, rate, cpu / decisions


TARGET_OF_IDEAL = 0.95
TARGET_CPU_RATIO = 1.35
"""The most CPU per decision may cost, as a multiple of the previous HTTP path's."""
HTTP_IN_FLIGHT = (16, 64)
HTTP_REQUESTS = 640
"""Timed requests per way and number in flight in the HTTP-path part."""
_BODY = {"model": "m", "messages": [{"role": "user", "content": "Your move? Reply in JSON."}]}


async def _timed(in_flight: int, each: int, send: Callable[[], Awaitable[None]]) -> float:
    """CPU seconds of `in_flight` workers calling `send` `each` times, after one untimed
    call per worker (which opens the connections a long run keeps)."""

    async def wave(calls: int) -> None:
        async def worker() -> None:
            for _ in range(calls):
                await send()

        async with anyio.create_task_group() as group:
            for _ in range(in_flight):
                group.start_soon(worker)

    await wave(1)
    cpu = time.process_time()
    await wave(each)
    return time.process_time() - cpu


async def _through_provider(
    url: str, in_flight: int, each: int, transport: httpx.AsyncBaseTransport | None
) -> float:
    spec = providers.ProviderSpec(protocol="openai", model="m", base_url=f"{url}/v1",
                                  max_connections=2 * in_flight)  # fmt: skip
    request = providers.CompletionRequest(prompt=_BODY["messages"][0]["content"], max_tokens=64)
    async with providers.Providers(transport=transport) as pool:
        client = pool.client(spec)

        async def send() -> None:
            await client.complete(request, deadline=anyio.current_time() + 30)

        return await _timed(in_flight, each, send)


async def _bare_aiohttp(url: str, in_flight: int, each: int) -> float:
    body = json.dumps(_BODY).encode()
    headers = {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def send() -> None:
            async with session.post(
                f"{url}/v1/chat/completions", data=body, headers=headers
            ) as response:
                await response.read()

        return await _timed(in_flight, each, send)


def _httpx_pool() -> httpx.AsyncBaseTransport:
    """The transport httpx ships (httpcore's pool), tuned for many connections."""
    return httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=None))


WAYS: dict[str, Callable[[str, int, int], Awaitable[float]]] = {
    "provider, aiohttp's pool (a run's path)": lambda url, n, each: _through_provider(
        url, n, each, None
    ),
    "provider, httpx's own pool": lambda url, n, each: _through_provider(
        url, n, each, _httpx_pool()
    ),
    "floor: bare aiohttp session": _bare_aiohttp,
}
"""Each way of sending the HTTP path's requests: (url, in flight, each) -> CPU seconds."""


def http_path(url: str, in_flight: int, requests: int = HTTP_REQUESTS) -> dict[str, float]:
    """CPU ms per request of each way in `WAYS` with `in_flight` requests in flight."""
    each = max(requests // in_flight, 1)
    figures = {}
    for name, way in WAYS.items():
        cpu = anyio.run(way, url, in_flight, each)
        figures[name] = cpu / (in_flight * each) * 1000
    return figures


async def _scraped(plan: Any, page: str) -> None:
    """`execute(plan)` while its metrics page is fetched once a second."""
    async with anyio.create_task_group() as group, httpx.AsyncClient() as client:

        async def scrape() -> None:
            while True:
                await anyio.sleep(1.0)
                await client.get(page)

        group.start_soon(scrape)
        await execute(plan)
        group.cancel_scope.cancel()


METRICS_TARGET = 1.05
"""With --metrics-port, CPU per decision may rise by at most this factor."""


def metrics_overhead(url: str, in_flight: int, episodes: int, runs: int) -> None:
    """CPU per decision without and with the metrics served, the runs interleaved so that
    the machine's load falls on both alike; the medians and the rise."""
    table = Table(title=f"CPU per decision without and with --metrics-port ({in_flight} in flight)")
    for column in ("run", "without", "with metrics"):
        table.add_column(column, justify="right")
    without, with_ = [], []
    for r in range(runs):
        without.append(one_run(url, in_flight, episodes)[2])
        with_.append(one_run(url, in_flight, episodes, metrics=True)[2])
        table.add_row(str(r + 1), f"{without[-1] * 1000:.3f} ms", f"{with_[-1] * 1000:.3f} ms")
    off, on = statistics.median(without), statistics.median(with_)
    table.add_row("median", f"{off * 1000:.3f} ms", f"{on * 1000:.3f} ms")
    rise = on / off
    verdict = _verdict(rise <= METRICS_TARGET)
    table.add_row("rise", "", f"{rise - 1:+.1%} (target <= {METRICS_TARGET - 1:.0%}: {verdict})")
    Console(width=130).print(table)
    alone = _observer_cpu_s()
    print(
        f"the metrics' own work alone: {alone * 1e6:.1f} us per decision (its request's and "
        f"reply's events), {alone / off:.2%} of the CPU per decision without them: the figure "
        "the rise above measures through the machine's noise"
    )


def _observer_cpu_s(times: int = 100_000) -> float:
    """CPU seconds the metrics take per decision: the two events of one request counted."""
    from arena.observe.facts import PolicyFacts
    from arena.observe.metrics import RunMetrics

    metrics = RunMetrics({"a": PolicyFacts("openai", "m", 1024, ("openai http://x",), True)})
    labels = {"policy": "a", "alias": "cog-1", "model": "m", "episode": "e", "run": "r",
              "game_index": 1, "seat": 0, "attempt": 1, "timestamp": "t", "level": "info"}  # fmt: skip
    asked = {"event": "decision_requested", **labels}
    replied = {"event": "reply_received", **labels, "latency_ms": 201.3, "cause": None,
               "status": 200, "input_tokens": 500, "output_tokens": 20, "stop_reason": "stop",
               "cost_usd": 0.0001}  # fmt: skip
    cpu = time.process_time()
    for _ in range(times):
        metrics(asked)
        metrics(replied)
    return (time.process_time() - cpu) / times


def _target_row(rate: float, ideal: float, cpu_ms: float, previous_ms: float | None) -> list[str]:
    throughput = f">= {TARGET_OF_IDEAL:.0%} ({_verdict(rate / ideal >= TARGET_OF_IDEAL)})"
    if previous_ms is None:
        cpu = f"<= {TARGET_CPU_RATIO}x previous (--previous-cpu-ms)"
    else:
        ratio = cpu_ms / previous_ms
        verdict = _verdict(ratio <= TARGET_CPU_RATIO)
        cpu = f"<= {TARGET_CPU_RATIO}x {previous_ms:.2f} ms ({ratio:.2f}x, {verdict})"
    return ["target", "", "", throughput, cpu, "", ""]


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def _http_table(http: list[dict[int, dict[str, float]]]) -> Table:
    """Per-run and median CPU per request of each way at each number in flight."""
    runs = len(http)
    table = Table(title="the HTTP path alone: CPU per request, after one warm-up per connection")
    table.add_column("way")
    table.add_column("in flight", justify="right")
    for column in [f"run {r + 1}" for r in range(runs)] + ["median", "x floor"]:
        table.add_column(column, justify="right")
    floor = list(WAYS)[-1]
    for in_flight in HTTP_IN_FLIGHT:
        figures = [run[in_flight] for run in http]
        floor_ms = statistics.median(f[floor] for f in figures)
        for name in WAYS:
            per_run = [f[name] for f in figures]
            median = statistics.median(per_run)
            table.add_row(
                name,
                str(in_flight),
                *(f"{ms:.3f} ms" for ms in per_run),
                f"{median:.3f} ms",
                f"{median / floor_ms:.2f}x",
            )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument(
        "--episodes", type=int, default=320, help="episodes per run (>= 4x in-flight)"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--previous-cpu-ms",
        type=float,
        help="the previous HTTP path's median arena CPU per decision in this benchmark (ms)",
    )
    parser.add_argument(
        "--compare",
        metavar="REV",
        help="run this tree and commit REV alternated, --rounds times (bench.compare), and "
        "print CPU per decision, the per-round ratios and their median",
    )
    parser.add_argument("--rounds", type=int, default=4, help="rounds of --compare")
    parser.add_argument(
        "--metrics-overhead",
        action="store_true",
        help="only compare CPU per decision without and with --metrics-port's metrics",
    )
    args = parser.parse_args()
    if args.compare:
        from bench.compare import compare

        args.rev = args.compare
        compare(args)
        return
    ideal = args.in_flight / (args.latency_ms / 1000)
    server, url = start_server(args.latency_ms)
    if args.metrics_overhead:
        try:
            metrics_overhead(url, args.in_flight, args.episodes, args.runs)
        finally:
            server.terminate()
            server.wait(timeout=10)
        return
    table = Table(
        title=f"{args.in_flight} games in flight, mock LLM latency {args.latency_ms} ms, ideal {ideal:.0f}/s"
    )
    columns = ("run", "decisions", "decisions/s", "of ideal", "arena CPU per decision",
               "of it collector", "mock CPU per request")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    rates, cpus, mocks = [], [], []
    http: list[dict[int, dict[str, float]]] = []
    try:
        for _ in range(args.runs):
            http.append({n: http_path(url, n) for n in HTTP_IN_FLIGHT})
        for r in range(args.runs):
            mock_cpu, asked = process_cpu_s(server.pid), served(url)
            decisions, rate, cpu = one_run(url, args.in_flight, args.episodes)
            mock_after = process_cpu_s(server.pid)
            mock = None
            if mock_cpu is not None and mock_after is not None:
                mock = (mock_after - mock_cpu) / max(served(url) - asked, 1)
                mocks.append(mock)
            rates.append(rate)
            cpus.append(cpu)
            table.add_row(
                str(r + 1),
                f"{decisions:,}",
                f"{rate:.0f}",
                f"{rate / ideal:.0%}",
                f"{cpu * 1000:.2f} ms",
                f"{COLLECTOR_CPU_S[0] / (cpu * decisions):.1%}",
                "" if mock is None else f"{mock * 1000:.2f} ms",
            )
    finally:
        server.terminate()
        server.wait(timeout=10)
    rate, cpu = statistics.median(rates), statistics.median(cpus)
    mock_median = f"{statistics.median(mocks) * 1000:.2f} ms" if mocks else ""
    table.add_row(
        "median", "", f"{rate:.0f}", f"{rate / ideal:.0%}", f"{cpu * 1000:.2f} ms", "", mock_median
    )
    table.add_row(*_target_row(rate, ideal, cpu * 1000, args.previous_cpu_ms))
    console = Console(width=130)
    console.print(table)
    console.print(_http_table(http))


if __name__ == "__main__":
    main()
