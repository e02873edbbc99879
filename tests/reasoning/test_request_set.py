"""The labelled request set, table-driven (issue 33 item 2): every class is read on the
development part and on the held-out part, which the cue tables were never tuned on."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrm.reasoning.request_set import LabelledRequest, evaluate, load_request_set
from hrm.reasoning.requests import load_request_classifier
from hrm.reasoning.routing_table import REQUEST_CLASSES

SET = Path(__file__).parent / "data" / "requests.tsv"
ROWS = load_request_set(SET)
FLOOR = {"dev": 0.9, "heldout": 0.8}
"""Per-class accuracy each part must keep (bench/RESULTS.md has the figures)."""


def _read(text: str) -> str:
    return load_request_classifier().classify(text).request_class


def test_the_set_is_large_and_varied_enough() -> None:
    assert len(ROWS) >= 150
    for split in ("dev", "heldout"):
        classes = {r.request_class for r in ROWS if r.split == split}
        assert classes == set(REQUEST_CLASSES)
    assert len({r.text for r in ROWS}) == len(ROWS)  # no request twice


@pytest.mark.parametrize("split", ["dev", "heldout"])
@pytest.mark.parametrize("request_class", REQUEST_CLASSES)
def test_each_class_is_read_on_each_part(split: str, request_class: str) -> None:
    rows = [r for r in ROWS if r.split == split and r.request_class == request_class]
    report = evaluate(rows, _read)
    missed = [f"{row.text!r} -> {got}" for row, got in report.misses]
    assert report.accuracy(request_class) >= FLOOR[split], missed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Team A says Kafka, team B RabbitMQ; they disagree", "conflict"),
        ("Design a distributed multi-region billing architecture", "high_stakes"),
        ("write a migration plan and the scripts", "multi_step"),
        ("set up CI for this repo, then document it", "multi_step"),
        ("What should I pack for Lisbon?", "simple"),
    ],
)
def test_the_issue_s_examples(text: str, expected: str) -> None:
    assert _read(text) == expected


def test_a_malformed_row_is_named_by_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "set.tsv"
    bad.write_text("# header\ndev\tsimple\tok\ndev\tunknown_class\tno\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"set.tsv:3"):
        load_request_set(bad)


def test_evaluate_counts_misses() -> None:
    rows = [LabelledRequest("dev", "simple", "a", 1), LabelledRequest("dev", "conflict", "b", 2)]
    report = evaluate(rows, lambda text: "simple")
    assert report.accuracy("simple") == 1.0
    assert report.accuracy("conflict") == 0.0
    assert report.accuracy() == 0.5
    assert [(row.text, got) for row, got in report.misses] == [("b", "simple")]
