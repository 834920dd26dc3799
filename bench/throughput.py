"""LLM throughput: N games in flight against the mock LLM server with a fixed latency.

    python -m bench.throughput [--in-flight 64] [--latency-ms 200] [--runs 3]

The mock server runs in its own process (`arena mock-llm`) on this machine;
the arena plays connect-four between two OpenAI-protocol policies with
`concurrency` = N and `max_connections` >= N. Printed per run and as medians:
decisions per second while every slot is busy (the first 60% of the run,
before the schedule runs dry), against the ideal N / L; and the arena
process's CPU time per decision (prompt, request, parse, apply, record, log),
against the target of at most 0.8 ms; and the mock server's CPU time per request
it served (it shares the machine's cores with the arena; read from /proc, so
shown only where there is one).

Then the HTTP path alone, the same number of requests in flight against the same
server: CPU per request through a provider (`HTTPProvider.complete` on the lean
transport, as a run asks), the same provider on httpx's own transport (httpcore),
and the floor, a bare h11 client on anyio streams with one keep-alive connection
per request in flight.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import h11
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


def one_run(url: str, in_flight: int, episodes: int) -> tuple[int, float, float]:
    with tempfile.TemporaryDirectory() as temp:
        out = Path(temp) / "run"
        plan = plan_run(parse_config(_config(url, in_flight, episodes)), out)
        configure_logging(out / "events.jsonl", console=False)
        cpu = time.process_time()
        try:
            anyio.run(execute, plan)
        finally:
            close_logging()
        cpu = time.process_time() - cpu
        decisions, rate = _steady_rate(out / "events.jsonl")
    return decisions, rate, cpu / decisions


TARGET_CPU_MS = 0.8
_BODY = {"model": "m", "messages": [{"role": "user", "content": "Your move? Reply in JSON."}]}


async def _through_provider(url: str, in_flight: int, each: int, *, httpcore: bool) -> None:
    transport = httpx.AsyncHTTPTransport() if httpcore else None
    spec = providers.ProviderSpec(protocol="openai", model="m", base_url=f"{url}/v1",
                                  max_connections=2 * in_flight)  # fmt: skip
    request = providers.CompletionRequest(prompt=_BODY["messages"][0]["content"], max_tokens=64)
    async with providers.Providers(transport=transport) as pool:
        client = pool.client(spec)

        async def worker() -> None:
            for _ in range(each):
                await client.complete(request, deadline=anyio.current_time() + 30)

        async with anyio.create_task_group() as group:
            for _ in range(in_flight):
                group.start_soon(worker)


async def _bare_h11(url: str, in_flight: int, each: int) -> None:
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps(_BODY).encode()
    headers = [("Host", f"{host}:{port}"), ("Content-Type", "application/json"),
               ("Content-Length", str(len(body)))]  # fmt: skip

    async def worker() -> None:
        async with await anyio.connect_tcp(host, int(port)) as stream:
            connection = h11.Connection(h11.CLIENT)
            for _ in range(each):
                await stream.send(connection.send(h11.Request(
                    method="POST", target="/v1/chat/completions", headers=headers)) or b"")  # fmt: skip
                await stream.send(connection.send(h11.Data(data=body)) or b"")
                await stream.send(connection.send(h11.EndOfMessage()) or b"")
                while not isinstance(event := connection.next_event(), h11.EndOfMessage):
                    if event is h11.NEED_DATA:
                        connection.receive_data(await stream.receive())
                connection.start_next_cycle()

    async with anyio.create_task_group() as group:
        for _ in range(in_flight):
            group.start_soon(worker)


def http_path(url: str, in_flight: int, each: int = 10) -> dict[str, float]:
    """CPU ms per request of each way to send it (module docstring)."""
    ways = {
        "provider, lean transport": lambda: _through_provider(url, in_flight, each, httpcore=False),
        "provider, httpx's own transport": lambda: _through_provider(url, in_flight, each, httpcore=True),
        "floor: bare h11 on anyio streams": lambda: _bare_h11(url, in_flight, each),
    }  # fmt: skip
    figures = {}
    for name, way in ways.items():
        cpu = time.process_time()
        anyio.run(way)
        figures[name] = (time.process_time() - cpu) / (in_flight * each) * 1000
    return figures


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
    args = parser.parse_args()
    ideal = args.in_flight / (args.latency_ms / 1000)
    server, url = start_server(args.latency_ms)
    table = Table(
        title=f"{args.in_flight} games in flight, mock LLM latency {args.latency_ms} ms, ideal {ideal:.0f}/s"
    )
    columns = ("run", "decisions", "decisions/s", "of ideal", "arena CPU per decision",
               "mock CPU per request")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    rates, cpus, mocks = [], [], []
    http: list[dict[str, float]] = []
    try:
        for _ in range(args.runs):
            http.append(http_path(url, args.in_flight))
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
                "" if mock is None else f"{mock * 1000:.2f} ms",
            )
    finally:
        server.terminate()
        server.wait(timeout=10)
    rate, cpu = statistics.median(rates), statistics.median(cpus)
    mock_median = f"{statistics.median(mocks) * 1000:.2f} ms" if mocks else ""
    table.add_row(
        "median", "", f"{rate:.0f}", f"{rate / ideal:.0%}", f"{cpu * 1000:.2f} ms", mock_median
    )
    verdict = "met" if cpu * 1000 <= TARGET_CPU_MS else "MISSED"
    table.add_row("target", "", "", "95%", f"<= {TARGET_CPU_MS} ms ({verdict})")
    console = Console(width=130)
    console.print(table)
    paths = Table(title=f"the HTTP path alone: CPU per request, {args.in_flight} in flight")
    paths.add_column("way")
    paths.add_column("CPU per request (median)", justify="right")
    for name in http[0]:
        paths.add_row(name, f"{statistics.median(h[name] for h in http):.3f} ms")
    console.print(paths)


if __name__ == "__main__":
    main()
