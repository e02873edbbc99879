"""Exclusive advisory file locks for files several processes append to (the ledgers).

`flock(2)` locks belong to an open file description: two ``open()`` calls on one file exclude
each other even inside one process, and the kernel drops a lock when its holder dies, so a writer
killed mid-append never leaves a ledger locked. A descriptor inherited across ``fork`` shares its
lock with the parent, which is why `hrm.storage.ledger.Ledger` reopens its file in a child.

Locks are advisory: they bind every hrm writer, not arbitrary programs editing the file; the hash
chain is what makes such edits visible.
"""

from __future__ import annotations

import contextlib
import errno
import sys
from collections.abc import Iterator

from hrm.errors import ErrorCode, HRMError

__all__ = ["exclusive", "lock_exclusive", "unlock"]

if sys.platform == "win32":  # pragma: no cover - hrm's ledgers need POSIX flock
    _fcntl = None
else:
    import fcntl as _fcntl


def lock_exclusive(fd: int, *, path: str = "") -> None:
    """Block until this descriptor holds the exclusive lock on its file.

    Args:
        fd: An open descriptor of the file (read-only descriptors may lock too).
        path: The file's name, for error messages only.

    Raises:
        HRMError: ``INTERNAL_ERROR`` on a platform without ``flock``; ``DB_LOCKED`` if the
            kernel refuses the lock (e.g. ``ENOLCK`` on some network filesystems).
    """
    if _fcntl is None:  # pragma: no cover
        raise HRMError.internal("Ledger locking needs POSIX flock(2); this platform has none")
    while True:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX)
            return
        except InterruptedError:  # EINTR from a signal: the lock was not taken, try again
            continue
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            raise HRMError(
                ErrorCode.DB_LOCKED,
                f"Cannot lock '{path or fd}': {exc.strerror}; "
                "ledgers need a local filesystem with flock support",
                recoverable=False,
                context={"path": path},
            ) from exc


def unlock(fd: int) -> None:
    """Release the lock held through `fd` (a no-op if none is held)."""
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)


@contextlib.contextmanager
def exclusive(fd: int, *, path: str = "") -> Iterator[None]:
    """Hold the exclusive lock on `fd`'s file for the duration of the block."""
    lock_exclusive(fd, path=path)
    try:
        yield
    finally:
        unlock(fd)
