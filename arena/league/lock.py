"""One run per folder: an exclusive advisory lock held for the length of a run.

A second `arena run` on a folder in use stops at once, naming the process
that holds it; readers (`arena report`, `verify`, `view --serve`) take no
lock and read meanwhile. The lock is `flock` on `RUN/.lock`: the kernel drops
it when its holder dies, so a killed run never leaves a folder locked. A run that
ends removes the file (a killed one leaves it, unheld: the next run takes it over).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.config import ConfigError

__all__ = ["LOCK_NAME", "RunFolderBusy", "hold_run_folder", "holder_of"]

LOCK_NAME = ".lock"

_held: dict[Path, tuple[int, int]] = {}
"""Run folders this process holds: path -> (file descriptor, holds)."""


class RunFolderBusy(ConfigError):
    """Another process is playing a run in this folder."""

    holder = "unknown"
    """The process id the holder wrote into the lock (a command other than `arena run`
    words its own fix with it)."""


def holder_of(out: Path) -> str | None:
    """The process id of another process playing a run in `out` now, or None (none does,
    or this process holds it): a reader that must not see a run half played asks first."""
    if out.resolve() in _held:
        return None
    try:
        fd = os.open(out / LOCK_NAME, os.O_RDONLY)
    except FileNotFoundError:  # no run, or one that just ended and removed it
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.read(fd, 32).decode(errors="replace").strip() or "unknown"
    finally:
        os.close(fd)  # closing releases a shared lock it took
    return None


@contextmanager
def hold_run_folder(out: Path) -> Iterator[None]:
    """Hold `out` for this process for the block; re-entrant within one process."""
    key = out.resolve()
    if key in _held:
        fd, holds = _held[key]
        _held[key] = (fd, holds + 1)
    else:
        out.mkdir(parents=True, exist_ok=True)
        fd = _lock(out)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        _held[key] = (fd, 1)
    try:
        yield
    finally:
        fd, holds = _held[key]
        if holds > 1:
            _held[key] = (fd, holds - 1)
        else:
            del _held[key]
            # Unlinked while still held, so no other run can lock this file after us;
            # one that opened it meanwhile sees it gone (`_lock`) and makes its own.
            (out / LOCK_NAME).unlink(missing_ok=True)
            os.close(fd)  # closing the descriptor releases the lock


def _lock(out: Path) -> int:
    """A descriptor of `out`'s lock file, locked exclusively: the file at the path now, not
    one a run that ended unlinked between our open and our lock."""
    path = out / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            busy = RunFolderBusy(
                f"run folder {out} is in use by process {holder}: wait for that run to end "
                "(or stop it), or pass another --out"
            )
            busy.holder = holder
            raise busy from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # locked a file its holder unlinked as it ended: open the new one
