"""Each live program child's own uid, when the arena runs as root (`[run] program_uids`).

A child that drops to a uid no other process has cannot signal, trace or read
another child (a program that gets past the guard and scans `/proc` for its
siblings finds them, and is refused by the kernel). The uids come from a block
that no account uses (`DEFAULT_PROGRAM_UIDS`, checked at start: `block_problem`).
A uid is leased for one child's life (`lease`): an exclusive lock on a file of
its own in a root-only folder, so two arenas on one machine never hand out the
same uid; whatever process still runs as it is killed first. When the child
ends, what its uid left behind goes with it (`UidLease.reclaim`): every process
running as it, and, for a `process`-mode child, its entries in /tmp, /var/tmp
and /dev/shm (`RLIMIT_FSIZE = 0` stops bytes, not names) and its working folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEFAULT_PROGRAM_UIDS",
    "SHARED_FOLDERS",
    "UidLease",
    "UidsExhausted",
    "block_problem",
    "lease",
    "uid_processes",
]

DEFAULT_PROGRAM_UIDS = (2_000_000_000, 2_000_065_535)
"""A block no account of an ordinary machine uses (accounts, containers' subordinate
ranges and systemd's dynamic users sit far below it)."""
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
"""Where any uid may make names: what a `process`-mode child's uid made there is removed."""
_DEPTH = 8
"""How deep a sweep looks into folders another uid made and left open to all."""
_LOCKS = ("/run/cog-arena/program-uids", f"{tempfile.gettempdir()}/cog-arena-program-uids")


class UidsExhausted(RuntimeError):
    """Every uid of the block is leased: more program children run than it holds."""


def _processes() -> dict[int, set[int]]:
    """Every process's id -> its uids (real, effective, saved, file system), from /proc."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii", errors="replace") as f:
                line = next(x for x in f if x.startswith("Uid:"))
        except (OSError, StopIteration):
            continue  # gone meanwhile
        found[int(entry.name)] = {int(x) for x in line.split()[1:] if x.isdigit()}
    return found


def uid_processes(uid: int) -> list[int]:
    """The process ids of every process with `uid` among its uids."""
    return [pid for pid, uids in _processes().items() if uid in uids]


def _accounts(path: str) -> dict[int, str]:
    """Each uid (or gid) -> its name, of `/etc/passwd` (or `/etc/group`)."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        parts = line.split(":")
        if len(parts) > 2 and parts[2].isdigit():
            out[int(parts[2])] = parts[0]
    return out


def _mapped(first: int, last: int) -> bool:
    """Whether this process's user namespace maps the whole block."""
    try:
        lines = Path("/proc/self/uid_map").read_text().splitlines()
    except OSError:
        return True  # no namespaces to speak of
    for line in lines:
        inside, _, count = (int(x) for x in line.split())
        if inside <= first and last < inside + count:
            return True
    return False


def block_problem(block: tuple[int, int]) -> str:
    """Why the uid block cannot be used here, or '': an account (or a group) in it, a uid
    this user namespace does not map, or a process running as one of its uids that no
    arena leased."""
    first, last = block
    where = f"run.program_uids = [{first}, {last}]"
    fix = "set run.program_uids to a block of uids no account or process uses"
    if not _mapped(first, last):
        return f"{where} is not mapped in this user namespace (/proc/self/uid_map): {fix}"
    for path, kind in (("/etc/passwd", "the account"), ("/etc/group", "the group")):
        taken = {i: n for i, n in _accounts(path).items() if first <= i <= last}
        if taken:
            uid, name = min(taken.items())
            return f"{where} holds {kind} {name!r} ({uid}, in {path}): {fix}"
    running = {uid for uids in _processes().values() for uid in uids}
    for uid in sorted(u for u in running if first <= u <= last):
        held = _try_lock(uid)
        if held is not None:  # no arena leased it, yet something runs as it
            os.close(held)
            pids = ", ".join(map(str, uid_processes(uid)[:5]))
            return f"{where}: uid {uid} is in use by process {pids} that no arena started: {fix}"
    return ""


def _lock_folder() -> Path:
    """The root-only folder of the uids' lock files (made 0700 on first use)."""
    for candidate in _LOCKS:
        folder = Path(candidate)
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = folder.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077:
            return folder
    raise UidsExhausted(f"no private folder for the uids' locks ({', '.join(_LOCKS)})")


def _try_lock(uid: int) -> int | None:
    """An open, exclusively locked descriptor of `uid`'s lock file, or None if another holds it."""
    fd = os.open(_lock_folder() / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


@dataclass
class UidLease:
    """One uid, held for one child's life; `reclaim` ends it."""

    uid: int
    _fd: int
    workdir: Path | None = None
    """The child's working folder (`process` mode), owned by the uid, removed with it."""
    shared: tuple[str, ...] = field(default=())
    """The shared folders swept of the uid's entries when the child ends."""

    def reclaim(self) -> None:
        """Kill what still runs as the uid, remove what it made, and let the uid go."""
        if self._fd < 0:
            return
        try:
            for _ in range(3):  # a process may have forked between the scan and the kill
                pids = uid_processes(self.uid)
                if not pids:
                    break
                for pid in pids:
                    _kill(pid)
            if self.workdir is not None:
                shutil.rmtree(self.workdir, ignore_errors=True)
            for folder in self.shared:
                _sweep(Path(folder), self.uid, _DEPTH)
        finally:
            os.close(self._fd)
            self._fd = -1


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _sweep(folder: Path, uid: int, depth: int) -> None:
    """Remove every entry of `folder` owned by `uid` (a folder with all it holds), and look
    into the folders others left open to all, `depth` levels at most. Nothing is followed:
    a link is removed, or left, as the link it is."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == uid:
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        elif depth > 0 and stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IXOTH:
            _sweep(Path(entry.path), uid, depth - 1)  # a uid without groups enters only these


def lease(block: tuple[int, int], *, workdir: bool = False, sweep: bool = False) -> UidLease:
    """The first uid of `block` no arena holds and no process runs as, locked until its
    lease's `reclaim`; with `workdir`, a fresh working folder of its own (0700); with
    `sweep`, its entries in `SHARED_FOLDERS` are removed when it is reclaimed. Raise
    UidsExhausted when every uid is taken."""
    first, last = block
    for uid in range(first, last + 1):
        fd = _try_lock(uid)
        if fd is None:
            continue
        if uid_processes(uid):  # something else runs as it: leave it be
            os.close(fd)
            continue
        held = UidLease(uid, fd, shared=SHARED_FOLDERS if sweep else ())
        if workdir:
            folder = Path(tempfile.mkdtemp(prefix=f"cog-program-{uid}-"))
            os.chown(folder, uid, uid)
            held.workdir = folder
        return held
    raise UidsExhausted(
        f"all {last - first + 1} uids of run.program_uids = [{first}, {last}] are in use by "
        "program children: widen the block, or lower run.concurrency"
    )
