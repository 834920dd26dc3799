"""A real Prometheus for the ops tests: Debian's `prometheus`, started on a free port with a
scrape config and a data folder of its own; skipped where it is not installed, unless
COG_REQUIRE_PROMETHEUS=1 (CI) makes its absence a failure."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.ops.league import free_port


def tool(name: str) -> str:
    """The path of `prometheus` or `promtool`, or a skip (a failure under CI's flag)."""
    found = shutil.which(name)
    if found is None:
        if os.environ.get("COG_REQUIRE_PROMETHEUS") == "1":
            pytest.fail(f"{name} is not installed (apt-get install prometheus)")
        pytest.skip(f"{name} is not installed (apt-get install prometheus)")
    return found


@contextmanager
def prometheus(folder: Path, target: str) -> Iterator[str]:
    """A Prometheus scraping `target` (host:port) every second; yields its base URL."""
    binary = tool("prometheus")
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: cog-arena\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )
    port = free_port()
    command = [
        binary, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
    ]  # fmt: skip
    log = (folder / "prometheus.log").open("w")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"prometheus did not start: {(folder / 'prometheus.log').read_text()[-2000:]}"
                )
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def query(url: str, promql: str, at: float | None = None) -> dict[str, Any]:
    """Prometheus's answer to an instant query (`data`), after checking it succeeded."""
    params = {"query": promql, **({"time": str(at)} if at is not None else {})}
    answer = httpx.get(f"{url}/api/v1/query", params=params, timeout=10).json()
    assert answer["status"] == "success", (promql, answer)
    return answer["data"]  # type: ignore[no-any-return]


def total(data: dict[str, Any]) -> tuple[float, float] | None:
    """The (time, value) of a query that gives one series, or None while there is none."""
    result = data["result"]
    if not result:
        return None
    assert len(result) == 1, result
    at, value = result[0]["value"]
    return float(at), float(value)
