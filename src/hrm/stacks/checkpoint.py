"""Checkpoints of what a stack derives from its own ledgers, so opening one costs the same
whatever its history (issue 35 item 1, D310-D312).

Two sums are read back whenever a stack opens or a session starts: the tokens the stack has
spent (every HO1m ``work_order``) and the recovery summary a new session reads (004 §8: sessions,
turns, the last turns, work orders, degradations). Both are folds over the ledgers, and both keep
a checkpoint in ``memory.db`` — a derived table, not journaled (D182): delete it and the next open
replays the ledgers in full. A checkpoint names the record it was taken at (seq, byte offset and
hash); when that record is no longer there (a quarantine, a forget that rewrote the file, a ledger
replaced), the whole ledger is replayed again. A checkpoint can make opening slower, never wrong.

`tokens_spent` is the function other modules call for a stack's lifetime token total; the
session's share is that total less the ``session_tokens_base`` its ``session_started`` records.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from hrm.errors import HRMError
from hrm.storage.ledger import Ledger, LedgerRecord
from hrm.storage.sqlite import Database

__all__ = [
    "RECENT_TURNS",
    "RecentTurn",
    "RecoveryFold",
    "advance",
    "recovery_fold",
    "replay",
    "tokens_spent",
]

RECENT_TURNS = 6
"""How many of the last turns a recovery summary carries."""

_BUDGET_MIGRATIONS = [
    "CREATE TABLE stack_budget (agent_class TEXT PRIMARY KEY, seq INTEGER NOT NULL,"
    " offset INTEGER NOT NULL, hash TEXT NOT NULL, tokens INTEGER NOT NULL);",
]
_RECOVERY_MIGRATIONS = [
    "CREATE TABLE stack_recovery (agent_class TEXT PRIMARY KEY, fold TEXT NOT NULL,"
    " ho2_seq INTEGER, ho2_offset INTEGER, ho2_hash TEXT,"
    " ho1_seq INTEGER, ho1_offset INTEGER, ho1_hash TEXT);",
    "CREATE TABLE stack_recovery_sessions (agent_class TEXT NOT NULL, session_id TEXT NOT NULL,"
    " PRIMARY KEY (agent_class, session_id)) WITHOUT ROWID;",
]


# ── the lifetime token total ────────────────────────────────────────────────


def _work_order_tokens(rec: LedgerRecord) -> int:
    if rec.kind != "work_order":
        return 0
    return int(rec.data.get("input_tokens") or 0) + int(rec.data.get("output_tokens") or 0)


def tokens_spent(db: Database, agent_class: str, ledger: Ledger) -> int:
    """Tokens `agent_class` has spent over its whole history, summed from its HO1m `ledger`.

    Reads the checkpoint and the records after it, and moves the checkpoint to the last record;
    with no checkpoint, or one whose record is no longer where it says, sums the whole ledger.
    """
    db.migrate("stacks.budget", _BUDGET_MIGRATIONS)
    row = db.one("SELECT seq, offset, hash, tokens FROM stack_budget WHERE agent_class = ?",
                 (agent_class,))
    summed = None if row is None else _tokens_after(ledger, row)
    if summed is None:  # no checkpoint, or a damaged or moved one: sum the whole ledger
        summed = _sum_tokens(0, ledger.records())
    used, last = summed
    if last is not None:
        with db.transaction():
            db.execute(
                "INSERT INTO stack_budget (agent_class, seq, offset, hash, tokens)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_class) DO UPDATE SET"
                " seq = excluded.seq, offset = excluded.offset, hash = excluded.hash,"
                " tokens = excluded.tokens",
                (agent_class, last.seq, last.offset, last.hash, used),
            )
    return used


def _sum_tokens(used: int, records: Iterable[LedgerRecord]) -> tuple[int, LedgerRecord | None]:
    last = None
    for rec in records:
        used, last = used + _work_order_tokens(rec), rec
    return used, last


def _tokens_after(ledger: Ledger, row: Any) -> tuple[int, LedgerRecord | None] | None:
    try:
        anchor = _anchor_at(ledger, row["seq"], row["offset"], row["hash"])
        return None if anchor is None else _sum_tokens(int(row["tokens"]),
                                                       ledger.records_after(anchor))
    except HRMError:
        return None


def _anchor_at(ledger: Ledger, seq: Any, offset: Any, digest: Any) -> LedgerRecord | None:
    """The record a checkpoint names, if it is still there; None if it is not.

    Raises:
        HRMError: when the ledger cannot be read at that offset (treated as "not there").
    """
    if seq is None or offset is None:
        return None
    found = ledger.read_at(int(offset))
    return found if found.seq == int(seq) and found.hash == digest else None


# ── the recovery summary ────────────────────────────────────────────────────


@dataclass(frozen=True)
class RecentTurn:
    """One of the last turns: where its record is, and what the summary shows of it."""

    offset: int
    seq: int
    entry: dict[str, Any]
    """``turn``, ``input`` and ``response`` (clipped to 200 characters) and ``action``."""

    @classmethod
    def of(cls, rec: LedgerRecord) -> RecentTurn:
        data = rec.data
        return cls(rec.offset, rec.seq, {
            "turn": data.get("turn"), "input": str(data.get("input"))[:200],
            "action": data.get("action"), "response": str(data.get("response"))[:200],
        })  # fmt: skip


@dataclass
class RecoveryFold:
    """What a new session reads back from HO2m and HO1m, as a running sum over their records.

    `add_decision` and `add_execution` are the only ways it changes, so a sum resumed from a
    checkpoint and a sum over every record are the same function of the same records.
    """

    decision_records: int = 0
    sessions: int = 0
    previous_session_id: str | None = None
    turns: int = 0
    last_turn: int = 0
    last_turn_at: str | None = None
    recent: list[RecentTurn] = field(default_factory=list)
    execution_records: int = 0
    work_orders: int = 0
    failed_work_orders: int = 0
    degradations: int = 0
    tokens_used: int = 0

    def add_decision(self, rec: LedgerRecord) -> None:
        """Count one HO2m record."""
        self.decision_records += 1
        if rec.kind == "session_started":
            self.sessions += 1
            self.previous_session_id = (
                str(rec.data.get("session_id") or "") or self.previous_session_id
            )
        elif rec.kind == "turn":
            self.turns += 1
            self.last_turn = int(rec.data.get("turn") or self.last_turn)
            self.last_turn_at = rec.ts
            self.recent = [*self.recent, RecentTurn.of(rec)][-RECENT_TURNS:]

    def add_execution(self, rec: LedgerRecord) -> None:
        """Count one HO1m record."""
        self.execution_records += 1
        if rec.kind == "work_order":
            self.work_orders += 1
            self.failed_work_orders += rec.data.get("outcome") not in ("ok", None)
            self.tokens_used += _work_order_tokens(rec)
        elif rec.kind == "degradation":
            self.degradations += 1

    def copy(self) -> RecoveryFold:
        return replace(self, recent=list(self.recent))

    def to_json(self) -> str:
        """The checkpoint's text: counts, ids and times, and the last turns only by position
        (their text stays in the ledger, where a forget reaches it)."""
        data = {k: v for k, v in self.__dict__.items() if k != "recent"}
        data["recent"] = [[t.offset, t.seq] for t in self.recent]
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, decisions: Ledger) -> RecoveryFold:
        """A fold from `to_json`, its last turns read back from `decisions` by offset.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a checkpoint that does not parse or whose last
                turns are no longer where it says (the caller replays in full).
        """
        try:
            data = json.loads(text)
            positions = [(int(o), int(s)) for o, s in data.pop("recent")]
            fold = cls(**data)
        except (ValueError, TypeError, KeyError) as exc:
            raise HRMError.validation_failed(f"unreadable recovery checkpoint: {exc}") from exc
        for offset, seq in positions:
            rec = decisions.read_at(offset)
            if rec.seq != seq or rec.kind != "turn":
                raise HRMError.validation_failed(
                    f"recovery checkpoint names turn record {seq} at offset {offset}, "
                    f"but record {rec.seq} ({rec.kind}) is there"
                )
            fold.recent.append(RecentTurn.of(rec))
        return fold


def replay(decisions: Iterable[LedgerRecord], executions: Iterable[LedgerRecord],
           current: str | None, fold: RecoveryFold | None = None) -> RecoveryFold:
    """Fold records into `fold` (a new one by default), leaving out those of session `current`."""
    fold = fold if fold is not None else RecoveryFold()
    for rec in decisions:
        if current is None or rec.data.get("session_id") != current:
            fold.add_decision(rec)
    for rec in executions:
        if current is None or rec.data.get("session_id") != current:
            fold.add_execution(rec)
    return fold


@dataclass
class _Scan:
    """One ledger's tail folded, with the checkpoint to keep: the fold as it stood at the
    last record before session `current`'s first, so that no later session misses them."""

    current: str | None
    anchor: LedgerRecord | None
    keep: RecoveryFold | None = None
    seen: set[str] = field(default_factory=set)

    def run(self, records: Iterator[LedgerRecord], fold: RecoveryFold, decisions: bool) -> None:
        add = fold.add_decision if decisions else fold.add_execution
        for rec in records:
            session = rec.data.get("session_id")
            if self.current is not None and session == self.current:
                if self.keep is None:
                    self.keep = fold.copy()
                continue
            add(rec)
            if self.keep is None:
                self.anchor = rec
                if isinstance(session, str) and session:
                    self.seen.add(session)


def recovery_fold(db: Database, agent_class: str, decisions: Ledger, executions: Ledger,
                  current: str | None) -> RecoveryFold:
    """The recovery summary of every HO2m and HO1m record outside session `current`.

    Reads the checkpoint and the records after it, then moves the checkpoint forward; replays
    both ledgers whole when there is no usable checkpoint (see the module docstring), or when
    session `current` already has records the checkpoint covers.

    Raises:
        HRMError: ``LEDGER_CORRUPT`` when a full replay meets a bad record (as before).
    """
    db.migrate("stacks.recovery", _RECOVERY_MIGRATIONS)
    try:
        resumed = _resume(db, agent_class, decisions, executions, current)
    except HRMError:
        resumed = None  # a damaged checkpoint costs a full replay, nothing else
    if resumed is None:
        resumed = _fold_tail(RecoveryFold(), decisions.records(), executions.records(),
                             None, None, current)
    fold, keep, anchors, seen = resumed
    _save(db, agent_class, keep, anchors, seen)
    return fold


def advance(db: Database, agent_class: str, decisions: Ledger, executions: Ledger) -> None:
    """Move both checkpoints to the ledgers' ends, the current session's records included.

    A stack calls this as it closes, so the next open reads only what was appended after
    (by a process that did not close), however long the session ran. The sessions the
    checkpoint now covers are listed, so recovering one of them still replays in full (D311).
    """
    tokens_spent(db, agent_class, executions)
    recovery_fold(db, agent_class, decisions, executions, None)


_Resumed = tuple[RecoveryFold, RecoveryFold, tuple[LedgerRecord | None, LedgerRecord | None],
                 set[str]]


def _resume(db: Database, agent_class: str, decisions: Ledger, executions: Ledger,
            current: str | None) -> _Resumed | None:
    row = db.one("SELECT * FROM stack_recovery WHERE agent_class = ?", (agent_class,))
    if row is None or (current is not None and db.one(
        "SELECT 1 FROM stack_recovery_sessions WHERE agent_class = ? AND session_id = ?",
        (agent_class, current),
    )):
        return None
    ho2 = _anchor_at(decisions, row["ho2_seq"], row["ho2_offset"], row["ho2_hash"])
    ho1 = _anchor_at(executions, row["ho1_seq"], row["ho1_offset"], row["ho1_hash"])
    if (ho2 is None) != (row["ho2_seq"] is None) or (ho1 is None) != (row["ho1_seq"] is None):
        return None  # a named record that is no longer there
    fold = RecoveryFold.from_json(str(row["fold"]), decisions)
    tail2 = decisions.records_after(ho2) if ho2 is not None else decisions.records()
    tail1 = executions.records_after(ho1) if ho1 is not None else executions.records()
    return _fold_tail(fold, tail2, tail1, ho2, ho1, current)


def _fold_tail(fold: RecoveryFold, tail2: Iterator[LedgerRecord], tail1: Iterator[LedgerRecord],
               ho2: LedgerRecord | None, ho1: LedgerRecord | None, current: str | None) -> _Resumed:
    """Fold both tails into `fold`; return it with the checkpoint to keep.

    The two ledgers fill separate fields, so the checkpoint takes HO2m's fields as they stood
    where session `current` began in HO2m, and HO1m's where it began in HO1m.
    """
    scan2, scan1 = _Scan(current, ho2), _Scan(current, ho1)
    scan2.run(tail2, fold, decisions=True)
    kept2 = scan2.keep if scan2.keep is not None else fold.copy()
    scan1.run(tail1, fold, decisions=False)
    kept1 = scan1.keep if scan1.keep is not None else fold.copy()
    keep = replace(kept1, **{name: getattr(kept2, name) for name in _DECISION_FIELDS})
    return fold, keep, (scan2.anchor, scan1.anchor), scan2.seen | scan1.seen


_DECISION_FIELDS = ("decision_records", "sessions", "previous_session_id", "turns", "last_turn",
                    "last_turn_at", "recent")


def _save(db: Database, agent_class: str, keep: RecoveryFold,
          anchors: tuple[LedgerRecord | None, LedgerRecord | None], seen: set[str]) -> None:
    ho2, ho1 = anchors
    if ho2 is None and ho1 is None:
        return
    with db.transaction():
        db.execute(
            "INSERT INTO stack_recovery (agent_class, fold, ho2_seq, ho2_offset, ho2_hash,"
            " ho1_seq, ho1_offset, ho1_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (agent_class) DO UPDATE SET fold = excluded.fold,"
            " ho2_seq = excluded.ho2_seq, ho2_offset = excluded.ho2_offset,"
            " ho2_hash = excluded.ho2_hash, ho1_seq = excluded.ho1_seq,"
            " ho1_offset = excluded.ho1_offset, ho1_hash = excluded.ho1_hash",
            (agent_class, keep.to_json(),
             *_columns(ho2), *_columns(ho1)),
        )
        db.executemany(
            "INSERT OR IGNORE INTO stack_recovery_sessions (agent_class, session_id) VALUES (?, ?)",
            [(agent_class, s) for s in sorted(seen)],
        )


def _columns(rec: LedgerRecord | None) -> tuple[int | None, int | None, str | None]:
    return (None, None, None) if rec is None else (rec.seq, rec.offset, rec.hash)
