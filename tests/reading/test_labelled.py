"""The labelled set: its loader names bad lines, and the measure counts what it should."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from hrm.errors import HRMError
from hrm.reading import Intent, IntentKind, Slots
from hrm.reading.labelled import LabelledItem, evaluate, load_labelled, slot_matches

DEVSET = Path(__file__).parent / "data" / "devset"


def test_the_set_is_large_varied_and_mostly_dev() -> None:
    items = load_labelled(DEVSET)
    kinds = Counter(e.kind for i in items for e in i.expect)
    splits = Counter(i.split for i in items)
    assert len(items) >= 400
    assert set(kinds) == set(IntentKind)
    assert sum(1 for i in items if not i.expect) >= 100
    assert 0.25 <= splits["heldout"] / len(items) <= 0.4
    assert any(i.context.pending for i in items) and any(i.context.just_kept for i in items)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("{not json", "not a labelled item"),
        ('{"id": "x", "split": "dev", "text": "t"}', "KeyError"),
        ('{"id": "x", "split": "train", "text": "t", "expect": []}', "split"),
        ('{"id": "x", "split": "dev", "text": "t", "expect": [{"kind": "nap"}]}', "not a labelled item"),
        ('{"id": "x", "split": "dev", "text": "t", "expect": [], "context": {"mood": 1}}', "context"),
        ('{"id": "x", "split": "dev", "text": "t", "expect": [{"kind": "focus", "slots": {"n": 2}}]}', "slot"),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, line: str, says: str) -> None:
    path = tmp_path / "set.jsonl"
    good = json.dumps({"id": "a", "split": "dev", "text": "hi", "expect": []})
    path.write_text(good + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(HRMError) as info:
        load_labelled(path)
    assert f"{path}:2:" in info.value.message and says in info.value.message


def item(text: str, *kinds: IntentKind, **slots: object) -> LabelledItem:
    from hrm.reading.labelled import Expected
    from hrm.reading.types import ReadingContext

    expect = tuple(Expected(k, dict(slots) if n == 0 else {}) for n, k in enumerate(kinds))
    return LabelledItem(id=text, split="dev", text=text, context=ReadingContext(), expect=expect)


def test_the_measure_counts_hits_misses_and_false_triggers() -> None:
    items = [item("a", IntentKind.FORGET, what="my cat"), item("b"), item("c"), item("d", IntentKind.YES)]
    found = {
        "a": [Intent(IntentKind.FORGET, (0, 1), 0.9, "t", Slots(what="about my cat"))],
        "b": [Intent(IntentKind.THANKS, (0, 1), 0.5, "t")],
        "c": [Intent(IntentKind.THANKS, (0, 1), 0.2, "t")],  # below the ask band: ignored
        "d": [],
    }
    report = evaluate(items, lambda it: found[it.text])
    assert report.false_triggers == 1 and report.false_acts == 0 and report.nothing_messages == 2
    assert report.score(IntentKind.FORGET).slot_accuracy == 1.0
    assert report.score(IntentKind.YES).recall == 0.0
    assert report.score(IntentKind.THANKS).precision == 0.0
    assert report.messages_right == 2 and len(report.misses) == 2


@pytest.mark.parametrize(
    ("expected", "slots", "matches"),
    [
        ({"turns": 2}, Slots(turns=2), True),
        ({"turns": 2}, Slots(turns=3), False),
        ({"what": None}, Slots(), True),
        ({"what": None}, Slots(what="that"), False),
        ({"ref": "webhook"}, Slots(ref="the Webhook retries"), True),
        ({"ref": "web"}, Slots(ref="webhook"), False),
    ],
)
def test_slots_match_leniently(expected: dict[str, object], slots: Slots, matches: bool) -> None:
    assert slot_matches(expected, slots) is matches
