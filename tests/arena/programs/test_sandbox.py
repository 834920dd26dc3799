"""The two sandbox modes (`[run] sandbox`): what each contains, against hostile programs.

Hostile programs here pass the static check (names hidden by string building) and
switch the child's own guard off (its `_GUARD.locked`, reached through the
interpreter's real builtins): what they then try is stopped by nothing but the
operating system. Under bwrap each attempt fails inside and the program forfeits;
in `process` mode some succeed, as docs/program-seats.md says plainly. A raw
script run under the very bwrap command the arena builds, without the child
runtime at all, shows the bwrap layer holding by itself.

Tests that need bwrap skip without a working one, unless COG_REQUIRE_BWRAP=1 (CI)
makes that a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast, get_args

import pytest
import structlog

import arena.programs.bwrap
import arena.seats.program
import games
from arena.cli import program as program_cli
from arena.config import ConfigError, RunTable, parse_config
from arena.league.plan import plan_run
from arena.programs import (
    DEFAULT_PROGRAM_UIDS,
    SANDBOX_MODES,
    ProgramForfeit,
    ProgramInfo,
    ProgramMove,
    ProgramRunner,
    SandboxMode,
    SandboxUnavailable,
    bwrap_problem,
    check_program,
    check_source,
    choose_sandbox,
    register,
)
from arena.programs.sandbox import ChildProcess, _child_env, child_command
from arena.seats.program import ProgramPlayer

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]
PLAYERS = ROOT / "players"
C4 = games.load("connect-four")


def needs_bwrap() -> None:
    """Skip without a working bwrap, or fail where COG_REQUIRE_BWRAP=1 requires one."""
    problem = bwrap_problem()
    if not problem:
        return
    if os.environ.get("COG_REQUIRE_BWRAP") == "1":
        pytest.fail(f"{problem}; COG_REQUIRE_BWRAP=1 requires it (.ci/run installs bubblewrap)")
    pytest.skip(problem)


@pytest.fixture(params=["process", "bwrap"])
def mode(request: pytest.FixtureRequest) -> SandboxMode:
    """Each sandbox mode in turn; bwrap's only where it works (see `needs_bwrap`)."""
    if request.param == "bwrap":
        needs_bwrap()
    return cast("SandboxMode", request.param)


@pytest.fixture(autouse=True)
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every child a test starts is reaped by the end of the test."""
    children: list[ChildProcess] = []
    original = ChildProcess.spawn.__func__  # type: ignore[attr-defined]

    async def spawn(cls: type[ChildProcess], *args: Any, **kwargs: Any) -> ChildProcess:
        child: ChildProcess = await original(cls, *args, **kwargs)
        children.append(child)
        return child

    monkeypatch.setattr(ChildProcess, "spawn", classmethod(spawn))
    yield
    assert [c.pid for c in children if c.returncode is None] == [], "a child was left behind"


# Reaches the real builtins, then switches the child's guard off: from here on only the
# operating system stands in the way.
UNGUARDED = """
def dunder(name):
    return chr(95) * 2 + name + chr(95) * 2


def real_builtins():
    for cls in getattr(object, dunder("subclasses"))():
        found = getattr(getattr(cls, "__init__", None), dunder("globals"), None)
        if isinstance(found, dict) and dunder("builtins") in found:
            table = found[dunder("builtins")]
            return table if isinstance(table, dict) else getattr(table, "__dict__")
    raise LookupError("no way out")


def unguarded(name):
    imp = real_builtins()[dunder("import")]
    runtime = imp(chr(115) + "ys").modules["__main__"]
    setattr(getattr(runtime, "_GU" + "ARD"), "loc" + "ked", False)
    return imp(name)


def read(path):
    with real_builtins()[chr(111) + "pen"](path) as handle:
        return handle.read()


def create(ctx):
    return Player()


class Player:
    def choose_move(self, view):
        GUARD_OFF
        BODY
        return view["legal_moves"][0]
"""


def hostile(tmp_path: Path, body: str, *, guard_off: bool = True) -> ProgramInfo:
    """A registered program whose first move switches the guard off, then runs `body`."""
    source = UNGUARDED.replace("GUARD_OFF", 'unguarded("math")' if guard_off else "pass")
    source = source.replace("BODY", textwrap.indent(textwrap.dedent(body), " " * 8).strip())
    assert check_source(source) == [], "this program must slip past the static check"
    path = tmp_path / "hostile.py"
    path.write_text(source)
    return register(path)


async def first_move(info: ProgramInfo, mode: SandboxMode, timeout_s: float = 5.0) -> ProgramMove:
    async with ProgramRunner(info, seed=1, node_budget=100, sandbox=mode) as runner:
        return await runner.choose(C4, C4.initial(3), 0, timeout_s=timeout_s)


async def forfeit_of(
    info: ProgramInfo, mode: SandboxMode, timeout_s: float = 5.0
) -> ProgramForfeit:
    with pytest.raises(ProgramForfeit) as caught:
        await first_move(info, mode, timeout_s)
    return caught.value


async def still_plays(mode: SandboxMode) -> None:
    """The arena is unharmed: a good program plays in a fresh child."""
    move = await first_move(register(PLAYERS / "random_player.py"), mode)
    assert move.move in C4.legal_moves(C4.initial(3), 0)


# --- the modes -------------------------------------------------------------------------


def test_the_config_the_cli_and_the_sandbox_know_the_same_modes() -> None:
    assert get_args(RunTable.model_fields["sandbox"].annotation) == SANDBOX_MODES
    assert RunTable.model_fields["sandbox"].default == "auto"
    parser = argparse.ArgumentParser()
    program_cli.add_arguments(parser)
    check = parser.parse_args(["check", "players/greedy.py", "--game", "hex"])
    assert check.sandbox == "auto"
    for mode in SANDBOX_MODES:
        parsed = parser.parse_args(["check", "p.py", "--game", "hex", "--sandbox", mode])
        assert parsed.sandbox == mode


def test_process_is_process_and_auto_falls_back_where_bwrap_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(arena.programs.bwrap, "bwrap_problem", lambda: "bwrap is not on PATH")
    assert choose_sandbox("process") == "process"
    assert choose_sandbox("auto") == "process"
    with pytest.raises(SandboxUnavailable, match=r"install bubblewrap.*sandbox = \"process\""):
        choose_sandbox("bwrap")
    with pytest.raises(ValueError, match="unknown sandbox 'docker'"):
        choose_sandbox("docker")  # type: ignore[arg-type]


def test_the_probe_says_what_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bwrap_problem.__wrapped__() == "bwrap is not on PATH"
    (tmp_path / "bwrap").write_text("#!/bin/sh\necho 'bwrap: no namespaces here' >&2\nexit 1\n")
    (tmp_path / "bwrap").chmod(0o755)
    assert "failed its probe (exit status 1: bwrap: no namespaces here)" in (
        bwrap_problem.__wrapped__()
    )


def test_auto_uses_bwrap_where_it_works() -> None:
    needs_bwrap()
    assert choose_sandbox("auto") == choose_sandbox("bwrap") == "bwrap"


def test_bwrap_where_it_does_not_work_is_a_config_error_before_any_game(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(arena.programs.bwrap, "bwrap_problem", lambda: "bwrap is not on PATH")
    data = {
        "run": {"name": "p", "seed": 1, "games": ["hex"], "sandbox": "bwrap"},
        "policies": {
            "a": {"kind": "scripted"},
            "greedy": {"kind": "program", "path": str(PLAYERS / "greedy.py")},
        },
    }
    with pytest.raises(ConfigError, match=r"run\.sandbox: .*not on PATH.*install bubblewrap"):
        plan_run(parse_config(data), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    data["run"]["sandbox"] = "auto"
    plan_run(parse_config(data), tmp_path / "out")  # auto falls back: no error


def test_a_cluster_worker_refuses_bwrap_where_it_does_not_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arena.cluster.worker import _sandbox_problem

    monkeypatch.setattr(arena.programs.bwrap, "bwrap_problem", lambda: "bwrap is not on PATH")
    assert "install bubblewrap" in _sandbox_problem("bwrap")
    assert _sandbox_problem("auto") == _sandbox_problem("process") == ""


def test_a_run_says_once_per_process_what_its_sandbox_does_not_contain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(arena.seats.program, "_announced", [])
    info = register(PLAYERS / "greedy.py")
    with structlog.testing.capture_logs() as events:
        for _ in range(3):
            ProgramPlayer(ProgramRunner(info, seed=1, sandbox="process"), 5.0)
    said = [e for e in events if e["event"] == "program_sandbox"]
    assert len(said) == 1
    assert said[0]["log_level"] == "warning"
    assert said[0]["mode"] == "process"
    assert said[0]["why"] == "asked for"
    assert "read what the child's user can read" in said[0]["not_contained"]


def test_under_bwrap_the_run_says_so_once(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_bwrap()
    monkeypatch.setattr(arena.seats.program, "_announced", [])
    info = register(PLAYERS / "greedy.py")
    with structlog.testing.capture_logs() as events:
        ProgramPlayer(ProgramRunner(info, seed=1), 5.0)
        ProgramPlayer(ProgramRunner(info, seed=1, sandbox="process"), 5.0)
    said = [e for e in events if e["event"] == "program_sandbox"]
    assert [(e["log_level"], e["mode"]) for e in said] == [("info", "bwrap")]


async def test_a_program_plays_and_reports_its_sandbox(mode: SandboxMode) -> None:
    info = register(PLAYERS / "greedy.py")
    async with ProgramRunner(info, seed=1, sandbox=mode) as runner:
        await runner.choose(C4, C4.initial(3), 0, timeout_s=5)
        report = runner.sandbox
    assert report is not None
    assert report["mode"] == mode
    if mode == "bwrap":
        assert report["network"] == "isolated (bwrap)"
    if os.geteuid() == 0:
        first, last = DEFAULT_PROGRAM_UIDS
        assert first <= report["uid"] <= last  # a uid of its own, from [run] program_uids


# --- contained in both modes -----------------------------------------------------------


async def test_the_static_check_refuses_in_both_modes(mode: SandboxMode, tmp_path: Path) -> None:
    path = tmp_path / "imports_os.py"
    path.write_text("import os\n\ndef create(ctx):\n    return None\n")
    report = await check_program(path, "connect-four", sandbox=mode)
    assert not report.passed
    assert "import of 'os' is refused" in report.problems[0]
    assert report.games == ()


async def test_the_guard_refuses_in_both_modes(mode: SandboxMode, tmp_path: Path) -> None:
    info = hostile(tmp_path, "real_builtins()[chr(111) + 'pen']('/etc/passwd')", guard_off=False)
    forfeit = await forfeit_of(info, mode)
    assert forfeit.cause == "exception"
    assert "sandbox: opening '/etc/passwd' is refused" in forfeit.detail
    await still_plays(mode)


async def test_a_fork_bomb_forks_nothing_in_both_modes(mode: SandboxMode, tmp_path: Path) -> None:
    """RLIMIT_NPROC = 1 for the child's uid (one of its own, from [run] program_uids, when the arena is root), both modes."""
    info = hostile(tmp_path, "posix = unguarded('posix')\nfor _ in range(6):\n    posix.fork()")
    forfeit = await forfeit_of(info, mode)
    assert forfeit.cause == "exception"
    assert "BlockingIOError" in forfeit.detail, forfeit.detail
    await still_plays(mode)


async def test_an_endless_loop_times_out_in_both_modes(mode: SandboxMode, tmp_path: Path) -> None:
    info = hostile(tmp_path, "while True:\n    pass")
    forfeit = await forfeit_of(info, mode, timeout_s=0.5)
    assert forfeit.cause == "timeout"
    await still_plays(mode)


# --- contained by bwrap only -------------------------------------------------------------


def _escapes(tmp_path: Path, port: int) -> dict[str, tuple[str, str]]:
    """Attempt -> (the body, what the forfeit's detail names under bwrap)."""
    other = tmp_path / "other_seat.py"
    other.write_text((PLAYERS / "greedy.py").read_text())
    outside = tmp_path / "escaped.txt"
    return {
        "read-passwd": ("read('/etc/passwd')", "FileNotFoundError"),
        "read-repository": (
            f"read({str(ROOT / 'pyproject.toml')!r})",
            "FileNotFoundError",
        ),
        "read-other-seat": (f"read({str(other)!r})", "FileNotFoundError"),
        "list-processes": (
            "pids = [p for p in unguarded('posix').listdir('/proc') if p.isdigit()]\n"
            "raise LookupError('pids ' + ' '.join(sorted(pids)))",
            "LookupError: pids 1 2",
        ),
        "write-outside": (
            f"with real_builtins()[chr(111) + 'pen']({str(outside)!r}, 'w') as f:\n    f.write('x')",
            "FileNotFoundError",
        ),
        # 127.0.0.1 inside is the sandbox's own loopback, where nothing listens.
        "socket-to-the-arena": (
            f"unguarded('socket').create_connection(('127.0.0.1', {port}), timeout=2)",
            "ConnectionRefusedError",
        ),
        "socket-out": (  # TEST-NET-1: never answers; the sandbox has no route at all
            "unguarded('socket').create_connection(('192.0.2.1', 80), timeout=2)",
            "Network is unreachable",
        ),
    }


ESCAPES = ["read-passwd", "read-repository", "read-other-seat", "list-processes",
           "write-outside", "socket-to-the-arena", "socket-out"]  # fmt: skip


@pytest.mark.parametrize("attempt", ESCAPES)
async def test_bwrap_contains_a_program_past_the_guard(tmp_path: Path, attempt: str) -> None:
    needs_bwrap()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        body, named = _escapes(tmp_path, server.getsockname()[1])[attempt]
        forfeit = await forfeit_of(hostile(tmp_path, body), "bwrap")
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing reached the arena's side
    assert forfeit.cause == "exception"
    assert named in forfeit.detail, forfeit.detail
    assert not (tmp_path / "escaped.txt").exists()
    await still_plays("bwrap")


async def test_process_mode_does_not_contain_a_program_past_the_guard(tmp_path: Path) -> None:
    """What docs/program-seats.md says `process` mode does not promise, shown: the program
    reads a file its user may read and sees the arena's process, and plays on."""
    body = f"""
    assert 'root:' in read('/etc/passwd')
    assert {str(os.getpid())!r} in unguarded('posix').listdir('/proc')
    """
    move = await first_move(hostile(tmp_path, body), "process")
    assert move.move == C4.legal_moves(C4.initial(3), 0)[0]


RAW = """
import json, os, resource, socket, sys

out = {}
if os.geteuid() == 0:  # as the child does, before any program code runs
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
out["uid"] = os.geteuid()


def attempt(name, action):
    try:
        action()
        out[name] = "done"
    except OSError as exc:
        out[name] = type(exc).__name__


def fork():
    if os.fork() == 0:
        os._exit(0)


attempt("read-passwd", lambda: open("/etc/passwd").read())
attempt("read-repository", lambda: open(REPOSITORY_FILE).read())
attempt("list-root", lambda: out.update(root=sorted(os.listdir("/"))))
out["pids"] = sorted(p for p in os.listdir("/proc") if p.isdigit())
attempt("connect", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))
attempt("connect-out", lambda: socket.create_connection(("192.0.2.1", 80), timeout=2))
attempt("write-interpreter", lambda: open(os.path.join(sys.prefix, "lib", "escaped"), "w"))
attempt("write-root", lambda: open("/escaped", "w"))
attempt("write-tmp", lambda: open(TMP_FILE, "w").close())
resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
attempt("fork", fork)
print(json.dumps(out))
"""


def test_the_bwrap_layer_holds_without_the_child_runtime(tmp_path: Path) -> None:
    """A raw script, none of the child's refusals, under the arena's own bwrap command."""
    needs_bwrap()
    inside_tmp = f"/tmp/cog-arena-sandbox-{uuid.uuid4().hex}"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        script = tmp_path / "raw.py"
        script.write_text(
            RAW.replace("REPOSITORY_FILE", repr(str(ROOT / "pyproject.toml")))
            .replace("PORT", str(server.getsockname()[1]))
            .replace("TMP_FILE", repr(inside_tmp))
        )
        command = child_command("bwrap", drops_privileges=os.geteuid() == 0, script=script)
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=30, env=_child_env(), check=False
        )
        with pytest.raises(BlockingIOError):
            server.accept()
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["read-passwd"] == out["read-repository"] == "FileNotFoundError"
    seen = {"dev", "proc", "tmp", "usr", "sandbox", "lib", "lib32", "lib64", "libx32"}
    interpreter_top = Path(sys.base_prefix).resolve().parts[1]  # /root for pyenv's, say
    assert set(out["root"]) <= {*seen, interpreter_top}, out["root"]
    assert out["pids"] == ["1", "2"], "the PID namespace holds bwrap's init and the script"
    assert out["connect"] == "ConnectionRefusedError", "its own loopback, not the arena's"
    assert out["connect-out"] == "OSError", "no route out (ENETUNREACH)"
    assert out["write-interpreter"] in {"OSError", "PermissionError"}
    assert out["write-root"] in {"OSError", "PermissionError"}
    assert out["write-tmp"] == "done", "the sandbox's own /tmp is writable"
    assert not Path(inside_tmp).exists(), "and private: nothing reaches the host's /tmp"
    assert out["fork"] == "BlockingIOError"


def test_bwrap_binds_nothing_of_the_arena(tmp_path: Path) -> None:
    """The command itself: read-only binds of the interpreter's install and the child, no
    folder of the repository, no /etc, no /home."""
    needs_bwrap()
    command = child_command("bwrap", drops_privileges=True)
    binds = [command[i + 1 : i + 3] for i, arg in enumerate(command) if arg.endswith("bind")]
    assert all(command[i] == "--ro-bind" for i, arg in enumerate(command) if arg.endswith("bind"))
    sources = [Path(source) for source, _ in binds]
    repository = [s for s in sources if s.is_relative_to(ROOT)]
    assert [str(s.relative_to(ROOT)) for s in repository] == ["arena/programs/child.py"]
    assert not any(s.is_relative_to(p) for s in sources for p in (Path("/etc"), Path("/home")))
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in command or (flag.startswith("--unshare") and "--unshare-all" in command)
