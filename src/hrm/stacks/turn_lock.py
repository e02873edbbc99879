"""One turn at a time per stack, across processes.

A turn reads the stack's state (turn number, session, stance, commitment, problems), calls the
model and writes the new state. Two processes running turns of the same stack at once would
both read turn N and both write turn N+1, and interleave stance transitions that the machine
only allows one at a time. Every ledger append is atomic on its own; the turn as a whole was
not. This lock makes it so: `HRM` holds it from reading the state to writing the turn record
(and while opening, so two processes opening a stack do not both start a session).

It is a `hrm._file_lock.FileLock` on ``<HO2 partition>/turn.lock``: dropped by the kernel when
the holder dies, and naming the holder's pid to a waiter that gives up. Holding it across the
model call is the point: the second turn must see the first one's outcome. Inside one process
the `HRM` object's own thread lock is taken first, so threads never wait on the file lock for
each other (D30).
"""

from __future__ import annotations

from pathlib import Path

from hrm._file_lock import FileLock

__all__ = ["TURN_WAIT_S", "TurnLock"]

TURN_WAIT_S = 300.0
"""How long a turn waits for another process's turn of the same stack before giving up."""


class TurnLock(FileLock):
    """The cross-process lock of one stack's turns; a reusable context manager."""

    def __init__(self, path: str | Path, *, agent_class: str, wait_s: float = TURN_WAIT_S) -> None:
        super().__init__(
            path,
            wait_s=wait_s,
            busy_message=f"Stack {agent_class} is busy: another process ({{holder}}) has been "
            "in a turn for over {wait_s:g} s; try again when it ends",
            context={"agent_class": agent_class},
        )
        self.agent_class = agent_class
