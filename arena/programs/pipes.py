"""The pipes to a program seat's child, its stdin and stdout, read and written by one thread.

A move's helper calls are many small round trips: the child asks, the arena
answers. Served from the event loop, each message would cost a trip through
the loop; instead one worker thread serves a whole move with plain `os.read`
and `os.write` on the pipes' raw ends (`ChildProcess.exchange`).

Every wait of that thread is a `poll` on the pipe and on a wake pipe, so it is
bounded by the move: `wake()` ends any wait at once and for good (a move that
timed out or was cancelled), and the kill that follows closes the child's
ends, which ends a read with end of file and a write with a broken pipe. The
pipe ends are closed only once no thread is using them, so a late thread never
reads a file descriptor that meanwhile names another file.

The framing is fixed: one JSON object per line, at most `MAX_LINE_BYTES`; the
answers to helper calls are written from precomputed pieces.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from providers import valid_json

__all__ = [
    "BUDGET_REFUSAL",
    "MAX_LINE_BYTES",
    "ChildPipes",
    "PipesClosed",
    "Unreadable",
    "decode_line",
    "encode_line",
    "refusal_line",
    "result_line",
]

MAX_LINE_BYTES = 8 * 1024 * 1024
"""The longest message a child may send; longer is a protocol failure."""
_CHUNK = 1 << 16
_WAKE_EVENTS = select.POLLIN | select.POLLHUP | select.POLLERR

_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_decode = json.JSONDecoder().decode
_RESULT_HEAD = b'{"op":"result","value":'
BUDGET_REFUSAL = b'{"op":"refused","error":"budget"}\n'
"""The answer to a call the move's node budget cannot pay for."""


class PipesClosed(Exception):
    """No message will come: the child closed its end, or the arena woke the pipes."""


class Unreadable(Exception):
    """The child sent a line that is not one JSON object, or one too long."""


def encode_line(message: dict[str, Any]) -> bytes:
    """`message` as one compact JSON line."""
    return _encode(message).encode() + b"\n"


def result_line(value: Any) -> bytes:
    """The answer to a helper call: its value."""
    return _RESULT_HEAD + _encode(value).encode() + b"}\n"


def refusal_line(detail: str) -> bytes:
    """The answer to a helper call the arena refused, saying why."""
    return encode_line({"op": "refused", "error": "helper", "detail": detail})


def decode_line(line: bytes) -> dict[str, Any]:
    """One line from the child as a JSON object, its text made valid Unicode; raise
    Unreadable when it is not one."""
    try:
        if line.isascii() and b"\\u" not in line and b"\x00" not in line:
            # Plain ASCII holds no lone surrogate and reads as UTF-8 would: the fast way.
            message = _decode(line.decode("ascii"))
        else:
            # Its text is made valid Unicode here, where it enters: a lone surrogate in a
            # move or a message must not break the writing of the game's record.
            message = valid_json(json.loads(line))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise Unreadable(f"it sent a line that is not JSON: {line[:200]!r}") from None
    if not isinstance(message, dict):
        raise Unreadable(f"it sent {type(message).__name__}, not a JSON object")
    return message


class ChildPipes:
    """The arena's ends of a child's stdin and stdout, for one thread at a time."""

    def __init__(self, to_child: int, from_child: int) -> None:
        os.set_blocking(to_child, False)
        os.set_blocking(from_child, False)
        self._to = to_child
        self._from = from_child
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._readable = select.poll()
        self._readable.register(from_child, select.POLLIN)
        self._readable.register(self._wake_r, select.POLLIN)
        self._writable = select.poll()
        self._writable.register(to_child, select.POLLOUT)
        self._writable.register(self._wake_r, select.POLLIN)
        self._pending = b""
        self._at = 0
        self._lock = threading.Lock()
        self._closing = False
        self._closed = False
        self.free = threading.Event()
        """Set while no thread is inside `held()`."""
        self.free.set()

    @contextmanager
    def held(self) -> Iterator[ChildPipes]:
        """The pipes for the calling thread; their ends stay open until it lets go."""
        with self._lock:
            if self._closing or not self.free.is_set():
                raise PipesClosed("the wire is closed or in use")
            self.free.clear()
        try:
            yield self
        finally:
            with self._lock:
                self.free.set()
                if self._closing:
                    self._close_now()

    def send(self, data: bytes) -> None:
        """Write all of `data`; raise PipesClosed if the child no longer reads."""
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._to, view) :]
            except BlockingIOError:
                self._wait(self._writable)
            except OSError as exc:  # BrokenPipeError once the child is gone
                raise PipesClosed(f"it stopped reading ({type(exc).__name__})") from None

    def receive_line(self) -> bytes:
        """The next line, without its newline; raise PipesClosed at end of file and
        Unreadable past MAX_LINE_BYTES without a newline."""
        data, at = self._pending, self._at
        end = data.find(b"\n", at)
        if end < 0:
            buffer = bytearray(data[at:])
            while end < 0:
                if len(buffer) >= MAX_LINE_BYTES:
                    raise Unreadable(f"it sent a line longer than {MAX_LINE_BYTES} bytes")
                start = len(buffer)
                buffer += self._read()
                end = buffer.find(b"\n", start)
            data, at = bytes(buffer), 0
        # Read on from an offset: many lines in one chunk are not copied over and over.
        self._pending, self._at = data, end + 1
        return data[at:end]

    def _read(self) -> bytes:
        self._wait(self._readable)
        try:
            data = os.read(self._from, _CHUNK)
        except BlockingIOError:
            return b""  # woken with nothing to read after all: wait again
        if not data:
            raise PipesClosed("")
        return data

    def _wait(self, poller: select.poll) -> None:
        for fd, _ in poller.poll():
            if fd == self._wake_r:
                raise PipesClosed("the arena stopped waiting for it")

    def wake(self) -> None:
        """End the waits of the thread using the pipes, now and from now on (any thread)."""
        with self._lock:
            if not self._closed:
                with contextlib.suppress(BlockingIOError):  # full: woken many times over
                    os.write(self._wake_w, b"!")

    def hang_up(self, last: bytes) -> None:
        """Write `last` if the pipe takes it at once, then close the way to the child, which
        then reads end of file; only while no thread holds the pipes."""
        with self._lock:
            if self._closed or self._to < 0 or not self.free.is_set():
                return
            with contextlib.suppress(OSError):  # full or broken: end of file says the same
                os.write(self._to, last)
            os.close(self._to)
            self._to = -1

    def close(self) -> None:
        """Close every end, now if no thread holds the pipes, else when it lets go."""
        with self._lock:
            self._closing = True
            if self.free.is_set():
                self._close_now()

    def _close_now(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd in (self._to, self._from, self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
