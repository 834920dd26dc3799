"""Renamed internals keep no old names: one name for each thing, and no deprecation layer.

The renames had no callers outside the project, so their old names were removed rather
than kept behind warnings; this says they stay gone, and that no new layer grows back.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "module", ["arena.programs.seat", "arena.programs.wire", "arena.programs.policy"]
)
def test_the_moved_modules_are_gone(module: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


@pytest.mark.parametrize(
    ("module", "old"),
    [
        ("arena.programs", "ProgramSeat"),
        ("arena.programs", "PlyRecord"),
        ("arena.programs.check", "PlyRecord"),
        ("games.backgammon", "PlyRecord"),
        ("games.backgammon", "ply_record"),
        ("arena.play.protocol", "Attempt"),
        ("arena.play.episode", "SeatFactory"),
        ("providers", "Attempt"),
        ("arena.league.run", "Failure"),
        ("arena.seats.factory", "make_seat"),
        ("arena.record.ledger", "register_programs"),
    ],
)
def test_an_old_name_is_no_alias(module: str, old: str) -> None:
    assert not hasattr(importlib.import_module(module), old)


def test_a_plan_and_an_episode_setup_make_no_seats_themselves() -> None:
    from arena.league.plan import RunPlan
    from arena.play.episode import EpisodeSetup

    assert not hasattr(RunPlan, "seat_for")
    assert not hasattr(EpisodeSetup, "seat_for")


def test_no_deprecation_warning_is_raised_by_the_product() -> None:
    said = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in ("arena", "providers", "games")
        for path in sorted((ROOT / package).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "DeprecationWarning" in line
    ]
    assert said == []
