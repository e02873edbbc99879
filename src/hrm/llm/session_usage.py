"""What a session has spent on its model, counted from the work orders every process recorded.

`hrm turn` is one process per turn and two `HRM` objects may serve one home at once, so a
counter kept in a gateway sees one process's calls and never reaches a budget, a cost alert or
a rate limit (issue 33 §4). The stack's execution ledger (HO1m) holds one ``work_order`` per
call from every process, each with its session; `LedgerUsage` reads it — the part a session
wrote once, by searching the file backwards for that session's lines, then only what was
appended since — and answers what the session has spent and which calls fell in the last
minute (D280).

The ledger is read through `UsageLedger`, the part of `hrm.storage.Ledger` this needs, so the
model layer does not import storage.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from hrm.errors import HRMError

__all__ = [
    "RATE_WINDOW_SECONDS",
    "LedgerUsage",
    "SessionUsage",
    "UsageLedger",
    "UsageRecord",
    "UsageSource",
]

logger = logging.getLogger(__name__)

RATE_WINDOW_SECONDS = 60.0
"""The per-minute limits look back this far."""

_WHOLE_FILE = sys.maxsize
"""A reach that searches a ledger back to its first byte, however much it grew meanwhile."""
_WORK_ORDER = "work_order"
_COST_ALERT = "cost_alert"


class UsageRecord(Protocol):
    """One ledger record, as `hrm.storage.LedgerRecord` has it."""

    @property
    def seq(self) -> int: ...
    @property
    def ts(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> Mapping[str, Any]: ...


class UsageLedger(Protocol):
    """The reads of `hrm.storage.Ledger` that `LedgerUsage` makes."""

    def size(self) -> int: ...
    def last(self) -> Any: ...
    def records(self) -> Iterator[Any]: ...
    def records_after(self, record: Any) -> Iterator[Any]: ...
    def appended_after(self, record: Any, *, size: int | None = None) -> Sequence[Any] | None: ...
    def holding_back(self, needles: Sequence[bytes], *, reach: int) -> Iterator[Any]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionUsage:
    """What one session has spent, across every process that served it."""

    session_id: str
    calls: int
    """Model calls recorded for the session (failed ones included)."""
    tokens: int
    """Prompt and answer tokens, as the providers counted them."""
    cost: float
    """Cost from the configured pricing."""
    alerted: bool
    """A ``cost_alert`` is already recorded for the session (it is given once)."""
    window: tuple[tuple[float, int], ...]
    """(epoch seconds, tokens) of each call of the last minute, any session, oldest first;
    empty when read with ``window=False``."""
    now: float
    """Epoch seconds when this was read: the window's reference point."""


class UsageSource(Protocol):
    """Where a gateway reads what its session has spent (`LedgerUsage` in a stack)."""

    def read(self, *, window: bool = True) -> SessionUsage: ...


@dataclass(slots=True)
class _Tally:
    calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    alerted: bool = False

    def add(self, kind: str, data: Mapping[str, Any]) -> None:
        if kind == _COST_ALERT:
            self.alerted = True
            return
        self.calls += 1
        self.tokens += _tokens(data)
        cost = data.get("cost")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            self.cost += float(cost)


@dataclass(slots=True)
class _Cursor:
    """How far this reader has read: records after `base_seq` are tallied as they come."""

    base_seq: int
    last: Any
    size: int
    sessions: dict[str, _Tally] = field(default_factory=dict)
    """Every session's tally of the records after `base_seq`, plus, once searched, before."""
    searched: set[str] = field(default_factory=set)
    window: deque[tuple[float, int]] = field(default_factory=deque)


class LedgerUsage:
    """`UsageSource` over a stack's execution ledger (module docstring).

    Args:
        ledger: The execution ledger every gateway of the stack records into.
        session_id: The session the stack serves now (it changes when a session rolls over).
        now: The wall clock, matching the ledger's record times.
    """

    def __init__(
        self,
        ledger: UsageLedger,
        session_id: Callable[[], str],
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._ledger = ledger
        self._session_id = session_id
        self._now = now
        self._lock = threading.Lock()
        self._cursor: _Cursor | None = None

    def read(self, *, window: bool = True) -> SessionUsage:
        """The current session's usage, with every record appended so far.

        ``window=False`` leaves the last minute's calls out: only a rate limit reads them, and
        copying them cost a budget check time in proportion to the calls of that minute (a
        busy server's thousands, every turn).
        """
        session_id = self._session_id()
        now = self._now().timestamp()
        with self._lock:
            try:
                cursor = self._catch_up(now)
            except HRMError:
                # The ledger was repaired or replaced under us (a quarantine moves its tail):
                # count again from what is there now rather than fail the model call.
                logger.warning("re-reading %s after a change", self._ledger, exc_info=True)
                self._cursor = None
                cursor = self._catch_up(now)
            tally = cursor.sessions.setdefault(session_id, _Tally())
            if session_id not in cursor.searched:
                self._search(cursor, session_id, tally)
                cursor.searched.add(session_id)
            while cursor.window and cursor.window[0][0] <= now - RATE_WINDOW_SECONDS:
                cursor.window.popleft()
            return SessionUsage(
                session_id=session_id,
                calls=tally.calls,
                tokens=tally.tokens,
                cost=tally.cost,
                alerted=tally.alerted,
                window=tuple(cursor.window) if window else (),
                now=now,
            )

    def _catch_up(self, now: float) -> _Cursor:
        cursor = self._cursor
        if cursor is None:
            last = self._ledger.last()
            cursor = _Cursor(
                base_seq=last.seq if last is not None else 0,
                last=last,
                size=self._ledger.size(),
            )
            cursor.window.extend(self._recent(cursor, now))
            self._cursor = cursor
            return cursor
        size = self._ledger.size()
        if size == cursor.size:
            return cursor
        cursor.size = size
        for record in self._since(cursor.last, size):
            cursor.last = record
            if record.kind not in (_WORK_ORDER, _COST_ALERT):
                continue
            session = str(record.data.get("session_id") or "")
            cursor.sessions.setdefault(session, _Tally()).add(record.kind, record.data)
            if record.kind == _WORK_ORDER:
                cursor.window.append((_epoch(record.ts), _tokens(record.data)))
        return cursor

    def _since(self, last: Any, size: int) -> Iterable[Any]:
        """The records after `last`: from the ledger handle's memory when this process
        appended all of them (its own model call, every turn), else read from the file.

        Re-reading and re-parsing the record this process had just written cost about a
        twentieth of a turn (D380); another process's records are still read and verified.
        """
        if last is None:
            return self._ledger.records()
        own = self._ledger.appended_after(last, size=size)
        return own if own is not None else self._ledger.records_after(last)

    def _search(self, cursor: _Cursor, session_id: str, tally: _Tally) -> None:
        """Add the session's records up to `base_seq`, found from the end of the file
        backwards; later ones are tallied as `_catch_up` reads them, so none counts twice."""
        if cursor.base_seq == 0:
            return
        needle = b'"session_id":' + json.dumps(session_id).encode()
        for record in self._ledger.holding_back([needle], reach=_WHOLE_FILE):
            if record.seq <= cursor.base_seq and record.kind in (_WORK_ORDER, _COST_ALERT):
                tally.add(record.kind, record.data)

    def _recent(self, cursor: _Cursor, now: float) -> list[tuple[float, int]]:
        """Calls of the last minute up to `base_seq`, oldest first."""
        found: list[tuple[float, int]] = []
        if cursor.base_seq == 0:
            return found
        for record in self._ledger.holding_back([b'"kind":"work_order"'], reach=_WHOLE_FILE):
            at = _epoch(record.ts)
            if at <= now - RATE_WINDOW_SECONDS:
                break  # newest first: everything further back is older still
            if record.seq <= cursor.base_seq:
                found.append((at, _tokens(record.data)))
        found.reverse()
        return found


def _tokens(data: Mapping[str, Any]) -> int:
    total = 0
    for key in ("input_tokens", "output_tokens"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            total += value
    return total


def _epoch(ts: str) -> float:
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:  # a record from elsewhere with an unreadable time: outside any window
        return 0.0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
