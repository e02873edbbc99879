"""The labelled request set and per-class accuracy (issue 33 item 1, D262).

The set is a tab-separated file, ``split <TAB> class <TAB> request`` a line, ``#`` comments:
``dev`` rows are what the cue tables were tuned on, ``heldout`` rows are measured only. The
tests (``tests/reasoning/test_request_set.py``) and ``bench/bench_routing.py`` read it through
`load_request_set` and score a classifier with `evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hrm.errors import HRMError
from hrm.reasoning.routing_table import REQUEST_CLASSES

__all__ = ["ClassReport", "LabelledRequest", "evaluate", "load_request_set"]

SPLITS = ("dev", "heldout")


@dataclass(frozen=True, slots=True)
class LabelledRequest:
    split: str
    request_class: str
    text: str
    line: int


@dataclass
class ClassReport:
    """Accuracy per class (recall: the share of a class's requests read as that class)."""

    total: dict[str, int] = field(default_factory=dict)
    right: dict[str, int] = field(default_factory=dict)
    misses: list[tuple[LabelledRequest, str]] = field(default_factory=list)

    def accuracy(self, request_class: str | None = None) -> float:
        """Per class, or over every request when `request_class` is None."""
        if request_class is None:
            total = sum(self.total.values())
            return sum(self.right.values()) / total if total else 0.0
        total = self.total.get(request_class, 0)
        return self.right.get(request_class, 0) / total if total else 0.0


def load_request_set(path: Path) -> list[LabelledRequest]:
    """Every labelled request in `path`.

    Raises:
        HRMError: PARSE_ERROR naming the line of a malformed row, unknown split or class.
    """
    rows: list[LabelledRequest] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        parts = raw.split("\t")
        if len(parts) != 3 or parts[0] not in SPLITS or parts[1] not in REQUEST_CLASSES:
            raise HRMError.parse_error(
                f"expected split<TAB>class<TAB>request with split in {SPLITS} and class in "
                f"{REQUEST_CLASSES}",
                path=path,
                line=number,
            )
        rows.append(LabelledRequest(parts[0], parts[1], parts[2].strip(), number))
    return rows


def evaluate(
    rows: Iterable[LabelledRequest], classify: Callable[[str], str]
) -> ClassReport:
    """How often `classify` gives each row's class."""
    report = ClassReport()
    for row in rows:
        got = classify(row.text)
        report.total[row.request_class] = report.total.get(row.request_class, 0) + 1
        if got == row.request_class:
            report.right[row.request_class] = report.right.get(row.request_class, 0) + 1
        else:
            report.misses.append((row, got))
    return report
