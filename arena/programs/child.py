"""The child runtime of a program seat: it runs one program file inside the sandbox.

The parent starts this file by its path (`python -S -s -P -B child.py`, never
`-m arena.programs...`, which would import the arena's packages), so the child
sees the standard library only. It imports nothing outside the stdlib, and it
holds no policy of its own: the parent's `hello` message carries the source,
the seed, the import allowlist and the limits.

The story of one child:

1. read `hello` from the parent (JSON lines on stdin/stdout);
2. confine itself while it is still root: a network namespace where the kernel
   allows one (under bwrap, bwrap made it, with the others), resource limits,
   every allowed module preloaded, then drop to an unprivileged uid, one
   process only, killed with its parent;
3. lock: an audit hook that refuses sockets, processes, signals, ctypes, file
   opens and any new import; clocks, thread starts and OS entropy replaced by
   refusals; the program's module gets builtins without `open`, `eval`, ...
   and an `__import__` that serves the allowlist only;
4. load the program, call `create(ctx)`, answer `ready`;
5. serve `choose` messages until stdin closes. During a move the program's
   engine helpers are calls back to the parent, which counts the nodes.

Anything the program does is untrusted: the parent validates every message.
A program that trips the guard forfeits even if it catches the refusal.
"""

from __future__ import annotations

import _thread
import builtins
import io
import json
import os
import random
import resource
import sys
import time
from collections.abc import Callable
from typing import Any, BinaryIO, NoReturn, cast

__all__ = [
    "Channel",
    "Context",
    "HelperError",
    "NodeBudgetExceeded",
    "Runtime",
    "SandboxRefusal",
    "main",
]

_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_SIGKILL = 9

# Builtins the program's module does not get (the static check refuses them too).
_REMOVED_BUILTINS = (
    "open",
    "eval",
    "exec",
    "compile",
    "globals",
    "locals",
    "vars",
    "breakpoint",
    "input",
    "exit",
    "quit",
    "help",
    "copyright",
    "credits",
    "license",
    "__loader__",
    "__spec__",
)
# Audit events refused once locked, by prefix; `open` and `import` are handled apart.
_REFUSED_EVENTS = (
    "os.",
    "subprocess.",
    "socket.",
    "ctypes.",
    "shutil.",
    "pty.",
    "signal.",
    "resource.",
    "sys.addaudithook",
    "sys.settrace",
    "sys.setprofile",
    "sys._current_frames",
    "gc.",
    "code.__new__",
    "builtins.input",
    "builtins.breakpoint",
    "fcntl.",
    "mmap.",
    "syslog.",
    "sqlite3.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "webbrowser.",
    "winreg.",
    "msvcrt.",
    "_posixsubprocess",
)
_CLOCKS = (
    "time",
    "time_ns",
    "monotonic",
    "monotonic_ns",
    "perf_counter",
    "perf_counter_ns",
    "process_time",
    "process_time_ns",
    "thread_time",
    "thread_time_ns",
    "clock_gettime",
    "clock_gettime_ns",
    "localtime",
    "gmtime",
    "ctime",
    "asctime",
    "strftime",
    "sleep",
    "get_clock_info",
    "mktime",
)
_OS_ENTROPY = ("urandom", "getrandom", "times", "getpid", "getppid", "getloadavg", "cpu_count")


class NodeBudgetExceeded(Exception):
    """The move used its whole node budget: the arena answers no more helper calls
    for it and plays the first legal move instead (the program may catch this)."""


class HelperError(ValueError):
    """The arena refused a helper call: an unknown state handle, an illegal move, ..."""


class SandboxRefusal(PermissionError):
    """The sandbox refused an operation; the program forfeits the game."""


class _Guard:
    """The runtime's tripwire: what is refused once locked, and the first refusal."""

    def __init__(self) -> None:
        self.locked = False
        self.program_running = False
        self.violation = ""

    def refuse(self, what: str) -> NoReturn:
        if self.program_running and not self.violation:
            self.violation = what
        raise SandboxRefusal(f"sandbox: {what} is refused")

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.locked:
            return
        if event == "import":
            self.refuse(f"import of {args[0]!r} (not preloaded)")
        if event == "open":
            self.refuse(f"opening {args[0]!r}")
        if event.startswith(_REFUSED_EVENTS):
            self.refuse(event)


_GUARD = _Guard()


def _refusal(what: str) -> Callable[..., NoReturn]:
    def refused(*args: object, **kwargs: object) -> NoReturn:
        _GUARD.refuse(what)

    return refused


class _Discard(io.TextIOBase):
    """The program's print(): it works, and its output, which could show source, is lost."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


_MESSAGE_CHARS = 300
"""An exception's message in a forfeit's detail, at most."""


_encode = json.JSONEncoder(separators=(",", ":")).encode
_decode = json.JSONDecoder().decode


class Channel:
    """JSON lines to and from the parent, on private copies of stdin and stdout."""

    def __init__(self) -> None:
        self._in: BinaryIO = os.fdopen(os.dup(0), "rb")
        self._out = os.dup(1)
        # Stray writes to fd 1 go nowhere, and nothing can read the parent's messages.
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)

    def send(self, message: dict[str, Any]) -> None:
        """One JSON line to the arena."""
        self.send_line(_encode(message).encode() + b"\n")

    def send_line(self, line: bytes) -> None:
        """One line, already framed, straight to the pipe (no buffer to flush)."""
        view = memoryview(line)
        while view:
            view = view[os.write(self._out, view) :]

    def receive(self) -> dict[str, Any]:
        """The arena's next JSON line."""
        line = self._in.readline()
        if not line:
            raise SystemExit(0)  # the parent closed the pipe: the game is over
        message = _decode(line.decode())  # the arena writes plain ASCII JSON
        if not isinstance(message, dict):
            raise SystemExit(3)
        return message


class Context:
    """What `create(ctx)` receives: the seat, the seeded rng and the engine helpers.

    `state` arguments are the integer handles the arena hands out (the view's
    `"state"`, results of `apply`); every helper call is one node.
    """

    NodeBudgetExceeded = NodeBudgetExceeded
    HelperError = HelperError

    def __init__(self, channel: Channel, hello: dict[str, Any]) -> None:
        self._channel = channel
        # Each helper's call line begins the same: written once, here.
        self._heads = {
            name: b'{"op":"call","fn":' + _encode(name).encode() + b',"args":'
            for name in hello["helpers"]
        }
        self._spent = False
        self.game: str = hello["game"]
        self.seat: int = hello["seat"]
        self.node_budget: int = hello["node_budget"]
        self.rng = random.Random(hello["seed"])

    def legal_moves(self, state: int) -> list[str]:
        """The legal moves of the seat to act in `state`; [] once the game is over."""
        return cast("list[str]", self._call("legal_moves", state))

    def apply(self, state: int, move: str) -> int:
        """The handle of the state after the seat to act plays `move`."""
        return cast("int", self._call("apply", state, move))

    def standing(self, state: int, seat: int | None = None) -> int:
        """The game's heuristic for `seat` (default: this program's seat)."""
        return cast("int", self._call("standing", state, self.seat if seat is None else seat))

    def apply_many(self, state: int, moves: list[str]) -> list[int]:
        """The handles of the states after each of `moves` in `state`, in order: one node
        per move, one message in all."""
        return cast("list[int]", self._call("apply_many", state, list(moves)))

    def standing_many(self, states: list[int], seat: int | None = None) -> list[int]:
        """`standing` of `seat` (default: this program's) in each of `states`, in order: one
        node per state, one message in all."""
        chosen = self.seat if seat is None else seat
        return cast("list[int]", self._call("standing_many", list(states), chosen))

    def outcome(self, state: int) -> dict[str, Any] | None:
        """None while the game goes on, else {"scores": [...], "ending": ..., ...}."""
        return cast("dict[str, Any] | None", self._call("outcome", state))

    def to_act(self, state: int) -> list[int]:
        """The seats that must decide in `state`; [] once the game is over."""
        return cast("list[int]", self._call("to_act", state))

    def pip_count(self, state: int, colour: str) -> int:
        """Backgammon: the pips `colour` ("BLACK" or "WHITE") still has to move."""
        return cast("int", self._call("pip_count", state, colour))

    def with_dice(self, state: int, d1: int, d2: int) -> int:
        """Backgammon: the same position with the roll (d1, d2); states made by
        `apply` have no roll yet, so their plays need a roll chosen here."""
        return cast("int", self._call("with_dice", state, d1, d2))

    def start_move(self) -> None:
        """A new move begins: its node budget is whole again."""
        self._spent = False

    def _call(self, fn: str, *args: Any) -> Any:
        head = self._heads.get(fn)
        if head is None:
            raise HelperError(f"{fn} is not a helper of {self.game}")
        if self._spent:
            raise NodeBudgetExceeded(f"the node budget of {self.node_budget} is spent")
        try:  # encoding fails before anything is written
            line = head + _encode(list(args)).encode() + b"}\n"
        except (TypeError, ValueError) as exc:
            raise HelperError(f"{fn}: arguments must be JSON values ({exc})") from None
        self._channel.send_line(line)
        answer = self._channel.receive()
        if answer.get("op") == "result":
            return answer.get("value")
        if answer.get("error") == "budget":
            self._spent = True
            raise NodeBudgetExceeded(f"the node budget of {self.node_budget} is spent")
        raise HelperError(str(answer.get("detail", "refused")))


def _libc_call(name: str, *args: int) -> int:
    """0, or the errno of a failed libc call (ctypes is gone before the program loads)."""
    import ctypes  # gone from sys.modules before the program loads

    libc = ctypes.CDLL(None, use_errno=True)
    result: int = getattr(libc, name)(*args)
    return ctypes.get_errno() if result != 0 else 0


def _isolate_network() -> str:
    """A fresh network namespace (no interfaces) where the kernel lets us make one."""
    errno = _libc_call("unshare", _CLONE_NEWNET)
    if errno == 0:
        return "isolated"
    if os.geteuid() != 0 and _libc_call("unshare", _CLONE_NEWUSER | _CLONE_NEWNET) == 0:
        return "isolated (user namespace)"
    return f"shared: unshare refused ({os.strerror(errno)})"


def _set_limits(limits: dict[str, Any]) -> None:
    memory = int(limits["memory_mb"]) * 1024 * 1024
    cpu = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    nofile = int(limits["nofile"])
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))


def _preload(modules: list[str]) -> list[str]:
    """Import every allowed module now: after the lock nothing new may load."""
    loaded = []
    for name in modules:
        try:
            __import__(name)
        except ImportError:
            continue
        loaded.append(name)
    return loaded


def _drop_privileges(uid: int | None, parent_pid: int | None) -> dict[str, Any]:
    """An unprivileged uid, one process at most, no new privileges, dead with the parent."""
    facts: dict[str, Any] = {}
    # First, while still root: it loads ctypes, which the new uid may not be able to read.
    _libc_call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if os.geteuid() == 0 and uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    facts["uid"] = os.geteuid()
    # RLIMIT_NPROC binds every uid but root: no fork, no thread.
    resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
    facts["processes"] = "one (RLIMIT_NPROC)" if os.geteuid() != 0 else "not limited (root)"
    # Set after the uid change, which clears it; then make sure the parent still lives.
    _libc_call("prctl", _PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
    if parent_pid is not None and os.getppid() != parent_pid:
        raise SystemExit(4)  # (under bwrap the parent is its PID namespace's init: None)
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]
    return facts


def _lock(seed: int) -> None:
    """From here on the guard refuses; the global rng is seeded so even escapes are replayable."""
    random.seed(f"program-global:{seed}")
    for name in _CLOCKS:
        if hasattr(time, name):
            setattr(time, name, _refusal(f"time.{name}"))
    for name in _OS_ENTROPY:
        if hasattr(os, name):
            setattr(os, name, _refusal(f"os.{name}"))
            setattr(sys.modules["posix"], name, _refusal(f"os.{name}"))
    _thread.start_new_thread = _refusal("starting a thread")
    _thread.start_new = _refusal("starting a thread")
    sys.addaudithook(_GUARD.audit)
    _GUARD.locked = True


def _program_builtins(allowed: frozenset[str]) -> dict[str, Any]:
    real_import = builtins.__import__

    def guarded_import(
        name: str,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
        fromlist: tuple[str, ...] = (),
        level: int = 0,
    ) -> Any:
        if level != 0:
            raise ImportError(f"sandbox: relative import of {name!r} is refused")
        if name.partition(".")[0] not in allowed:
            _GUARD.refuse(f"import of {name!r} (allowed: {', '.join(sorted(allowed))})")
        return real_import(name, globals, locals, fromlist, level)

    table = {k: v for k, v in vars(builtins).items() if k not in _REMOVED_BUILTINS}
    table["__import__"] = guarded_import
    return table


def _described(exc: BaseException, filename: str) -> str:
    """`ValueError: x [program.py line 12, in helper; called from line 5, in choose_move]`:
    the exception's type, its message (cut), and where in the program's own file it was
    raised and where the arena entered it; never a source line (the source stays secret)."""
    message = str(exc)
    if len(message) > _MESSAGE_CHARS:
        message = message[:_MESSAGE_CHARS] + "..."
    text = f"{type(exc).__name__[:100]}: {message}" if message else type(exc).__name__[:100]
    frames, tb = [], exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            frames.append(f"line {tb.tb_lineno}, in {tb.tb_frame.f_code.co_name}")
        tb = tb.tb_next
    if not frames:
        return text
    called = f"; called from {frames[0]}" if len(frames) > 1 else ""
    return f"{text} [{filename} {frames[-1]}{called}]"


def _failure(exc: BaseException, filename: str, kind: str = "") -> dict[str, Any]:
    _GUARD.program_running = False
    if isinstance(exc, MemoryError):
        kind = "memory"
    try:
        detail = "MemoryError" if kind == "memory" else _described(exc, filename)
        exc.__traceback__ = None  # let the program's frames, and their memory, go
    except BaseException:  # the program's exception (its __str__, say) may fight back
        detail = "an exception that cannot be described"
    return {"op": "failed", "kind": kind or "exception", "detail": detail}


class Runtime:
    """The loaded program and the loop that serves the parent's questions."""

    def __init__(self, channel: Channel, hello: dict[str, Any]) -> None:
        self.channel = channel
        self.ctx = Context(channel, hello)
        self.player: Any = None
        self.filename = str(hello.get("filename", "program.py"))

    def load(self, source: str, allowed: frozenset[str]) -> None:
        """Run the program's source in its restricted namespace, importing only `allowed`."""
        code = compile(source, self.filename, "exec", dont_inherit=True)
        module = type(sys)("program")
        module.__dict__["__builtins__"] = _program_builtins(allowed)
        sys.modules["program"] = module
        self._run(lambda: exec(code, module.__dict__))
        create = module.__dict__.get("create")
        if not callable(create):
            raise TypeError("the program has no function create(ctx)")
        self.player = self._run(lambda: create(self.ctx))
        if not callable(getattr(self.player, "choose_move", None)):
            raise TypeError(
                f"create(ctx) returned {type(self.player).__name__} without choose_move"
            )

    def _run(self, call: Callable[[], Any]) -> Any:
        _GUARD.program_running = True
        try:
            return call()
        finally:
            _GUARD.program_running = False

    def choose(self, message: dict[str, Any]) -> dict[str, Any]:
        """Ask the program for a move (or a setup) and wrap its answer as the reply message."""
        method = "choose_setup" if message.get("kind") == "setup" else "choose_move"
        self.ctx.start_move()
        try:
            choose = getattr(self.player, method)
            reply = self._run(lambda: choose(message.get("view")))
            # Not text: its repr runs the program's code, so it is part of the answer.
            move = reply if isinstance(reply, str) else self._run(lambda: repr(reply)[:200])
        except NodeBudgetExceeded as exc:
            return _failure(exc, self.filename, "budget")
        except BaseException as exc:  # the program's own failure, reported, never fatal here
            return self._violated() or self.failure(exc)
        reply_message = {"op": "reply", "move": move, "is_text": isinstance(reply, str)}
        return self._violated() or reply_message

    def failure(self, exc: BaseException) -> dict[str, Any]:
        """The `failed` message for the program's exception `exc`."""
        return _failure(exc, self.filename)

    def _violated(self) -> dict[str, Any] | None:
        if not _GUARD.violation:
            return None
        detail = f"sandbox: {_GUARD.violation[:_MESSAGE_CHARS]} is refused"
        return {"op": "failed", "kind": "sandbox", "detail": detail}

    def serve(self) -> None:
        """Answer the arena's messages until it says goodbye or the pipe closes."""
        while True:
            message = self.channel.receive()
            if message.get("op") == "choose":
                self.channel.send(self.choose(message))
            elif message.get("op") == "bye":
                return


def main() -> None:
    """Confine, lock, load, serve."""
    channel = Channel()
    sys.stdout = _Discard()
    hello = channel.receive()
    limits = hello["limits"]  # the working folder is the parent's choice: "/" or its own
    facts: dict[str, Any] = {"network": "shared: not requested"}
    if hello.get("sandbox") == "bwrap":
        facts["network"] = "isolated (bwrap)"  # bwrap made the namespace, and more
    elif limits.get("network", True):
        facts["network"] = _isolate_network()
    _set_limits(limits)
    allowed = frozenset(hello["allowed_modules"])
    facts["preloaded"] = len(_preload(hello["preload"]))
    facts.update(_drop_privileges(limits.get("uid"), hello.get("parent_pid")))
    runtime = Runtime(channel, hello)
    _lock(int(hello["seed"]))
    try:
        runtime.load(str(hello["source"]), allowed)
    except BaseException as exc:
        channel.send(runtime._violated() or runtime.failure(exc))
        while channel.receive().get("op") != "bye":  # ended by the arena (see bwrap.py)
            pass
        return
    channel.send({"op": "ready", "sandbox": facts})
    runtime.serve()


if __name__ == "__main__":
    main()
