"""The map phase: run agents serially or on a bounded pool, with deadlines and cancellation.

One scheduler serves every mode (001 §8.4 "one timeout implementation, one cancellation
implementation"). The caller's thread runs the loop; agents run on a `ThreadPoolExecutor`.
At most ``max_concurrent`` agents run at once (``MAX_CONCURRENT_AGENTS``); a serial map is the
same loop with one slot, each agent receiving the previous accepted output.

A thread cannot be killed, so a timed-out agent is marked ``timed_out``, its slot is freed and
its late result ignored. The pool is sized for the whole bundle (threads start lazily), so a
hung agent never holds a slot another agent needs, and the pool is shut down without waiting,
so the bundle returns on time. Workers signal one condition on start and finish; the loop
sleeps on it until the next deadline, so a deadline is noticed when it passes, not on a poll.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hrm.errors import HRMError
from hrm.runtime.types import AgentOutput, DroppedOutput

__all__ = ["AgentSlot", "MapRun", "SlotState"]

SlotState = str
"""``waiting``, ``running``, ``finished`` (result in, not yet settled), ``completed``,
``failed``, ``dropped``, ``timed_out``, ``cancelled`` or ``not_started``."""

_SETTLED = frozenset({"completed", "failed", "dropped", "timed_out", "cancelled", "not_started"})

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
        on_settle: Called (on the loop thread) once per agent as it settles.
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
                (s for s in self.slots if s.state in ("running", "finished")),
                key=lambda s: s.started or 0.0,
                reverse=True,
            )
            settled = sum(1 for s in self.slots if s.state in _SETTLED)
            return [s.agent_id for s in running], [s.agent_id for s in self.accepted], settled

    # ── the loop ─────────────────────────────────────────────────────────

    def run(self) -> list[AgentSlot]:
        """Run the map; returns the slots (in agent order) once all have settled."""
        pool = ThreadPoolExecutor(
            max_workers=max(1, len(self.slots)), thread_name_prefix="hrm-agent"
        )
        try:
            with self._cond:
                self._loop(pool)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return self.slots

    def _loop(self, pool: ThreadPoolExecutor) -> None:
        waiting = list(self.slots)
        while True:
            now = self._clock()
            self._settle_finished(now)
            if self.cancel_event.is_set():
                self._stop(waiting, now, running_state="cancelled")
                return
            if self._deadline is not None and now >= self._deadline:
                self.deadline_hit = True
                self._stop(waiting, now, running_state="timed_out")
                return
            for slot in self._running():
                if slot.deadline is not None and now >= slot.deadline:
                    self._settle(slot, "timed_out", now)
            while waiting and len(self._running()) < self._limit:
                slot = waiting.pop(0)
                slot.state, slot.started = "running", now
                slot.deadline = now + slot.timeout_ms / 1000
                previous = self.accepted[-1].output if self._chain and self.accepted else None
                pool.submit(self._worker, slot, previous)
            if not waiting and not self._running():
                return
            self._cond.wait(timeout=self._next_wake(now))

    def _running(self) -> list[AgentSlot]:
        return [s for s in self.slots if s.state == "running"]

    def _next_wake(self, now: float) -> float:
        deadlines = [s.deadline for s in self._running() if s.deadline is not None]
        if self._deadline is not None:
            deadlines.append(self._deadline)
        return max(0.0, min(deadlines) - now) if deadlines else 1.0

    def _worker(self, slot: AgentSlot, previous: AgentOutput | None) -> None:
        output: AgentOutput | None = None
        error: HRMError | None = None
        dropped: list[DroppedOutput] = []
        try:
            output = self._work(slot.agent_id, previous, self.cancel_event)
            dropped = self._validate(output)
        except HRMError as exc:
            error = exc
        except Exception as exc:  # an agent bug must settle its slot, not hang the bundle
            error = HRMError.internal(
                f"Agent '{slot.agent_id}' raised {type(exc).__name__}: {exc}",
                agent_id=slot.agent_id,
            )
        with self._cond:
            if slot.state != "running":
                return  # timed out or cancelled already: the late result is ignored
            slot.output, slot.error, slot.dropped = output, error, dropped
            slot.state = "finished"
            self._cond.notify_all()

    def _settle_finished(self, now: float) -> None:
        for slot in self.slots:
            if slot.state != "finished":
                continue
            if slot.error is not None:
                self._settle(slot, "failed", now)
            elif slot.dropped:
                self._settle(slot, "dropped", now)
            else:
                self.accepted.append(slot)
                self._settle(slot, "completed", now)

    def _stop(self, waiting: list[AgentSlot], now: float, *, running_state: str) -> None:
        for slot in self._running():
            self._settle(slot, running_state, now)
        for slot in waiting:
            self._settle(slot, "not_started", now)
        waiting.clear()

    def _settle(self, slot: AgentSlot, state: SlotState, now: float) -> None:
        slot.state = state
        slot.finished = now if slot.started is not None else None
        if self._on_settle is not None:
            self._on_settle(slot)

    def outcome_counts(self) -> dict[str, Any]:
        """How many agents ended in each state (for logs)."""
        counts: dict[str, int] = {}
        for slot in self.slots:
            counts[slot.state] = counts.get(slot.state, 0) + 1
        return counts
