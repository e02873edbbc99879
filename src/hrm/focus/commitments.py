"""The CommitmentManager (001 §4.3): lease-based focus with a turn budget, persisted.

A commitment is a lease on attention: "work on this problem for N turns". Each processed turn
ticks it; when the last turn is spent it ends as ``expired`` (the lease ran out, which is not a
failure — Focus then evaluates). It can also end ``completed`` (delivered) or ``abandoned``
(with a reason: superseded by a new commitment, a switch to another problem, an emergency).

At most one commitment is active per agent class (a partial unique index enforces it), and the
lease is read from ``memory.db`` on every call, so another process — a hook, the CLI — sees the
same turns remaining. Turns are capped at ``max_turns`` (``HRMConfig.max_commitment_turns``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hrm._process import new_id
from hrm.errors import HRMError
from hrm.scrubbing import scrub_text
from hrm.types import Clock, system_clock

if TYPE_CHECKING:
    import sqlite3

    from hrm.storage.sqlite import Database

__all__ = ["COMMITMENT_STATUSES", "Commitment", "CommitmentManager"]

logger = logging.getLogger(__name__)

COMMITMENT_STATUSES = ("active", "completed", "abandoned", "expired")
"""001 §4.3's statuses plus ``expired`` (the lease ran out of turns)."""

_COMPONENT = "focus.commitments"
_MIGRATIONS = [
    """
    CREATE TABLE commitments (
        id TEXT PRIMARY KEY,
        agent_class TEXT NOT NULL,
        problem_id TEXT NOT NULL,
        description TEXT NOT NULL,
        turns_remaining INTEGER NOT NULL,
        turns_total INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('active', 'completed', 'abandoned', 'expired')),
        ended_at TEXT,
        end_reason TEXT
    );
    CREATE UNIQUE INDEX commitments_one_active ON commitments (agent_class)
        WHERE status = 'active';
    CREATE INDEX commitments_by_time ON commitments (agent_class, created_at);
    """,
    # D56: a lease whose length the person gave keeps passing topics with its problem.
    "ALTER TABLE commitments ADD COLUMN holds_focus INTEGER NOT NULL DEFAULT 0;",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Commitment:
    """A lease on focus (001 §4.3), with how it ended once it has."""

    id: str
    problem_id: str
    description: str
    turns_remaining: int
    turns_total: int
    created_at: datetime
    status: str
    """active | completed | abandoned | expired"""
    agent_class: str = "ADMIN"
    ended_at: datetime | None = None
    end_reason: str | None = None
    holds_focus: bool = False
    """The person gave the lease's length ("for the next 3 turns"): while it runs, a passing
    topic stays with its problem instead of being queued as one of its own (D56)."""

    @property
    def is_active(self) -> bool:
        """True while the lease holds."""
        return self.status == "active"

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready form for decision records."""
        return {
            "id": self.id,
            "problem_id": self.problem_id,
            "description": self.description,
            "turns_remaining": self.turns_remaining,
            "turns_total": self.turns_total,
            "holds_focus": self.holds_focus,
            "status": self.status,
            "created_at": self.created_at.isoformat(),
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "end_reason": self.end_reason,
        }


def _row_to_commitment(row: sqlite3.Row) -> Commitment:
    return Commitment(
        id=row["id"],
        problem_id=row["problem_id"],
        description=row["description"],
        turns_remaining=int(row["turns_remaining"]),
        turns_total=int(row["turns_total"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        status=row["status"],
        agent_class=row["agent_class"],
        ended_at=datetime.fromisoformat(row["ended_at"]) if row["ended_at"] else None,
        end_reason=row["end_reason"],
        holds_focus=bool(row["holds_focus"]),
    )


class CommitmentManager:
    """The commitments of ONE agent class (001 §4.3), persisted in ``memory.db``.

    Args:
        db: The shared database; the manager migrates its own table on construction.
        agent_class: The stack these commitments belong to.
        clock: "Now" for creation and end times.
        max_turns: The cap on a commitment's turns (``HRMConfig.max_commitment_turns``).
    """

    def __init__(
        self,
        db: Database,
        agent_class: str,
        *,
        clock: Clock = system_clock,
        max_turns: int = 10,
    ) -> None:
        if max_turns < 1:
            raise HRMError.validation_failed(
                f"max_turns must be at least 1, got {max_turns}", key="max_commitment_turns"
            )
        self._db = db
        self.agent_class = agent_class
        self._clock = clock
        self.max_turns = max_turns
        db.migrate(_COMPONENT, _MIGRATIONS)

    def create(
        self, problem_id: str, description: str, turns: int, *, holds_focus: bool = False
    ) -> Commitment:
        """Start a commitment of `turns` (capped at ``max_turns``) on `problem_id`.

        An active commitment is abandoned first, with the new one named as the reason.
        `holds_focus`: the person set the length, so passing topics stay with it (D56).

        Raises:
            HRMError: VALIDATION_FAILED for fewer than one turn or an empty problem id.
        """
        if turns < 1:
            raise HRMError.validation_failed(
                f"A commitment needs at least one turn, got {turns}", field="turns"
            )
        if not problem_id:
            raise HRMError.validation_failed("A commitment needs a problem id", field="problem_id")
        total = min(turns, self.max_turns)
        commitment = Commitment(
            id=new_id("cmt", 12),
            problem_id=problem_id,
            description=scrub_text(description.strip()),
            turns_remaining=total,
            turns_total=total,
            created_at=self._clock(),
            status="active",
            agent_class=self.agent_class,
            holds_focus=holds_focus,
        )
        with self._db.transaction():
            self._end_active("abandoned", f"superseded by {commitment.id}")
            self._db.execute(
                "INSERT INTO commitments (id, agent_class, problem_id, description,"
                " turns_remaining, turns_total, created_at, status, holds_focus)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?)",
                (
                    commitment.id,
                    self.agent_class,
                    problem_id,
                    commitment.description,
                    total,
                    total,
                    commitment.created_at.isoformat(),
                    int(holds_focus),
                ),
            )
            self._remember_active(commitment)
        if total < turns:
            logger.info("commitment %s capped at %s turns (asked %s)", commitment.id, total, turns)
        return commitment

    def get_active(self) -> Commitment | None:
        """The active commitment, or None."""
        return self._db.cached(
            ("focus.commitment", self.agent_class), self._read_active, table="commitments"
        )  # `_remember_active` keeps this key current after this store's own writes

    def _read_active(self) -> Commitment | None:
        row = self._db.one(
            "SELECT * FROM commitments WHERE agent_class = ? AND status = 'active'",
            (self.agent_class,),
        )
        return _row_to_commitment(row) if row else None

    def get(self, commitment_id: str) -> Commitment | None:
        """Any commitment of this agent class by id, or None."""
        row = self._db.one(
            "SELECT * FROM commitments WHERE id = ? AND agent_class = ?",
            (commitment_id, self.agent_class),
        )
        return _row_to_commitment(row) if row else None

    def tick(self) -> Commitment | None:
        """Spend one turn of the active lease; the commitment if still active, else None.

        The tick that spends the last turn ends the commitment as ``expired``. Any other tick
        is bookkeeping every turn of a lease does: `Database.defer`red to the turn's next
        transaction (at once inside one), as a decrement that only touches a lease still
        active with turns to spare, so one another process ended meanwhile stays ended.
        """
        active = self.get_active()
        if active is None:  # the usual turn: no lease, and nothing to write
            return None
        if active.turns_remaining > 1:
            ticked = replace(active, turns_remaining=active.turns_remaining - 1)
            self._db.defer(
                "UPDATE commitments SET turns_remaining = turns_remaining - 1"
                " WHERE id = ? AND status = 'active' AND turns_remaining > 1",
                (active.id,),
                table="commitments",
                leaves={("focus.commitment", self.agent_class): ticked},
            )
            return ticked
        with self._db.transaction():
            active = self.get_active()
            if active is None:
                return None
            remaining = active.turns_remaining - 1
            if remaining <= 0:
                self._finish(active.id, "expired", "lease expired", turns_remaining=0)
                return None
            self._db.execute(
                "UPDATE commitments SET turns_remaining = ? WHERE id = ?", (remaining, active.id)
            )
            ticked = replace(active, turns_remaining=remaining)
            self._remember_active(ticked)
        return ticked

    def complete(self) -> bool:
        """Mark the active commitment completed; False when there is none."""
        return self._end_active("completed", "delivered") is not None

    def abandon(self, reason: str) -> bool:
        """Abandon the active commitment with `reason`; False when there is none."""
        return self._end_active("abandoned", reason) is not None

    def history(self, limit: int = 20) -> list[Commitment]:
        """Commitments of this agent class, newest first."""
        rows = self._db.execute(
            "SELECT * FROM commitments WHERE agent_class = ?"
            " ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (self.agent_class, max(0, limit)),
        )
        return [_row_to_commitment(row) for row in rows]

    # ── internals ──────────────────────────────────────────────────────────

    def _end_active(self, status: str, reason: str) -> Commitment | None:
        with self._db.transaction():
            active = self.get_active()
            if active is None:
                return None
            self._finish(active.id, status, reason, turns_remaining=active.turns_remaining)
        return active

    def _finish(
        self, commitment_id: str, status: str, reason: str, *, turns_remaining: int
    ) -> None:
        self._db.execute(
            "UPDATE commitments SET status = ?, end_reason = ?, ended_at = ?, turns_remaining = ?"
            " WHERE id = ?",
            (status, scrub_text(reason), self._clock().isoformat(), turns_remaining, commitment_id),
        )
        self._remember_active(None)  # only the active commitment is ever finished

    def _remember_active(self, commitment: Commitment | None) -> None:
        self._db.remember(("focus.commitment", self.agent_class), commitment, table="commitments")
