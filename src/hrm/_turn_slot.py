"""One thread of governed-turn Python at a time in a server process, let go while it waits.

`hrm serve` runs the turns of many stacks in threads. Their Python shares one interpreter
lock, and a turn gives that lock up dozens of times (every SQLite statement, file lock, write
and stat): with eight turns in flight each hand-over waited on the other seven, and eight
clients on distinct stacks got fewer answers a second (130–158) than one client alone (250).
The slot queues turns on an ordinary lock instead, where a waiting thread costs nothing.

A turn lets the slot go wherever it waits rather than computes — a model's answer (seconds on
the network for a hosted one), a rate limit's or a retry's pause, another process's file lock,
parallel plan steps and agents — so waiting still overlaps. And the slot is only ever waited
for `patience_s`: a turn stuck somewhere this list misses slows the others by that much, then
they run beside it as they did before the slot, never deadlocked behind it (D390).

Only a thread inside `TurnSlot.held` takes part; for every other thread (the CLI, hooks, the
MCP server, a plan's worker threads) `released` does nothing.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TURN_SLOT", "FairLock", "TurnSlot"]


class FairLock:
    """A lock handed to its waiters in the order they came (`threading.Lock` is not).

    With the slot an ordinary lock, whichever waiting turn thread the OS woke first took it,
    so a request could be passed over again and again: at eight clients on distinct stacks
    the 95th percentile was 35 ms against a 21 ms median (26–29 ms with this lock, the median
    unchanged). Here a release passes the lock straight to the longest waiter.
    """

    __slots__ = ("_guard", "_held", "_waiters")

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._held = False
        self._waiters: deque[threading.Lock] = deque()

    def acquire(self, timeout: float = -1) -> bool:
        with self._guard:
            if not self._held:
                self._held = True
                return True
            baton = threading.Lock()
            baton.acquire()
            self._waiters.append(baton)
        if baton.acquire(timeout=timeout):
            return True  # handed over by `release`: the lock is ours
        with self._guard:
            try:
                self._waiters.remove(baton)
            except ValueError:
                return True  # handed over just as the wait ran out: ours all the same
            return False

    def release(self) -> None:
        with self._guard:
            if self._waiters:
                self._waiters.popleft().release()  # still held: now by the longest waiter
            else:
                self._held = False


class TurnSlot:
    """A process-wide lock around turns, first come first served: re-entrant in its thread,
    let go around waits.

    Args:
        patience_s: The longest a thread waits for the slot before running without it.
    """

    def __init__(self, patience_s: float = 1.0) -> None:
        self.patience_s = patience_s
        self._lock = FairLock()
        self._local = threading.local()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Run the block holding the slot (a nested block in the same thread holds it once)."""
        local = self._local
        depth = getattr(local, "depth", 0)
        if depth == 0:
            local.owns = self._take()
        local.depth = depth + 1
        try:
            yield
        finally:
            local.depth = depth
            if depth == 0 and local.owns:
                local.owns = False
                self._lock.release()

    @contextmanager
    def released(self) -> Iterator[None]:
        """Run the block without the slot, when this thread holds it (a wait, not work)."""
        local = self._local
        if not getattr(local, "owns", False):
            yield
            return
        depth, local.depth, local.owns = local.depth, 0, False
        self._lock.release()
        try:
            yield
        finally:
            local.owns = self._take()
            local.depth = depth

    def _take(self) -> bool:
        if self._lock.acquire(timeout=self.patience_s):
            return True
        import logging  # only here: `hrm._file_lock` imports this module on a hook's path

        logging.getLogger(__name__).info(
            "a turn waited %.1f s for the turn slot; running beside the one holding it",
            self.patience_s,
        )
        return False


TURN_SLOT = TurnSlot()
"""The process's slot: `hrm serve`'s turn threads hold it; waits in a turn let it go."""
