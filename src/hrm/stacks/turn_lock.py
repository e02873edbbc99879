"""One turn at a time per stack, across processes.

A turn reads the stack's state (turn number, session, stance, commitment, problems), calls the
model and writes the new state. Two processes running turns of the same stack at once would
both read turn N and both write turn N+1, and interleave stance transitions that the machine
only allows one at a time. Every ledger append is atomic on its own; the turn as a whole was
not. This lock makes it so: `HRM` holds it from reading the state to writing the turn record
(and while opening, so two processes opening a stack do not both start a session).

It is an ``flock`` on ``<HO2 partition>/turn.lock`` — dropped by the kernel when the holder
dies, so a killed process never leaves a stack locked. The holder writes its pid into the file
so that a waiter that gives up can say who holds it. Holding it across the model call is the
point: the second turn must see the first one's outcome. Inside one process the `HRM` object's
own thread lock is taken first, so threads never wait on the file lock for each other.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from pathlib import Path
from types import TracebackType

from hrm._private import make_private_dirs
from hrm._process import pid
from hrm.errors import ErrorCode, HRMError

__all__ = ["TURN_WAIT_S", "TurnLock"]

TURN_WAIT_S = 300.0
"""How long a turn waits for another process's turn of the same stack before giving up."""

_FIRST_SLEEP_S = 0.001
_MAX_SLEEP_S = 0.05
_PID_WIDTH = 24

try:
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - hrm's stacks need POSIX flock, like its ledgers
    _fcntl = None  # type: ignore[assignment]


class TurnLock:
    """The cross-process lock of one stack's turns; a reusable context manager."""

    def __init__(self, path: str | Path, *, agent_class: str, wait_s: float = TURN_WAIT_S) -> None:
        self.path = Path(path)
        self.agent_class = agent_class
        self.wait_s = wait_s
        self._fd: int | None = None
        self._pid = pid()

    def __enter__(self) -> TurnLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock, waiting up to `wait_s` for another process's turn to end.

        Raises:
            HRMError: ``DB_LOCKED`` (recoverable) naming the holder's pid when the wait ran out,
                or when the filesystem refuses locks.
        """
        if _fcntl is None:  # pragma: no cover
            raise HRMError.internal("Stack turn locking needs POSIX flock(2)")
        fd = self._descriptor()
        deadline = time.monotonic() + self.wait_s
        sleep = _FIRST_SLEEP_S
        while not self._try(fd):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise HRMError(
                    ErrorCode.DB_LOCKED,
                    f"Stack {self.agent_class} is busy: another process ({self._holder(fd)}) "
                    f"has been in a turn for over {self.wait_s:g} s; try again when it ends",
                    recoverable=True,
                    context={"path": str(self.path), "agent_class": self.agent_class},
                )
            time.sleep(min(sleep, remaining))
            sleep = min(sleep * 2, _MAX_SLEEP_S)
        with contextlib.suppress(OSError):  # only for the waiter's message
            os.pwrite(fd, f"pid {pid()}".encode().ljust(_PID_WIDTH - 1) + b"\n", 0)

    def release(self) -> None:
        """Let the next turn of this stack in (a no-op when not held)."""
        if self._fd is not None and _fcntl is not None:
            _fcntl.flock(self._fd, _fcntl.LOCK_UN)

    def close(self) -> None:
        """Release and close the lock file (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None and self._pid == pid():
            with contextlib.suppress(OSError):
                os.close(fd)

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

    def _try(self, fd: int) -> bool:
        assert _fcntl is not None
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except InterruptedError:
            return False
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EINTR):
                return False
            raise HRMError(
                ErrorCode.DB_LOCKED,
                f"Cannot lock '{self.path}': {exc.strerror}; stacks need a local filesystem "
                "with flock support",
                recoverable=False,
                context={"path": str(self.path)},
            ) from exc
        return True

    def _holder(self, fd: int) -> str:
        try:
            text = os.pread(fd, _PID_WIDTH, 0).decode("ascii", "replace").strip()
        except OSError:
            text = ""
        return text or "pid unknown"
