"""The write gate (001 §6.2, §12.6): where a memory write may go, decided from its signals.

Memory is written only through this gate (ARCHITECTURE §8). It is pure: it returns a
`WriteDecision` and writes nothing; `MemoryBus.write` carries the decision out, including a
redirect to another compartment, and logs it as a ``write_completed`` episode.

Rules, first match wins:

1. Preference truth model (§12.6, for ``is_preference`` writes): BEHAVIORAL → episodic;
   INFERRED_SILENT → working set; needs confirmation → denied with condition
   ``needs_user_confirmation``; EXPLICIT goes on to the rules below.
2. The episodic trace is append-only audit and always accepts (§6.1 ``log_episode``).
3. SEVERE blast radius needs source quality ≥ `SEVERE_MIN_SOURCE_QUALITY`, else denied.
4. HIGH conflict → redirected to the working set.
5. The working set is problem-local scratch: no further rule applies (§6.1).
6. Source quality < `LOW_SOURCE_QUALITY` → episodic only (redirected).
7. Synthesis with alignment < `LOW_ALIGNMENT` → denied: low alignment won't synthesise.
"""

from __future__ import annotations

import logging
from typing import Protocol, runtime_checkable

from hrm.governance.preferences import PreferenceClass, PreferenceClassification
from hrm.memory.types import MemoryTarget, WriteDecision, WriteRequest
from hrm.types import BlastRadius, ConflictLevel

__all__ = [
    "LOW_ALIGNMENT",
    "LOW_SOURCE_QUALITY",
    "NEEDS_USER_CONFIRMATION",
    "SEVERE_MIN_SOURCE_QUALITY",
    "PreferenceSource",
    "WriteGate",
]

logger = logging.getLogger(__name__)

SEVERE_MIN_SOURCE_QUALITY = 0.7
"""001 §12.6 / §6.2 rule 1: a SEVERE blast radius needs at least this source quality."""
LOW_SOURCE_QUALITY = 0.4
"""001 §6.2 rule 4: below this source quality a fact is kept in the episodic trace only."""
LOW_ALIGNMENT = 0.3
"""001 §6.2 rule 3: below this alignment a pattern is not synthesised."""
NEEDS_USER_CONFIRMATION = "needs_user_confirmation"
"""001 §12.6: the condition on a preference write denied until the user confirms it."""


@runtime_checkable
class _KernelLike(Protocol):
    def classify_preference(
        self, statement: str, source: str = "user"
    ) -> PreferenceClassification: ...


@runtime_checkable
class _ClassifierLike(Protocol):
    def classify(self, statement: str, source: str = "user") -> PreferenceClassification: ...


PreferenceSource = _KernelLike | _ClassifierLike
"""A `PreferenceClassifier`, or anything with ``classify_preference`` (the GovernanceKernel)."""


class WriteGate:
    """Signal-based write policy decisions (001 §6.2) with the preference truth model (§12.6).

    Stateless and thread-safe; `evaluate` never raises for a denial, it returns the decision.
    """

    def __init__(self, preferences: PreferenceSource) -> None:
        """Create a gate that classifies preference writes with `preferences`.

        Args:
            preferences: A `PreferenceClassifier`, or the GovernanceKernel (anything with
                ``classify_preference``), as 001 §12.6 wires it.
        """
        self._preferences = preferences

    def classify_preference(self, statement: str, source: str = "user") -> PreferenceClassification:
        """Classify `statement` with the injected classifier or kernel."""
        if isinstance(self._preferences, _KernelLike):
            return self._preferences.classify_preference(statement, source)
        return self._preferences.classify(statement, source)

    def evaluate(self, request: WriteRequest) -> WriteDecision:
        """Decide whether and where `request` may be written (rules in the module docstring)."""
        decision = self._decide(request)
        logger.debug(
            "write gate: %s %r -> approved=%s target=%s (%s)",
            request.target.value,
            request.key,
            decision.approved,
            decision.target.value,
            decision.reason,
        )
        return decision

    def _decide(self, request: WriteRequest) -> WriteDecision:
        signals = request.signals
        target = request.target
        if request.is_preference:
            preference = request.preference or self.classify_preference(
                str(request.value), request.source
            )
            decision = _preference_decision(request, preference)
            if decision is not None:
                return decision
        if target is MemoryTarget.EPISODIC:
            return WriteDecision(True, target, "Episodic trace is append-only: always accepted")
        if (
            signals.blast_radius is BlastRadius.SEVERE
            and signals.source_quality < SEVERE_MIN_SOURCE_QUALITY
        ):
            return WriteDecision(
                False,
                target,
                f"SEVERE blast radius requires source quality >= {SEVERE_MIN_SOURCE_QUALITY}"
                f" (got {signals.source_quality:.2f})",
            )
        if signals.conflict_level is ConflictLevel.HIGH:
            return _redirect(request, MemoryTarget.WORKING_SET, "HIGH conflict: WorkingSet only")
        if target is MemoryTarget.WORKING_SET:
            return WriteDecision(True, target, "Working set is problem-local: no gate required")
        if signals.source_quality < LOW_SOURCE_QUALITY:
            return _redirect(
                request,
                MemoryTarget.EPISODIC,
                f"Low source quality ({signals.source_quality:.2f} < {LOW_SOURCE_QUALITY}):"
                " Episodic only",
            )
        if target is MemoryTarget.SYNTHESIS and signals.alignment_score < LOW_ALIGNMENT:
            return WriteDecision(
                False,
                target,
                f"Low alignment ({signals.alignment_score:.2f} < {LOW_ALIGNMENT}):"
                " will not synthesize",
            )
        return WriteDecision(True, target, "Write approved")


def _preference_decision(
    request: WriteRequest, preference: PreferenceClassification
) -> WriteDecision | None:
    label = preference.preference_class.value
    if preference.preference_class is PreferenceClass.BEHAVIORAL:
        return _redirect(
            request, MemoryTarget.EPISODIC, "Behavioral observation: Episodic only", label
        )
    if preference.preference_class is PreferenceClass.INFERRED_SILENT:
        return _redirect(
            request, MemoryTarget.WORKING_SET, "Inferred silent: WorkingSet only", label
        )
    if preference.needs_confirmation:
        return WriteDecision(
            False,
            request.target,
            "Preference requires user confirmation",
            [NEEDS_USER_CONFIRMATION, f"preference:{label}"],
        )
    return None


def _redirect(
    request: WriteRequest, to: MemoryTarget, reason: str, preference: str | None = None
) -> WriteDecision:
    conditions = [] if request.target is to else [f"redirected_from:{request.target.value}"]
    if preference is not None:
        conditions.append(f"preference:{preference}")
    return WriteDecision(True, to, reason, conditions)
