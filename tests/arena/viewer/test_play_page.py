"""A person in a seat, through the play page's HTTP API (no browser): games a scripted
"person" plays by posting moves finish and verify; a refused try is answered with the
engine's message while the deadline runs; an unanswered decision is a `timeout` fallback;
the token and the Host are checked; the page's data never carries a policy's name or the
opponent's hidden Stratego ranks; the person's deadlines hold where the game lets a seat
have its own, and the game's clock where it is a rule; a game's first decision waits for
the page (or `first_open_s`) before its clock starts; the desk says who played each ply and
who won; Ctrl-C cuts at once a game only the person can finish."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from arena.league.run import RunResult, execute
from arena.record.replay import load_replay
from arena.record.verify import verify_file
from arena.seats.desk import Desk
from arena.viewer.play import PlayServer, play_page

pytestmark = pytest.mark.anyio

Person = Callable[[httpx.AsyncClient, dict[str, Any], dict[str, Any]], Any]
"""(client, table, turn) -> the move to send, or None to send nothing."""


def _config(name: str, game: str, **person: Any) -> dict[str, Any]:
    return {
        "run": {"name": name, "seed": 5, "games": [game], "matches": 1, "concurrency": 2},
        "policies": {
            "ada": {"kind": "human", "name": "Ada Lovelace", **person},
            "tactician": {"kind": "scripted"},
        },
    }


async def _play(
    tmp_path: Path,
    data: dict[str, Any],
    person: Person,
    *,
    seen: list[str] | None = None,
    until: Callable[[int], bool] | None = None,
    late_s: float = 0.0,
) -> tuple[RunResult | None, PlayServer]:
    """Run `data` with a play page; `person` answers every open turn over HTTP, the page
    first fetched `late_s` after the run started. Every JSON the page served is appended
    to `seen`. With `until`, the run is cancelled once it holds for the number of moves the
    person sent."""
    plan = plan_run(parse_config(data), tmp_path / "out")
    result: list[RunResult] = []
    sent = 0
    async with (
        play_page(data["run"]["name"]) as page,
        httpx.AsyncClient(base_url=page.url, timeout=30) as client,
        anyio.create_task_group() as group,
    ):

        async def run() -> None:
            result.append(await execute(plan, desk=page.desk))
            group.cancel_scope.cancel()

        async def answer() -> None:
            nonlocal sent
            answered: set[tuple[str, int]] = set()
            version = -1
            await anyio.sleep(late_s)
            while True:
                reply = await client.get("api/tables", params={"since": version})
                assert reply.status_code == 200
                if seen is not None:
                    seen.append(reply.text)
                desk = reply.json()
                version = desk["version"]
                for table in desk["tables"]:
                    turn = table["turn"]
                    if turn is None or (table["id"], turn["id"]) in answered:
                        continue
                    answered.add((table["id"], turn["id"]))
                    move = await person(client, table, turn)
                    if move is None:
                        continue
                    posted = await client.post(
                        "api/move",
                        json={"table": table["id"], "turn": turn["id"], "move": move},
                    )
                    assert posted.status_code == 200, posted.text
                    sent += 1
                    if until is not None and until(sent):
                        group.cancel_scope.cancel()

        group.start_soon(run)
        group.start_soon(answer)
    return (result[0] if result else None), page


async def _first_legal(
    client: httpx.AsyncClient, table: dict[str, Any], turn: dict[str, Any]
) -> Any:
    return turn["legal"][0] if turn["legal"] else turn["suggestion"]


async def test_a_person_plays_connect_four_to_the_end_and_the_replays_verify(
    tmp_path: Path,
) -> None:
    result, _ = await _play(tmp_path, _config("c4", "connect-four"), _first_legal)
    assert result is not None
    assert result.played == 2
    assert not result.failed
    for path in sorted((tmp_path / "out" / "replays").glob("*.json")):
        replay = verify_file(path)  # raises on the first difference
        record = replay.games[0]
        person = record.aliases[replay.spectator.policies[str(record.index)].index("ada")]
        mine = [d for p in record.plies for d in p.decisions if d.alias == person]
        assert mine
        assert {d.source for d in mine} == {"reply"}
        assert all(len(d.attempts) == 1 and d.attempts[0].cause is None for d in mine)
        assert replay.spectator.authors["ada"] == "Ada Lovelace"


async def test_a_refused_try_gets_the_engines_message_and_the_deadline_runs_on(
    tmp_path: Path,
) -> None:
    refusals: list[tuple[int, str, float, float]] = []

    async def full_column_first(
        client: httpx.AsyncClient, table: dict[str, Any], turn: dict[str, Any]
    ) -> Any:
        if len(refusals) < 1:
            posted = await client.post(
                "api/move", json={"table": table["id"], "turn": turn["id"], "move": "z"}
            )
            await anyio.sleep(0.3)
            again = (await client.get("api/tables", params={"since": -1})).json()
            still = next(t for t in again["tables"] if t["id"] == table["id"])["turn"]
            refusals.append(
                (
                    posted.status_code,
                    posted.json()["error"],
                    turn["remaining_s"],
                    still["remaining_s"],
                )
            )
            assert still["refused"] == [{"move": "z", "error": posted.json()["error"]}]
        return turn["legal"][0]

    result, _ = await _play(
        tmp_path, _config("refused", "connect-four", decision_s=30), full_column_first
    )
    assert result is not None
    assert result.played == 2
    status, error, before, after = refusals[0]
    assert status == 422
    assert error  # the engine's own words, whatever they are
    assert after < before - 0.2  # the countdown did not start over
    replays = [load_replay(p) for p in (tmp_path / "out" / "replays").glob("*.json")]
    retried = [
        d for r in replays for p in r.games[0].plies for d in p.decisions if d.source == "retry"
    ]
    assert len(retried) == 1
    assert [a.cause for a in retried[0].attempts] == ["unreadable", None]
    assert retried[0].attempts[0].reply == "z"
    assert retried[0].attempts[0].error == error


async def test_an_unanswered_decision_is_a_timeout_fallback(tmp_path: Path) -> None:
    async def silent(client: httpx.AsyncClient, table: dict[str, Any], turn: dict[str, Any]) -> Any:
        return None

    started = anyio.current_time()
    data = _config("silent", "connect-four", decision_s=0.2)
    data["run"]["concurrency"] = 1
    data["run"]["matches"] = 1
    result, _ = await _play(tmp_path, data, silent)
    assert result is not None
    assert result.played == 2
    replays = [load_replay(p) for p in (tmp_path / "out" / "replays").glob("*.json")]
    fallbacks = [f for r in replays for f in r.games[0].fallbacks]
    assert fallbacks
    assert {f.cause for f in fallbacks} == {"timeout"}
    assert {f.side for f in fallbacks} == {"seat"}
    # every decision of the person waited its 0.2 s, and no longer than a generous bound
    assert anyio.current_time() - started < 0.2 * len(fallbacks) + 30
    for path in (tmp_path / "out" / "replays").glob("*.json"):
        verify_file(path)


async def test_requests_without_the_token_or_from_another_host_are_refused(tmp_path: Path) -> None:
    async with play_page("guarded") as page, httpx.AsyncClient(timeout=10) as client:
        base = page.url.split("/play/")[0]
        for path in ("/", "/play/", "/play/not-the-token/", "/play/not-the-token/api/tables"):
            reply = await client.get(base + path)
            assert reply.status_code == 403, path
        wrong = page.url.replace(
            page.page.token, page.page.token[:-1] + ("A" if page.page.token[-1] != "A" else "B")
        )
        assert (await client.get(wrong + "api/tables?since=99")).status_code == 403
        assert (await client.post(wrong + "api/move", json={})).status_code == 403
        rebound = await client.get(page.url + "api/tables", headers={"host": "evil.example:80"})
        assert rebound.status_code == 403
        ok = await client.get(page.url + "api/tables", params={"since": -1})
        assert ok.status_code == 200
        assert ok.headers["cache-control"] == "no-store"
        assert ok.headers["referrer-policy"] == "no-referrer"
        assert (
            await client.post(page.url + "api/move", json={"table": "x", "turn": 1, "move": "a"})
        ).status_code == 404


async def test_the_page_never_names_a_policy_and_hides_stratego_ranks(tmp_path: Path) -> None:
    seen: list[str] = []
    data = _config("hidden", "stratego")
    data["run"]["concurrency"] = 1
    await _play(tmp_path, data, _first_legal, seen=seen, until=lambda sent: sent >= 40)
    assert seen
    text = "\n".join(seen)
    for name in ("ada", "Ada Lovelace", "tactician"):
        assert not re.search(rf"\b{re.escape(name)}\b", text), name
    enemy_codes = 0
    for raw in seen:
        for table in json.loads(raw)["tables"]:
            frame = table["frame"]
            if frame is None:
                continue
            me = str(table["seat"])
            for code, owner, flag in zip(
                frame["board"], frame["owners"], frame["flags"], strict=True
            ):
                if owner not in (".", me) and flag not in ("r", "b"):
                    assert code == "?", (code, owner, flag)
                    enemy_codes += 1
            turn = table["turn"]
            if turn is not None:
                for piece in turn["view"]["pieces"]:
                    if str(piece["seat"]) != me and not piece["revealed"]:
                        assert piece["code"] == "?"
    assert enemy_codes > 0  # the enemy's pieces were on the board, hidden


async def test_the_person_keeps_their_deadlines_where_the_game_allows_and_the_battle_its_clock(
    tmp_path: Path,
) -> None:
    turns: dict[str, float] = {}

    async def look(client: httpx.AsyncClient, table: dict[str, Any], turn: dict[str, Any]) -> Any:
        turns.setdefault(table["game"], turn["decision_s"])
        return (
            []
            if turn["key"] == "orders"
            else (turn["legal"][0] if turn["legal"] else turn["suggestion"])
        )

    data = _config("clocks", "connect-four", decision_s=77)
    data["run"]["games"] = ["connect-four", "battle"]
    data["game"] = {"battle": {"decision_s": 3.5, "first_reply_s": 2, "retry_s": 1}}
    await _play(tmp_path, data, look, until=lambda sent: len(turns) == 2)
    assert turns["connect-four"] == 77
    assert turns["battle"] == 3.5


async def test_a_run_with_a_person_needs_its_page(tmp_path: Path) -> None:
    plan = plan_run(parse_config(_config("nopage", "hex")), tmp_path / "out")
    with pytest.raises(ValueError, match="play page"):
        await execute(plan)


def test_a_human_policy_checks_its_deadlines() -> None:
    with pytest.raises(ConfigError, match=r"first_reply_s = 200\.0 exceeds decision_s = 120\.0"):
        parse_config(_config("bad", "hex", first_reply_s=200))
    with pytest.raises(ConfigError, match="decision_s"):
        parse_config(_config("bad", "hex", decision_s=0))


@pytest.mark.slow  # starts `arena` in a subprocess
def test_arena_run_human_toml_prints_the_url_serves_the_page_and_stops_resumably(
    tmp_path: Path,
) -> None:
    """The newcomer's command: the URL (with its token) is printed, not opened; the page
    lists the person's first game; Ctrl-C stops the run, which a second command resumes."""
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    command = [
        sys.executable, "-m", "arena.cli", "run", "configs/human.toml", "--out",
        str(tmp_path / "out"), "--no-progress", "--grace", "1",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=root, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        url = None
        for _ in range(50):
            line = process.stderr.readline()
            found = re.search(r"play page: open (http://127\.0\.0\.1:\d+/play/[\w-]+/) ", line)
            if found:
                url = found.group(1)
                break
        assert url is not None, "no play page URL printed"
        desk = httpx.get(url + "api/tables", params={"since": 0}, timeout=30).json()
        assert desk["run"] == "human"
        assert [t["game"] for t in desk["tables"]] == ["connect-four"]
        assert httpx.get(url.replace("/play/", "/play/x"), timeout=10).status_code == 403
        events = (tmp_path / "out" / "events.jsonl").read_text()
        assert url.split("/play/")[1].strip("/") not in events  # the token is never logged
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130
        rest = process.stderr.read()
        assert "run the same command again to resume" in rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_on_a_cluster_a_persons_games_stay_where_the_page_is(tmp_path: Path) -> None:
    from tests.arena.league.test_executor import ThreadWorker

    data = _config("cluster", "connect-four", decision_s=0.05, first_open_s=0.05)  # no page
    data["policies"]["random"] = {"kind": "scripted", "baseline": "random"}
    plan = plan_run(parse_config(data), tmp_path / "out")
    worker = ThreadWorker(plan)
    async with play_page("cluster") as page:
        result = await execute(plan, desk=page.desk, executor=worker)
    assert result.played == 6  # three pairs, two games each
    assert len(worker.chances) == 2  # only tactician against random went to the worker
    assert len(page.desk.tables) == 4  # the person's four games, all played here


async def _until(desk: Desk, check: Callable[[], Any], timeout_s: float = 30.0) -> Any:
    """`check()`'s first truthy value, looked for at each change of the desk (never through
    the page, which would start a held clock) for at most `timeout_s`."""
    with anyio.fail_after(timeout_s):
        while not (found := check()):
            await desk.wait(desk.version, 0.1)
    return found


def _person_decisions(tmp_path: Path) -> list[list[Any]]:
    """The person's decisions of each game the run stored, in play order (game 1 first)."""
    out = []
    for path in sorted((tmp_path / "out" / "replays").glob("*.json")):
        replay = load_replay(path)
        record = replay.games[0]
        alias = record.aliases[replay.spectator.policies[str(record.index)].index("ada")]
        out.append([d for p in record.plies for d in p.decisions if d.alias == alias])
    return out


async def test_a_games_first_decision_starts_its_clock_when_the_page_fetches_it(
    tmp_path: Path,
) -> None:
    """The page opens 1.5 s into the run, past the whole 1 s decision: the first decision
    is still open, with the server's full budget, and the person's think time counts from
    the fetch."""
    seen: list[str] = []
    data = _config("late", "connect-four", decision_s=1.0, first_open_s=60)
    data["run"]["concurrency"] = 1
    started = anyio.current_time()
    result, _ = await _play(tmp_path, data, _first_legal, seen=seen, late_s=1.5)
    assert result is not None
    assert result.played == 2
    first = json.loads(seen[0])
    assert anyio.current_time() - started > 1.5
    [table] = first["tables"]
    turn = table["turn"]
    assert turn is not None
    assert turn["id"] == 1  # the game's first decision, not timed out before the page came
    assert turn["clock_started"] is True
    assert 0.5 < turn["remaining_s"] <= 1.0  # the server's time left, counted from the fetch
    games = _person_decisions(tmp_path)
    assert [d.source for g in games for d in g] == ["reply"] * sum(map(len, games))
    assert games[0][0].latency_s < 1.0  # think time from the clock's start, not the ask


async def test_a_first_decision_no_page_fetches_starts_its_clock_after_first_open_s(
    tmp_path: Path,
) -> None:
    """Nobody opens the page: the game's first decision is held for `first_open_s`, then
    runs its `decision_s`; the next decision of the game runs at once."""
    data = _config("unseen", "connect-four", decision_s=0.3, first_open_s=1.0)
    data["run"]["concurrency"] = 1
    plan = plan_run(parse_config(data), tmp_path / "out")
    async with play_page("unseen") as page, anyio.create_task_group() as group:
        group.start_soon(partial(execute, plan, desk=page.desk))
        desk = page.desk
        table = await _until(desk, lambda: next(iter(desk.tables.values()), None))
        first = await _until(desk, lambda: table.turn)
        held = first.to_json()
        assert held["clock_started"] is False
        assert held["remaining_s"] == 0.3  # the whole budget, until the clock starts
        await _until(desk, lambda: first.closed)
        first_open = anyio.current_time() - first.opened
        second = await _until(desk, lambda: table.turn if table.turn not in (None, first) else None)
        assert second.id == 2
        await _until(desk, lambda: second.closed)
        second_open = anyio.current_time() - second.opened
        group.cancel_scope.cancel()
    assert 1.25 < first_open < 8.0  # held for first_open_s, then its decision_s
    assert second_open < 1.0  # the next decision's clock runs at once
    assert first.started - first.opened == pytest.approx(1.0, abs=0.5)


async def test_the_page_starts_the_clock_of_the_table_it_shows_only(tmp_path: Path) -> None:
    """Two games wait on the person's first decision: a fetch that names the table on
    screen (`showing`) starts that decision's clock alone; an empty `showing` starts none;
    a fetch without it (a client that draws every table) starts every one."""
    data = _config("two", "connect-four", decision_s=30, first_open_s=60)
    plan = plan_run(parse_config(data), tmp_path / "out")
    async with (
        play_page("two") as page,
        httpx.AsyncClient(base_url=page.url, timeout=30) as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(partial(execute, plan, desk=page.desk))
        desk = page.desk
        await _until(desk, lambda: sum(t.turn is not None for t in desk.tables.values()) == 2)

        async def clocks(**params: Any) -> dict[str, bool]:
            reply = await client.get("api/tables", params={"since": -1, **params})
            assert reply.status_code == 200
            return {t["id"]: t["turn"]["clock_started"] for t in reply.json()["tables"]}

        first, second = desk.tables
        assert await clocks(showing="") == {first: False, second: False}
        assert await clocks(showing=second) == {first: False, second: True}
        assert await clocks() == {first: True, second: True}
        group.cancel_scope.cancel()


async def test_the_desk_says_who_played_each_ply_and_who_won(tmp_path: Path) -> None:
    seen: list[str] = []
    data = _config("plies", "connect-four")
    data["run"]["concurrency"] = 1
    result, _ = await _play(tmp_path, data, _first_legal, seen=seen)
    assert result is not None
    assert result.played == 2
    last: dict[str, Any] = {}
    for raw in seen:
        for table in json.loads(raw)["tables"]:
            last[table["id"]] = table
    assert len(last) == 2
    replays = {
        load_replay(p).games[0].index: load_replay(p)
        for p in (tmp_path / "out" / "replays").glob("*.json")
    }
    for table in last.values():
        record = replays[table["game_index"]].games[0]
        assert table["status"] == "over"  # a finished game's table stays, with its result
        want = [
            " & ".join("you" if d.alias == table["alias"] else d.alias for d in p.decisions)
            for p in record.plies
        ]
        assert [p["by"] for p in table["plies"]] == want
        assert {p["by"] for p in table["plies"]} == {"you", table["opponent"]}
        assert [p["move"] for p in table["plies"]] == table["history"]
        result = table["result"]
        scores = record.result.scores
        assert result["scores"] == scores
        assert result["ending"] == record.result.ending
        winner = None if scores[0] == scores[1] else record.aliases[scores.index(max(scores))]
        assert result["winner"] == winner


def _arena_run(out: Path) -> tuple[Any, str]:
    """`arena run configs/human.toml` (its default 30 s grace) and its page's URL."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    command = [sys.executable, "-m", "arena.cli", "run", "configs/human.toml", "--out", str(out),
               "--no-progress"]  # fmt: skip
    process = subprocess.Popen(command, cwd=root, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for _ in range(50):
        line = process.stderr.readline()
        found = re.search(r"play page: open (http://127\.0\.0\.1:\d+/play/[\w-]+/) ", line)
        if found:
            return process, found.group(1)
    process.kill()
    process.wait()
    raise AssertionError("no play page URL printed")


def _open_turn(url: str) -> dict[str, Any]:
    """The person's first table once its decision is open (the page's fetch starts its clock)."""
    import time

    for _ in range(100):
        desk = httpx.get(url + "api/tables", params={"since": -1}, timeout=30).json()
        if desk["tables"] and desk["tables"][0]["turn"] is not None:
            table: dict[str, Any] = desk["tables"][0]
            return table
        time.sleep(0.1)
    raise AssertionError("no decision of the person's opened")


@pytest.mark.slow  # starts `arena` in a subprocess, twice
def test_ctrl_c_cuts_at_once_a_game_only_the_person_can_finish_and_a_resume_plays_it(
    tmp_path: Path,
) -> None:
    """Ctrl-C while the person's move is all the game waits on: the run stops well before
    its 30 s grace, stores nothing of the cut game, and the same command plays it again."""
    import signal
    import time

    out = tmp_path / "out"
    for attempt in (1, 2):
        process, url = _arena_run(out)
        try:
            table = _open_turn(url)
            assert (table["game"], table["game_index"]) == ("connect-four", 1)
            assert len(table["history"]) <= 1  # from its start (the baseline's move at most)
            asked = time.monotonic()
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=60) == 130
            assert time.monotonic() - asked < 15  # not the 30 s grace
            assert process.stderr is not None
            rest = process.stderr.read()
            assert "run the same command again to resume" in rest, attempt
            events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
            cut = [e for e in events if e["event"] == "game_cut"]
            assert len(cut) == attempt  # one a session, each named as every event is
            assert cut[-1]["episode"].startswith("connect-four-")
            assert (cut[-1]["run"], cut[-1]["game"], cut[-1]["game_index"]) == (
                "human", "connect-four", 1,
            )  # fmt: skip
            assert not list((out / "replays").glob("*.json"))  # nothing of it stored
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


async def test_at_a_stop_the_desk_cuts_each_game_as_it_comes_to_wait_on_the_person(
    tmp_path: Path,
) -> None:
    """The run stops (`Desk.stop`, as the first Ctrl-C does) while game 1 waits on the
    person and game 2's other seat still thinks: game 1 is cut at once, game 2 as soon as
    its person's decision opens; nothing is stored."""
    data = _config("stop", "connect-four")
    data["policies"]["tactician"] = {"kind": "mock", "latency_ms": 500}
    plan = plan_run(parse_config(data), tmp_path / "out")
    results: list[RunResult] = []
    async with play_page("stop") as page:
        desk = page.desk
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:

                async def run() -> None:
                    results.append(await execute(plan, desk=desk))

                group.start_soon(run)

                def tables_ready() -> Any:
                    by_game = {t.game_index: t for t in desk.tables.values()}
                    if set(by_game) != {1, 2} or by_game[1].turn is None:
                        return None
                    return by_game if by_game[2].turn is None else None

                by_game = await _until(desk, tables_ready)
                desk.stop()
                assert by_game[1].status == "over"  # at once
                assert by_game[2].status != "over"  # its other seat still thinks
                await _until(desk, lambda: by_game[2].status == "over")
    [result] = results
    assert result.played == 0
    assert {t.result["ending"] for t in by_game.values() if t.result} == {"cut"}
    assert not list((tmp_path / "out" / "replays").glob("*.json"))
