"""No program reaches another: a uid of its own per child (as root), what it leaves reclaimed,
no untrusted program outside bwrap as another user, and no derived dice for a model's program.

The hostile programs here pass the static check and switch the child's guard off
(test_sandbox's `hostile`): only the operating system stands between them and the
machine. Tests that need root (to hand out uids) skip without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import structlog

import arena.programs.bwrap
import arena.programs.uids
import arena.seats.program
import games
from arena.config import ConfigError, RunTable, parse_config
from arena.league.plan import plan_run
from arena.programs import (
    DEFAULT_PROGRAM_UIDS,
    ProgramRunner,
    SandboxMode,
    SandboxUnavailable,
    UidsExhausted,
    block_problem,
    check_program,
    choose_sandbox,
    register,
)
from arena.programs.uids import lease, uid_processes
from arena.seats.program import ProgramPlayer
from tests.arena.programs.test_sandbox import PLAYERS, hostile, mode, spawned

__all__ = ["mode", "spawned"]  # the fixtures, shared with test_sandbox

pytestmark = pytest.mark.anyio

C4 = games.load("connect-four")
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="uids are handed out as root only")


def needs_root(mode: SandboxMode) -> None:
    """In process mode without root every child shares the arena's uid: nothing to test."""
    if mode == "process" and os.geteuid() != 0:
        pytest.skip("process mode as a user other than root: the risk `auto` refuses")


# Finds every process whose parent is its own parent's, and SIGKILLs each one. Its move
# says what happened: the first legal move if it found none, the second if the kernel
# refused every kill, the third if one succeeded.
SIBLING_KILL = """
posix = unguarded('posix')
mine = read('/proc/self/stat')
me, parent = int(mine.split()[0]), int(mine.rpartition(')')[2].split()[1])
siblings = []
for name in posix.listdir('/proc'):
    if name.isdigit() and int(name) != me:
        try:
            stat = read('/proc/' + name + '/stat')
        except OSError:
            continue
        if int(stat.rpartition(')')[2].split()[1]) == parent:
            siblings.append(int(name))
killed = refused = 0
for pid in siblings:
    try:
        posix.kill(pid, 9)
        killed += 1
    except PermissionError:
        refused += 1
return view['legal_moves'][2 if killed else 1 if refused else 0]
"""


async def test_a_program_cannot_kill_its_opponents_child(mode: SandboxMode, tmp_path: Path) -> None:
    needs_root(mode)
    attacker = hostile(tmp_path, SIBLING_KILL)
    victim = register(PLAYERS / "greedy.py")
    state = C4.initial(3)
    async with (
        ProgramRunner(victim, seed=1, sandbox=mode) as defender,
        ProgramRunner(attacker, seed=2, sandbox=mode) as killer,
    ):
        first = await defender.choose(C4, state, 0, timeout_s=10)  # its child is up
        state = C4.apply(state, {0: first.move})
        found = C4.legal_moves(state, 1)
        attack = await killer.choose(C4, state, 1, timeout_s=10)
        assert killer.sandbox is not None
        assert defender.sandbox is not None
        if os.geteuid() == 0:
            assert killer.sandbox["uid"] != defender.sandbox["uid"]
        state = C4.apply(state, {1: attack.move})
        again = await defender.choose(C4, state, 0, timeout_s=10)  # no forfeit: it plays on
        assert again.move in C4.legal_moves(state, 0)
    # process mode: it saw the opponent's child and the kernel refused the kill;
    # bwrap: its PID namespace holds no other child to find.
    assert attack.move == found[1 if mode == "process" else 0], (attack.move, found)


LEAVINGS = """
posix = unguarded('posix')
for folder in ('/tmp', '/var/tmp', '/dev/shm', '.'):
    path = folder + '/TAG'
    for make in (
        lambda: posix.close(posix.open(path + '-file', 0o101, 0o644)),
        lambda: posix.mkdir(path + '-dir'),
        lambda: posix.symlink('/etc/passwd', path + '-link'),
        lambda: posix.mkdir(path + '-dir/inner'),
    ):
        try:
            make()
        except OSError:
            pass
"""


def _leftovers(tag: str) -> list[str]:
    return [
        str(path)
        for folder in ("/tmp", "/var/tmp", "/dev/shm")
        for path in Path(folder).glob(f"{tag}-*")
    ]


@ROOT_ONLY
async def test_what_a_program_leaves_in_tmp_is_gone_when_its_child_ends(
    mode: SandboxMode, tmp_path: Path
) -> None:
    tag = f"cog-leftover-{uuid.uuid4().hex[:12]}"
    info = hostile(tmp_path, LEAVINGS.replace("TAG", tag))
    async with ProgramRunner(info, seed=1, sandbox=mode) as runner:
        await runner.choose(C4, C4.initial(3), 0, timeout_s=10)
        child = runner._child
        assert child is not None
        assert child._lease is not None
        workdir = child._lease.workdir
        made = _leftovers(tag)
        if mode == "process":  # made on the machine, as docs/program-seats.md says
            assert {Path(p).name for p in made} >= {f"{tag}-file", f"{tag}-dir", f"{tag}-link"}
            assert workdir is not None
            assert (workdir / f"{tag}-dir" / "inner").is_dir()
        else:  # under bwrap its /tmp and /dev/shm are its own
            assert made == []
            assert workdir is None
    assert _leftovers(tag) == []
    assert workdir is None or not workdir.exists()


# --- the uid block ---------------------------------------------------------------------


def test_the_config_default_is_the_block() -> None:
    assert RunTable.model_fields["program_uids"].default == DEFAULT_PROGRAM_UIDS


def test_a_uid_block_with_an_account_is_refused() -> None:
    problem = block_problem((0, 10))
    assert "holds the account 'root' (0, in /etc/passwd)" in problem
    assert "set run.program_uids to a block of uids no account or process uses" in problem


@ROOT_ONLY
def test_the_default_block_is_free_here_and_a_stray_process_in_it_is_named() -> None:
    assert block_problem(DEFAULT_PROGRAM_UIDS) == ""
    uid = DEFAULT_PROGRAM_UIDS[1] - 7
    stray = subprocess.Popen(["sleep", "30"], user=uid, group=uid)
    try:
        problem = block_problem(DEFAULT_PROGRAM_UIDS)
        assert f"uid {uid} is in use by process {stray.pid} that no arena started" in problem
    finally:
        stray.kill()
        stray.wait()


@ROOT_ONLY
def test_uids_are_leased_one_per_child_and_reclaimed(tmp_path: Path) -> None:
    block = (DEFAULT_PROGRAM_UIDS[1] - 1, DEFAULT_PROGRAM_UIDS[1])
    first, second = lease(block, workdir=True), lease(block)
    assert {first.uid, second.uid} == set(block)
    with pytest.raises(UidsExhausted, match=r"all 2 uids of run.program_uids .* widen the block"):
        lease(block)
    assert first.workdir is not None
    assert first.workdir.stat().st_uid == first.uid
    # something left running as the uid is killed when the uid is reclaimed
    left = subprocess.Popen(["sleep", "30"], user=first.uid, group=first.uid)
    first.reclaim()
    assert left.wait(timeout=5) == -9
    assert uid_processes(first.uid) == []
    assert not first.workdir.exists()
    again = lease(block)
    assert again.uid == first.uid
    again.reclaim()
    second.reclaim()


def test_a_block_too_small_or_reversed_is_a_config_error() -> None:
    data: dict[str, Any] = {
        "run": {"name": "p", "games": ["hex"], "concurrency": 4, "program_uids": [100, 90]},
        "policies": {
            "a": {"kind": "program", "path": str(PLAYERS / "greedy.py")},
            "b": {"kind": "program", "path": str(PLAYERS / "search.py")},
        },
    }
    with pytest.raises(
        ConfigError, match=r"the first uid is above the last: write \[first, last\]"
    ):
        parse_config(data)
    data["run"]["program_uids"] = [3_000_000_000, 3_000_000_006]
    with pytest.raises(
        ConfigError, match=r"holds 7 uids, and up to 8 program children run at once .*"
        r"\[3000000000, 3000000007\]"
    ):  # fmt: skip
        parse_config(data)
    data["run"]["program_uids"] = [3_000_000_000, 3_000_000_007]
    assert parse_config(data).run.program_uids == (3_000_000_000, 3_000_000_007)


# --- trust: auto without bwrap, as another user ----------------------------------------


@pytest.fixture
def no_bwrap_no_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arena.programs.bwrap, "bwrap_problem", lambda: "bwrap is not on PATH")
    monkeypatch.setattr(arena.programs.bwrap.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(arena.programs.admission.os, "geteuid", lambda: 1000)


def _authored(tmp_path: Path, name: str = "mock-a-connect-four") -> Path:
    """A program `arena author` wrote: the file, and its manifest beside it."""
    path = tmp_path / f"{name}.py"
    path.write_text((PLAYERS / "greedy.py").read_text())
    manifest = {"author_policy": "mock-a", "program": path.name, "verdict": "passed"}
    path.with_suffix(".json").write_text(json.dumps(manifest))
    return path


def _league(program: Path, **extra: Any) -> dict[str, Any]:
    games_ = extra.pop("games", ["connect-four"])
    return {
        "run": {"name": "p", "seed": 1, "games": games_, **extra.pop("run", {})},
        "policies": {
            "a": {"kind": "scripted"},
            "writer": {"kind": "program", "path": str(program), **extra},
        },
        **({"game": {"backgammon": {"dice": "derived"}}} if "backgammon" in games_ else {}),
    }


@pytest.mark.usefixtures("no_bwrap_no_root")
def test_auto_refuses_an_untrusted_program_outside_bwrap_as_another_user() -> None:
    assert choose_sandbox("auto") == "process"  # trusted: falls back, as before
    with pytest.raises(SandboxUnavailable) as caught:
        choose_sandbox("auto", trusted=False)
    message = str(caught.value)
    assert "would fall back to process mode (bwrap is not on PATH)" in message
    assert (
        'install bubblewrap (Debian: apt-get install bubblewrap), or set [run] sandbox = "process" to accept the risk'
        in message
    )
    assert "\n" not in message
    assert choose_sandbox("process", trusted=False) == "process"  # the risk, accepted


@pytest.mark.usefixtures("no_bwrap_no_root")
def test_a_run_with_a_models_program_is_refused_before_any_game(tmp_path: Path) -> None:
    program = _authored(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=r"run\.sandbox \(policies writer\): .*accept the risk"):
        plan_run(parse_config(_league(program)), out)
    assert not out.exists()
    trusted = plan_run(parse_config(_league(program, trusted=True)), out)  # said trusted
    assert trusted.programs["writer"].trusted
    accepted = plan_run(parse_config(_league(program, run={"sandbox": "process"})), out)
    assert not accepted.programs["writer"].trusted  # process mode: the risk is accepted
    by_hand = plan_run(parse_config(_league(PLAYERS / "greedy.py")), out)  # named by the config
    assert by_hand.programs["writer"].trusted
    with pytest.raises(ConfigError, match=r"policies writer"):
        plan_run(parse_config(_league(PLAYERS / "greedy.py", trusted=False)), out)


@pytest.mark.usefixtures("no_bwrap_no_root")
def test_an_untrusted_runner_is_refused_too() -> None:
    info = register(PLAYERS / "greedy.py")
    with pytest.raises(SandboxUnavailable, match="not trusted"):
        ProgramRunner(info, seed=1, trusted=False)


def test_the_fallback_warning_says_it_falls_back_to_process_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(arena.programs.bwrap, "bwrap_problem", lambda: "bwrap is not on PATH")
    monkeypatch.setattr(arena.seats.program, "bwrap_problem", lambda: "bwrap is not on PATH")
    monkeypatch.setattr(arena.seats.program, "_announced", [])
    info = register(PLAYERS / "greedy.py")
    with structlog.testing.capture_logs() as events:
        ProgramPlayer(ProgramRunner(info, seed=1, sandbox="auto"), 5.0)
    said = [e for e in events if e["event"] == "program_sandbox"]
    assert said[0]["why"] == "bwrap is not on PATH: auto falls back to process mode"
    assert "socket files" in said[0]["not_contained"]
    assert "the clock" in said[0]["not_contained"]


# --- derived dice --------------------------------------------------------------------------


def test_derived_dice_with_a_models_program_need_the_config_to_accept_them(
    tmp_path: Path,
) -> None:
    program = _authored(tmp_path, "mock-a-backgammon")
    league = _league(program, games=["backgammon"], trusted=True)
    with pytest.raises(ConfigError) as caught:
        plan_run(parse_config(league), tmp_path / "out")
    message = str(caught.value)
    assert "[game.backgammon] dice = 'derived' follows from the master seed" in message
    assert "policies.writer is a program a model wrote, which could compute every roll" in message
    assert "set [run] accept_predictable_dice = true" in message
    assert "\n" not in message
    league["run"]["accept_predictable_dice"] = True
    plan_run(parse_config(league), tmp_path / "out")
    by_hand = _league(PLAYERS / "greedy.py", games=["backgammon"])
    plan_run(parse_config(by_hand), tmp_path / "out2")  # a program named by the config: as before


@pytest.mark.usefixtures("no_bwrap_no_root")
async def test_a_models_program_is_not_checked_outside_bwrap_as_another_user() -> None:
    from arena.cli.author import _check_sandbox

    with pytest.raises(SandboxUnavailable, match="accept the risk"):
        await check_program(PLAYERS / "greedy.py", "connect-four", trusted=False)
    with pytest.raises(ConfigError, match=r"^run\.sandbox: .*install bubblewrap"):
        _check_sandbox("auto")  # arena author: before any model is asked
    _check_sandbox("process")  # the risk, accepted


@pytest.mark.usefixtures("no_bwrap_no_root")
def test_a_cluster_worker_refuses_an_untrusted_program_too() -> None:
    from arena.cluster.worker import _sandbox_problem

    assert "accept the risk" in _sandbox_problem("auto", trusted=False)
    assert _sandbox_problem("auto", trusted=True) == ""
