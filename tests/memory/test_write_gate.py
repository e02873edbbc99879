"""The write gate (001 §6.2, §12.6): every rule, in order, as decisions (never exceptions)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.config import PolicySurface
from hrm.errors import ErrorCode, HRMError
from hrm.governance.preferences import (
    PreferenceClass,
    PreferenceClassification,
    PreferenceClassifier,
)
from hrm.memory.types import MemoryTarget, WriteRequest, WriteSignals
from hrm.memory.write_gate import NEEDS_USER_CONFIRMATION, WriteGate
from hrm.types import BlastRadius, ConflictLevel

SHARED = MemoryTarget.SHARED_REFERENCE
WORKING = MemoryTarget.WORKING_SET
EPISODIC = MemoryTarget.EPISODIC
SYNTHESIS = MemoryTarget.SYNTHESIS


def signals(
    *,
    conflict: ConflictLevel = ConflictLevel.NONE,
    quality: float = 0.9,
    alignment: float = 0.9,
    blast: BlastRadius = BlastRadius.MINIMAL,
) -> WriteSignals:
    return WriteSignals(0.1, conflict, quality, alignment, blast)


@pytest.fixture(scope="module")
def gate() -> WriteGate:
    return WriteGate(PreferenceClassifier(PolicySurface()))


@dataclass(frozen=True)
class Case:
    name: str
    target: MemoryTarget
    signals: WriteSignals
    approved: bool
    decided: MemoryTarget
    value: str = "v"
    is_preference: bool = False
    source: str = "user"
    conditions: list[str] = field(default_factory=list)


CASES = [
    Case("plain shared write approved", SHARED, signals(), True, SHARED),
    Case(
        "severe blast with weak source denied",
        SHARED,
        signals(blast=BlastRadius.SEVERE, quality=0.69),
        False,
        SHARED,
    ),
    Case(
        "severe blast with strong source approved",
        SHARED,
        signals(blast=BlastRadius.SEVERE, quality=0.7),
        True,
        SHARED,
    ),
    Case(
        "high conflict redirected to working set",
        SHARED,
        signals(conflict=ConflictLevel.HIGH),
        True,
        WORKING,
        conditions=["redirected_from:shared_reference"],
    ),
    Case(
        "medium conflict is not redirected",
        SHARED,
        signals(conflict=ConflictLevel.MEDIUM),
        True,
        SHARED,
    ),
    Case(
        "low source quality goes episodic only",
        SHARED,
        signals(quality=0.39),
        True,
        EPISODIC,
        conditions=["redirected_from:shared_reference"],
    ),
    Case(
        "low alignment will not synthesize",
        SYNTHESIS,
        signals(alignment=0.29),
        False,
        SYNTHESIS,
    ),
    Case("aligned synthesis approved", SYNTHESIS, signals(alignment=0.3), True, SYNTHESIS),
    Case("low alignment does not block shared", SHARED, signals(alignment=0.1), True, SHARED),
    Case(
        "working set ignores low quality",
        WORKING,
        signals(quality=0.0),
        True,
        WORKING,
    ),
    Case(
        "episodic always accepts",
        EPISODIC,
        signals(quality=0.0, blast=BlastRadius.SEVERE, conflict=ConflictLevel.HIGH),
        True,
        EPISODIC,
    ),
    Case(
        "severe check comes before the conflict redirect",
        SHARED,
        signals(blast=BlastRadius.SEVERE, quality=0.5, conflict=ConflictLevel.HIGH),
        False,
        SHARED,
    ),
    Case(
        "explicit preference proceeds to the shared reference",
        SHARED,
        signals(),
        True,
        SHARED,
        value="I prefer short answers",
        is_preference=True,
    ),
    Case(
        "explicit preference still obeys the conflict rule",
        SHARED,
        signals(conflict=ConflictLevel.HIGH),
        True,
        WORKING,
        value="I prefer short answers",
        is_preference=True,
        conditions=["redirected_from:shared_reference"],
    ),
    Case(
        "behavioral preference goes episodic",
        SHARED,
        signals(),
        True,
        EPISODIC,
        value="user usually writes at night",
        is_preference=True,
        conditions=["redirected_from:shared_reference", "preference:pref_behavioral"],
    ),
    Case(
        "inferred silent preference stays in the working set",
        SHARED,
        signals(),
        True,
        WORKING,
        value="meeting notes are in the wiki",
        is_preference=True,
        conditions=["redirected_from:shared_reference", "preference:pref_inferred_silent"],
    ),
    Case(
        "inferred preference needs confirmation",
        SHARED,
        signals(),
        False,
        SHARED,
        value="I prefer short answers",
        is_preference=True,
        source="agent",
        conditions=[NEEDS_USER_CONFIRMATION, "preference:pref_inferred_confirm_required"],
    ),
    Case(
        "preference truth model comes before the severe rule",
        SHARED,
        signals(blast=BlastRadius.SEVERE, quality=0.1),
        True,
        EPISODIC,
        value="statistically the user picks blue",
        is_preference=True,
        conditions=["redirected_from:shared_reference", "preference:pref_behavioral"],
    ),
    Case(
        "the same text without is_preference is a plain write",
        SHARED,
        signals(),
        True,
        SHARED,
        value="user usually writes at night",
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_gate_rules(gate: WriteGate, case: Case) -> None:
    request = WriteRequest(
        target=case.target,
        key="k",
        value=case.value,
        signals=case.signals,
        is_preference=case.is_preference,
        source=case.source,
    )
    decision = gate.evaluate(request)
    assert (decision.approved, decision.target) == (case.approved, case.decided)
    assert decision.conditions == case.conditions
    assert decision.reason


def test_redirected_from_names_the_requested_target(gate: WriteGate) -> None:
    request = WriteRequest(SHARED, "k", "v", signals(conflict=ConflictLevel.HIGH))
    decision = gate.evaluate(request)
    assert decision.redirected_from is SHARED
    assert gate.evaluate(WriteRequest(SHARED, "k", "v", signals())).redirected_from is None


def test_gate_accepts_a_kernel_with_classify_preference() -> None:
    calls: list[tuple[str, str]] = []

    class Kernel:
        def classify_preference(
            self, statement: str, source: str = "user"
        ) -> PreferenceClassification:
            calls.append((statement, source))
            return PreferenceClassification(
                PreferenceClass.BEHAVIORAL, statement, None, 0.7, False, False
            )

    decision = WriteGate(Kernel()).evaluate(
        WriteRequest(SHARED, "k", "anything", signals(), is_preference=True, source="agent")
    )
    assert decision.target is EPISODIC
    assert calls == [("anything", "agent")]


def test_targets_accept_the_spec_spellings() -> None:
    assert MemoryTarget.parse("episodic_trace") is EPISODIC
    assert WriteRequest("working_set", "k", 1, signals()).target is WORKING  # type: ignore[arg-type]
    with pytest.raises(HRMError) as info:
        MemoryTarget.parse("long_term")
    assert info.value.code is ErrorCode.VALIDATION_FAILED


@pytest.mark.parametrize("bad", [-0.1, 1.01, float("nan")])
def test_signals_out_of_range_are_rejected(bad: float) -> None:
    with pytest.raises(HRMError) as info:
        WriteSignals(0.0, ConflictLevel.NONE, bad, 0.5, BlastRadius.MINIMAL)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "source_quality" in info.value.message


def test_request_needs_a_key() -> None:
    with pytest.raises(HRMError):
        WriteRequest(SHARED, " ", "v", signals())


@settings(max_examples=200, deadline=None)
@given(
    target=st.sampled_from(list(MemoryTarget)),
    conflict=st.sampled_from(list(ConflictLevel)),
    blast=st.sampled_from(list(BlastRadius)),
    quality=st.floats(0, 1),
    alignment=st.floats(0, 1),
)
def test_gate_invariants(
    target: MemoryTarget,
    conflict: ConflictLevel,
    blast: BlastRadius,
    quality: float,
    alignment: float,
) -> None:
    """Durable compartments never receive what the rules keep out of them."""
    gate = WriteGate(PreferenceClassifier(PolicySurface()))
    sig = WriteSignals(0.0, conflict, quality, alignment, blast)
    decision = gate.evaluate(WriteRequest(target, "k", "v", sig))
    if target is EPISODIC:
        assert decision.approved and decision.target is EPISODIC
        return
    if decision.approved and decision.target is SHARED:
        assert conflict is not ConflictLevel.HIGH and quality >= 0.4
        assert blast is not BlastRadius.SEVERE or quality >= 0.7
    if decision.approved and decision.target is SYNTHESIS:
        assert alignment >= 0.3 and quality >= 0.4 and conflict is not ConflictLevel.HIGH
    if blast is BlastRadius.SEVERE and quality < 0.7:
        assert not decision.approved
    if decision.target is not target:
        assert decision.conditions == [f"redirected_from:{target.value}"]


def test_the_turns_reading_of_a_preference_is_what_the_truth_model_judges(
    gate: WriteGate,
) -> None:
    """One reading stage: a statement the sentence model read as an explicit preference is not
    read again by word rules that would call it inferred and send it to the working set."""
    statement = "no more java examples for me, kotlin only"
    assert gate.classify_preference(statement).preference_class is not PreferenceClass.EXPLICIT
    explicit = PreferenceClassification(PreferenceClass.EXPLICIT, statement, None, 0.86, True, False)
    read = gate.evaluate(
        WriteRequest(SHARED, "pref.k", statement, signals(), is_preference=True, preference=explicit)
    )
    assert (read.approved, read.target) == (True, SHARED)
    unread = gate.evaluate(WriteRequest(SHARED, "pref.k", statement, signals(), is_preference=True))
    assert unread.target is not SHARED  # without the reading, the rules decide as before


def test_a_reading_does_not_lift_the_need_to_confirm(gate: WriteGate) -> None:
    inferred = PreferenceClassification(
        PreferenceClass.INFERRED_CONFIRM_REQUIRED, "simple english", None, 0.5, True, True
    )
    decision = gate.evaluate(
        WriteRequest(SHARED, "pref.k", "simple english", signals(), is_preference=True,
                     preference=inferred)
    )
    assert decision.approved is False and NEEDS_USER_CONFIRMATION in decision.conditions
