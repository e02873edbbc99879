"""Cross-stack visibility (004 §7): a stack reads its own partitions and nothing else.

The rules, as a table a caller can ask (`visibility_decision`):

* ``ADMIN`` sees its own HO2m and HO1m, never a RESIDENT's;
* ``RESIDENT:<name>`` sees its own, never ADMIN's or another resident's;
* ``KERNEL.semantic`` (the meta agent) and ``HO3`` (governance) see every stack.

Enforcement has three parts. `guard_partitions` runs when a stack is created: the partition
directories and ledger files must be real (no symbolic link anywhere between the home and the
file, no hard-linked ledger, the resolved path exactly the expected one), so a partition cannot
be pointed at another stack's state. `StackScope` is how a stack opens a ledger: only its own,
named by its own agent class or by one of its own paths. Below the ledgers, each stack's tables
are in a database of its own (`hrm.storage.stack_db`, D320), so no connection a stack holds
can read another's rows. `CrossStackReader` is the one way to read across stacks, constructed
with an explicit cross-stack role — ledgers (`records`) and databases (`open_db`, read-only);
each read it makes is a ``cross_stack_read`` record in the governance ledger.

Every refusal raises ``VISIBILITY_DENIED`` and is first appended to the governance ledger
(``HOT/ledger/governance.jsonl``) as a ``visibility_denied`` record, so an attempt is never
silent. Crafted agent classes (traversal, separators) are refused the same way.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hrm.errors import HRMError
from hrm.home import HRMHome, parse_agent_class, stack_dirname
from hrm.storage.ledger import Ledger, LedgerRecord
from hrm.types import Clock, system_clock

__all__ = [
    "CROSS_STACK_ROLES",
    "LEDGER_NAMES",
    "ROLE_HO3",
    "ROLE_META",
    "CrossStackReader",
    "LedgerName",
    "StackDatabaseView",
    "StackScope",
    "VisibilityDecision",
    "guard_partitions",
    "partition_paths",
    "record_denial",
    "visibility_decision",
]

logger = logging.getLogger(__name__)

ROLE_META = "KERNEL.semantic"
"""The meta agent: reads every stack to find patterns that span them (004 §1 S3)."""
ROLE_HO3 = "HO3"
"""Governance: the highest tier sees all (004 §7)."""
CROSS_STACK_ROLES = frozenset({ROLE_META, ROLE_HO3})
"""The only observers that may read another stack's state."""

LedgerName = Literal["ho2m", "ho1m", "episodic"]
"""A stack's ledgers: decisions (HO2m), work orders (HO1m), the episodic trace beside HO2m."""
LEDGER_NAMES: tuple[LedgerName, ...] = ("ho2m", "ho1m", "episodic")

_MAX_SHOWN = 200


@dataclass(frozen=True)
class VisibilityDecision:
    """Whether `observer` may read `target`'s isolated state, and why (004 §7 table)."""

    allowed: bool
    reason: str


def visibility_decision(observer: str, target: str) -> VisibilityDecision:
    """The 004 §7 rule for one observer and one target stack; pure, never raises."""
    if observer in CROSS_STACK_ROLES:
        return VisibilityDecision(True, f"{observer} reads across stacks by design")
    try:
        parse_agent_class(observer)
        parse_agent_class(target)
    except HRMError as exc:
        return VisibilityDecision(False, f"not a valid agent class: {exc.message}")
    if observer == target:
        return VisibilityDecision(True, "a stack reads its own partitions")
    if observer == "ADMIN":
        return VisibilityDecision(False, "ADMIN cannot see a RESIDENT stack's state")
    if target == "ADMIN":
        return VisibilityDecision(False, "a RESIDENT stack cannot see ADMIN's state")
    return VisibilityDecision(False, "RESIDENT stacks cannot see each other's state")


def partition_paths(home: HRMHome, agent_class: str) -> dict[str, Path]:
    """The directories and files that make up one stack's isolated state (004 §5): its
    partitions, its ledgers, its own database and that database's memory ledger (D320)."""
    return {
        "ho2_dir": home.ho2_dir(agent_class),
        "ho1_dir": home.ho1_dir(agent_class),
        "ho2m": home.decision_ledger(agent_class),
        "ho1m": home.execution_ledger(agent_class),
        "episodic": home.episodic_ledger(agent_class),
        "memory_db": home.stack_memory_db(agent_class),
        "memory": home.stack_memory_ledger(agent_class),
    }


def record_denial(
    home: HRMHome, *, observer: str, target: str, reason: str, operation: str
) -> None:
    """Append a ``visibility_denied`` record to the governance ledger (best effort, logged).

    The denial itself must still surface if the ledger cannot be written, so a failure here is
    logged rather than raised in place of the denial.
    """
    data = {
        "observer": _shown(observer),
        "target": _shown(target),
        "reason": reason,
        "operation": operation,
    }
    try:
        with Ledger(home.governance_ledger) as ledger:
            ledger.append("visibility_denied", data)
    except HRMError:
        logger.warning("could not record a visibility denial for %s", data, exc_info=True)


def _deny(
    home: HRMHome, *, observer: str, target: str, reason: str, operation: str
) -> HRMError:
    record_denial(home, observer=observer, target=target, reason=reason, operation=operation)
    error = HRMError.visibility_denied(_shown(observer), _shown(target), reason)
    error.context["operation"] = operation
    return error


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"


def _unsafe(home: HRMHome, path: Path, *, is_ledger: bool) -> str | None:
    """Why `path` is not a trustworthy partition path inside `home`, or None if it is."""
    root = home.root
    try:
        rel = path.relative_to(root)
    except ValueError:
        return f"'{path}' is outside the home {root}"
    if ".." in rel.parts:
        return f"'{path}' contains '..'"
    current = root
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            return f"'{current}' is a symbolic link"
        if not current.exists():
            return None  # the rest will be created, inside the home, by the stack itself
    if path.resolve() != root.resolve() / rel:
        return f"'{path}' resolves to '{path.resolve()}', not its own partition"
    if is_ledger:
        if not path.is_file():
            return f"'{path}' is not a regular file"
        if os.stat(path).st_nlink > 1:
            return f"'{path}' is hard-linked to another file"
    elif not path.is_dir():
        return f"'{path}' is not a directory"
    return None


def _guard(home: HRMHome, agent_class: str, *, observer: str, operation: str) -> None:
    try:
        parse_agent_class(agent_class)
    except HRMError as exc:
        raise _deny(home, observer=observer, target=agent_class, reason=exc.message,
                    operation=operation) from exc
    for name, path in partition_paths(home, agent_class).items():
        reason = _unsafe(home, path, is_ledger=not name.endswith("_dir"))
        if reason is not None:
            raise _deny(home, observer=observer, target=str(path), reason=reason,
                        operation=operation)


def guard_partitions(home: HRMHome, agent_class: str) -> None:
    """Refuse to build a stack whose partitions are not really its own (004 §5, §7).

    Called by the stack factory before anything is opened.

    Raises:
        HRMError: ``VISIBILITY_DENIED`` (recorded in the governance ledger) for a crafted
            agent class, a symbolic link anywhere on a partition's path inside the home, a
            partition that resolves elsewhere, or a hard-linked ledger file.
    """
    _guard(home, agent_class, observer=agent_class, operation="create_stack")


class StackScope:
    """What one stack may open: its own ledger partitions and nothing else.

    Args:
        home: The home.
        agent_class: The stack (``ADMIN`` or ``RESIDENT:<name>``); a crafted class is refused.
        clock: Time source for ledgers opened through the scope.

    Raises:
        HRMError: ``VISIBILITY_DENIED`` (recorded) for an invalid agent class.
    """

    def __init__(self, home: HRMHome, agent_class: str, *, clock: Clock = system_clock) -> None:
        try:
            parse_agent_class(agent_class)
        except HRMError as exc:
            raise _deny(home, observer=agent_class, target=agent_class, reason=exc.message,
                        operation="open_scope") from exc
        self.home = home
        self.agent_class = agent_class
        self._clock = clock

    def ledger_path(self, ledger: LedgerName = "ho2m") -> Path:
        """The path of one of this stack's own ledgers."""
        if ledger not in LEDGER_NAMES:
            raise HRMError.validation_failed(
                f"Unknown ledger {ledger!r}: use one of {', '.join(LEDGER_NAMES)}", ledger=ledger
            )
        return partition_paths(self.home, self.agent_class)[ledger]

    def resolve(self, target: str | Path, *, ledger: LedgerName = "ho2m") -> Path:
        """The own ledger `target` names: this stack's agent class, or one of its ledger paths.

        Raises:
            HRMError: ``VISIBILITY_DENIED`` (recorded) for another stack's class or path, a path
                with ``..``, a path outside the partitions, or a symbolic link on the way.
        """
        op = "open_ledger"
        if isinstance(target, str) and not _looks_like_path(target):
            decision = visibility_decision(self.agent_class, target)
            if not decision.allowed:
                raise _deny(self.home, observer=self.agent_class, target=target,
                            reason=decision.reason, operation=op)
            path = self.ledger_path(ledger)
        else:
            raw = Path(target)
            if "\x00" in str(raw):
                raise _deny(self.home, observer=self.agent_class, target=repr(str(raw)),
                            reason="a path with a NUL byte is never opened", operation=op)
            if ".." in raw.parts:
                raise _deny(self.home, observer=self.agent_class, target=str(raw),
                            reason="a path with '..' is never opened", operation=op)
            path = raw if raw.is_absolute() else self.home.root / raw
            own = partition_paths(self.home, self.agent_class)
            if path not in {own[name] for name in LEDGER_NAMES}:
                owner = _owner(self.home, path)
                reason = (
                    f"it belongs to stack {owner}" if owner
                    else "it is not one of this stack's ledger partitions"
                )
                raise _deny(self.home, observer=self.agent_class, target=str(path),
                            reason=reason, operation=op)
        unsafe = _unsafe(self.home, path, is_ledger=True)
        if unsafe is not None:
            raise _deny(self.home, observer=self.agent_class, target=str(path), reason=unsafe,
                        operation=op)
        return path

    def open_ledger(self, target: str | Path | None = None, *,
                    ledger: LedgerName = "ho2m") -> Ledger:
        """Open one of this stack's own ledgers (default: its own HO2m); see `resolve`."""
        return Ledger(self.resolve(target or self.agent_class, ledger=ledger), clock=self._clock)

    def records(self, ledger: LedgerName = "ho2m") -> Iterator[LedgerRecord]:
        """Every record of one of this stack's own ledgers, oldest first (none if missing)."""
        path = self.resolve(self.agent_class, ledger=ledger)
        if not path.exists():
            return
        with Ledger(path, clock=self._clock) as handle:
            yield from handle.records()


class CrossStackReader:
    """Reads any stack's ledgers, for the meta agent (``KERNEL.semantic``) and HO3 only.

    Every read appends a ``cross_stack_read`` record (role, stack, ledger) to the governance
    ledger before the first record is returned. Partitions are guarded as for the stack itself:
    a symbolic link in another stack's partition is refused even to these roles.

    Args:
        home: The home.
        role: `ROLE_META` or `ROLE_HO3`; anything else is refused.
        purpose: Why the reads happen (kept in each read record).

    Raises:
        HRMError: ``VISIBILITY_DENIED`` (recorded) for any other role.
    """

    def __init__(self, home: HRMHome, role: str, *, purpose: str = "") -> None:
        if role not in CROSS_STACK_ROLES:
            raise _deny(home, observer=role, target="*", operation="cross_stack_read",
                        reason=f"only {' and '.join(sorted(CROSS_STACK_ROLES))} read across "
                               "stacks")
        self.home = home
        self.role = role
        self.purpose = purpose
        self.reads = 0
        """How many ledgers this reader has opened (each recorded)."""

    def stacks(self) -> list[str]:
        """Every agent class with a partition in the home, sorted."""
        return self.home.stack_classes()

    def path(self, agent_class: str, ledger: LedgerName = "ho2m") -> Path:
        """Where a stack's ledger lives (validated class)."""
        _guard(self.home, agent_class, observer=self.role, operation="cross_stack_read")
        return partition_paths(self.home, agent_class)[ledger]

    def records(
        self, agent_class: str, ledger: LedgerName = "ho2m"
    ) -> Iterator[LedgerRecord]:
        """Every record of a stack's ledger, oldest first; the read is recorded first."""
        if ledger not in LEDGER_NAMES:
            raise HRMError.validation_failed(
                f"Unknown ledger {ledger!r}: use one of {', '.join(LEDGER_NAMES)}", ledger=ledger
            )
        path = self.path(agent_class, ledger)
        self._record(agent_class, ledger)
        if not path.exists():
            return
        with Ledger(path) as handle:
            yield from handle.records()


    def open_db(self, agent_class: str) -> StackDatabaseView:
        """A read-only view of a stack's own database (``mode=ro``); the read is recorded
        first. The caller closes it (it is a context manager).

        Raises:
            HRMError: ``VISIBILITY_DENIED`` (recorded) for a crafted class or an unsafe
                partition; ``NOT_FOUND`` when the stack has no database yet.
        """
        _guard(self.home, agent_class, observer=self.role, operation="cross_stack_read")
        path = partition_paths(self.home, agent_class)["memory_db"]
        self._record(agent_class, "memory.db")
        if not path.is_file():
            raise HRMError.not_found(
                "stack database", agent_class, "the stack has not been opened on this home"
            )
        return StackDatabaseView(path, agent_class)

    def _record(self, agent_class: str, ledger: str) -> None:
        with Ledger(self.home.governance_ledger) as gov:
            gov.append("cross_stack_read", {
                "role": self.role, "agent_class": agent_class, "ledger": ledger,
                "partition": stack_dirname(agent_class), "purpose": self.purpose,
            })
        self.reads += 1


class StackDatabaseView:
    """One stack's own database opened read-only (SQLite ``mode=ro``), from `CrossStackReader`.

    It can read, never write: SQLite refuses any write on the connection. Close it when done.
    """

    def __init__(self, path: Path, agent_class: str) -> None:
        self.path = path
        self.agent_class = agent_class
        try:
            self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise HRMError.internal(f"Cannot open '{path}' read-only: {exc}") from exc
        self._conn.row_factory = sqlite3.Row

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run one query and return its rows.

        Raises:
            HRMError: the database's error, mapped (a write is ``PERMISSION_DENIED``).
        """
        from hrm.storage.sqlite import wrap_sqlite_error

        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise wrap_sqlite_error(exc, self.path) from exc

    def close(self) -> None:
        """Release the file."""
        self._conn.close()

    def __enter__(self) -> StackDatabaseView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _looks_like_path(text: str) -> bool:
    return "/" in text or os.sep in text or text.endswith(".jsonl") or text.startswith(".")


def _owner(home: HRMHome, path: Path) -> str | None:
    """The agent class whose partition `path` lies in, if any (for a clear denial)."""
    try:
        rel = path.relative_to(home.root)
    except ValueError:
        return None
    parts = rel.parts
    if len(parts) >= 3 and parts[0] in ("HO1", "HO2") and parts[1] == "ledger":
        name = parts[2]
        candidate = "ADMIN" if name == "ADMIN" else name.replace("RESIDENT_", "RESIDENT:", 1)
        try:
            if stack_dirname(candidate) == name:
                return candidate
        except HRMError:
            return None
    return None
