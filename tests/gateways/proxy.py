"""LiteLLM's proxy as a test's gateway: one process, its config written by the test.

The proxy runs from a venv of its own (its pins clash with the arena's; `.ci/run`
installs it and puts its `bin/` on PATH after the project's), with no database, a
master key, and `LITELLM_LOCAL_MODEL_COST_MAP=True` so that it starts without the
network. Each model group (`MODEL_GROUPS`) is an `openai/...` model whose
`api_base` is one of the tests' mock LLMs, as a company's gateway puts its own
names in front of whatever serves them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.nginx.gateway import free_port

__all__ = ["MASTER_KEY", "LiteLLM", "find_litellm", "litellm_version"]

START_S = 120.0
"""How long the proxy gets to answer its liveliness check: it imports for seconds (about
10 s on a quiet 2-core machine), more on a loaded one."""
STOP_S = 10.0
"""How long each way of stopping it gets (SIGTERM, then SIGKILL to its process group)."""

MASTER_KEY = "sk-gateway-master-0000"
"""The proxy's master key: the key every policy of the tests sends (but the wrong-key one)."""

ANTHROPIC_MESSAGES_SETTING = "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES"
"""Without it, LiteLLM passes Anthropic's messages for an `openai/...` model on to the
backend's Responses API (`/v1/responses`), which the mock, llama-cpp-python and older vLLM
do not serve."""


def find_litellm() -> str | None:
    """The `litellm` command (the proxy's venv's, on PATH)."""
    return shutil.which("litellm")


def litellm_version(binary: str) -> str:
    """The installed LiteLLM's version, read from the venv the command belongs to."""
    python = Path(binary).with_name("python")
    done = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('litellm'))"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return done.stdout.strip() or "unknown"


@dataclass
class LiteLLM:
    """One proxy on a free port of 127.0.0.1: `groups` is model group -> the base URL of the
    backend serving it; `anthropic_messages` sets `ANTHROPIC_MESSAGES_SETTING`."""

    binary: str
    root: Path
    groups: dict[str, str]
    anthropic_messages: bool = True
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Its root URL (Anthropic's and Gemini's base_url; OpenAI's adds /v1)."""
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> str:
        """The proxy's config.yaml (JSON is YAML): the model groups, the master key, and no
        retries of the proxy's own (docs/gateways.md)."""
        models = [
            {
                "model_name": group,
                "litellm_params": {"model": "openai/mock-1", "api_base": base, "api_key": "none"},
            }
            for group, base in self.groups.items()
        ]
        return json.dumps({
            "model_list": models,
            "general_settings": {"master_key": MASTER_KEY},
            # LiteLLM retries a 429 or a 5xx twice by default, with waits of its own: the
            # arena would see a slow model (its timeout) where the backend refused.
            "router_settings": {"num_retries": 0},
        }, indent=1)  # fmt: skip

    def start(self) -> LiteLLM:
        """Write the config and start the proxy (see `wait`)."""
        self.root.mkdir(parents=True, exist_ok=True)
        conf = self.root / "config.yaml"
        conf.write_text(self.config())
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env.pop("DATABASE_URL", None)  # no database: keys are the master key or nothing
        env |= {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR",
                "NO_PROXY": "*"}  # fmt: skip
        if self.anthropic_messages:
            env[ANTHROPIC_MESSAGES_SETTING] = "True"
        command = [self.binary, "--config", str(conf), "--host", "127.0.0.1", "--port",
                   str(self.port), "--num_workers", "1"]  # fmt: skip
        with (self.root / "proxy.log").open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, start_new_session=True,
            )  # fmt: skip
        return self

    def wait(self) -> LiteLLM:
        """Return once the proxy answers its liveliness check; raise (and stop it) if it
        exits or has not answered within `START_S`."""
        assert self.process is not None
        give_up = time.monotonic() + START_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"litellm exited with {self.process.returncode} before answering:\n"
                    f"{self.logs()}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/health/liveliness", timeout=2) as r:
                    if r.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > give_up:
                self.stop()
                raise RuntimeError(
                    f"litellm did not answer on {self.url} within {START_S:g} s:\n{self.logs()}"
                )
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop it: SIGTERM, then SIGKILL to its process group."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_S)

    def logs(self) -> str:
        """The tail of what it printed, for failure messages."""
        path = self.root / "proxy.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""
