"""A recovery checkpoint plus the records after it says exactly what a full replay says (D310).

Histories are random appends to a stack's two ledgers under a few sessions, with recoveries
(which move the checkpoint) at random points and for sessions old and new; after each, the
checkpointed answer must equal a replay of every record. A damaged, stale or missing
checkpoint must give the same answer too, only by replaying.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.stacks.checkpoint import advance, recovery_fold, replay, tokens_spent
from hrm.storage.ledger import Ledger
from hrm.storage.sqlite import Database

CLASS = "ADMIN"
SESSIONS = ("s-a", "s-b", "s-c", "s-d")


@dataclass
class Stack:
    db: Database
    decisions: Ledger
    executions: Ledger

    def recover(self, current: str) -> dict[str, Any]:
        fold = recovery_fold(self.db, CLASS, self.decisions, self.executions, current)
        return _view(fold)

    def replayed(self, current: str) -> dict[str, Any]:
        return _view(replay(self.decisions.records(), self.executions.records(), current))


def _view(fold: Any) -> dict[str, Any]:
    data = {k: v for k, v in fold.__dict__.items() if k != "recent"}
    data["recent"] = [(t.offset, t.seq, t.entry) for t in fold.recent]
    return data


@contextmanager
def stack() -> Iterator[Stack]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = Database(root / "derived.db", journal=False)
        with Ledger(root / "ho2.jsonl", manifest=False) as ho2, \
                Ledger(root / "ho1.jsonl", manifest=False) as ho1:
            yield Stack(db, ho2, ho1)
        db.close()


session = st.one_of(st.sampled_from(SESSIONS), st.none())
decision = st.tuples(
    st.just("ho2"),
    st.sampled_from(["session_started", "turn", "turn", "routing", "preference_unconfirmed"]),
    session,
    st.one_of(st.none(), st.integers(0, 50)),
    st.text(max_size=250),
)
execution = st.tuples(
    st.just("ho1"),
    st.sampled_from(["work_order", "work_order", "degradation", "tool_call"]),
    session,
    st.sampled_from(["ok", "failed", None]),
    st.integers(0, 400),
)
checkpoint = st.tuples(st.just("recover"), st.sampled_from((*SESSIONS, "s-new")))
close = st.tuples(st.just("close"))  # a stack closing moves the checkpoint to the end (D313)
history = st.lists(st.one_of(decision, execution, checkpoint, close), max_size=60)


def _apply(s: Stack, op: tuple[Any, ...]) -> None:
    if op[0] == "ho2":
        _, kind, sid, turn, text = op
        s.decisions.append(kind, {"session_id": sid, "turn": turn, "input": text,
                                  "response": text[::-1], "action": "respond"})
    else:
        _, kind, sid, outcome, tokens = op
        s.executions.append(kind, {"session_id": sid, "outcome": outcome,
                                   "input_tokens": tokens, "output_tokens": tokens // 3})


@settings(max_examples=60, deadline=None)
@given(history, st.sampled_from((*SESSIONS, "s-new")))
def test_checkpoint_and_tail_equal_a_full_replay(ops: list[Any], last: str) -> None:
    with stack() as s:
        for op in ops:
            if op[0] == "recover":
                assert s.recover(op[1]) == s.replayed(op[1])
            elif op[0] == "close":
                advance(s.db, CLASS, s.decisions, s.executions)
            else:
                _apply(s, op)
        assert s.recover(last) == s.replayed(last)
        # and the token total, checkpointed the same way, is the sum over every record
        total = sum(int(r.data.get("input_tokens") or 0) + int(r.data.get("output_tokens") or 0)
                    for r in s.executions.records() if r.kind == "work_order")
        assert tokens_spent(s.db, CLASS, s.executions) == total
        assert tokens_spent(s.db, CLASS, s.executions) == total


def _grow(s: Stack, n: int, sid: str) -> None:
    for i in range(n):
        _apply(s, ("ho2", "turn", sid, i + 1, f"message {i}"))
        _apply(s, ("ho1", "work_order", sid, "ok", 10))


def test_a_recovery_reads_only_the_records_after_its_checkpoint() -> None:
    with stack() as s:
        _grow(s, 30, "s-a")
        first = s.recover("s-b")
        _grow(s, 2, "s-b")
        read: list[int] = []
        records_after = s.decisions.records_after

        def counting(anchor: Any) -> Iterator[Any]:
            for rec in records_after(anchor):
                read.append(rec.seq)
                yield rec

        s.decisions.records_after = counting  # type: ignore[method-assign,assignment]
        again = s.recover("s-c")
        assert read == [31, 32]
        assert again["turns"] == first["turns"] + 2 == 32
        assert again == s.replayed("s-c")


def test_a_damaged_checkpoint_falls_back_to_a_full_replay() -> None:
    with stack() as s:
        _grow(s, 10, "s-a")
        s.recover("s-b")
        s.db.execute("UPDATE stack_recovery SET fold = '{not json'")
        assert s.recover("s-c") == s.replayed("s-c")
        s.db.execute("UPDATE stack_recovery SET ho2_hash = 'f00d', ho1_offset = 3")
        assert s.recover("s-c") == s.replayed("s-c")
        assert tokens_spent(s.db, CLASS, s.executions) == 10 * (10 + 3)
        s.db.execute("UPDATE stack_budget SET hash = 'f00d', tokens = 1")
        assert tokens_spent(s.db, CLASS, s.executions) == 10 * (10 + 3)


def test_a_ledger_replaced_by_another_is_replayed_whole() -> None:
    with stack() as s:
        _grow(s, 10, "s-a")
        s.recover("s-b")
        other = s.decisions.path.with_name("other.jsonl")  # what a restore from elsewhere is
        with Ledger(other, manifest=False) as fresh:
            s.decisions = fresh
            _grow(s, 3, "s-z")
            got = s.recover("s-c")
            assert got == s.replayed("s-c")
            assert got["turns"] == 3


def test_a_session_the_checkpoint_has_seen_is_left_out_exactly() -> None:
    with stack() as s:
        _grow(s, 5, "s-a")
        _grow(s, 4, "s-b")
        s.recover("s-c")  # the checkpoint covers s-a's and s-b's records
        got = s.recover("s-a")  # s-a's records are in it: left out all the same
        assert got == s.replayed("s-a")
        assert got["turns"] == 4


def test_a_checkpoint_moved_at_close_covers_the_session_it_was_moved_in() -> None:
    with stack() as s:
        _grow(s, 6, "s-a")
        advance(s.db, CLASS, s.decisions, s.executions)  # s-a's process closes mid-session
        _grow(s, 2, "s-a")
        later = s.recover("s-b")
        assert later == s.replayed("s-b")
        assert later["turns"] == 8
        same = s.recover("s-a")  # s-a's records are inside the checkpoint: replayed whole
        assert same == s.replayed("s-a")
        assert same["turns"] == 0
