"""Program seats: the static check, the sandbox against hostile programs, nodes,
forfeits, sampled worlds and `check_program`.

Every hostile test ends by letting a well-behaved program play in a fresh
child, to show the arena process is unharmed, and checks that the hostile
child was reaped (no zombie).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import textwrap
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arena.programs
import games
from arena.programs import (
    DEFAULT_PROGRAM_UIDS,
    ProgramForfeit,
    ProgramInfo,
    ProgramMove,
    ProgramRefused,
    ProgramRunner,
    SandboxLimits,
    check_program,
    check_source,
    register,
)
from arena.programs.child import __file__ as CHILD_FILE
from arena.programs.engine import COMMON_HELPERS, EngineHelpers, HelperRefused
from arena.programs.pipes import __file__ as PIPES_FILE
from arena.programs.sandbox import ChildProcess
from games.stratego.worlds import sample_world
from tests.timing import MARGIN_S

pytestmark = pytest.mark.anyio

PLAYERS = Path(__file__).resolve().parents[3] / "players"
C4 = games.load("connect-four")

FIRST_LEGAL = """
def create(ctx):
    return Player()


class Player:
    def choose_move(self, view):
        {body}
        return view["legal_moves"][0]
"""

# Reaches the interpreter's real builtins without a name the static check knows.
ESCAPE = """
def dunder(name):
    return chr(95) * 2 + name + chr(95) * 2


def real_builtins():
    for cls in getattr(object, dunder("subclasses"))():
        found = getattr(getattr(cls, "__init__", None), dunder("globals"), None)
        if isinstance(found, dict) and dunder("builtins") in found:
            table = found[dunder("builtins")]
            return table if isinstance(table, dict) else getattr(table, "__dict__")
    raise LookupError("no way out")


def real_import(name):
    return real_builtins()[dunder("import")](name)


def own_import(name):
    return getattr(create, dunder("globals"))[dunder("builtins")][dunder("import")](name)
"""


@pytest.fixture(autouse=True)
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ChildProcess]]:
    """Every child a test starts; each must be reaped by the end of the test."""
    children: list[ChildProcess] = []
    original = ChildProcess.spawn.__func__  # type: ignore[attr-defined]

    async def spawn(cls: type[ChildProcess], *args: Any, **kwargs: Any) -> ChildProcess:
        child: ChildProcess = await original(cls, *args, **kwargs)
        children.append(child)
        return child

    monkeypatch.setattr(ChildProcess, "spawn", classmethod(spawn))
    yield children
    assert [c.pid for c in children if not reaped(c.pid)] == [], "a child was left behind"


def program(body: str, *, escape: bool = False) -> str:
    """A program whose first move runs `body`, then plays the first legal move."""
    source = FIRST_LEGAL.format(body=textwrap.indent(textwrap.dedent(body), " " * 8).strip())
    return (ESCAPE if escape else "") + source


def unchecked(tmp_path: Path, source: str) -> ProgramInfo:
    """A program handed to the seat without the static check, to test the runtime alone."""
    path = tmp_path / "unchecked.py"
    path.write_text(source)
    return ProgramInfo(path, hashlib.sha256(source.encode()).hexdigest(), source, False)


def registered(tmp_path: Path, source: str, name: str = "program.py") -> ProgramInfo:
    path = tmp_path / name
    path.write_text(source)
    assert check_source(source) == [], "this program must slip past the static check"
    return register(path)


def reaped(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False  # still there, or a zombie nobody waited for


def open_fds() -> set[str]:
    """This process's open file descriptors."""
    return set(os.listdir("/proc/self/fd"))


def pipe_threads() -> list[str]:
    """The threads inside the pipes' code a moment from now: a move's thread that outlived
    its move (one that has just let go of the pipes gets the margin to leave its code)."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    deadline = time.monotonic() + MARGIN_S
    while True:
        found = [
            names.get(ident, str(ident))
            for ident, frame in sys._current_frames().items()
            if any(f.f_code.co_filename == PIPES_FILE for f, _ in traceback.walk_stack(frame))
        ]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


async def first_move(
    info: ProgramInfo,
    *,
    game: games.Game[Any] = C4,
    node_budget: int = 100,
    limits: SandboxLimits | None = None,
    timeout_s: float = 5.0,
) -> ProgramMove:
    state = game.initial("ab" * 32 if game.name == "backgammon" else 3)
    seat = game.to_act(state)[0]
    async with ProgramRunner(info, seed=1, node_budget=node_budget, limits=limits) as player:
        return await player.choose(game, state, seat, timeout_s=timeout_s)


async def a_good_program_still_plays() -> None:
    move = await first_move(register(PLAYERS / "random_player.py"))
    assert move.move in C4.legal_moves(C4.initial(3), 0)


async def forfeits(
    info: ProgramInfo,
    cause: str,
    contains: str,
    *,
    limits: SandboxLimits | None = None,
    timeout_s: float = 5.0,
) -> ProgramForfeit:
    state = C4.initial(3)
    async with ProgramRunner(info, seed=1, node_budget=100, limits=limits) as player:
        with pytest.raises(ProgramForfeit) as caught:
            await player.choose(C4, state, 0, timeout_s=timeout_s)
        assert player.pid is None, "a forfeit ends the child at once"
    assert caught.value.cause == cause, caught.value.detail
    assert contains in caught.value.detail
    await a_good_program_still_plays()
    return caught.value


# --- the static check -------------------------------------------------------------------

REFUSED_LINES = [
    ("import socket", "socket"),
    ("x = open('/tmp/x', 'w')", "open"),
    ("import time", "time"),
    ("from datetime import datetime", "datetime"),
    ("import random", "random"),
    ("import os", "os"),
    ("from os import path", "os"),
    ("import subprocess", "subprocess"),
    ("import ctypes", "ctypes"),
    ("import threading", "threading"),
    ("import importlib", "importlib"),
    ("x = __import__('os')", "__import__"),
    ("x = getattr(__builtins__, 'open')", "__builtins__"),
    ("x = ().__class__.__base__.__subclasses__()", "__subclasses__"),
    ("x = getattr(len, '__self__')", "__self__"),
    # names built from pieces: the static check is a second line of defence behind the guard
    ("x = getattr(f, '__glo' + 'bals__')", "'__globals__', built by joining"),
    ("x = f.__dict__['__buil' + 'tins__']", "'__builtins__', built by joining"),
    ("x = getattr(f, ''.join(['__co', 'de__']))", "'__code__', built by joining"),
    ("x = getattr(f, '__in' + 'it__')", "computed name from '__in' ... 'it__'"),
    ("x = getattr(f, '__glo' + name)", "never a dunder built at run time"),
    ("setattr(f, name + '__', 1)", "setattr(..., <a computed name"),
    ("x = getattr(f, f'__{name}__')", "never a dunder built at run time"),
    ("x = eval('1')", "eval"),
    ("exec('x = 1')", "exec"),
    ("x = compile('1', 'f', 'eval')", "compile"),
    ("x = globals()", "globals"),
    ("import sys", "sys"),
    ("import json; x = json.decoder.re.sys", "sys"),
    ("from . import sibling", "relative"),
]


@pytest.mark.parametrize(("line", "name"), REFUSED_LINES)
def test_static_check_refuses_naming_line_and_name(line: str, name: str) -> None:
    problems = check_source(f"\n{line}\n\ndef create(ctx):\n    return None\n")
    assert any(p.startswith("line 2:") and name in p for p in problems), problems


def test_static_check_lets_plain_computed_names_through() -> None:
    """Joining strings is ordinary: only a dunder's pieces or a refused name are refused."""
    for line in (
        "x = getattr(f, 'choose' + '_move')",
        "x = '-'.join(['a', 'b'])",
        "x = getattr(f, name)",
        "x = 'ti' + 'mer'",
        "x = getattr(f, prefix + '_x')",
    ):
        assert check_source(f"{line}\n\ndef create(ctx):\n    return None\n") == [], line


def test_static_check_needs_create_and_valid_syntax() -> None:
    assert any("create(ctx)" in p for p in check_source("def make(ctx):\n    return 1\n"))
    assert check_source("def create(ctx:\n")[0].startswith("line 1: syntax error")


def test_static_check_accepts_the_examples_and_the_allowlist() -> None:
    for path in PLAYERS.glob("*.py"):
        assert check_source(path.read_text()) == [], path
    source = """
from __future__ import annotations
import math, itertools, heapq, json, re
from collections import deque, abc
from dataclasses import dataclass

def create(ctx):
    return ctx.rng.random() * math.pi
"""
    assert check_source(source) == []


def test_register_records_sha256_and_refuses_with_every_problem(tmp_path: Path) -> None:
    info = register(PLAYERS / "greedy.py")
    assert info.sha256 == hashlib.sha256((PLAYERS / "greedy.py").read_bytes()).hexdigest()
    assert info.name == "greedy"
    assert info.plays_setup
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport time\n")
    with pytest.raises(ProgramRefused) as caught:
        register(bad)
    assert len(caught.value.problems) == 3  # os, time, no create
    with pytest.raises(ProgramRefused, match="cannot read"):
        register(tmp_path / "missing.py")
    (tmp_path / "latin.py").write_bytes(b"# \xe9\ndef create(ctx): pass\n")
    with pytest.raises(ProgramRefused, match="UTF-8"):
        register(tmp_path / "latin.py")


def test_child_runtime_imports_only_the_stdlib() -> None:
    tree = ast.parse(Path(CHILD_FILE).read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert {name.partition(".")[0] for name in names} <= set(sys.stdlib_module_names)


def test_public_names() -> None:
    for name in arena.programs.__all__:
        assert hasattr(arena.programs, name), name


# --- the runtime guard, with the static check passed on purpose ---------------------------


RUNTIME_ESCAPES = [
    ("socket", "real_import('socket')", "import of 'socket'"),
    ("socket-c", "real_import('_socket')", "import of '_socket'"),
    ("clock", "getattr(real_import(chr(116) + 'ime'), chr(116) + 'ime')()", "time.time"),
    ("own-import-os", "own_import('os')", "import of 'os'"),
    (
        "own-import-importlib",
        "own_import('importlib').import_module('os')",
        "import of 'importlib'",
    ),
    ("own-import-ctypes", "own_import('ctypes')", "import of 'ctypes'"),
    ("subprocess", "real_import('subprocess')", "import of 'subprocess'"),
    ("ctypes", "real_import('ctypes')", "import of 'ctypes'"),
    ("os-system", "getattr(real_import('os'), 'sys' + 'tem')('true')", "os.system"),
    ("fork", "real_import('posix').fork()", "os.fork"),
    ("thread", "real_import('_thread').start_new_thread(print, ())", "starting a thread"),
    ("signal-arena", "real_import('posix').kill(1, 0)", "os.kill"),
]


@pytest.mark.parametrize(
    ("action", "contains"),
    [pytest.param(a, c, id=i) for i, a, c in RUNTIME_ESCAPES],
)
async def test_runtime_guard_refuses_what_slips_past_the_static_check(
    tmp_path: Path, action: str, contains: str
) -> None:
    info = registered(tmp_path, program(action, escape=True))
    forfeit = await forfeits(info, "exception", contains)
    assert "sandbox" in forfeit.detail


async def test_writing_a_file_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "written.txt"
    tmp_path.chmod(0o777)  # noqa: ASYNC240 - even a permitted directory stays untouched
    info = registered(
        tmp_path, program(f"real_builtins()[chr(111) + 'pen']({str(target)!r}, 'w')", escape=True)
    )
    await forfeits(info, "exception", "opening")
    assert not target.exists()


async def test_a_caught_refusal_still_forfeits(tmp_path: Path) -> None:
    body = """
    try:
        real_import('socket')
    except Exception:
        pass
    """
    await forfeits(
        registered(tmp_path, program(body, escape=True)), "exception", "import of 'socket'"
    )


UNCHECKED = [
    ("import os", "import of 'os'"),
    ("import subprocess", "import of 'subprocess'"),
    ("import ctypes", "import of 'ctypes'"),
    ("import socket", "import of 'socket'"),
    ("import time", "import of 'time'"),
    ("import threading", "import of 'threading'"),
    ("__import__('os')", "import of 'os'"),
    ("import importlib; importlib.import_module('os')", "import of 'importlib'"),
    ("getattr(__builtins__, '__import__')('os')", "has no attribute '__import__'"),
    ("open('/tmp/program-seat-test', 'w')", "name 'open' is not defined"),
    ("eval('1')", "name 'eval' is not defined"),
]


@pytest.mark.parametrize(("line", "contains"), UNCHECKED)
async def test_runtime_refuses_direct_paths_without_the_static_check(
    tmp_path: Path, line: str, contains: str
) -> None:
    await forfeits(unchecked(tmp_path, program(line)), "exception", contains)


# --- forfeits ----------------------------------------------------------------------------


async def test_an_endless_loop_times_out_and_the_child_is_reaped(tmp_path: Path) -> None:
    info = registered(tmp_path, program("while True:\n    pass"))
    state = C4.initial(3)
    start = anyio.current_time()
    async with ProgramRunner(info, seed=1) as player:
        with pytest.raises(ProgramForfeit) as caught:
            await player.choose(C4, state, 0, timeout_s=1.0)
        assert player.pid is None
    assert caught.value.cause == "timeout"
    # The 1 s timeout, then a kill that reaps the child: no wait for it to end by itself.
    assert anyio.current_time() - start < 1.0 + MARGIN_S
    assert pipe_threads() == [], "the move's thread, blocked reading, outlived the move"
    await a_good_program_still_plays()


STUCK = """
def create(ctx):
    return Player(ctx)


class Player:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        state = view["state"]
        self.ctx.standing(state)
        channel = self.ctx._channel
        {body}
        while True:
            pass
"""


@pytest.mark.parametrize(
    "body",
    [
        # Half a line, then nothing: the arena's thread waits for the rest of it.
        'channel.send_line(b\'{"op":"call","fn":"standing","args":[\')',
        # Calls without reading the answers: both pipes fill, and both sides block writing.
        'line = b\'{"op":"call","fn":"legal_moves","args":[%d]}\\n\' % state\n'
        "for _ in range(200000):\n    channel.send_line(line)",
    ],
    ids=["mid-line", "both-pipes-full"],
)
async def test_a_timeout_ends_a_move_whose_thread_is_blocked_on_the_pipes(
    tmp_path: Path, body: str
) -> None:
    source = STUCK.replace("{body}", textwrap.indent(body, " " * 8).strip())
    info = unchecked(tmp_path, source)
    fds = open_fds()
    start = anyio.current_time()
    async with ProgramRunner(info, seed=1, node_budget=10**6) as player:
        with pytest.raises(ProgramForfeit) as caught:
            await player.choose(C4, C4.initial(3), 0, timeout_s=1.0)
        assert player.pid is None
    assert caught.value.cause == "timeout", caught.value.detail
    assert anyio.current_time() - start < 1.0 + MARGIN_S
    assert pipe_threads() == []
    assert open_fds() == fds, "the pipes were not all closed"
    await a_good_program_still_plays()


def test_moves_in_an_episode_thread_of_its_own_play_and_time_out_cleanly(
    tmp_path: Path,
) -> None:
    """As a league worker plays an episode: its own event loop, in a thread not the main one."""
    stuck = registered(tmp_path, program("while True:\n    pass"))
    played: list[object] = []

    async def episode() -> None:
        played.append(await first_move(register(PLAYERS / "greedy.py")))
        async with ProgramRunner(stuck, seed=1) as player:
            with pytest.raises(ProgramForfeit) as caught:
                await player.choose(C4, C4.initial(3), 0, timeout_s=0.5)
        played.append(caught.value.cause)

    def play() -> None:
        try:
            anyio.run(episode)
        except BaseException as exc:  # reported by the assertion below
            played.append(exc)

    thread = threading.Thread(target=play, name="episode")
    thread.start()
    thread.join(20)
    assert not thread.is_alive()
    assert [type(played[0]), played[1:]] == [ProgramMove, ["timeout"]], played
    assert pipe_threads() == []


async def test_unbounded_allocation_hits_the_memory_limit(tmp_path: Path) -> None:
    body = "hoard = []\nwhile True:\n    hoard.append(bytearray(1 << 24))"
    await forfeits(
        registered(tmp_path, program(body)),
        "crash",
        "memory limit",
        limits=SandboxLimits(memory_mb=128),
    )


async def test_a_dying_process_is_a_crash(tmp_path: Path) -> None:
    info = registered(tmp_path, program("getattr(real_import('posix'), '_exit')(3)", escape=True))
    await forfeits(info, "crash", "status 3")


async def test_an_exception_forfeits(tmp_path: Path) -> None:
    await forfeits(registered(tmp_path, program("raise RuntimeError('boom')")), "exception", "boom")


async def test_an_exception_in_create_forfeits(tmp_path: Path) -> None:
    source = "def create(ctx):\n    raise ValueError('no player today')\n"
    forfeit = await forfeits(registered(tmp_path, source), "exception", "no player today")
    assert forfeit.detail == (
        "starting (create): ValueError: no player today [program.py line 2, in create]"
    )


MARKED = """
def create(ctx):
    return Player()


class Player:
    def choose_move(self, view):
        print("MARKER-print " * 50)
        return self.give_up(view)

    def give_up(self, view):
        raise ValueError("x")  # MARKER-7f3a
"""


async def test_a_forfeit_names_the_exception_line_and_function_and_no_source(
    tmp_path: Path,
) -> None:
    forfeit = await forfeits(registered(tmp_path, MARKED, "marked.py"), "exception", "x")
    assert forfeit.detail == (
        "choosing a move: ValueError: x [marked.py line 12, in give_up; called from line 9, "
        "in choose_move]"
    )


def test_program_check_shows_no_source_and_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main

    path = tmp_path / "marked.py"
    path.write_text(MARKED)
    assert main(["program", "check", str(path), "--game", "connect-four"]) == 1
    shown = capsys.readouterr()
    assert "ValueError: x [marked.py line 12, in give_up" in shown.out
    assert "MARKER" not in shown.out + shown.err


async def test_a_long_message_is_cut_and_print_never_breaks_a_program(tmp_path: Path) -> None:
    chatty = program("for n in range(10000):\n    print('line', n, 'x' * 100)")
    assert (await first_move(registered(tmp_path, chatty, "chatty.py"))).move
    forfeit = await forfeits(
        registered(tmp_path, program("raise KeyError('k' * 5000)"), "long.py"), "exception", "k"
    )
    assert len(forfeit.detail) < 500
    assert "KeyError: 'kkk" in forfeit.detail
    assert forfeit.detail.endswith("... [long.py line 8, in choose_move]")


async def test_a_reply_whose_repr_raises_is_the_programs_exception(tmp_path: Path) -> None:
    source = program("return Sly()") + (
        "\n\nclass Sly:\n    def __repr__(self):\n        raise RuntimeError('no face')\n"
    )
    await forfeits(registered(tmp_path, source), "exception", "RuntimeError: no face")


async def test_an_illegal_or_non_text_reply_forfeits(tmp_path: Path) -> None:
    illegal = program("return 'zz'")
    await forfeits(registered(tmp_path, illegal), "illegal", "'zz' is not in the legal list")
    await forfeits(registered(tmp_path, program("return 3"), "three.py"), "illegal", "must be text")


SPENDER = """
def create(ctx):
    return Spender(ctx)


class Spender:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        try:
            while True:
                self.ctx.standing(view["state"])
        except self.ctx.NodeBudgetExceeded:
            {after}
        return view["legal_moves"][-1]
"""


@pytest.mark.parametrize("after", ["pass", "raise"])
async def test_the_third_move_over_budget_forfeits(tmp_path: Path, after: str) -> None:
    info = registered(tmp_path, SPENDER.format(after=after))
    state = C4.initial(3)
    async with ProgramRunner(info, seed=1, node_budget=5) as player:
        for _ in range(2):
            played = await player.choose(C4, state, 0, timeout_s=5)
            # The arena plays the first legal move, not the program's last one.
            assert played == ProgramMove(C4.legal_moves(state, 0)[0], 5, True)
            state = C4.apply(state, {0: played.move})
            state = C4.apply(state, {1: C4.baseline(state, 1)})
        with pytest.raises(ProgramForfeit) as caught:
            await player.choose(C4, state, 0, timeout_s=5)
    assert caught.value.cause == "over_budget"
    assert player.over_budget_moves == 3


# --- helpers and nodes --------------------------------------------------------------------

HELPER_TOUR = """
def create(ctx):
    return Tour(ctx)


class Tour:
    def __init__(self, ctx):
        self.ctx = ctx
        self.kept = None

    def choose_move(self, view):
        ctx, root = self.ctx, view["state"]
        if self.kept is not None:
            try:
                ctx.outcome(self.kept)
                raise AssertionError("a handle of an earlier move was accepted")
            except ctx.HelperError:
                pass
            return view["legal_moves"][0]
        assert isinstance(root, int) and view["node_budget_left"] == 50
        assert ctx.legal_moves(root) == view["legal_moves"]
        after = ctx.apply(root, view["legal_moves"][0])
        assert ctx.to_act(after) == [1 - ctx.seat]
        assert ctx.outcome(after) is None
        assert isinstance(ctx.standing(after), int)
        try:
            ctx.apply(root, "zz")
            raise AssertionError("an illegal move was applied")
        except ctx.HelperError:
            pass
        self.kept = after
        return view["legal_moves"][0]
"""


async def test_helpers_answer_through_handles_and_count_every_call(tmp_path: Path) -> None:
    info = registered(tmp_path, HELPER_TOUR)
    state = C4.initial(3)
    async with ProgramRunner(info, seed=1, node_budget=50) as player:
        played = await player.choose(C4, state, 0, timeout_s=5)
        assert played == ProgramMove(C4.legal_moves(state, 0)[0], 6, False)
        state = C4.apply(C4.apply(state, {0: played.move}), {1: "a"})
        again = await player.choose(C4, state, 0, timeout_s=5)
        assert again.nodes == 1  # the refused stale handle counts too


BATCHES = """
def create(ctx):
    return Batches(ctx)


class Batches:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        ctx, root, legal = self.ctx, view["state"], view["legal_moves"]
        after = ctx.apply_many(root, legal)
        assert after == sorted(after) and len(set(after)) == len(legal)
        single = [ctx.standing(ctx.apply(root, move), 1) for move in legal]
        assert ctx.standing_many(after, 1) == single
        assert ctx.standing_many(after) == [ctx.standing(a) for a in after[:2]] + ctx.standing_many(after[2:])
        try:
            ctx.apply_many(root, [legal[0], "zz"])
            raise AssertionError("a batch with an illegal move was answered")
        except ctx.HelperError:
            pass
        try:
            ctx.standing_many(after, 0)  # 37 of 40 nodes spent: a batch of 7 does not fit
            raise AssertionError("a batch past the budget was answered")
        except ctx.NodeBudgetExceeded:
            pass
        return legal[0]
"""


async def test_batched_helpers_answer_as_single_calls_and_count_a_node_per_item(
    tmp_path: Path,
) -> None:
    info = registered(tmp_path, BATCHES)
    state = C4.initial(3)
    # 7 + 14 + 7 + (2 + 5) + 2 (the refused batch counts) = 37 nodes; the last batch of 7
    # would pass 40: refused whole, and the move is over budget
    async with ProgramRunner(info, seed=1, node_budget=40) as player:
        played = await player.choose(C4, state, 0, timeout_s=5)
    assert played == ProgramMove(C4.legal_moves(state, 0)[0], 37, True)


BACKGAMMON_TOUR = """
def create(ctx):
    return Tour(ctx)


class Tour:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        ctx, root = self.ctx, view["state"]
        assert ctx.pip_count(root, view["you"]) == view["pips"]["you"]
        after = ctx.apply(root, view["legal_moves"][0])
        try:
            ctx.legal_moves(after)
            raise AssertionError("the next roll leaked")
        except ctx.HelperError as exc:
            assert "with_dice" in str(exc)
        assert ctx.legal_moves(ctx.with_dice(after, 6, 6))
        return view["legal_moves"][0]
"""


async def test_backgammon_helpers_never_show_the_next_roll(tmp_path: Path) -> None:
    played = await first_move(registered(tmp_path, BACKGAMMON_TOUR), game=games.load("backgammon"))
    assert played.nodes == 5
    assert not played.over_budget


def test_engine_helpers_refuse_bad_calls_and_count_them() -> None:
    state = C4.initial(3)
    helpers = EngineHelpers(C4, state, 0, first_handle=10, world_seed=1)
    assert helpers.root == 10
    with pytest.raises(HelperRefused, match="unknown helper"):
        helpers.call("pip_count", [10, "BLACK"])
    with pytest.raises(HelperRefused, match="unknown state handle"):
        helpers.call("outcome", [True])
    with pytest.raises(HelperRefused, match="seat"):
        helpers.call("standing", [10, 2])
    assert helpers.call("apply", [10, "d"]) == 11
    assert helpers.nodes == 4
    assert helpers.next_handle == 12


# --- Stratego -----------------------------------------------------------------------------

STRATEGO = games.load("stratego")


def _stratego_in_play(plies: int) -> Any:
    state = STRATEGO.initial(5)
    state = STRATEGO.apply(state, {seat: STRATEGO.baseline(state, seat) for seat in (0, 1)})
    for ply in range(plies):
        if not STRATEGO.to_act(state):
            break
        seat = STRATEGO.to_act(state)[0]
        legal = STRATEGO.legal_moves(state, seat)
        state = STRATEGO.apply(state, {seat: legal[ply % len(legal)]})
    return state


@pytest.mark.parametrize("plies", [0, 30, 150])
def test_a_sampled_world_keeps_every_public_fact(plies: int) -> None:
    truth = _stratego_in_play(plies)
    assert truth.ply == plies, "the game must still be going"
    seat = STRATEGO.to_act(truth)[0]
    world = sample_world(truth, seat, seed=7)
    assert STRATEGO.view(world, seat) == STRATEGO.view(truth, seat)
    assert STRATEGO.legal_moves(world, seat) == STRATEGO.legal_moves(truth, seat)
    pieces = [(sq, v & 31) for sq, v in enumerate(truth.board) if v > 0]
    dealt = [(sq, v & 31) for sq, v in enumerate(world.board) if v > 0]
    assert Counter(kind for _, kind in dealt) == Counter(kind for _, kind in pieces)
    assert [sq for sq, _ in dealt] == [sq for sq, _ in pieces]
    for seat_ in (0, 1):
        assert STRATEGO.standing(world, seat_) == STRATEGO.standing(truth, seat_)
    assert sample_world(truth, seat, seed=7) == world
    worlds = {sample_world(truth, seat, seed=s).board for s in range(5)}
    assert len(worlds) > 1, "the deal depends on the seed"


async def test_stratego_setup_goes_through_choose_setup(tmp_path: Path) -> None:
    state = STRATEGO.initial(5)
    async with ProgramRunner(register(PLAYERS / "greedy.py"), seed=1, node_budget=200) as player:
        setup = await player.choose(STRATEGO, state, 0, timeout_s=5)
        state = STRATEGO.apply(state, {0: setup.move, 1: STRATEGO.baseline(state, 1)})
        move = await player.choose(STRATEGO, state, 0, timeout_s=5)
    assert move.move in STRATEGO.legal_moves(state, 0)
    assert move.nodes > 0
    bad = program("pass") + "\n    def choose_setup(self, view):\n        return 'F' * 40\n"
    info = registered(tmp_path, bad)
    async with ProgramRunner(info, seed=1) as player:
        with pytest.raises(ProgramForfeit) as caught:
            await player.choose(STRATEGO, STRATEGO.initial(5), 0, timeout_s=5)
    assert caught.value.cause == "illegal"


# --- a whole game, the check, lifecycle ----------------------------------------------------


async def test_a_program_plays_a_full_game_against_the_baseline() -> None:
    state = C4.initial(11)
    async with ProgramRunner(register(PLAYERS / "greedy.py"), seed=11, node_budget=100) as player:
        while seats := C4.to_act(state):
            seat = seats[0]
            if seat == 1:
                played = await player.choose(C4, state, seat, timeout_s=5)
                assert 0 < played.nodes <= 100
                assert not played.over_budget
                move = played.move
            else:
                move = C4.baseline(state, seat)
            state = C4.apply(state, {seat: move})
        box = player.sandbox
    assert C4.outcome(state) is not None
    assert box is not None
    assert box["network"].startswith(("isolated", "shared"))
    if os.geteuid() == 0:
        first, last = DEFAULT_PROGRAM_UIDS
        assert first <= box["uid"] <= last  # a uid of its own, from [run] program_uids
        assert box["processes"] == "one (RLIMIT_NPROC)"


@pytest.mark.parametrize(
    ("name", "game", "budget"),
    [
        ("random_player.py", "connect-four", 100),
        ("search.py", "connect-four", 300),
        ("greedy.py", "backgammon", 20_000),
    ],
)
async def test_examples_pass_the_check(name: str, game: str, budget: int) -> None:
    report = await check_program(PLAYERS / name, game, seed=3, node_budget=budget)
    assert report.passed, report.summary()
    assert report.sha256 == hashlib.sha256((PLAYERS / name).read_bytes()).hexdigest()
    assert len(report.games) == 2
    assert report.games[0] == report.games[0]
    program_moves = [r for r in report.games[0].records if r.nodes is not None]
    assert program_moves
    assert all(r.nodes is not None and r.nodes <= budget for r in program_moves)
    assert "PASSED" in report.summary()


async def test_a_program_that_differs_between_runs_is_refused(tmp_path: Path) -> None:
    body = """
    legal = view["legal_moves"]
    return legal[hash(str(id(object())) + str(view["ply"])) % len(legal)]
    """
    path = tmp_path / "fickle.py"
    path.write_text(program(body))
    report = await check_program(path, "connect-four", node_budget=10)
    assert not report.passed
    assert "the two runs differ at decision" in report.problems[0]


async def test_string_sets_are_stable_because_hashes_are_seeded(tmp_path: Path) -> None:
    path = tmp_path / "sets.py"
    path.write_text(program('return list(set(view["legal_moves"]))[0]'))
    report = await check_program(path, "connect-four", node_budget=10)
    assert report.passed, report.summary()


async def test_check_refuses_statically_and_by_forfeit(tmp_path: Path) -> None:
    (tmp_path / "clock.py").write_text("import time\n\ndef create(ctx):\n    return None\n")
    report = await check_program(tmp_path / "clock.py", "connect-four")
    assert not report.passed
    assert "line 1" in report.problems[0]
    (tmp_path / "boom.py").write_text(program("raise RuntimeError('boom')"))
    report = await check_program(tmp_path / "boom.py", "connect-four", node_budget=10)
    assert report.problems == tuple(
        p for p in report.problems if p.startswith("run ") and "exception" in p
    )
    assert len(report.problems) == 2
    with pytest.raises(ValueError, match="battle"):
        await check_program(PLAYERS / "greedy.py", "battle")


async def test_cancelling_a_move_kills_the_child_and_closes_the_seat(tmp_path: Path) -> None:
    info = registered(tmp_path, program("while True:\n    pass"))
    player = ProgramRunner(info, seed=1)
    with anyio.move_on_after(0.5):
        await player.choose(C4, C4.initial(3), 0, timeout_s=30)
    assert player.pid is None
    assert pipe_threads() == []
    with pytest.raises(RuntimeError, match="cancelled"):
        await player.choose(C4, C4.initial(3), 0, timeout_s=30)
    await player.aclose()
    await player.aclose()


async def test_aclose_ends_an_idle_child() -> None:
    fds = open_fds()
    player = ProgramRunner(register(PLAYERS / "random_player.py"), seed=1)
    await player.choose(C4, C4.initial(3), 0, timeout_s=5)
    pid = player.pid
    assert pid is not None
    assert not reaped(pid)
    await player.aclose()
    assert reaped(pid)
    assert open_fds() == fds, "the pipes were not all closed"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


def _positions() -> list[tuple[games.Game[Any], Any]]:
    backgammon = games.load("backgammon")
    return [
        (C4, C4.initial(3)),
        (backgammon, backgammon.initial("ab" * 32)),
        (STRATEGO, _stratego_in_play(4)),
        (STRATEGO, STRATEGO.initial(5)),
        (games.load("quoridor"), games.load("quoridor").initial(3)),
    ]


@pytest.mark.parametrize(("game", "state"), _positions(), ids=lambda v: getattr(v, "name", ""))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_helper_call_is_answered_or_refused(
    game: games.Game[Any], state: Any, data: st.DataObject
) -> None:
    seat = game.to_act(state)[0]
    helpers = EngineHelpers(game, state, seat, first_handle=1, world_seed=1)
    legal = list(game.legal_moves(state, seat))
    for _ in range(4):
        fn = data.draw(st.sampled_from([*COMMON_HELPERS, "pip_count", "with_dice", "nope", 3]))
        args = data.draw(
            st.lists(JSON | st.sampled_from([1, 2, 3, *legal[:5], "BLACK", "WHITE"]), max_size=4)
        )
        try:
            value = helpers.call(fn, args)
        except HelperRefused:
            continue
        json.dumps(value)  # whatever a helper answers travels as JSON


OS_LAYER = """
import os, socket, sys
sys.path.insert(0, {folder!r})
import child

network = child._isolate_network()
probe = socket.socket()
probe.settimeout(2)
try:
    probe.connect(("127.0.0.1", {port}))
    print("connected", network)
except OSError:
    print("unreachable", network)
child._drop_privileges(65534, os.getppid())
import _thread
try:
    _thread.start_new_thread(print, ("thread ran",))
    print("thread started")
except RuntimeError:
    print("thread refused")
try:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    print("fork worked")
except OSError:
    print("fork refused")
"""


def test_the_os_layer_holds_without_the_python_guard() -> None:
    import socket
    import subprocess

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        code = OS_LAYER.format(folder=str(Path(CHILD_FILE).parent), port=server.getsockname()[1])
        result = subprocess.run(
            [sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=20
        )
    lines = result.stdout.split("\n")
    assert lines[0].startswith(("unreachable isolated", "connected shared")), result
    assert lines[1:3] == ["thread refused", "fork refused"], result
