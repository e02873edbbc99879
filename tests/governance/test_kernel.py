"""GovernanceKernel: one entry for signals, arbitration, preferences and interrupts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from hrm.config import PolicySurface
from hrm.errors import ErrorCode, HRMError
from hrm.governance import policy as policy_module
from hrm.governance.arbiter import ArbitrationDisposition, FocusState
from hrm.governance.kernel import GovernanceKernel
from hrm.governance.policy import POLICY, current_policy, override_policy
from hrm.governance.preferences import PreferenceClass
from hrm.governance.problems import ProblemRegistry, ProblemStatus
from hrm.storage.sqlite import Database
from hrm.types import AltitudeLevel, ConflictLevel, HRMContext, Stance, TurnInput

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def ctx() -> HRMContext:
    return HRMContext("s", 1, None, AltitudeLevel.L2_OPERATIONS, Stance.EXECUTION, None, None)


def turn(text: str) -> TurnInput:
    return TurnInput(text=text, timestamp=NOW, context=ctx())


def test_create_uses_the_default_policy_and_wires_components() -> None:
    kernel = GovernanceKernel.create(clock=lambda: NOW)
    assert kernel.policy is POLICY
    assert kernel.signal_engine.policy is kernel.arbiter.policy is kernel.policy


def test_create_rejects_an_invalid_policy() -> None:
    with pytest.raises(HRMError) as info:
        GovernanceKernel.create(PolicySurface(WEIGHT_PRIORITY=0.9))
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_override_policy_swaps_the_default_and_restores_it() -> None:
    strict = replace(PolicySurface(), AUTO_PREEMPT_THRESHOLD=0.9, ASK_BAND_HIGH=0.9)
    with override_policy(strict):
        assert current_policy() is strict
        assert GovernanceKernel.create().policy is strict
    assert current_policy() is POLICY
    with pytest.raises(HRMError), override_policy(PolicySurface(ASK_BAND_LOW=0.95)):
        pass  # validated before installing
    assert policy_module.POLICY is POLICY


def test_arbitrate_derives_signals_and_decides() -> None:
    registry = ProblemRegistry(Database(":memory:"), "ADMIN", clock=lambda: NOW)
    kernel = GovernanceKernel.create(clock=lambda: NOW)
    state = FocusState(context=ctx(), stance=Stance.EXECUTION)
    first = kernel.arbitrate(turn("Fix the flaky CI pipeline"), state, registry)
    assert first.disposition is ArbitrationDisposition.SWITCH
    assert first.candidate is not None
    registry.add(replace(first.candidate, status=ProblemStatus.ACTIVE))
    again = kernel.arbitrate(turn("the CI pipeline flaked again"), state, registry)
    assert again.disposition is ArbitrationDisposition.STAY
    emergency = kernel.arbitrate(turn("Outage: checkout is down!!!"), state, registry)
    assert emergency.disposition is ArbitrationDisposition.SWITCH and emergency.emergency


def test_derive_signals_reads_canon_given_to_the_kernel() -> None:
    kernel = GovernanceKernel.create(clock=lambda: NOW, canon={"indentation": "prefers tabs"})
    signals = kernel.derive_signals(turn("I prefer spaces"), ctx(), ["shared_reference/indent"])
    assert signals.conflict_level is ConflictLevel.HIGH
    assert signals.blast_radius.value == "severe"


def test_classify_preference_and_interrupt_conditions() -> None:
    kernel = GovernanceKernel.create()
    assert kernel.classify_preference("I prefer tabs").preference_class is PreferenceClass.EXPLICIT
    assert kernel.check_interrupt_condition("ask_band")
    assert kernel.check_interrupt_condition("preference_conflict")
    assert not kernel.check_interrupt_condition("bored")
