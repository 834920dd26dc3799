"""What the docs say of the run's behaviour matches it (a newcomer reads these first)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _text(path: str) -> str:
    return " ".join((ROOT / path).read_text(encoding="utf-8").split())


def test_the_readme_says_arena_prompt_shows_no_cost_and_what_endpoint_events_name() -> None:
    readme = _text("README.md")
    assert "it sends nothing, so it shows the exact prompt" in readme
    assert "and no cost" in readme
    assert "an event that names the endpoint, not an episode" in readme


def test_validity_says_a_failed_preflight_writes_only_its_events() -> None:
    validity = _text("docs/validity.md")
    assert "with no result written (only `events.jsonl`" in validity
    assert "before anything is played or written" not in validity


@pytest.mark.slow
def test_the_sprt_worked_example_is_what_the_shipped_config_prints(tmp_path: Path) -> None:
    """docs/efficiency.md's worked example and README's count, against a run of
    configs/ab-test.toml on the mock server (its figures do not depend on the machine;
    how many matches finish after the verdict does, and is left out)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run = subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", "configs/ab-test.toml", "--mock-llm",
         "--mock-port", str(port), "--out", str(tmp_path / "ab"), "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    printed = " ".join((run.stdout + run.stderr).split())
    doc = (ROOT / "docs/efficiency.md").read_text(encoding="utf-8")
    example = doc[doc.index("```\nSPRT default-prompt") + 4 :]
    example = " ".join(example[: example.index("```")].split())
    example = re.sub(r", \d+ more finished after the verdict and left out", "", example)
    printed = re.sub(r", \d+ more finished after the verdict and left out", "", printed)
    block, _, last = example.partition(" no new match started")
    assert block in printed  # the SPRT's block, as printed
    assert f"no new match started{last}" in printed  # and its last line, after the run's
    counted = re.search(r"the SPRT accepted H0 after (\d+) matches", printed)
    assert counted is not None
    assert f"over {counted[1]} matches the default prompt" in _text("docs/efficiency.md")
    assert f"H0 after {counted[1]} matches" in _text("README.md")
