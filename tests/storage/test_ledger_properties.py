"""Property tests: what a ledger detects, stated as honestly as the hash chain allows.

Detectable by the chain alone: any changed byte except the final newline, deleting or
duplicating any record but the last, reordering any two records. Detectable only with the
anchor: cutting records (or the final newline) from the end of committed records.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.scrubbing import scrub
from hrm.storage._ledger_format import _prepare
from hrm.storage.ledger import Ledger, verify_ledger

RECORDS = 5
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _build() -> tuple[bytes, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "l.jsonl"
        with Ledger(path) as ledger:
            for i in range(RECORDS):
                ledger.append("turn", {"i": i, "text": f"record {i}", "ok": i % 2 == 0})
        return path.read_bytes(), path.with_name("l.jsonl.anchor").read_bytes()


ORIGINAL, ANCHOR = _build()
LINES = ORIGINAL.splitlines(keepends=True)


def _verify(content: bytes, *, anchored: bool) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "l.jsonl"
        path.write_bytes(content)
        if anchored:
            path.with_name("l.jsonl.anchor").write_bytes(ANCHOR)
        return verify_ledger(path).ok


def test_the_untouched_ledger_verifies() -> None:
    assert _verify(ORIGINAL, anchored=True)
    assert _verify(ORIGINAL, anchored=False)


@SETTINGS
@given(position=st.integers(0, len(ORIGINAL) - 1), byte=st.integers(0, 255))
def test_any_single_byte_change_is_detected_with_the_anchor(position: int, byte: int) -> None:
    if ORIGINAL[position] == byte:
        byte = (byte + 1) % 256
    changed = ORIGINAL[:position] + bytes([byte]) + ORIGINAL[position + 1 :]
    assert not _verify(changed, anchored=True)


@SETTINGS
@given(position=st.integers(0, len(ORIGINAL) - 2), byte=st.integers(0, 255))
def test_any_byte_change_but_the_final_newline_is_detected_by_the_chain_alone(
    position: int, byte: int
) -> None:
    if ORIGINAL[position] == byte:
        byte = (byte + 1) % 256
    changed = ORIGINAL[:position] + bytes([byte]) + ORIGINAL[position + 1 :]
    assert not _verify(changed, anchored=False)


@SETTINGS
@given(position=st.integers(0, len(ORIGINAL) - 1))
def test_deleting_any_single_byte_is_detected_with_the_anchor(position: int) -> None:
    assert not _verify(ORIGINAL[:position] + ORIGINAL[position + 1 :], anchored=True)


@SETTINGS
@given(index=st.integers(0, RECORDS - 1))
def test_deleting_any_record_is_detected_with_the_anchor(index: int) -> None:
    assert not _verify(b"".join(LINES[:index] + LINES[index + 1 :]), anchored=True)


@SETTINGS
@given(index=st.integers(0, RECORDS - 2))
def test_deleting_any_record_but_the_last_is_detected_by_the_chain_alone(index: int) -> None:
    assert not _verify(b"".join(LINES[:index] + LINES[index + 1 :]), anchored=False)


@SETTINGS
@given(order=st.permutations(range(RECORDS)))
def test_any_reordering_is_detected_by_the_chain_alone(order: list[int]) -> None:
    reordered = b"".join(LINES[i] for i in order)
    assert _verify(reordered, anchored=False) == (order == sorted(order))


@SETTINGS
@given(index=st.integers(0, RECORDS - 1), at=st.integers(0, RECORDS))
def test_duplicating_any_record_is_detected_by_the_chain_alone(index: int, at: int) -> None:
    duplicated = [*LINES[:at], LINES[index], *LINES[at:]]
    assert not _verify(b"".join(duplicated), anchored=False)


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["sk-ant-" + "b" * 30, "password=hunter2hunter2", "ghp_" + "c" * 36])
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
DATA = st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=5)


@settings(max_examples=100, deadline=None)
@given(data=DATA)
def test_preparing_data_scrubs_exactly_like_scrub(data: dict[str, Any]) -> None:
    assert _prepare(data) == scrub(data)


@settings(max_examples=40, deadline=None)
@given(items=st.lists(st.tuples(st.text(min_size=1, max_size=20), DATA), min_size=1, max_size=4))
def test_data_round_trips_through_the_file(items: list[tuple[str, dict[str, Any]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "l.jsonl"
        with Ledger(path) as ledger:
            appended = [ledger.append(kind, data) for kind, data in items]
            appended += ledger.append_many(items)
            read = list(ledger.records())
            report = ledger.verify()
    assert report.ok and report.records == 2 * len(items)
    assert read == appended
    for record, (_kind, data) in zip(read, items + items, strict=True):
        assert record.data == json.loads(json.dumps(scrub(data)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    marks=st.lists(st.booleans(), min_size=0, max_size=30),
    pads=st.lists(st.integers(min_value=0, max_value=400), min_size=30, max_size=30),
    piece=st.integers(min_value=8, max_value=600),
    reach=st.integers(min_value=1, max_value=20_000),
)
def test_holding_back_finds_what_a_full_read_finds(
    marks: list[bool], pads: list[int], piece: int, reach: int
) -> None:
    """D86: read backwards in pieces of any size, the records holding the needles are the
    same as a full read's, newest first, within the same last `reach` bytes."""
    import hrm.storage.ledger as ledger_module

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "l.jsonl"
        with Ledger(path) as ledger:
            for i, marked in enumerate(marks):
                kind = "turn" if i % 3 else "event"
                ledger.append(kind, {"i": i, "pad": "x" * pads[i],
                                     "topic": "prob_a" if marked else "prob_b"})  # fmt: skip
            raw = path.read_bytes() if path.exists() else b""
            floor = max(0, len(raw) - reach)
            expected = [
                r.seq for r in ledger.records()
                if r.kind == "turn" and r.data["topic"] == "prob_a" and r.offset >= floor
            ]
            before = ledger_module._BACK_PIECE
            ledger_module._BACK_PIECE = piece
            try:
                found = list(ledger.holding_back((b'"topic":"prob_a"', b'"kind":"turn"'),
                                                 reach=reach))  # fmt: skip
            finally:
                ledger_module._BACK_PIECE = before
    # A record that starts before the reach is not whole in it: left out; one that starts
    # exactly at its edge is in.
    assert [r.seq for r in found] == expected[::-1]
    assert all(r.data["topic"] == "prob_a" for r in found)


def test_holding_back_reaches_a_record_starting_exactly_at_its_edge(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    with Ledger(path) as ledger:
        ledger.append("turn", {"topic": "prob_b"})
        wanted = ledger.append("turn", {"topic": "prob_a"})
        ledger.append("turn", {"topic": "prob_b"})
        size = len(path.read_bytes())
        at_edge = list(ledger.holding_back((b"prob_a",), reach=size - wanted.offset))
        beyond = list(ledger.holding_back((b"prob_a",), reach=size - wanted.offset - 1))
    assert [r.seq for r in at_edge] == [wanted.seq] and beyond == []



OPS = st.lists(
    st.tuples(st.sampled_from(["mine", "other", "retract"]), st.integers(1, 3), DATA),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_appended_after_answers_what_the_file_holds_or_nothing(
    ops: list[tuple[str, int, dict[str, Any]]],
) -> None:
    """D380: what a handle answers from memory is exactly what reading the file after that
    record gives; once asked, it answers whenever every later record is one of its own
    unretracted appends since another writer last appended, and never otherwise."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "l.jsonl"
        with Ledger(path) as mine, Ledger(path) as other:
            last: list[Any] = []
            run: list[int] = []  # seqs of this handle's appends with nothing after them
            keeping = False  # the handle keeps its appends from the first question on
            for op, count, data in ops:
                if op == "retract":
                    if last and mine.retract(last):
                        last, run = [], []
                elif op == "other":
                    other.append_many([("turn", data)] * count)
                    last, run = [], []
                else:
                    last = mine.append_many([("turn", data)] * count)
                    run += [record.seq for record in last] if keeping else []
                records = list(mine.records())
                for record in records:
                    known = mine.appended_after(record)
                    # the size a caller just read stands in for the handle's own fstat
                    assert mine.appended_after(record, size=mine.size()) == known
                    assert (known is not None) == (bool(run) and record.seq >= run[0] - 1)
                    if known is not None:
                        assert known == list(mine.records_after(record))
                keeping = keeping or bool(records)
