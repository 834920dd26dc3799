"""The bubblewrap layer around a program's child: the mode, the probe, the command.

`[run] sandbox` asks for one of three modes (`SandboxMode`):

- `bwrap`: the child runs under bubblewrap, in namespaces of its own: no
  network, a PID namespace (it sees its own processes only), a root that holds
  the interpreter's install and the child runtime (read-only), a private
  `/tmp`, its own `/proc` and a minimal `/dev`, a session of its own, dead with
  the arena. Where bwrap is missing or does not work, the run is refused.
- `process`: the child is an ordinary process (today's sandbox: rlimits, the
  uid drop, the child's own run-time refusals), which sees what the arena's
  user sees once a program gets past those refusals.
- `auto` (the default): `bwrap` where it works here, else `process`; but not for
  a program that is not trusted (one a model wrote, unless its policy says
  `trusted = true`) when the arena is not root: every child would then share
  the arena's uid, and the run is refused instead.

Whether bwrap works is probed once per process (`bwrap_problem`): the
interpreter is started under the very command a child gets, so a missing
library or a kernel that refuses namespaces shows before any game. The mode in
use is never recorded in a replay: a game plays the same under both.

As root, the namespaces are made without a user namespace, so that the child
can drop to its unprivileged uid (which clears every capability), where
`RLIMIT_NPROC` binds; inside a user namespace mapped to root it would not.
Run by another user, bwrap makes a user namespace too (`--unshare-all`).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Literal, get_args

__all__ = [
    "CHILD_INSIDE",
    "SANDBOX_MODES",
    "UNTRUSTED_FALLBACK",
    "ChildMode",
    "SandboxMode",
    "SandboxUnavailable",
    "bwrap_command",
    "bwrap_problem",
    "choose_sandbox",
    "interpreter",
    "kill_sandbox",
]

SandboxMode = Literal["auto", "bwrap", "process"]
"""What `[run] sandbox` asks for; `choose_sandbox` says what it gets here."""
ChildMode = Literal["bwrap", "process"]
"""How a child is in fact confined (`auto` resolved)."""
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)
CHILD_INSIDE = "/sandbox/child.py"
"""Where the child runtime is found inside the bwrap root."""
_PROBE_TIMEOUT_S = 20.0
_PROBE = "import json, math, resource"


class SandboxUnavailable(Exception):
    """`sandbox = "bwrap"` was asked for where bwrap does not work."""


def interpreter() -> Path:
    """The real interpreter's binary (a venv's `python` resolved to the one it links)."""
    if not sys.executable:
        raise RuntimeError("sys.executable is empty: cannot start a program seat's child")
    return Path(sys.executable).resolve()


def _system_binds() -> list[str]:
    """The system's shared libraries and the dynamic loader, read-only."""
    args: list[str] = []
    for top in ("/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32"):
        if Path(top).is_dir():
            args += ["--ro-bind", top, top]
    for top in ("/lib", "/lib32", "/lib64", "/libx32"):  # a merged /usr makes them links
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    return args


def _interpreter_binds() -> list[str]:
    """The interpreter's binary, its standard library and libpython, read-only; nothing
    of a venv (its site-packages stay out: the child runs with `-S`)."""
    paths = {
        Path(sysconfig.get_path("stdlib")),
        Path(sysconfig.get_path("platstdlib", vars={"platbase": sys.base_exec_prefix})),
    }
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir:
        paths.add(Path(libdir))
    bound = [Path(p) for p in ("/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32")]
    args: list[str] = []
    for path in sorted({p.resolve() for p in paths if p.is_dir()}):
        if not any(path.is_relative_to(b) for b in bound):
            bound.append(path)
            args += ["--ro-bind", str(path), str(path)]
    binary = interpreter()
    if not any(binary.is_relative_to(b) for b in bound):
        args += ["--ro-bind", str(binary), str(binary)]
    return args


def _readable_parents(args: list[str]) -> list[str]:
    """The folders above each bind made 0755 (bwrap makes them 0700): the child, once
    unprivileged, may read the interpreter's install, as its own user could anyway."""
    made: list[str] = []
    for option, _, target in zip(args[::3], args[1::3], args[2::3], strict=True):
        if option != "--ro-bind":
            continue
        for parent in reversed(Path(target).parents[:-1]):  # "/" itself is bwrap's
            if str(parent) not in made:
                made.append(str(parent))
    return [arg for folder in made for arg in ("--perms", "0755", "--dir", folder)]


@functools.cache
def _binds() -> tuple[str, ...]:
    binds = [*_system_binds(), *_interpreter_binds()]
    return (*_readable_parents(binds), *binds)


def _namespaces(drops_privileges: bool) -> list[str]:
    if drops_privileges:  # see the module's docstring: no user namespace for root
        return [
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
    extra = ["--cap-drop", "ALL"] if os.geteuid() == 0 else []
    return ["--unshare-all", *extra]


def bwrap_command(
    inside: list[str],
    *,
    drops_privileges: bool,
    script: Path | None = None,
    info_fd: int | None = None,
) -> list[str]:
    """The argv that runs `inside` (an argv of `interpreter()`) under bwrap, with `script`
    bound read-only at `CHILD_INSIDE`. `drops_privileges`: the child becomes an
    unprivileged uid by itself (the arena runs as root and the limits name a uid);
    `info_fd`: where bwrap writes the sandbox's process id (for `kill_sandbox`)."""
    child = ["--ro-bind", str(script), CHILD_INSIDE] if script is not None else []
    info = ["--info-fd", str(info_fd)] if info_fd is not None else []
    return [
        shutil.which("bwrap") or "bwrap",
        *info,
        *_namespaces(drops_privileges),
        "--die-with-parent",
        "--new-session",
        *_binds(),
        *child,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        "--chdir",
        "/",
        *inside,
    ]


@functools.cache
def bwrap_problem() -> str:
    """Why bwrap cannot confine a child here, or '' when it can: the interpreter started
    under a child's command, once per process."""
    if not sys.platform.startswith("linux"):
        return f"bwrap needs Linux, this is {sys.platform}"
    found = shutil.which("bwrap")
    if found is None:
        return "bwrap is not on PATH"
    inside = [str(interpreter()), "-S", "-s", "-P", "-B", "-c", _PROBE]
    command = bwrap_command(inside, drops_privileges=os.geteuid() == 0)
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            env={"PATH": "/usr/bin:/bin"},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{found} could not be run: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()[-300:] or "no message"
        return f"{found} failed its probe (exit status {done.returncode}: {said})"
    return ""


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command's name, which may hold ")"
    return int(fields[1]) if len(fields) > 1 else None


def kill_sandbox(info_fd: int, bwrap_pid: int) -> bool:
    """SIGKILL the sandbox's init, bwrap's own (every process inside dies with it), as
    bwrap wrote its process id to `info_fd` (non-blocking); True if it was signalled.

    This is how a child under bwrap ends: bwrap reaps an init killed so, then exits. An
    init that ends by itself (its child exited), or whose bwrap is killed, is left to the
    machine's init to reap, and a container's init may be the arena, which never does.
    (With `--as-pid-1` the child would be bwrap's own child, but a child that dropped its
    uid does not die with a bwrap that has dropped its capabilities.) A pidfd pins the process while it is
    checked to be `bwrap_pid`'s child (an unreaped bwrap keeps its own id from reuse)."""
    try:
        pid = int(json.loads(os.read(info_fd, 65536))["child-pid"])
    except (OSError, ValueError, KeyError, TypeError):  # not written yet, or read before
        return False
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if _parent_of(pid) != bwrap_pid:
            return False
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        os.close(pidfd)


def choose_sandbox(requested: SandboxMode, *, trusted: bool = True) -> ChildMode:
    """The mode a child starts in for `[run] sandbox = requested`; raise
    SandboxUnavailable for `bwrap` where it does not work, and for `auto` where it would
    fall back to `process` for a program not `trusted` while the arena is not root (then
    every child would share the arena's uid, and one program could reach another)."""
    if requested not in SANDBOX_MODES:
        raise ValueError(f"unknown sandbox {requested!r} (known: {', '.join(SANDBOX_MODES)})")
    if requested == "process":
        return "process"
    problem = bwrap_problem()
    if not problem:
        return "bwrap"
    if requested == "bwrap":
        raise SandboxUnavailable(
            f"sandbox = 'bwrap', but {problem}: install bubblewrap (Debian: apt-get install "
            'bubblewrap), or set [run] sandbox = "process" to run without it'
        )
    if not trusted and os.geteuid() != 0:
        raise SandboxUnavailable(UNTRUSTED_FALLBACK.format(problem=problem))
    return "process"


UNTRUSTED_FALLBACK = (
    "sandbox = 'auto' would fall back to process mode ({problem}) for a program that is not "
    "trusted, as a user other than root: install bubblewrap (Debian: apt-get install "
    'bubblewrap), or set [run] sandbox = "process" to accept the risk'
)
"""Why `auto` refuses a program it is not told to trust (`trusted = true`) without bwrap."""
