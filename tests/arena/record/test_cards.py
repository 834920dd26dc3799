"""Backgammon cards in the arena: ledger order, reveal, derived dice, verification steps."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.record.cards import CardEpisodes
from arena.record.replay import Replay, load_replay
from arena.record.verify import VerifyError, verify_file, verify_replay
from games.backgammon import derived_card_seed


def _run(out: Path, dice: str = "verifiable") -> list[Replay]:
    data = {
        "run": {"name": "bg", "seed": 31, "games": ["backgammon"], "matches": 1, "concurrency": 3},
        "game": {
            "backgammon": {"dice": dice, "first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.8}
        },
        "policies": {
            "baseline": {"kind": "scripted"},
            "mock": {"kind": "mock", "faults": {"unreadable": 0.1}},
        },
    }
    anyio.run(execute, plan_run(parse_config(data), out))
    return [load_replay(p) for p in sorted((out / "replays").glob("*.json"))]


@pytest.fixture(scope="module")
def card_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cards")
    _run(out)
    return out


def _ledger(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]


def test_every_card_is_committed_before_it_is_revealed(card_run: Path) -> None:
    events = _ledger(card_run)
    replays = [load_replay(p) for p in sorted((card_run / "replays").glob("*.json"))]
    assert len(replays) == 1
    assert len(replays[0].games) == 2
    for replay in replays:
        card = replay.integrity["card"]
        mine = [e for e in events if e["card"] == card]
        assert [e["event"] for e in mine] == ["commit", "reveal"]
        seed = replay.integrity["card_seed"]
        assert mine[0]["commitment"] == hashlib.sha256(seed.encode()).hexdigest()
        assert mine[1]["seed"] == seed
        assert mine[1]["status"] == "finished"
        assert replay.games[0].aliases == ["BLACK", "WHITE"]
        assert replay.games[1].aliases == [
            "WHITE",
            "BLACK",
        ]
        verify_file(card_run / "replays" / f"{replay.episode}.json")


def _load(card_run: Path) -> Replay:
    return load_replay(sorted((card_run / "replays").glob("*.json"))[0])


def test_verify_names_the_step_a_tampered_card_fails(card_run: Path) -> None:
    folder = card_run
    rolled = _load(card_run)
    roll = rolled.games[0].plies[2].integrity["roll"]  # [ply, nonce, die 1, die 2]
    roll[2] = roll[2] % 6 + 1
    with pytest.raises(VerifyError, match="verification step 3"):
        verify_replay(rolled, run_folder=folder)
    played = _load(card_run)
    points = played.games[1].plies[3].integrity["board"]["points"]
    moved_from = next(i for i, n in enumerate(points) if n > 0)
    points[moved_from] -= 1  # one BLACK checker slides a point down the board
    points[moved_from - 1 if moved_from else 1] += 1
    with pytest.raises(VerifyError, match="verification step 4"):
        verify_replay(played, run_folder=folder)
    seeded = _load(card_run)
    seeded.integrity["card_seed"] = "0" * 64
    with pytest.raises(VerifyError, match="verification step 2"):
        verify_replay(seeded, run_folder=folder)
    unknown = _load(card_run)
    unknown.integrity["card"] = "never-committed"
    with pytest.raises(VerifyError, match="verification step 1"):
        verify_replay(unknown, run_folder=folder)


def test_a_changed_play_is_caught(card_run: Path) -> None:
    replay = _load(card_run)
    for ply in replay.games[0].plies:
        decision = ply.decisions[0]
        if decision.move != "NONE":
            decision.move = "NONE"
            break
    with pytest.raises(VerifyError, match="verification step 4"):
        verify_replay(replay, run_folder=card_run)


def test_derived_dice_reproduce_and_say_so(tmp_path: Path) -> None:
    first, second = _run(tmp_path / "a", "derived"), _run(tmp_path / "b", "derived")
    assert first[0].integrity["card_seed"] == derived_card_seed(31, 1, 1)
    assert [p.decisions[0].move for p in first[0].games[0].plies] == [
        p.decisions[0].move for p in second[0].games[0].plies
    ]
    assert "proves nothing" in _ledger(tmp_path / "a")[0]["note"]


@pytest.mark.anyio
async def test_a_card_cut_short_is_revealed_as_cancelled_and_a_finished_one_waits(
    tmp_path: Path,
) -> None:
    dealer = CardEpisodes(tmp_path, "verifiable", 1)
    with pytest.raises(RuntimeError):
        async with dealer.open("card-x", "card-x", 1, 5):
            raise RuntimeError("crash mid-card")
    events = _ledger(tmp_path)
    assert [(e["event"], e.get("status")) for e in events] == [
        ("commit", None),
        ("reveal", "cancelled"),
    ]
    async with dealer.open("card-x", "card-x", 1, 5) as again:
        assert again.attempt == 2
    # The block ended well, but the card's result is not durable yet: no reveal until the
    # writer has stored it.
    assert [e["event"] for e in _ledger(tmp_path)] == ["commit", "reveal", "commit"]
    assert (tmp_path / "card-secrets.jsonl").stat().st_mode & 0o077 == 0
