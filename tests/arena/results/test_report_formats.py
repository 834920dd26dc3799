"""`arena report`: every `--what` in every format; JSON and CSV give the same records."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import anyio
import pandas as pd
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


@pytest.mark.parametrize("what", ["standings", "h2h", "fallbacks", "games", "entrants"])
def test_every_table_renders(what: str, run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _report(capsys, run, "--what", what).strip()


TIDY = ("standings", "h2h", "fallbacks", "games", "entrants")


def _frames(
    capsys: pytest.CaptureFixture[str], run: Path, what: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    text_csv = _report(capsys, run, "--format", "csv", "--what", what)
    text_json = _report(capsys, run, "--format", "json", "--what", what)
    return pd.read_csv(io.StringIO(text_csv)), pd.read_json(io.StringIO(text_json))


@pytest.mark.parametrize("what", TIDY)
def test_every_export_loads_into_pandas_as_flat_columns(
    what: str, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from_csv, from_json = _frames(capsys, run, what)
    assert len(from_csv) == len(from_json) > 0
    assert list(from_csv.columns) == list(from_json.columns)
    for column in from_csv.columns:
        texts = from_csv[column].dropna()
        if texts.dtype != object:
            continue
        # no JSON blob and no JSON-quoted text in any cell
        assert not texts.astype(str).str.match(r'^\s*[\[{"]').any(), (what, column)


def test_standings_export_is_typed_and_rates_only_the_overall_table(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame, _ = _frames(capsys, run, "standings")
    for column in (
        "games",
        "wins",
        "draws",
        "losses",
        "fallbacks",
        "fallbacks_illegal",
        "forfeits",
    ):
        assert pd.api.types.is_integer_dtype(frame[column]), column
    assert pd.api.types.is_float_dtype(frame["mean_score"])
    overall = frame[frame["game"] == "overall"]
    per_game = frame[frame["game"] != "overall"]
    assert overall["elo"].notna().all()
    assert overall["bt_low"].notna().all()
    assert per_game[["elo", "bt_rating", "bt_low", "bt_high"]].isna().all().all()
    # the cause columns add up to the fallbacks, the sides too
    causes = [c for c in frame.columns if c.startswith("fallbacks_") and c not in
              ("fallbacks_seat", "fallbacks_infrastructure")]  # fmt: skip
    assert (frame[causes].sum(axis=1) == frame["fallbacks"]).all()
    faulty = overall.set_index("policy").loc["faulty"]
    assert faulty["fallbacks"] > 0


def test_games_export_has_a_column_per_seat(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, _ = _frames(capsys, run, "games")
    summary = json.loads((run / "summary.json").read_text())
    first = summary["games"][0]
    row = frame.iloc[0]
    assert [row["policy_0"], row["policy_1"]] == first["policies"]
    assert [row["score_0"], row["score_1"]] == first["scores"]
    assert [row["decisions_0"], row["decisions_1"]] == [s["decisions"] for s in first["seats"]]
    assert "seats" not in frame.columns
    assert "latencies_ms_0" not in frame.columns
    assert pd.api.types.is_numeric_dtype(frame["latency_p95_ms_0"])


def test_a_fallbacks_move_is_the_move_as_the_replay_has_it(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame, _ = _frames(capsys, run, "fallbacks")
    row = frame.iloc[0]
    replay = json.loads((run / "replays" / f"{row['episode']}.json").read_text())
    game = next(g for g in replay["games"] if g["index"] == row["game_index"])
    ply = next(p for p in game["plies"] if p["ply"] == row["ply"])
    decision = next(d for d in ply["decisions"] if d["seat"] == row["seat"])
    assert row["move"] == decision["move"]  # `a4-a3`, not `"a4-a3"`
    assert row["attempts"] == len(decision["attempts"])
    assert row["attempt1_reply"] == decision["attempts"][0]["reply"]


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("what", ["standings", "h2h", "fallbacks", "games"])
def test_tables_fit_the_terminal_without_cutting_numbers(
    what: str, width: int, run: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("COLUMNS", str(width))
    text = _report(capsys, run, "--what", what)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    if what == "standings":
        summary = json.loads((run / "summary.json").read_text())
        for row in summary["standings"]["overall"]:
            assert f"{row['mean_score']:+.3f}" in text
            assert f"{row['wins']}-{row['draws']}-{row['losses']}" in text
            bt = summary["ratings"]["bt"][row["policy"]]
            assert f"{bt['rating']:.0f} [{bt['low']:.0f}, {bt['high']:.0f}]" in text
            for cause, n in row["fallbacks"].items():  # in its column, or said under the table
                assert f"{cause} {n}" in text
        if width == 80:
            assert "not shown at 80 columns:" in text  # what is left out is said


def test_entrants_and_standings_carry_each_policys_fingerprint(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.play.fingerprint import fingerprint

    replay = json.loads(next((run / "replays").glob("*.json")).read_text())
    entrants = {row["name"]: row for row in _json(capsys, run, "entrants")}
    assert list(entrants) == list(LEAGUE["policies"])
    for name, value in replay["spectator"]["fingerprints"].items():
        assert entrants[name]["fingerprint"] == value
    assert entrants["random"]["fingerprint"] == fingerprint(
        {"kind": "scripted", "baseline": "random"}
    )
    assert {row["status"] for row in entrants.values()} == {"active"}
    assert all(row["games"] == 8 for row in entrants.values())  # 2 games x 2 others x 2 seats
    standings = _json(capsys, run, "standings")
    assert {row["policy"]: row["fingerprint"] for row in standings} == {
        name: row["fingerprint"] for name, row in entrants.items()
    }


def test_a_no_contest_exports_why_and_latencies_have_one_decimal() -> None:
    from arena.results.export import game_rows
    from arena.results.standings import GameSummary, SeatStats

    seat = SeatStats((101, 102, 250), {})
    nc = GameSummary(
        "e-g1", 0, "hex", 1, ("a", "b"), None, "complete", "no-contest", 12, (seat, seat), False,
        detail="infrastructure: seat 0's decisions fell back on the infrastructure 5 of 6 times",
    )  # fmt: skip
    counted = GameSummary(
        "e-g2", 0, "hex", 2, ("b", "a"), (1, -1), "complete", "connection", 30, (seat, seat), False
    )
    row, played = game_rows([nc, counted])
    assert row["no_contest"] is True
    assert row["reason"] == "no-contest"  # not the 'complete' of a game that counts
    assert (played["no_contest"], played["reason"]) == (False, "complete")
    assert row["detail"].startswith("infrastructure: seat 0")
    assert row["latency_p50_ms_0"] == 102.0
    assert isinstance(row["latency_p95_ms_0"], float)
    assert row["latency_p95_ms_0"] == round(row["latency_p95_ms_0"], 1)
    assert GameSummary.from_json(nc.to_json()).detail == nc.detail


def test_an_ab_pair_reads_as_a_sentence() -> None:
    from arena.results.ab import ab_sentence

    said = ab_sentence({
        "a": "terse", "b": "verbose", "differs": "prompt", "h2h": [59, 0, 61, 0],
        "bt_difference": {"value": -6.2, "low": -40.0, "high": 28.5},
    })  # fmt: skip
    assert said == (
        "prompt A/B, terse vs verbose (they differ in prompt only): terse rates -6 Elo against "
        "verbose by Bradley-Terry (95% interval -40 to +28); head to head terse won 59, drew 0 "
        "and lost 61 of its games with verbose."
    )
    assert "no rated match yet" in ab_sentence(
        {"a": "x", "b": "y", "differs": "decoding", "h2h": None}
    )


def test_an_ab_sentence_says_when_a_side_played_under_90_percent_itself() -> None:
    from arena.results.ab import ab_sentence

    ab = {
        "a": "model-free", "b": "model-schema", "differs": "decoding", "h2h": [30, 0, 10, 0],
        "bt_difference": {"value": 314.0, "low": 200.0, "high": 420.0},
        "own_play": {"model-free": 0.85, "model-schema": 0.995}, "fallback": "tactician",
    }  # fmt: skip
    said = ab_sentence(ab)
    assert (
        "model-free: 85% own play; the rest was the tactician's: this compares fallbacks as "
        "much as models." in said
    )
    assert "model-schema:" not in said  # 99.5% is its own play
    assert "fallbacks" not in ab_sentence({**ab, "own_play": {"model-free": 0.9}})


def test_an_ab_sentence_beside_an_sprt_of_its_pair_says_the_sprt_decides() -> None:
    from arena.results.ab import ab_sentence

    ab = {"a": "plain", "b": "coach", "differs": "prompt", "h2h": [20, 0, 18, 0],
          "bt_difference": {"value": 17.0, "low": -60.0, "high": 104.0}}  # fmt: skip
    sprt = {"first": "coach", "second": "plain", "matches": 32}
    assert "The SPRT below decides this pair (32 matches" in ab_sentence(ab, sprt)
    other = {**sprt, "second": "terse"}
    assert "SPRT" not in ab_sentence(ab, other)


def _standings(elo: dict[str, float], bt: dict[str, float], own: dict[str, float]) -> Any:
    from arena.results.report import standings_tables

    row = {"games": 4, "wins": 2, "draws": 0, "losses": 2, "no_contest": 0, "mean_score": 0.0,
           "decisions": 40, "fallbacks": {}, "latency_p50_ms": 1, "latency_p95_ms": 2,
           "tokens_in": 0, "tokens_out": 0, "cost_usd": None}  # fmt: skip
    rows = [{**row, "policy": p, "own_play": own[p]} for p in bt]
    ratings = {
        "elo": elo,
        "bt": {p: {"rating": r, "low": r - 50, "high": r + 50, "on_prior": False}
               for p, r in bt.items()},
    }  # fmt: skip
    (table,) = standings_tables({"standings": {"overall": rows}, "ratings": ratings}, 200)
    import rich.console

    console = rich.console.Console(width=200, record=True)
    console.print(table)
    return " ".join(console.export_text().split())


def test_the_standings_say_which_rating_to_read_when_elo_and_bt_disagree() -> None:
    agree = _standings({"plain": 1520, "coach": 1480}, {"plain": 1513, "coach": 1487},
                       {"plain": 1.0, "coach": 1.0})  # fmt: skip
    assert "otherwise than Bradley-Terry" not in agree
    crossed = _standings({"plain": 1481, "coach": 1519}, {"plain": 1513, "coach": 1487},
                         {"plain": 1.0, "coach": 1.0})  # fmt: skip
    assert "Elo K=24 orders 1 pair(s) otherwise than Bradley-Terry: read BT" in crossed


def test_the_standings_name_the_policies_under_90_percent_own_play() -> None:
    said = _standings({"a": 1550, "b": 1450}, {"a": 1550, "b": 1450}, {"a": 0.63, "b": 0.99})
    assert "own play under 90% (a 63%): the rest was the fallback's" in said
    assert "(b 99%" not in said


def test_the_head_to_head_title_says_what_it_counts(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = " ".join(_report(capsys, run, "--what", "h2h").split())
    assert "every game of every complete match" in said  # as docs/rules.md counts it
    assert "all games" not in said


def test_a_report_without_league_db_names_arena_rebuild(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    (copy / "league.db").unlink()
    capsys.readouterr()
    assert main(["report", str(copy)]) != 0
    said = " ".join(capsys.readouterr().err.split())
    assert f"`arena rebuild {copy}` makes it again from the replays" in said
    shutil.rmtree(copy / "replays")
    assert main(["report", str(copy)]) != 0
    assert "a run folder of `arena run`?" in capsys.readouterr().err  # nothing to rebuild from


def test_the_entrants_table_says_why_games_outnumber_the_standings() -> None:
    import rich.console

    from arena.results.report import entrants_table

    def entrant(name: str, author: str | None) -> dict[str, Any]:
        return {"name": name, "kind": "llm", "fingerprint": "f" * 12, "author": author,
                "status": "active", "retired": None, "first_session": 1, "last_session": 1,
                "games": 112, "bt": None}  # fmt: skip

    def shown(entrants: list[dict[str, Any]]) -> str:
        console = rich.console.Console(width=200, record=True)
        console.print(entrants_table(entrants, 200))
        return " ".join(console.export_text().split())

    pair = [entrant("model-a", "model-a"), entrant("model-a-program", "model-a")]
    assert "same-author ones included" in shown([*pair, entrant("tactician", None)])
    apart = [entrant("model-a", "model-a"), entrant("model-b-program", "model-b")]
    assert "same-author" not in shown(apart)  # no author with two entrants: no such game
