"""`arena report`: every `--what` in every format; JSON and CSV give the same records."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.cli import main
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute

LEAGUE: dict[str, Any] = {
    "run": {"name": "formats", "seed": 9, "games": ["connect-four", "hex"], "matches": 1},
    "deadlines": {"first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.8},
    "policies": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random": {"kind": "scripted", "baseline": "random"},
        "faulty": {"kind": "mock", "faults": {"unreadable": 0.2, "illegal": 0.1}},
    },
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("formats")
    anyio.run(execute, plan_run(parse_config(LEAGUE), out))
    return out


def _report(capsys: pytest.CaptureFixture[str], run: Path, *args: str) -> str:
    capsys.readouterr()
    assert main(["report", str(run), *args]) == 0
    return capsys.readouterr().out


def _json(capsys: pytest.CaptureFixture[str], run: Path, what: str) -> list[dict[str, Any]]:
    rows = json.loads(_report(capsys, run, "--format", "json", "--what", what))
    assert isinstance(rows, list)
    return rows


def test_json_standings_are_the_standings(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, run, "standings")
    assert {r["game"] for r in rows} == {"overall", "connect-four", "hex"}
    assert {r["policy"] for r in rows} == {"tactician", "random", "faulty"}
    summary = json.loads((run / "summary.json").read_text())
    overall = [r for r in rows if r["game"] == "overall"]
    assert [r["policy"] for r in overall] == [r["policy"] for r in summary["standings"]["overall"]]
    assert all("h2h" not in r and "ratings" not in r for r in rows)  # not the whole summary


def test_json_h2h_is_each_pair_from_each_side(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _json(capsys, run, "h2h")
    summary = json.loads((run / "summary.json").read_text())
    assert {(r["policy"], r["opponent"]) for r in rows} == {
        tuple(key.split("|")) for key in summary["h2h"]
    }
    for r in rows:
        assert [r["wins"], r["draws"], r["losses"], r["no_contest"]] == summary["h2h"][
            f"{r['policy']}|{r['opponent']}"
        ]


@pytest.mark.parametrize("what", ["standings", "h2h", "fallbacks", "games"])
def test_json_and_csv_hold_the_same_records(
    what: str, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _json(capsys, run, what)
    table = list(
        csv.DictReader(io.StringIO(_report(capsys, run, "--format", "csv", "--what", what)))
    )
    assert rows, what
    assert len(table) == len(rows)
    assert list(table[0]) == list(rows[0])


@pytest.mark.parametrize("what", ["standings", "h2h", "fallbacks", "games"])
def test_every_table_renders(what: str, run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _report(capsys, run, "--what", what).strip()
