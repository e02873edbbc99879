"""The map phase: run agents serially or on a bounded pool, with deadlines and cancellation.

One scheduler serves every mode (001 §8.4 "one timeout implementation, one cancellation
implementation"). At most ``max_concurrent`` runners (``MAX_CONCURRENT_AGENTS``) work on a
`ThreadPoolExecutor`; each takes the next waiting agent as soon as it settles its last one, so
no agent waits for a hand-off between threads. A serial map is the same with one runner, each
agent receiving the previous accepted output.

The caller's thread supervises: it sleeps on one condition until the next deadline (a runner
wakes it only when it starts an agent due before that, or settles the last one), so a deadline
is noticed when it passes, not on a poll, and 32 runners do not keep waking it for nothing. A
thread cannot be killed, so a timed-out agent is marked ``timed_out``, its late result ignored,
and a fresh runner takes its place; the pool is sized for the whole bundle (threads start
lazily) and shut down without waiting, so the bundle returns on time.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hrm._turn_slot import TURN_SLOT
from hrm.errors import HRMError
from hrm.runtime.types import AgentOutput, DroppedOutput

__all__ = ["AgentSlot", "MapRun", "SlotState"]

SlotState = str
"""``waiting``, ``running``, ``completed``, ``failed``, ``dropped``, ``timed_out``,
``cancelled`` or ``not_started``."""

Work = Callable[[str, "AgentOutput | None", threading.Event], AgentOutput]
"""``(agent_id, previous output, cancel event) -> output``; runs on a pool thread."""
Validate = Callable[[AgentOutput], "list[DroppedOutput]"]
"""The firewall: the violations of an output (empty when it passes)."""


@dataclass
class AgentSlot:
    """One agent's place in a map run."""

    agent_id: str
    index: int
    timeout_ms: int
    state: SlotState = "waiting"
    started: float | None = None
    deadline: float | None = None
    finished: float | None = None
    output: AgentOutput | None = None
    error: HRMError | None = None
    dropped: list[DroppedOutput] = field(default_factory=list)

    @property
    def duration_ms(self) -> int:
        """Time from start to settle (0 when it never started)."""
        if self.started is None:
            return 0
        end = self.finished if self.finished is not None else time.monotonic()
        return int((end - self.started) * 1000)


class MapRun:
    """One map phase; `run` blocks the caller until every agent settled or the run stopped.

    Args:
        agents: Agent ids, in order.
        work: Runs one agent (see `Work`).
        validate: The firewall.
        parallel: Run on the pool (``True``) or one after another, chaining outputs.
        max_concurrent: Agents running at once in a parallel map.
        timeout_for: Each agent's own timeout in ms.
        deadline: Monotonic time by which the whole map must end, or ``None``.
        on_settle: Called once per agent as it settles, outside the run's lock, on the runner
            that settled it (or on the caller's thread for timeouts and cancellations); every
            call has returned before `run` does.
        clock: Monotonic seconds.
    """

    def __init__(
        self,
        agents: list[str],
        *,
        work: Work,
        validate: Validate,
        parallel: bool,
        max_concurrent: int,
        timeout_for: Callable[[str], int],
        deadline: float | None = None,
        on_settle: Callable[[AgentSlot], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.slots = [
            AgentSlot(agent_id=a, index=i, timeout_ms=timeout_for(a)) for i, a in enumerate(agents)
        ]
        self._work = work
        self._validate = validate
        self._limit = max(1, max_concurrent) if parallel else 1
        self._chain = not parallel
        self._deadline = deadline
        self._on_settle = on_settle
        self._clock = clock
        self._cond = threading.Condition()
        self._waiting: deque[AgentSlot] = deque(self.slots)
        self._running: dict[int, AgentSlot] = {}
        self._settled = 0
        self._emitting = 0  # settled by a runner, record not yet emitted
        self._stopped = False
        self._wake_at: float | None = None  # when the sleeping supervisor wakes (None: never)
        self.cancel_event = threading.Event()
        self.accepted: list[AgentSlot] = []
        self.deadline_hit = False

    # ── any thread ───────────────────────────────────────────────────────

    def cancel(self) -> None:
        """Stop dispatching, stop waiting for running agents; `run` returns promptly."""
        with self._cond:
            self.cancel_event.set()
            self._cond.notify_all()

    def snapshot(self) -> tuple[list[str], list[str], int]:
        """``(running ids, most recent first; accepted ids; settled count)``."""
        with self._cond:
            running = sorted(
                self._running.values(), key=lambda s: s.started or 0.0, reverse=True
            )
            return [s.agent_id for s in running], [s.agent_id for s in self.accepted], self._settled

    # ── the caller's thread ──────────────────────────────────────────────

    def run(self) -> list[AgentSlot]:
        """Run the map; returns the slots (in agent order) once all have settled."""
        pool = ThreadPoolExecutor(
            max_workers=max(1, len(self.slots)), thread_name_prefix="hrm-agent"
        )
        stopped: list[AgentSlot] = []
        try:
            # outside the lock: starting a thread takes ~0.1 ms, and each runner should begin
            # its first agent as soon as its thread exists, not after the last one is made
            for _ in range(min(self._limit, len(self.slots))):
                pool.submit(self._runner)
            with TURN_SLOT.released(), self._cond:  # the runners work; this thread waits
                stopped = self._supervise(pool)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        for slot in stopped:
            self._emit(slot)
        return self.slots

    def _supervise(self, pool: ThreadPoolExecutor) -> list[AgentSlot]:
        """Wait for the runners, enforcing deadlines; returns the slots settled here."""
        settled_here: list[AgentSlot] = []
        while self._settled < len(self.slots):
            now = self._clock()
            if self.cancel_event.is_set() or (self._deadline is not None and now >= self._deadline):
                self.deadline_hit = not self.cancel_event.is_set()
                state = "cancelled" if self.cancel_event.is_set() else "timed_out"
                self._stopped = True
                for slot in list(self._running.values()):
                    settled_here.append(self._settle(slot, state, now))
                while self._waiting:
                    settled_here.append(self._settle(self._waiting.popleft(), "not_started", now))
                break
            for slot in list(self._running.values()):
                if slot.deadline is not None and now >= slot.deadline:
                    settled_here.append(self._settle(slot, "timed_out", now))
                    if self._waiting:
                        pool.submit(self._runner)  # the stuck thread's place
            if self._settled < len(self.slots):
                timeout = self._next_wake(now)
                self._wake_at = None if timeout is None else now + timeout
                self._cond.wait(timeout=timeout)
        self._wake_at = 0.0  # from here every change is worth a look
        # a runner's record must land before the bundle returns (callers close the ledger)
        self._cond.wait_for(lambda: self._emitting == 0)
        return settled_here

    def _next_wake(self, now: float) -> float | None:
        deadlines = [s.deadline for s in self._running.values() if s.deadline is not None]
        if self._deadline is not None:
            deadlines.append(self._deadline)
        return max(0.0, min(deadlines) - now) if deadlines else None

    # ── runners ──────────────────────────────────────────────────────────

    def _runner(self) -> None:
        """Take waiting agents one after another until none is left or the run stops."""
        while True:
            with self._cond:
                if self._stopped or self.cancel_event.is_set() or not self._waiting:
                    return
                slot = self._waiting.popleft()
                now = self._clock()
                slot.state, slot.started = "running", now
                slot.deadline = now + slot.timeout_ms / 1000
                self._running[slot.index] = slot
                previous = self.accepted[-1].output if self._chain and self.accepted else None
                if self._wake_at is None or slot.deadline < self._wake_at:
                    self._cond.notify_all()  # the supervisor must wake sooner
            output, error, dropped = self._execute(slot, previous)
            with self._cond:
                if slot.state != "running":
                    return  # timed out or cancelled: the late result is ignored
                slot.output, slot.error, slot.dropped = output, error, dropped
                if error is not None:
                    state = "failed"
                elif dropped:
                    state = "dropped"
                else:
                    state = "completed"
                    self.accepted.append(slot)
                self._settle(slot, state, self._clock())
                self._emitting += 1
                if self._settled == len(self.slots):
                    self._cond.notify_all()  # the last one: the supervisor can finish
            try:
                self._emit(slot)
            finally:
                with self._cond:
                    self._emitting -= 1
                    if self._emitting == 0 and self._settled == len(self.slots):
                        self._cond.notify_all()

    def _execute(
        self, slot: AgentSlot, previous: AgentOutput | None
    ) -> tuple[AgentOutput | None, HRMError | None, list[DroppedOutput]]:
        try:
            output = self._work(slot.agent_id, previous, self.cancel_event)
            return output, None, self._validate(output)
        except HRMError as exc:
            return None, exc, []
        except Exception as exc:  # an agent bug must settle its slot, not hang the bundle
            error = HRMError.internal(
                f"Agent '{slot.agent_id}' raised {type(exc).__name__}: {exc}",
                agent_id=slot.agent_id,
            )
            return None, error, []

    def _settle(self, slot: AgentSlot, state: SlotState, now: float) -> AgentSlot:
        """Record the slot's end state (caller holds the lock)."""
        self._running.pop(slot.index, None)
        slot.state = state
        slot.finished = now if slot.started is not None else None
        self._settled += 1
        return slot

    def _emit(self, slot: AgentSlot) -> None:
        if self._on_settle is not None:
            self._on_settle(slot)
