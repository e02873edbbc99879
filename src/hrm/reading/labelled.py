"""The labelled set that measures reading, and the measure: per-intent precision and recall.

Each item is one message (with what the turn knew: a pending question, what was just kept, the
open problems) and the intents a person means by it, with the slots that matter; an item that
expects nothing is a message that must trigger nothing. Items are split into ``dev`` (exemplar
thresholds are fitted on it) and ``heldout`` (written first and never used for writing
exemplars or fitting: the honest figure). The set lives in ``tests/reading/data/devset/`` as
JSON Lines; tests, ``bench/bench_reading.py`` and the calibration read it through
`load_labelled`.

An intent counts as found when a reader returns it at or above the ask band: hrm then acts or
asks, and is not silent. A message that expects nothing but gets any intent at that level is a
false trigger. Slots are checked leniently: the expected words must appear in what was read
(case and punctuation aside), a count must be equal, and an expected ``null`` must be ``None``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hrm.errors import HRMError
from hrm.reading.types import Bands, Intent, IntentKind, ReadingContext, Slots

__all__ = [
    "Expected",
    "IntentScore",
    "LabelledItem",
    "ReadingReport",
    "evaluate",
    "load_labelled",
    "slot_matches",
]

_SPLITS = frozenset({"dev", "heldout"})
_CONTEXT_KEYS = frozenset({"pending", "just_kept", "kept", "open_problems", "active_problem"})
_SLOT_NAMES = frozenset(Slots.__slots__)


@dataclass(frozen=True, slots=True)
class Expected:
    """An intent a message carries, and the slots that must be read with it."""

    kind: IntentKind
    slots: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelledItem:
    """One message of the labelled set."""

    id: str
    split: str
    text: str
    context: ReadingContext
    expect: tuple[Expected, ...]
    tags: tuple[str, ...] = ()


def load_labelled(path: Path) -> list[LabelledItem]:
    """The items of a JSON Lines file, or of every ``*.jsonl`` file of a folder (sorted).

    Raises:
        HRMError: ``PARSE_ERROR`` naming the file and line of an item that is not JSON, lacks
            a field, names an unknown intent, slot, context key or split, or repeats an id.
    """
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    items: list[LabelledItem] = []
    seen: set[str] = set()
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            item = _item(line, file, number)
            if item.id in seen:
                raise HRMError.parse_error(f"id {item.id!r} is used twice", path=file, line=number)
            seen.add(item.id)
            items.append(item)
    return items


def _item(line: str, file: Path, number: int) -> LabelledItem:
    def bad(what: str) -> HRMError:
        return HRMError.parse_error(what, path=file, line=number)

    try:
        raw = json.loads(line)
        expect = tuple(
            Expected(kind=IntentKind(e["kind"]), slots=dict(e.get("slots", {})))
            for e in raw["expect"]
        )
        item_id, split, text = str(raw["id"]), str(raw["split"]), str(raw["text"])
        context = dict(raw.get("context", {}))
        tags = tuple(str(t) for t in raw.get("tags", ()))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise bad(f"not a labelled item ({type(exc).__name__}: {exc})") from exc
    if split not in _SPLITS:
        raise bad(f"split {split!r} is neither 'dev' nor 'heldout'")
    unknown = set(context) - _CONTEXT_KEYS
    if unknown:
        raise bad(f"unknown context key(s) {sorted(unknown)}")
    for expected in expect:
        if set(expected.slots) - _SLOT_NAMES:
            raise bad(f"unknown slot(s) {sorted(set(expected.slots) - _SLOT_NAMES)}")
    return LabelledItem(
        id=item_id,
        split=split,
        text=text,
        context=ReadingContext(
            pending=context.get("pending"),
            just_kept=context.get("just_kept"),
            kept=dict(context.get("kept", {})),
            open_problems=tuple(context.get("open_problems", ())),
            active_problem=context.get("active_problem"),
        ),
        expect=expect,
        tags=tags,
    )


@dataclass(slots=True)
class IntentScore:
    """Counts for one intent over a set of messages."""

    true_positive: int = 0
    false_positive: int = 0
    false_negative: int = 0
    slots_right: int = 0

    @property
    def precision(self) -> float:
        found = self.true_positive + self.false_positive
        return self.true_positive / found if found else 1.0

    @property
    def recall(self) -> float:
        expected = self.true_positive + self.false_negative
        return self.true_positive / expected if expected else 1.0

    @property
    def support(self) -> int:
        return self.true_positive + self.false_negative

    @property
    def slot_accuracy(self) -> float:
        return self.slots_right / self.true_positive if self.true_positive else 1.0


@dataclass(slots=True)
class ReadingReport:
    """How a reader did on a set of messages."""

    per_intent: dict[IntentKind, IntentScore] = field(default_factory=dict)
    nothing_messages: int = 0
    false_triggers: int = 0
    """Messages expecting nothing that got an intent at or above the ask band."""
    false_acts: int = 0
    """Messages expecting nothing that got an intent at or above the act band."""
    messages: int = 0
    messages_right: int = 0
    """Messages whose intents found are exactly the expected ones."""
    misses: list[str] = field(default_factory=list)
    """``id: expected → found`` for each message not read right (for reports and test output)."""

    @property
    def false_trigger_rate(self) -> float:
        return self.false_triggers / self.nothing_messages if self.nothing_messages else 0.0

    @property
    def accuracy(self) -> float:
        return self.messages_right / self.messages if self.messages else 1.0

    def score(self, kind: IntentKind) -> IntentScore:
        return self.per_intent.setdefault(kind, IntentScore())


def evaluate(
    items: Iterable[LabelledItem],
    read: Callable[[LabelledItem], Sequence[Intent]],
    *,
    bands: Bands | None = None,
) -> ReadingReport:
    """Read every item with `read` and count what was found against what was expected."""
    limits = bands or Bands()
    report = ReadingReport()
    for item in items:
        intents = [i for i in read(item) if i.confidence >= limits.ask]
        found = {i.kind for i in intents}
        expected = {e.kind for e in item.expect}
        report.messages += 1
        report.messages_right += found == expected
        if found != expected:
            names = ",".join(sorted(k.value for k in expected)) or "-"
            got = ",".join(sorted(k.value for k in found)) or "-"
            report.misses.append(f"{item.id}: {names} → {got}  {item.text[:60]!r}")
        if not expected:
            report.nothing_messages += 1
            report.false_triggers += bool(found)
            report.false_acts += any(i.confidence >= limits.act for i in intents)
        for kind in found - expected:
            report.score(kind).false_positive += 1
        for want in item.expect:
            score = report.score(want.kind)
            match = next((i for i in intents if i.kind is want.kind), None)
            if match is None:
                score.false_negative += 1
                continue
            score.true_positive += 1
            score.slots_right += slot_matches(want.slots, match.slots)
    return report


def slot_matches(expected: Mapping[str, object], slots: Slots) -> bool:
    """Whether `slots` carries every expected slot (module docstring: leniently)."""
    for name, want in expected.items():
        got = getattr(slots, name, None)
        if want is None:
            if got is not None:
                return False
        elif isinstance(want, bool | int) and not isinstance(want, str):
            if got != want:
                return False
        elif not isinstance(got, str) or _words(str(want)) not in _words(got):
            return False
    return True


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"[\w'-]+", text.casefold())) + " "
