"""Group commit for a stack's ledgers: one fsync per ledger per interval, off the turn's path.

A turn ends by requesting a commit. Its records are already written to the operating system,
so they survive a crash of the process; the fsync that makes them survive a crash of the machine
follows within ``interval_ms``, batched with whatever other turns ended meanwhile. ``close``
and ``flush`` commit synchronously. With ``interval_ms == 0`` every request commits at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

__all__ = ["GroupCommitter"]

logger = logging.getLogger(__name__)


class GroupCommitter:
    """Commits a fixed set of ledgers (their ``commit`` callables) in the background."""

    def __init__(self, commits: Sequence[Callable[[], object]], interval_ms: int = 20) -> None:
        self._commits = list(commits)
        self._interval = max(0, interval_ms) / 1000
        self._pending = threading.Event()
        self._stop = threading.Event()
        self._flush_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if self._interval > 0:
            self._thread = threading.Thread(target=self._run, name="hrm-group-commit", daemon=True)
            self._thread.start()

    def request(self) -> None:
        """A commit boundary was reached (e.g. the end of a turn)."""
        if self._thread is None:
            self.flush()
        else:
            self._pending.set()

    def flush(self) -> None:
        """Commit every ledger now."""
        with self._flush_lock:
            for commit in self._commits:
                try:
                    commit()
                except Exception:  # a failing fsync is logged; the next boundary retries
                    logger.exception("group commit failed")

    def close(self) -> None:
        """Stop the background thread and commit synchronously. Idempotent."""
        self._stop.set()
        self._pending.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.flush()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._pending.wait()
            if self._stop.is_set():
                return
            self._stop.wait(self._interval)  # gather the turns that end meanwhile
            self._pending.clear()
            self.flush()
