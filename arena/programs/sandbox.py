"""The child process of a program seat: how it starts, how it talks, how it ends.

The child is `python -S -s -P -B child.py` in its own session, under bwrap or as
a plain process (`bwrap`: the mode is chosen there), with a clean
environment whose only setting is `PYTHONHASHSEED=0` (and UTF-8): not `-I`,
which implies `-E` and would silently ignore PYTHONHASHSEED, making string
hashes, and so set orders, differ between two runs of the same program.
`-S` keeps site-packages out of reach, `-P` keeps the script's folder off the
path: the child sees the standard library only.

Messages travel over the child's `ChildPipes` (`pipes`), one worker thread per move;
every wait here is bounded by the caller's cancel scope or by a short grace;
`kill` always reaps the process and sees the move's thread end, so neither a
zombie nor a thread is left; a child with a uid of its own (`uids`) then has that
uid reclaimed: what still runs as it killed, what it made removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread

from arena.programs.bwrap import (
    CHILD_INSIDE,
    ChildMode,
    bwrap_command,
    interpreter,
    kill_sandbox,
)
from arena.programs.pipes import ChildPipes, PipesClosed, Unreadable, decode_line, encode_line
from arena.programs.uids import UidLease

__all__ = ["CHILD_PATH", "Answer", "ChildGone", "ChildProcess", "child_command"]

CHILD_PATH = Path(__file__).with_name("child.py")
Answer = Callable[[object, object], bytes]
"""How a move answers one helper call: (fn, args) -> the line to send back."""
_GRACE_S = 2.0
_RECLAIM_S = 30.0
"""The longest the arena waits for a uid's leftovers to be removed (it goes on after)."""
_STDERR_BYTES = 4000


class ChildGone(Exception):
    """The child stopped answering: it exited, was killed, or sent something unreadable."""


_FLAGS = ("-S", "-s", "-P", "-B")


def child_command(
    mode: ChildMode = "process",
    *,
    drops_privileges: bool = True,
    script: Path = CHILD_PATH,
    info_fd: int | None = None,
) -> list[str]:
    """The argv of a child runtime (`script`: another file in its place, for tests;
    `info_fd`: bwrap's, see `bwrap_command`)."""
    if mode == "bwrap":
        inside = [str(interpreter()), *_FLAGS, CHILD_INSIDE]
        return bwrap_command(
            inside, drops_privileges=drops_privileges, script=script, info_fd=info_fd
        )
    if not sys.executable:
        raise RuntimeError("sys.executable is empty: cannot start a program seat's child")
    return [sys.executable, *_FLAGS, str(script)]


def _child_env() -> dict[str, str]:
    return {"PYTHONHASHSEED": "0", "PYTHONUTF8": "1", "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}


def _describe_exit(code: int | None, mode: ChildMode) -> str:
    if code is None:
        return "it stopped answering"
    if mode == "bwrap" and code > 128:  # bwrap exits 128 + the signal its child died of
        code = 128 - code
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGXCPU": " (CPU limit)", "SIGKILL": " (killed)", "SIGSEGV": " (crashed)"}
        return f"its process died of {name}{hint.get(name, '')}"
    return f"its process exited with status {code}"


class ChildProcess:
    """One running child: JSON lines in and out over its `ChildPipes`, a kill that always reaps."""

    def __init__(
        self,
        process: anyio.abc.Process,
        pipes: ChildPipes,
        mode: ChildMode = "process",
        info_fd: int | None = None,
        lease: UidLease | None = None,
    ) -> None:
        self._process = process
        self._lease = lease
        self._pipes = pipes
        self.mode = mode
        self._info_fd = info_fd
        """Under bwrap: where bwrap said the sandbox's process id (read when it is killed)."""
        self._thread = anyio.CapacityLimiter(1)
        """The child's own thread token: a move never waits for a busy shared pool."""
        self.stderr_tail = ""
        """What the interpreter itself wrote to stderr (fatal errors), read once it is dead."""

    @classmethod
    async def spawn(
        cls,
        mode: ChildMode = "process",
        *,
        drops_privileges: bool = True,
        lease: UidLease | None = None,
    ) -> ChildProcess:
        """Start a child runtime in `mode`; it waits for its `hello`. `drops_privileges`:
        the child will become an unprivileged uid by itself (`lease`'s, which the child's
        end reclaims, and in whose working folder a `process`-mode child starts)."""
        info_r, info_w = os.pipe() if mode == "bwrap" else (-1, -1)
        command = child_command(
            mode, drops_privileges=drops_privileges, info_fd=info_w if info_w >= 0 else None
        )
        ends = os.pipe() + os.pipe()
        stdin_r, stdin_w, stdout_r, stdout_w = ends
        try:
            pipes = ChildPipes(stdin_w, stdout_r)
        except BaseException:
            for fd in (*ends, info_r, info_w):
                if fd >= 0:
                    os.close(fd)
            raise
        try:
            process = await anyio.open_process(
                command,
                stdin=stdin_r,
                stdout=stdout_w,
                stderr=subprocess.PIPE,
                env=_child_env(),
                cwd=lease.workdir if lease is not None and lease.workdir is not None else "/",
                start_new_session=True,
                pass_fds=(info_w,) if info_w >= 0 else (),
            )
        except BaseException:
            pipes.close()
            if info_r >= 0:
                os.close(info_r)
            raise
        finally:
            for fd in (stdin_r, stdout_w, info_w):  # the child's ends are the child's alone
                if fd >= 0:
                    os.close(fd)
        if info_r < 0:
            return cls(process, pipes, mode, lease=lease)
        os.set_blocking(info_r, False)
        return cls(process, pipes, mode, info_r, lease)

    @property
    def pid(self) -> int:
        """The child's process id (and process group id)."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """None while the child runs."""
        return self._process.returncode

    async def exchange(
        self, message: dict[str, Any], answer: Answer | None = None
    ) -> dict[str, Any]:
        """Send `message` and return the child's next message; with `answer`, the helper
        calls that come first are answered by it (`answer(fn, args)` -> the line to send).

        One worker thread does it all, with blocking reads and writes on the pipes. A
        cancellation returns at once; `kill` then wakes the thread and waits for it.
        Raise ChildGone if the child stops reading or answering, or sends an unreadable
        line."""
        try:
            return await anyio.to_thread.run_sync(
                self._exchange, message, answer, abandon_on_cancel=True, limiter=self._thread
            )
        except PipesClosed as exc:
            raise ChildGone(await self._gone(str(exc))) from None
        except Unreadable as exc:
            raise ChildGone(str(exc)) from None

    def _exchange(self, message: dict[str, Any], answer: Answer | None) -> dict[str, Any]:
        with self._pipes.held() as pipes:
            pipes.send(encode_line(message))
            while True:
                reply = decode_line(pipes.receive_line())
                if answer is None or reply.get("op") != "call":
                    return reply
                pipes.send(answer(reply.get("fn"), reply.get("args")))

    async def _gone(self, why: str) -> str:
        """Why the child is gone: wait briefly for its exit, then read its stderr."""
        with anyio.move_on_after(_GRACE_S, shield=True):
            await self._process.wait()
        if self.returncode is None:
            return why or "it closed its output"
        await self._read_stderr()
        tail = f"; stderr: {self.stderr_tail.strip()[-600:]}" if self.stderr_tail.strip() else ""
        return f"{_describe_exit(self.returncode, self.mode)}{tail}"

    async def _read_stderr(self) -> None:
        stream = self._process.stderr
        if stream is None:
            return
        chunks = bytearray()
        with anyio.move_on_after(_GRACE_S, shield=True):
            try:
                while len(chunks) < 1_000_000:
                    chunks += await stream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
        self.stderr_tail = chunks[-_STDERR_BYTES:].decode("utf-8", "replace")

    async def kill(self) -> None:
        """SIGKILL the child's process group and reap it, and see the pipes' thread end
        (bounded, shielded)."""
        with anyio.CancelScope(shield=True):
            self._pipes.wake()
            if self._process.returncode is None:
                inside = self._info_fd is not None and kill_sandbox(
                    self._info_fd, self._process.pid
                )
                if not inside:
                    self._kill_group()
                with anyio.move_on_after(_GRACE_S):
                    await self._process.wait()
                if inside and self._process.returncode is None:  # bwrap did not end with it
                    self._kill_group()
            with anyio.move_on_after(_GRACE_S):
                await self._process.wait()
            if self._info_fd is not None:
                os.close(self._info_fd)
                self._info_fd = None
            if not self._pipes.free.is_set():  # woken and its child dead, it ends at once
                await anyio.to_thread.run_sync(
                    self._pipes.free.wait, _GRACE_S, limiter=self._thread
                )
            self._pipes.close()  # at once, or by the thread as it lets go
            with anyio.move_on_after(_GRACE_S):
                await self._process.aclose()
            lease, self._lease = self._lease, None
            if lease is not None:  # its processes and files, in a thread: /tmp may be large
                with anyio.move_on_after(_RECLAIM_S):
                    await anyio.to_thread.run_sync(lease.reclaim, abandon_on_cancel=True)

    def _kill_group(self) -> None:
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            self._process.kill()

    async def close(self) -> None:
        """Say goodbye and give the child a moment to exit; kill it if it does not. Under
        bwrap the kill is the goodbye (`bwrap.kill_sandbox` says why)."""
        with anyio.CancelScope(shield=True):
            if self._process.returncode is None and self.mode == "process":
                self._pipes.hang_up(encode_line({"op": "bye"}))
                with anyio.move_on_after(_GRACE_S / 4):
                    await self._process.wait()
            await self.kill()
