"""The Working Set compartment (001 §6.3): per-problem scratch memory with a time to live.

One working set per (stack, problem). It holds what is being figured out right now —
constraints, assumptions, open questions, partial artifacts, local decisions — and expires
``ttl_hours`` after it was created. Time comes from the injected clock, so a test moves it.
An expired set reads as absent; `expire_stale` deletes expired rows, and `export_summary` turns a
set into text worth archiving in the episodic trace before it goes.

Updates are read-modify-write inside one write transaction, so concurrent writers (threads or
processes sharing ``memory.db``) never lose each other's changes.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from datetime import timedelta
from typing import Any

from hrm.errors import HRMError
from hrm.home import parse_agent_class
from hrm.memory.types import WorkingSet, encode_json, format_timestamp, parse_timestamp
from hrm.storage.sqlite import Database
from hrm.types import Clock, system_clock

__all__ = ["DEFAULT_TTL_HOURS", "MIGRATIONS", "WORKING_SET_FIELDS", "WorkingSetStore"]

logger = logging.getLogger(__name__)

DEFAULT_TTL_HOURS = 2
"""001 §6.3 / §10 ``working_set_default_ttl_hours``."""

WORKING_SET_FIELDS: dict[str, type] = {
    "constraints": dict,
    "assumptions": list,
    "open_questions": list,
    "partial_artifacts": dict,
    "local_decisions": list,
}
"""The fields `WorkingSetStore.update` accepts, with the container each holds."""

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS working_sets (
        agent_class TEXT NOT NULL,
        problem_id TEXT NOT NULL,
        data_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (agent_class, problem_id)
    );
    CREATE INDEX IF NOT EXISTS working_sets_expiry ON working_sets (agent_class, expires_at);
    """,
)
"""Schema of component ``memory.working_set``; append only, never edit a released entry."""

_COMPONENT = "memory.working_set"


class WorkingSetStore:
    """Per-problem isolated memory with TTL, for ONE stack (001 §6.3). Thread/process-safe."""

    def __init__(
        self,
        db: Database,
        agent_class: str,
        *,
        clock: Clock = system_clock,
        default_ttl_hours: float = DEFAULT_TTL_HOURS,
    ) -> None:
        """Bind the store to `agent_class` in `db`, creating its table if needed.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for an invalid agent class or a TTL ≤ 0.
        """
        parse_agent_class(agent_class)
        _check_ttl(default_ttl_hours)
        self.db = db
        self.agent_class = agent_class
        self.default_ttl_hours = default_ttl_hours
        self._clock = clock
        db.migrate(_COMPONENT, MIGRATIONS)

    def create(self, problem_id: str, ttl_hours: float | None = None) -> WorkingSet:
        """Create an empty working set for `problem_id`, replacing an expired one.

        Args:
            problem_id: The problem the set belongs to.
            ttl_hours: Lifetime from now; default the store's ``default_ttl_hours``.

        Raises:
            HRMError: ``VALIDATION_FAILED`` when a live set for the problem already exists
                (use `update`), for an empty problem id, or a TTL ≤ 0.
        """
        _check_problem(problem_id)
        ttl = self.default_ttl_hours if ttl_hours is None else ttl_hours
        _check_ttl(ttl)
        with self.db.transaction():
            existing = self._load(problem_id)
            if existing is not None:
                raise HRMError.validation_failed(
                    f"Working set for problem '{problem_id}' already exists (expires "
                    f"{format_timestamp(existing.expires_at)}); update it instead",
                    problem_id=problem_id,
                )
            now = self._clock()
            working = WorkingSet(
                problem_id=problem_id,
                constraints={},
                assumptions=[],
                open_questions=[],
                partial_artifacts={},
                local_decisions=[],
                created_at=now,
                expires_at=now + timedelta(hours=ttl),
            )
            self._save(working, replace=True)
        return working

    def get(self, problem_id: str) -> WorkingSet | None:
        """The live working set of `problem_id`, or None when there is none or it expired."""
        return self._load(problem_id)

    def get_or_create(self, problem_id: str) -> WorkingSet:
        """The live working set of `problem_id`, created with the default TTL if needed."""
        with self.db.transaction():
            existing = self._load(problem_id)
            return existing if existing is not None else self.create(problem_id)

    def update(self, problem_id: str, *, replace: bool = False, **fields: Any) -> None:
        """Add to (or with ``replace=True`` overwrite) fields of a live working set.

        By default dict fields (``constraints``, ``partial_artifacts``) are merged key by key
        and list fields (``assumptions``, ``open_questions``, ``local_decisions``) are extended,
        so concurrent writers add to each other's work instead of overwriting it.

        Raises:
            HRMError: ``NOT_FOUND`` when there is no live set; ``VALIDATION_FAILED`` naming an
                unknown field, a value of the wrong container type, or a value that is not JSON
                data. Nothing is stored then.
        """
        for name, value in fields.items():
            expected = WORKING_SET_FIELDS.get(name)
            if expected is None:
                raise HRMError.validation_failed(
                    f"Unknown working set field '{name}'; known: "
                    f"{', '.join(sorted(WORKING_SET_FIELDS))}",
                    problem_id=problem_id,
                    field=name,
                )
            if not isinstance(value, expected):
                raise HRMError.validation_failed(
                    f"Working set field '{name}' takes a {expected.__name__}, "
                    f"got {type(value).__name__}",
                    problem_id=problem_id,
                    field=name,
                )
            encode_json(value, what=f"working set '{problem_id}' field '{name}'")
        with self.db.transaction():
            working = self._load(problem_id)
            if working is None:
                raise HRMError.not_found(
                    "working set", problem_id, "create it first (it may have expired)"
                )
            for name, value in fields.items():
                current = getattr(working, name)
                if replace:
                    setattr(working, name, value)
                elif isinstance(current, dict):
                    current.update(value)
                else:
                    current.extend(value)
            self._save(working, replace=True)

    def set(self, problem_id: str, key: str, value: Any) -> None:
        """Store `value` under `key` in the problem's ``partial_artifacts`` (creating the set).

        Raises:
            HRMError: ``VALIDATION_FAILED`` for an empty key or a value that is not JSON data.
        """
        if not isinstance(key, str) or not key.strip():
            raise HRMError.validation_failed(
                f"A working set key must be a non-empty string, got {key!r}",
                problem_id=problem_id,
            )
        encode_json(value, what=f"working set '{problem_id}' key '{key}'")
        with self.db.transaction():
            self.get_or_create(problem_id)
            self.update(problem_id, partial_artifacts={key: value})

    def list_active(self) -> list[WorkingSet]:
        """Every live working set of this stack, soonest to expire first."""
        rows = self.db.execute(
            "SELECT * FROM working_sets WHERE agent_class = ? AND expires_at > ?"
            " ORDER BY expires_at",
            (self.agent_class, format_timestamp(self._clock())),
        )
        return [_decode(r) for r in rows]

    def stale(self) -> list[WorkingSet]:
        """Every expired working set not yet removed (what `expire_stale` would delete)."""
        rows = self.db.execute(
            "SELECT * FROM working_sets WHERE agent_class = ? AND expires_at <= ?"
            " ORDER BY expires_at",
            (self.agent_class, format_timestamp(self._clock())),
        )
        return [_decode(r) for r in rows]

    def expire_stale(self) -> int:
        """Delete this stack's expired working sets and return how many there were."""
        with self.db.transaction():
            now = format_timestamp(self._clock())
            row = self.db.one(
                "SELECT COUNT(*) AS n FROM working_sets WHERE agent_class = ? AND expires_at <= ?",
                (self.agent_class, now),
            )
            count = 0 if row is None else int(row["n"])
            self.db.execute(
                "DELETE FROM working_sets WHERE agent_class = ? AND expires_at <= ?",
                (self.agent_class, now),
            )
        if count:
            logger.info("expired %s working set(s) of %s", count, self.agent_class)
        return count

    def export_summary(self, problem_id: str) -> str:
        """A readable Markdown summary of the problem's working set, for archival.

        Expired sets not yet removed are still exported (that is when archiving happens).

        Raises:
            HRMError: ``NOT_FOUND`` when the problem has no working set at all.
        """
        working = self._load(problem_id, include_expired=True)
        if working is None:
            raise HRMError.not_found("working set", problem_id)
        return render_summary(working)

    # ── internals ──────────────────────────────────────────────────────────

    def _load(self, problem_id: str, *, include_expired: bool = False) -> WorkingSet | None:
        # Attention reads the active problem's set every turn: the row (immutable) is cached
        # until the table changes; the set is decoded fresh, so callers may change theirs.
        row = self.db.cached(
            ("memory.working_set", self.agent_class, problem_id),
            lambda: self._read_row(problem_id),
            table="working_sets",
        )
        if row is None:
            return None
        working = _decode(row)
        if not include_expired and working.expires_at <= self._clock():
            return None
        return working

    def _read_row(self, problem_id: str) -> sqlite3.Row | None:
        return self.db.one(
            "SELECT * FROM working_sets WHERE agent_class = ? AND problem_id = ?",
            (self.agent_class, problem_id),
        )

    def _save(self, working: WorkingSet, *, replace: bool) -> None:
        data = {name: getattr(working, name) for name in WORKING_SET_FIELDS}
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        self.db.execute(
            f"{verb} INTO working_sets"
            " (agent_class, problem_id, data_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
            (
                self.agent_class,
                working.problem_id,
                encode_json(data, what=f"working set '{working.problem_id}'"),
                format_timestamp(working.created_at),
                format_timestamp(working.expires_at),
            ),
        )


def render_summary(working: WorkingSet) -> str:
    """The Markdown summary `WorkingSetStore.export_summary` returns."""
    lines = [
        f"# Working set: {working.problem_id}",
        f"created {format_timestamp(working.created_at)}, "
        f"expires {format_timestamp(working.expires_at)}",
    ]

    def section(title: str, items: list[str]) -> None:
        lines.append("")
        lines.append(f"## {title}")
        lines.extend(items or ["(none)"])

    section("Constraints", [f"- {k}: {_short(v)}" for k, v in working.constraints.items()])
    section("Assumptions", [f"- {_short(a)}" for a in working.assumptions])
    section("Open questions", [f"- {q}" for q in working.open_questions])
    section(
        "Partial artifacts", [f"- {k}: {_short(v)}" for k, v in working.partial_artifacts.items()]
    )
    section("Local decisions", [f"- {_decision_line(d)}" for d in working.local_decisions])
    return "\n".join(lines) + "\n"


def _decision_line(decision: Any) -> str:
    """A stated decision as the person reads it: what was decided, then (turn N: “what they
    said”); any other shape as its JSON."""
    if not isinstance(decision, dict) or not isinstance(decision.get("decision"), str):
        return _short(decision)
    said, turn = decision.get("said"), decision.get("turn")
    where = f"turn {turn}: " if isinstance(turn, int) else ""
    quoted = f" ({where}“{_short(said, 160)}”)" if isinstance(said, str) and said else ""
    return _short(decision["decision"]) + quoted


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _decode(row: sqlite3.Row) -> WorkingSet:
    data = json.loads(row["data_json"])
    return WorkingSet(
        problem_id=str(row["problem_id"]),
        constraints=data.get("constraints", {}),
        assumptions=data.get("assumptions", []),
        open_questions=data.get("open_questions", []),
        partial_artifacts=data.get("partial_artifacts", {}),
        local_decisions=data.get("local_decisions", []),
        created_at=parse_timestamp(row["created_at"]),
        expires_at=parse_timestamp(row["expires_at"]),
    )


def _check_problem(problem_id: str) -> None:
    if not isinstance(problem_id, str) or not problem_id.strip():
        raise HRMError.validation_failed(
            f"A working set needs a non-empty problem id, got {problem_id!r}"
        )


def _check_ttl(ttl_hours: float) -> None:
    if not isinstance(ttl_hours, int | float) or ttl_hours <= 0:
        raise HRMError.validation_failed(
            f"Working set TTL must be a positive number of hours, got {ttl_hours!r}",
            ttl_hours=ttl_hours,
        )
