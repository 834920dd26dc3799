"""`arena author`: a model writes a program from the brief; the check decides; revisions."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from arena.authors import brief_for, extract_program, write_programs
from arena.authors.mock import program_game, program_reply
from arena.cli import main
from arena.config import parse_config
from arena.mock_llm import build_app, serving
from arena.redact import Redactor

pytestmark = pytest.mark.anyio


def _config(tmp_path: Path, **policies: dict[str, Any]) -> Any:
    config = parse_config({
        "run": {"name": "authors", "seed": 1, "games": ["connect-four"],
                "response_cache": True, "cache_dir": str(tmp_path / "cache")},
        "author": {"revisions": 2},
        "policies": {"tactician": {"kind": "scripted", "baseline": "tactician"}, **policies},
    })  # fmt: skip
    return config


def _manifest(out: Path, name: str) -> dict[str, Any]:
    return json.loads((out / f"{name}-connect-four.json").read_text())


def test_the_brief_is_made_of_the_projects_texts() -> None:
    brief = brief_for("connect-four", node_budget=500)
    assert program_game(brief.text) == "connect-four"
    assert "Four of your discs in a line" in brief.text  # the rules summary
    assert "500 nodes per move" in brief.text
    assert "def choose_move(self, view):" in brief.text  # the example program
    assert '"legal_moves": ["a", "b", "c", "d", "e", "f", "g"]' in brief.text
    assert "one fenced code block" in brief.text
    assert brief_for("connect-four", node_budget=500).sha256 == brief.sha256
    with pytest.raises(ValueError, match="programs do not play battle"):
        brief_for("battle", node_budget=500)


def test_only_the_first_fenced_block_is_the_program() -> None:
    assert extract_program("text\n```python\nA = 1\n```\nmore\n```python\nB = 2\n```") == "A = 1\n"
    assert extract_program("no code here") is None


async def test_sound_mock_authors_write_programs_that_pass_and_differ(tmp_path: Path) -> None:
    config = _config(tmp_path, a={"kind": "mock"}, b={"kind": "mock"})
    out = tmp_path / "authored"
    results = await write_programs(config, "connect-four", ["a", "b"], out, redactor=Redactor())
    assert [(r.policy, r.verdict, r.revisions) for r in results] == [
        ("a", "passed", 0),
        ("b", "passed", 0),
    ]
    programs = [(out / f"{n}-connect-four.py").read_text() for n in ("a", "b")]
    assert programs[0] != programs[1]  # two mock authors write two programs
    manifest = _manifest(out, "a")
    assert manifest["author_policy"] == "a"
    assert manifest["brief_sha256"] == results[0].brief.sha256
    assert manifest["sha256"] == results[0].sha256
    assert [a["verdict"] for a in manifest["attempts"]] == ["passed"]
    assert manifest["attempts"][0]["prompt"] == results[0].brief.text


async def test_a_faulty_author_uses_its_revisions_with_the_checks_message(tmp_path: Path) -> None:
    config = _config(tmp_path, sloppy={"kind": "mock", "faults": {"illegal": 1.0}})
    out = tmp_path / "authored"
    (result,) = await write_programs(config, "connect-four", ["sloppy"], out, redactor=Redactor())
    assert result.verdict == "refused"
    assert result.revisions == 2
    assert not (out / "sloppy-connect-four.py").exists()  # a refused program is not written
    attempts = _manifest(out, "sloppy")["attempts"]
    assert len(attempts) == 3
    assert all(a["verdict"] == "refused" and a["message"] for a in attempts)
    # Each revision shows the refused program and why it was refused.
    for before, after in itertools.pairwise(attempts):
        assert before["message"] in after["prompt"]
        assert extract_program(before["reply"]) in after["prompt"]


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("syntax", "line"), ("forbidden", "os"), ("nondeterministic", "deterministic"),
        ("no_code", "no fenced code block"),
    ],
)  # fmt: skip
async def test_each_kind_of_faulty_program_is_refused_by_the_check(
    tmp_path: Path, fault: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.authors.author as author

    def faulty(rng: Any, _: str | None = None) -> str:
        return program_reply(rng, fault)

    monkeypatch.setattr(author, "program_reply", faulty)
    config = _config(tmp_path, m={"kind": "mock"})
    config = config.model_copy(update={"author": config.author.model_copy(update={"revisions": 0})})
    (result,) = await write_programs(config, "connect-four", ["m"], tmp_path, redactor=Redactor())
    assert result.verdict == "refused"
    assert said in result.attempts[0].message


async def test_a_model_authors_over_http_and_a_second_time_from_the_cache(tmp_path: Path) -> None:
    app = build_app()
    async with serving(app) as url:
        config = _config(tmp_path, model={
            "kind": "llm", "provider": "openai", "model": "mock-a", "base_url": f"{url}/v1",
        })  # fmt: skip
        out = tmp_path / "authored"
        (first,) = await write_programs(config, "connect-four", ["model"], out, redactor=Redactor())
        asked = app.requests
        (again,) = await write_programs(config, "connect-four", ["model"], out, redactor=Redactor())
    assert first.verdict == again.verdict == "passed"
    assert asked == 1
    assert app.requests == asked  # the second asked nothing: the response cache answered
    assert again.attempts[0].cached
    assert again.sha256 == first.sha256
    assert first.tokens > 0


def test_the_command_prints_the_table_and_fails_on_a_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "authors.toml"
    config.write_text(
        '[run]\nname = "a"\ngames = ["connect-four"]\n[author]\nrevisions = 1\n'
        '[policies.good]\nkind = "mock"\n[policies.bad]\nkind = "mock"\nfaults = { unreadable = 1.0 }\n'
        '[policies.base]\nkind = "scripted"\n'
    )
    assert main(["author", str(config), "--game", "connect-four"]) == 1
    out = capsys.readouterr()
    assert "good" in out.out
    assert "passed" in out.out
    assert "bad: refused:" in out.err
    assert (tmp_path / "authored" / "good-connect-four.py").exists()
    assert main(["author", "--show-brief", "--game", "hex"]) == 0
    assert capsys.readouterr().out.startswith("PROGRAM FOR: hex\n")
