"""Renamed public names still work under their old names (deprecated), and are the new ones."""

from __future__ import annotations

import importlib

import pytest

import arena.programs
import games.backgammon
import providers
from arena.play import protocol
from arena.play.episode import EpisodeSetup
from arena.programs import check, runner
from arena.programs.check import CheckPly
from arena.programs.limits import SandboxLimits
from arena.programs.pipes import ChildPipes, PipesClosed, encode_line
from arena.programs.runner import ProgramRunner
from games.backgammon import verify


def test_aliases_are_the_new_names() -> None:
    assert arena.programs.ProgramSeat is runner.ProgramSeat is ProgramRunner
    assert arena.programs.PlyRecord is check.PlyRecord is CheckPly
    assert games.backgammon.PlyRecord is verify.PlyRecord is games.backgammon.CardPly
    assert games.backgammon.ply_record is games.backgammon.card_ply
    assert protocol.Attempt is protocol.DecisionAttempt
    assert providers.Attempt is providers.TransportAttempt


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("arena.programs.seat", "ProgramSeat", ProgramRunner),
        ("arena.programs.seat", "ProgramRunner", ProgramRunner),
        ("arena.programs.wire", "Wire", ChildPipes),
        ("arena.programs.wire", "WireClosed", PipesClosed),
        ("arena.programs.wire", "encode_line", encode_line),
        ("arena.programs.policy", "SandboxLimits", SandboxLimits),
    ],
)
def test_old_modules_forward_with_a_warning(module: str, old: str, new: object) -> None:
    with pytest.warns(DeprecationWarning, match=module):
        assert getattr(importlib.import_module(module), old) is new


def test_old_modules_know_only_real_names() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        importlib.import_module("arena.programs.wire").nope  # noqa: B018


def test_an_episode_setup_still_offers_seat_for() -> None:
    assert isinstance(EpisodeSetup.seat_for, property)
