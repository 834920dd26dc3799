"""The child process of a program seat: how it starts, how it talks, how it ends.

The child is `python -S -s -P -B child.py` in its own session, with a clean
environment whose only setting is `PYTHONHASHSEED=0` (and UTF-8): not `-I`,
which implies `-E` and would silently ignore PYTHONHASHSEED, making string
hashes, and so set orders, differ between two runs of the same program.
`-S` keeps site-packages out of reach, `-P` keeps the script's folder off the
path: the child sees the standard library only.

Every wait here is bounded by the caller's cancel scope or by a short grace;
`kill` always reaps the process, so no zombie is left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from providers import valid_json

__all__ = ["CHILD_PATH", "MAX_LINE_BYTES", "ChildGone", "ChildProcess", "child_command"]

CHILD_PATH = Path(__file__).with_name("child.py")
MAX_LINE_BYTES = 8 * 1024 * 1024
"""The longest message a child may send; longer is a protocol failure."""
_GRACE_S = 2.0
_STDERR_BYTES = 4000


class ChildGone(Exception):
    """The child stopped answering: it exited, was killed, or sent something unreadable."""


def child_command() -> list[str]:
    """The argv of a child runtime."""
    if not sys.executable:
        raise RuntimeError("sys.executable is empty: cannot start a program seat's child")
    return [sys.executable, "-S", "-s", "-P", "-B", str(CHILD_PATH)]


def _child_env() -> dict[str, str]:
    return {"PYTHONHASHSEED": "0", "PYTHONUTF8": "1", "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGXCPU": " (CPU limit)", "SIGKILL": " (killed)", "SIGSEGV": " (crashed)"}
        return f"its process died of {name}{hint.get(name, '')}"
    return f"its process exited with status {code}"


class ChildProcess:
    """One running child: JSON lines in and out, and a kill that always reaps."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self._process = process
        if process.stdout is None or process.stdin is None:
            raise RuntimeError("the child's pipes did not open")
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self.stderr_tail = ""
        """What the interpreter itself wrote to stderr (fatal errors), read once it is dead."""

    @classmethod
    async def spawn(cls) -> ChildProcess:
        """Start a child runtime; it waits for its `hello`."""
        process = await anyio.open_process(
            child_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_child_env(),
            cwd="/",
            start_new_session=True,
        )
        return cls(process)

    @property
    def pid(self) -> int:
        """The child's process id (and process group id)."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """None while the child runs."""
        return self._process.returncode

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message; raise ChildGone if the child no longer reads."""
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        try:
            await self._stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise ChildGone(await self._gone(f"it stopped reading ({type(exc).__name__})")) from exc

    async def receive(self) -> dict[str, Any]:
        """Read one message; raise ChildGone on end of stream or an unreadable line."""
        try:
            line = await self._stdout.receive_until(b"\n", MAX_LINE_BYTES)
        except anyio.IncompleteRead:
            raise ChildGone(await self._gone("")) from None
        except anyio.DelimiterNotFound:
            raise ChildGone(f"it sent a line longer than {MAX_LINE_BYTES} bytes") from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise ChildGone(await self._gone(type(exc).__name__)) from exc
        try:
            # Its text is made valid Unicode here, where it enters: a lone surrogate in a
            # move or a message must not break the writing of the game's record.
            message = valid_json(json.loads(line))
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            raise ChildGone(f"it sent a line that is not JSON: {line[:200]!r}") from None
        if not isinstance(message, dict):
            raise ChildGone(f"it sent {type(message).__name__}, not a JSON object")
        return message

    async def _gone(self, why: str) -> str:
        """Why the child is gone: wait briefly for its exit, then read its stderr."""
        with anyio.move_on_after(_GRACE_S, shield=True):
            await self._process.wait()
        if self.returncode is None:
            return why or "it closed its output"
        await self._read_stderr()
        tail = f"; stderr: {self.stderr_tail.strip()[-600:]}" if self.stderr_tail.strip() else ""
        return f"{_describe_exit(self.returncode)}{tail}"

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
        """SIGKILL the child's process group and reap it (bounded, shielded)."""
        with anyio.CancelScope(shield=True):
            if self._process.returncode is None:
                try:
                    os.killpg(self._process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    self._process.kill()
            with anyio.move_on_after(_GRACE_S):
                await self._process.wait()
            with anyio.move_on_after(_GRACE_S):
                await self._process.aclose()

    async def close(self) -> None:
        """Say goodbye and give the child a moment to exit; kill it if it does not."""
        with anyio.CancelScope(shield=True):
            if self._process.returncode is None:
                with anyio.move_on_after(_GRACE_S / 4):
                    try:
                        await self.send({"op": "bye"})
                        await self._stdin.aclose()
                    except ChildGone:
                        pass
                    await self._process.wait()
            await self.kill()
