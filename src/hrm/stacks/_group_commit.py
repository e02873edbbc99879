"""Group commit for a stack's ledgers: one fsync per ledger per interval, off the turn's path.

A turn ends by requesting a commit. Its records are already written to the operating system,
so they survive a crash of the process; the fsync that makes them survive a crash of the machine
follows within ``interval_ms``, batched with whatever other turns ended meanwhile. ``close``
and ``flush`` commit synchronously. With ``interval_ms == 0`` every request commits at once.

Every stack of a process shares one committing thread (per interval): a server with eight
stacks in flight ran eight threads, each rewriting the home's manifest after its own stack's
fsyncs (~0.3 ms of CPU, under the manifest's lock) and trading the interpreter lock with the
turns at every system call. One thread commits every stack that asked in the interval, and
the manifest is written once for all of them (D391).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence

__all__ = ["GroupCommitter"]

logger = logging.getLogger(__name__)


class GroupCommitter:
    """Commits a fixed set of ledgers (their ``commit`` callables) in the background."""

    def __init__(self, commits: Sequence[Callable[[], object]], interval_ms: int = 20) -> None:
        self._commits = list(commits)
        self._flush_lock = threading.Lock()
        self._closed = False
        interval = max(0, interval_ms) / 1000
        self._shared = _CommitThread.for_interval(interval) if interval > 0 else None

    def request(self) -> None:
        """A commit boundary was reached (e.g. the end of a turn)."""
        if self._closed:
            return
        if self._shared is None:
            self.flush()
        else:
            self._shared.request(self)

    def flush(self) -> None:
        """Commit every ledger now (nothing once closed: its ledgers may be closed too)."""
        with self._flush_lock:
            if not self._closed:
                self._commit()

    def close(self) -> None:
        """Commit synchronously, one last time; later requests and flushes do nothing."""
        if self._shared is not None:
            self._shared.forget(self)
        with self._flush_lock:
            if not self._closed:
                self._commit()
                self._closed = True

    def _commit(self) -> None:
        for commit in self._commits:
            try:
                commit()
            except Exception:  # a failing fsync is logged; the next boundary retries
                logger.exception("group commit failed")


_THREADS: dict[float, _CommitThread] = {}
"""The process's committing threads, by interval."""
_THREADS_LOCK = threading.Lock()


class _CommitThread:
    """The thread that commits, after each interval, every committer that asked meanwhile."""

    @staticmethod
    def for_interval(interval: float) -> _CommitThread:
        """The process's thread for `interval` (a new one in a forked child: threads do not
        survive a fork)."""
        with _THREADS_LOCK:
            found = _THREADS.get(interval)
            if found is None or found._pid != os.getpid():
                found = _THREADS[interval] = _CommitThread(interval)
            return found

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._waiting: dict[int, GroupCommitter] = {}
        """Committers that asked since the last round, by identity, in the order they asked."""
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def request(self, committer: GroupCommitter) -> None:
        with self._lock:
            self._waiting[id(committer)] = committer
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="hrm-group-commit", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def forget(self, committer: GroupCommitter) -> None:
        with self._lock:
            self._waiting.pop(id(committer), None)

    def _run(self) -> None:
        from hrm.storage.manifest import batched

        while True:
            self._wake.wait()
            time.sleep(self._interval)  # gather the turns that end meanwhile
            self._wake.clear()  # a request from here on is in this round or wakes the next
            with self._lock:
                due = list(self._waiting.values())
                self._waiting.clear()
            try:
                with batched():  # each home's manifest once for every stack committed
                    for committer in due:
                        committer.flush()
            except Exception:  # this thread serves every stack: it must outlive a bad round
                logger.exception("group commit round failed")
