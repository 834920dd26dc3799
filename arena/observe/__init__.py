"""Watching a run from outside (docs/ops.md): metrics, JSON logs, traces and the live page.

This room reads what a run says and never writes what it keeps: metrics
(`observe.metrics`) and traces (`observe.traces`) are fed the run's events as
they are logged (`arena.logs.observing`, a cluster's relayed events
included), the live page (`observe.live`) reads the run folder's store and
events file. Nothing here is imported unless a run asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.config import Config

__all__ = ["watching"]


@contextmanager
def watching(
    config: Config,
    out: Path,
    *,
    metrics_port: int = 0,
    otlp_endpoint: str | None = None,
) -> Iterator[list[str]]:
    """Metrics served on `metrics_port` (0: none) and traces exported to `otlp_endpoint`
    (None: none) while the run in folder `out` plays; yields what to tell the operator."""
    said: list[str] = []
    with ExitStack() as stack:
        if metrics_port:
            from arena.observe.metrics import serving_metrics  # prometheus: only when asked

            url = stack.enter_context(serving_metrics(config, metrics_port))
            said.append(f"metrics: {url}")
        if otlp_endpoint:
            try:
                from arena.observe.traces import exporting_traces  # opentelemetry: when asked
            except ImportError as exc:
                from arena.config import ConfigError

                raise ConfigError(
                    f"traces to {otlp_endpoint} need the otel extra ({exc.name} is not "
                    "installed): pip install -e '.[otel]', or unset OTEL_EXPORTER_OTLP_ENDPOINT "
                    "and [run] otlp_endpoint"
                ) from exc
            stack.enter_context(exporting_traces(config, otlp_endpoint, replays=out / "replays"))
            said.append(f"traces: exported to {otlp_endpoint}")
        yield said
