"""A stateful property test: any sequence of appends, commits, reopens, second writers and
crashes mid-append leaves a ledger that verifies and reads back exactly what was acknowledged."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from hrm.storage.ledger import Durability, Ledger

KINDS = st.sampled_from(["turn", "work_order", "escalation"])
DATA = st.dictionaries(
    st.sampled_from(["a", "b", "text"]),
    st.one_of(st.integers(-5, 5), st.text(max_size=8), st.none()),
    max_size=3,
)


class LedgerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="ledger-sm-"))
        self.path = self.tmp / "l.jsonl"
        self.ledger = Ledger(self.path)
        self.model: list[tuple[str, dict[str, Any]]] = []
        self.hashes: list[str] = []

    def _acknowledge(self, kind: str, data: dict[str, Any], digest: str) -> None:
        self.model.append((kind, data))
        self.hashes.append(digest)

    @rule(kind=KINDS, data=DATA)
    def append(self, kind: str, data: dict[str, Any]) -> None:
        record = self.ledger.append(kind, data)
        assert record.seq == len(self.model) + 1
        self._acknowledge(kind, data, record.hash)

    @rule(items=st.lists(st.tuples(KINDS, DATA), max_size=4))
    def append_many(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        for record, (kind, data) in zip(self.ledger.append_many(items), items, strict=True):
            self._acknowledge(kind, data, record.hash)

    @rule()
    def commit(self) -> None:
        self.ledger.commit()

    @rule(durability=st.sampled_from(list(Durability)))
    def reopen(self, durability: Durability) -> None:
        self.ledger.close()
        self.ledger = Ledger(self.path, durability=durability)
        assert self.ledger.repaired is None

    @rule(kind=KINDS, data=DATA)
    def another_handle_appends(self, kind: str, data: dict[str, Any]) -> None:
        with Ledger(self.path) as other:
            record = other.append(kind, data)
        self._acknowledge(kind, data, record.hash)

    @rule(junk=st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b))
    def crash_mid_append(self, junk: bytes) -> None:
        """A writer dies after writing part of a line; the next opener cuts exactly that."""
        size = self.path.stat().st_size if self.path.exists() else 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as fh:
            fh.write(junk)
        self.ledger.close()
        self.ledger = Ledger(self.path)
        torn = self.ledger.repaired
        assert torn is not None
        assert (torn.offset, torn.length, torn.line) == (size, len(junk), len(self.model) + 1)
        assert self.path.stat().st_size == size

    @invariant()
    def reads_back_what_was_acknowledged(self) -> None:
        records = list(self.ledger.records())
        assert [(r.kind, r.data) for r in records] == self.model
        assert [r.hash for r in records] == self.hashes
        report = self.ledger.verify()
        assert report.ok and report.records == len(self.model)

    def teardown(self) -> None:
        self.ledger.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


LedgerMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=15, deadline=None
)
TestLedgerMachine = LedgerMachine.TestCase
