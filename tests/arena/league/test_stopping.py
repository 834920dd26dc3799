"""When no new match starts: the SPRT's verdict, its match cap and the budgets; every
stop is deterministic, survives a kill and resumes, and a raised budget continues."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.cli import main
from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.league.stopping import StopRules
from arena.results.standings import GameSummary, SeatStats
from tests.arena.league.test_resume import _arena, _finished, _kill_after


def _sprt_config(tmp_path: Path, second: str = "random", **sprt: Any) -> Path:
    path = tmp_path / f"sprt-{second}.toml"
    table = "\n".join(f"{k} = {v}" for k, v in {"elo0": 0, "elo1": 20, **sprt}.items())
    path.write_text(
        '[run]\nname = "ab"\nseed = 11\ngames = ["connect-four"]\nconcurrency = 4\n'
        f"[run.sprt]\n{table}\n"
        '[policies.tactician]\nkind = "scripted"\nbaseline = "tactician"\n'
        f'[policies.{second}]\nkind = "scripted"\nbaseline = "{second if second == "random" else "tactician"}"\n'
    )  # fmt: skip
    return path


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


def test_a_clearly_stronger_policy_stops_the_test_early_with_h1(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["run", str(_sprt_config(tmp_path, max_matches=400)), "--out", str(out),
                 "--no-progress"]) == 0  # fmt: skip
    summary = _summary(out)
    sprt = summary["sprt"]
    assert sprt["verdict"] == "H1"
    assert sprt["llr"] >= sprt["upper"]
    assert sprt["matches"] == sprt["decided_at"] + 1  # every match up to the verdict counted
    assert sum(sprt["pentanomial"]) == sprt["matches"]
    played = len(list((out / "replays").glob("*.json"))) // 2
    assert played < 100  # far fewer than the 400 allowed
    # matches already started when the verdict fell finish, and are shown apart
    assert played == sprt["matches"] + sprt["after"]["matches"]
    assert summary["stopped_by"] == f"the SPRT accepted H1 after {sprt['matches']} matches"


def test_two_equal_policies_stop_with_h0(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["run", str(_sprt_config(tmp_path, "copy")), "--out", str(out),
                 "--no-progress"]) == 0  # fmt: skip
    sprt = _summary(out)["sprt"]
    assert sprt["verdict"] == "H0"
    assert sprt["llr"] <= sprt["lower"]


def test_the_match_cap_stops_an_undecided_test(tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = _sprt_config(tmp_path, max_matches=5)
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    sprt = _summary(out)["sprt"]
    assert sprt["status"] == "inconclusive"
    assert sprt["matches"] == 5
    assert len(list((out / "replays").glob("*.json"))) == 10
    # raising the cap is accepted on resume and the test goes on to its verdict
    raised = _sprt_config(tmp_path, max_matches=400)
    assert main(["run", str(raised), "--out", str(out), "--no-progress"]) == 0
    assert _summary(out)["sprt"]["verdict"] == "H1"


def test_a_killed_sprt_run_resumes_to_the_same_verdict(tmp_path: Path) -> None:
    config = _sprt_config(tmp_path, max_matches=400)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main(["run", str(config), "--out", str(whole), "--no-progress"]) == 0
    process = _arena("run", str(config), "--out", str(cut))
    _kill_after(process, cut, 20, signal.SIGKILL)
    process.wait(timeout=30)
    assert 20 <= _finished(cut) < len(list((whole / "replays").glob("*.json")))  # mid-run
    assert main(["run", str(config), "--out", str(cut), "--no-progress"]) == 0
    a, b = _summary(whole)["sprt"], _summary(cut)["sprt"]
    for key in ("verdict", "decided_at", "llr", "pentanomial", "matches", "elo"):
        assert a[key] == b[key], key
    assert (
        _summary(whole)["ratings"]["elo_events"][: a["matches"]]
        == _summary(cut)["ratings"]["elo_events"][: a["matches"]]
    )


def test_report_what_sprt_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["run", str(_sprt_config(tmp_path, max_matches=400)), "--out", str(out),
                 "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["report", str(out), "--what", "sprt", "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    sprt = _summary(out)["sprt"]  # the report re-derives what the run concluded
    assert (row["verdict"], row["matches"], row["llr"]) == (
        sprt["verdict"],
        sprt["matches"],
        sprt["llr"],
    )
    assert [row[f"pentanomial_{n}"] for n in range(5)] == sprt["pentanomial"]
    assert main(["report", str(out), "--what", "sprt"]) == 0
    text = capsys.readouterr().out
    assert "H1 accepted: tactician is stronger than random by at least 20 Elo" in text
    assert f"LLR {sprt['llr']:+.3f}" in text


def test_an_sprt_needs_two_policies_and_one_games_entry() -> None:
    base = {"run": {"name": "x", "games": ["hex"], "sprt": {}},
            "policies": {"a": {"kind": "scripted"}, "b": {"kind": "scripted"}}}  # fmt: skip
    parse_config(base)
    three = {**base, "policies": {**base["policies"], "c": {"kind": "scripted"}}}
    with pytest.raises(ConfigError, match=r"tests two policies .* has 3"):
        parse_config(three)
    with pytest.raises(ConfigError, match="keep one entry"):
        parse_config({**base, "run": {**base["run"], "games": ["hex", "connect-four"]}})
    with pytest.raises(ConfigError, match=r"remove run\.matches"):
        parse_config({**base, "run": {**base["run"], "matches": 10}})
    with pytest.raises(ConfigError, match=r"elo1 = 0\.0 is not above elo0 = 5\.0"):
        parse_config({**base, "run": {**base["run"], "sprt": {"elo0": 5, "elo1": 0}}})


LEAGUE: dict[str, Any] = {
    "run": {"name": "budget", "seed": 3, "games": ["connect-four"], "matches": 6,
            "concurrency": 2},
    "policies": {"tactician": {"kind": "scripted"}, "random": {"kind": "scripted", "baseline": "random"}},
}  # fmt: skip


def test_a_match_budget_stops_the_run_and_a_raised_one_continues(tmp_path: Path) -> None:
    out = tmp_path / "out"
    data = {**LEAGUE, "run": {**LEAGUE["run"], "budget_matches": 3}}
    result = anyio.run(execute, plan_run(parse_config(data), out))
    assert result.stopped_by == "budget_matches = 3 reached (3 matches)"
    summary = _summary(out)
    assert summary["stopped_by"] == result.stopped_by
    assert summary["spent"]["matches"] == 3
    indexes = {g["match_index"] for g in summary["games"]}
    assert indexes == {0, 1, 2}  # the first three of the schedule, each whole
    assert len(summary["games"]) == 6
    data["run"]["budget_matches"] = 5  # a resume may change a budget
    result = anyio.run(execute, plan_run(parse_config(data), out))
    assert {g["match_index"] for g in _summary(out)["games"]} == {0, 1, 2, 3, 4}
    assert result.skipped == 6


def _game(index: int, tokens: int, cost: float | None) -> GameSummary:
    seat = SeatStats((10,), {}, tokens, 0, cost)
    return GameSummary(f"e{index}", index, "hex", 1, ("a", "b"), (1, -1), "complete", "connection",
                       9, (seat, seat), False)  # fmt: skip


def test_token_and_cost_budgets_count_every_stored_game() -> None:
    config = parse_config({**LEAGUE, "run": {**LEAGUE["run"], "budget_tokens": 100}})
    rules = StopRules(config, [_game(0, 30, None)], set())  # 60 tokens stored already
    assert rules.closed(1) is None
    rules.stored([_game(1, 20, None)], pending=())  # 100
    assert rules.closed(2) == "budget_tokens = 100 reached (100 tokens used)"
    assert rules.closed(1) is None  # a started match always finishes
    priced = parse_config({**LEAGUE, "run": {**LEAGUE["run"], "budget_usd": 0.01}})
    rules = StopRules(priced, [_game(0, 0, 0.004)], set())
    assert rules.closed(1) is None
    rules.stored([_game(1, 0, 0.001)], pending=())
    assert rules.closed(2) == "budget_usd = 0.01 reached ($0.0100 spent)"


def test_a_cost_budget_needs_every_model_priced() -> None:
    data = {**LEAGUE, "run": {**LEAGUE["run"], "budget_usd": 5}, "policies": {
        **LEAGUE["policies"],
        "gpt": {"kind": "llm", "provider": "openai", "model": "m", "api_key_env": "NO_KEY_HERE"},
    }}  # fmt: skip
    with pytest.raises(ConfigError, match=r"policies\.gpt has no price"):
        parse_config(data, keys=False)


ADAPTIVE: dict[str, Any] = {
    "run": {"name": "adaptive", "seed": 4, "games": ["connect-four"], "matches": 30,
            "concurrency": 4, "schedule": "adaptive", "target": 0.9, "round_matches": 6},
    "policies": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random": {"kind": "scripted", "baseline": "random"},
        "mock": {"kind": "mock"},
        "faulty": {"kind": "mock", "faults": {"illegal": 0.3}},
    },
}  # fmt: skip


def _episodes(out: Path) -> set[str]:
    return {p.stem for p in (out / "replays").glob("*.json")}


def test_an_adaptive_schedule_stops_at_its_target_with_fewer_matches(tmp_path: Path) -> None:
    out = tmp_path / "adaptive"
    result = anyio.run(execute, plan_run(parse_config(ADAPTIVE), out))
    summary = _summary(out)
    adaptive = summary["adaptive"]
    assert adaptive["probability"] >= 0.9
    assert result.stopped_by.startswith("the ranking is right with probability")
    played = {g["match_index"] for g in summary["games"]}
    assert played == set(range(adaptive["matches"]))  # every picked match, each whole
    assert len(played) < 6 * 30  # far fewer than the round robin's 180
    # the first rounds are a round robin: every pair once, in config order
    first = sorted((g for g in summary["games"] if g["game_index"] == 1),
                   key=lambda g: g["match_index"])[:6]  # fmt: skip
    assert [tuple(g["policies"]) for g in first] == [
        ("tactician", "random"), ("tactician", "mock"), ("tactician", "faulty"),
        ("random", "mock"), ("random", "faulty"), ("mock", "faulty"),
    ]  # fmt: skip
    # the k-th match of a pair is the round robin's k-th match: same id, same replay
    robin = tmp_path / "robin"
    small = {**ADAPTIVE, "run": {**ADAPTIVE["run"], "schedule": "round-robin", "matches": 2}}
    anyio.run(execute, plan_run(parse_config(small), robin))
    common = _episodes(robin) & _episodes(out)
    assert len(common) >= 12  # every pair's first match at least
    for stem in sorted(common)[:6]:
        a = json.loads((robin / "replays" / f"{stem}.json").read_text())["games"]
        b = json.loads((out / "replays" / f"{stem}.json").read_text())["games"]
        assert [[p["decisions"][0]["move"] for p in g["plies"]] for g in a] == [
            [p["decisions"][0]["move"] for p in g["plies"]] for g in b
        ]


def test_a_killed_adaptive_run_resumes_to_the_same_schedule(tmp_path: Path) -> None:
    config = tmp_path / "adaptive.toml"
    config.write_text(
        '[run]\nname = "adaptive"\nseed = 4\ngames = ["connect-four"]\nmatches = 30\n'
        'concurrency = 4\nschedule = "adaptive"\ntarget = 0.9\nround_matches = 6\n'
        '[policies.tactician]\nkind = "scripted"\nbaseline = "tactician"\n'
        '[policies.random]\nkind = "scripted"\nbaseline = "random"\n'
        '[policies.mock]\nkind = "mock"\n'
        '[policies.faulty]\nkind = "mock"\nfaults = { illegal = 0.3 }\n'
    )  # fmt: skip
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main(["run", str(config), "--out", str(whole), "--no-progress"]) == 0
    process = _arena("run", str(config), "--out", str(cut))
    _kill_after(process, cut, 40, signal.SIGKILL)
    process.wait(timeout=30)
    assert 40 <= _finished(cut) < len(_episodes(whole))  # killed mid-run
    assert main(["run", str(config), "--out", str(cut), "--no-progress"]) == 0
    assert _episodes(cut) == _episodes(whole)
    a, b = _summary(whole), _summary(cut)
    assert a["adaptive"] == b["adaptive"]
    assert a["ratings"]["elo"] == b["ratings"]["elo"]
    assert a["ratings"]["bt"] == b["ratings"]["bt"]


def test_an_adaptive_schedule_needs_one_games_entry_and_three_policies() -> None:
    with pytest.raises(ConfigError, match="keep one entry"):
        parse_config({**ADAPTIVE, "run": {**ADAPTIVE["run"], "games": ["hex", "connect-four"]}})
    two = {**ADAPTIVE, "policies": dict(list(ADAPTIVE["policies"].items())[:2])}
    with pytest.raises(ConfigError, match=r"use \[run\.sprt\]"):
        parse_config(two)


def test_report_what_sprt_on_a_run_without_one_is_a_clean_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    data = {**LEAGUE, "run": {**LEAGUE["run"], "matches": 1}}
    anyio.run(execute, plan_run(parse_config(data), out))
    for fmt in ("table", "json", "csv"):
        capsys.readouterr()
        assert main(["report", str(out), "--what", "sprt", "--format", fmt]) == 2
        assert "has no [run.sprt]: --what sprt reports an SPRT run" in capsys.readouterr().err
