"""What the docs say of the run's behaviour matches it (a newcomer reads these first)."""

from __future__ import annotations

from pathlib import Path

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
