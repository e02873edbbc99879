"""A ledger edited while a writer holds it open (a server runs for days): the writer's next
append refuses, as a new writer's open would, instead of chaining onto altered records."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.storage.ledger import Ledger


def _written(path: Path, count: int = 4) -> Ledger:
    ledger = Ledger(path)
    for n in range(count):
        ledger.append("event", {"n": n, "text": "hello world"})
    ledger.commit()
    return ledger


@settings(max_examples=25, deadline=None)
@given(line=st.integers(0, 3), extra=st.text(min_size=1, max_size=5, alphabet="xyz "))
def test_an_edit_that_moves_the_records_stops_the_open_writer(
    tmp_path_factory: pytest.TempPathFactory, line: int, extra: str
) -> None:
    path = tmp_path_factory.mktemp("l") / "x.jsonl"
    writer = _written(path)
    lines = path.read_text().splitlines(keepends=True)
    lines[line] = lines[line].replace("hello world", "hello world" + extra)
    path.write_text("".join(lines))
    with pytest.raises(HRMError) as refused:
        writer.append("event", {"n": 9})
    assert refused.value.code is ErrorCode.LEDGER_CORRUPT
    assert str(path) in str(refused.value)
    assert path.read_text().count("\n") == 4  # nothing chained onto the altered records


def test_another_writers_appends_are_no_edit(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    first = _written(path)
    second = Ledger(path)
    second.append("event", {"n": "theirs"})
    second.commit()
    first.append("event", {"n": "mine"})
    first.commit()
    assert Ledger(path).verify().ok and Ledger(path).verify().records == 6
