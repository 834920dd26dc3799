"""`[run]`'s settings for watching a run (docs/ops.md): where its metrics and traces go.

None of them changes what is played or recorded: a resumed run may change them freely.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["WatchSettings"]


class WatchSettings(BaseModel):
    """The `[run]` keys that say how a run is watched, never what it plays."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metrics_port: int = Field(default=0, ge=0, le=65535)
    """Serve Prometheus metrics at http://127.0.0.1:PORT/metrics while the run plays (0: none;
    `arena run --metrics-port` overrides it)."""
    otlp_endpoint: str | None = None
    """Export traces over OTLP/HTTP to this URL, e.g. http://127.0.0.1:4318 (needs the `otel`
    extra; OTEL_EXPORTER_OTLP_ENDPOINT is used when this is not set)."""
    trace_content: bool = False
    """Put each request's prompt and reply on its trace span (off: neither leaves the arena)."""
