"""Advisory file locks (``flock(2)``) shared by every process that opens one home.

Two kinds of caller use them: the ledgers lock the file they append to, through a descriptor
they already hold (`lock`, `unlock`, `held`), and a stack locks a file of its own around a
whole turn, waiting a bounded time for another process's turn (`FileLock`).

Why ``flock``: its locks belong to an open file description, so two ``open()`` calls on one file
exclude each other even inside one process, and the kernel drops a lock when its holder dies, so
a process killed mid-append or mid-turn never leaves a file locked. A descriptor inherited across
``fork`` shares its parent's lock, which is why `FileLock` (like the ledger) opens its own in a
child. Locks are advisory: they bind every hrm process, not arbitrary programs editing the file;
a ledger's hash chain is what makes such edits visible.

Neither kind is re-entrant: locking a description that already holds the lock converts it in
place, so an inner release would free the outer holder too. Callers take a lock once (`HRM` holds
its own thread lock around the turn lock for that reason).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from pathlib import Path

from hrm._private import make_private_dirs
from hrm._process import pid
from hrm._turn_slot import TURN_SLOT
from hrm.errors import ErrorCode, HRMError

TYPE_CHECKING = False  # the ledgers import this module: no `typing` at run time
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from types import TracebackType
    from typing import Any

__all__ = ["FileLock", "held", "lock", "try_lock", "unlock"]

if sys.platform == "win32":  # pragma: no cover - hrm's ledgers and stacks need POSIX flock
    _fcntl = None
else:
    import fcntl as _fcntl

_FIRST_SLEEP_S = 0.001
_MAX_SLEEP_S = 0.05
"""A bounded wait polls with backoff: ``flock`` itself has no timeout."""
_PID_WIDTH = 24
_BUSY = frozenset({errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK})


def _mode(*, shared: bool) -> int:
    if _fcntl is None:  # pragma: no cover
        raise HRMError.internal("hrm's file locks need POSIX flock(2); this platform has none")
    return _fcntl.LOCK_SH if shared else _fcntl.LOCK_EX


def _refused(exc: OSError, path: str | int) -> HRMError:
    return HRMError(
        ErrorCode.DB_LOCKED,
        f"Cannot lock '{path}': {exc.strerror}; hrm's ledgers and stacks need a local "
        "filesystem with flock support",
        recoverable=False,
        context={"path": str(path)},
    )


def lock(fd: int, *, shared: bool = False, path: str = "") -> None:
    """Block until `fd` holds the lock on its file (exclusive unless `shared`).

    Args:
        fd: An open descriptor of the file (read-only descriptors may lock too).
        shared: Take a shared lock, which other shared holders may hold at once.
        path: The file's name, for error messages only.

    Raises:
        HRMError: ``DB_LOCKED`` (not recoverable) if the kernel refuses the lock, e.g.
            ``ENOLCK`` on some network filesystems; ``INTERNAL_ERROR`` without ``flock``.
    """
    mode = _mode(shared=shared)
    while True:
        try:
            _fcntl.flock(fd, mode)
            return
        except InterruptedError:  # EINTR from a signal: the lock was not taken, try again
            continue
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            raise _refused(exc, path or fd) from exc


def try_lock(fd: int, *, shared: bool = False, path: str = "") -> bool:
    """Take the lock if no other holder excludes it; never wait. True when taken.

    Raises:
        HRMError: ``DB_LOCKED`` (not recoverable) if the kernel refuses locks on this file.
    """
    mode = _mode(shared=shared)
    try:
        _fcntl.flock(fd, mode | _fcntl.LOCK_NB)
    except (BlockingIOError, InterruptedError):
        return False
    except OSError as exc:
        if exc.errno in _BUSY or exc.errno == errno.EINTR:
            return False
        raise _refused(exc, path or fd) from exc
    return True


def unlock(fd: int) -> None:
    """Release the lock held through `fd` (a no-op if none is held)."""
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)


@contextlib.contextmanager
def held(fd: int, *, shared: bool = False, path: str = "") -> Iterator[None]:
    """Hold the lock on `fd`'s file for the duration of the block (see `lock`)."""
    lock(fd, shared=shared, path=path)
    try:
        yield
    finally:
        unlock(fd)


class FileLock:
    """A lock on a file of its own (created 0600), with a bounded wait; a reusable context manager.

    The descriptor is opened on first use and kept until `close`; a forked child opens its own.
    An exclusive holder writes ``pid N`` into the file, so a waiter that gives up can name it.
    Not thread-safe: one thread of a process uses a given `FileLock` at a time.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        wait_s: float | None = None,
        shared: bool = False,
        busy_message: str = "'{path}' is held by another process ({holder}) for over {wait_s:g} s",
        context: Mapping[str, Any] | None = None,
    ) -> None:
        """Describe the lock; nothing is opened yet.

        Args:
            path: The lock file (its directory is created when needed).
            wait_s: How long `acquire` waits for other holders; None waits as long as it takes.
            shared: Take shared locks instead of exclusive ones.
            busy_message: The message of the error a wait that ran out raises; ``{path}``,
                ``{holder}`` (``pid N`` or ``pid unknown``) and ``{wait_s}`` are filled in.
            context: Added to that error's context (besides ``path``).
        """
        self.path = Path(path)
        self.wait_s = wait_s
        self.shared = shared
        self.busy_message = busy_message
        self.context = dict(context or {})
        self._fd: int | None = None
        self._pid = pid()

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock, waiting up to `wait_s` for the other holders to let go.

        Raises:
            HRMError: ``DB_LOCKED``, recoverable, with `busy_message` when the wait ran out;
                not recoverable when the filesystem refuses locks; ``PERMISSION_DENIED`` when
                the lock file cannot be created.
        """
        fd = self._descriptor()
        if not try_lock(fd, shared=self.shared, path=str(self.path)):
            with TURN_SLOT.released():  # another process holds it: other stacks' turns go on
                if self.wait_s is None:
                    lock(fd, shared=self.shared, path=str(self.path))
                else:
                    self._wait(fd, self.wait_s)
        if not self.shared:
            with contextlib.suppress(OSError):  # only for a waiter's message
                os.pwrite(fd, f"pid {pid()}".encode().ljust(_PID_WIDTH - 1) + b"\n", 0)

    def _wait(self, fd: int, wait_s: float) -> None:
        deadline = time.monotonic() + wait_s
        sleep = _FIRST_SLEEP_S
        while not try_lock(fd, shared=self.shared, path=str(self.path)):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                message = self.busy_message.format(
                    path=self.path, holder=self.holder(), wait_s=wait_s
                )
                raise HRMError(
                    ErrorCode.DB_LOCKED,
                    message,
                    recoverable=True,
                    context={"path": str(self.path), **self.context},
                )
            time.sleep(min(sleep, remaining))
            sleep = min(sleep * 2, _MAX_SLEEP_S)

    def release(self) -> None:
        """Let the next holder in (a no-op when not held)."""
        if self._fd is not None and self._pid == pid():
            unlock(self._fd)

    def close(self) -> None:
        """Release and close the lock file (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None and self._pid == pid():
            with contextlib.suppress(OSError):
                os.close(fd)

    def holder(self) -> str:
        """``pid N`` of the last exclusive holder as written in the file, else ``pid unknown``."""
        try:
            fd = self._descriptor()
            text = os.pread(fd, _PID_WIDTH, 0).decode("ascii", "replace").strip()
        except (OSError, HRMError):
            text = ""
        return text or "pid unknown"

    def _descriptor(self) -> int:
        if self._fd is not None and self._pid != pid():
            # Inherited through fork, the descriptor shares the parent's lock: open our own.
            self._fd, self._pid = None, pid()
        if self._fd is None:
            try:
                make_private_dirs(self.path.parent)
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as exc:
                raise HRMError.permission_denied(self.path) from exc
        return self._fd
