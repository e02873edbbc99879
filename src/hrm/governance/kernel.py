"""The GovernanceKernel (001 §12.5): the single entry to every governance decision.

One object holds the policy and the three deciders built from it (signals, arbiter, preference
classifier), so every consumer — Focus, the WriteGate, the pipeline — sees the same tunables,
versioned together. The kernel holds no state of its own; the problem registry it arbitrates
against is passed in, scoped to one agent class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hrm.governance.arbiter import (
    ArbitrationDecision,
    FocusState,
    PreemptScoreArbiter,
    Relatedness,
)
from hrm.governance.policy import current_policy
from hrm.governance.preferences import PreferenceClassification, PreferenceClassifier
from hrm.governance.signals import AgentOutputLike, CanonSource, DerivedSignals, SignalEngine
from hrm.types import Clock, HRMContext, TurnInput, system_clock

if TYPE_CHECKING:
    from hrm.config import PolicySurface
    from hrm.governance.problems import ProblemRegistry
    from hrm.llm.types import ILLMAdapter
    from hrm.reading.types import Cues

__all__ = ["GovernanceKernel"]


@dataclass
class GovernanceKernel:
    """Single interface tying all governance decisions together (001 §12.5).

    Usage:
        kernel = GovernanceKernel.create()
        signals = kernel.derive_signals(turn_input, context, artifacts)
        decision = kernel.arbitrate(turn_input, focus_state, problem_registry)
        pref_class = kernel.classify_preference(statement)
    """

    policy: PolicySurface
    signal_engine: SignalEngine
    arbiter: PreemptScoreArbiter
    preference_classifier: PreferenceClassifier

    @classmethod
    def create(
        cls,
        policy: PolicySurface | None = None,
        llm: ILLMAdapter | None = None,
        *,
        clock: Clock = system_clock,
        canon: CanonSource | None = None,
        relatedness: Relatedness | None = None,
    ) -> GovernanceKernel:
        """Build a kernel over `policy` (default: the current `POLICY`), validated first.

        Args:
            policy: The tunables; ``None`` takes `hrm.governance.policy.current_policy()`.
            llm: Optional model for the bounded source-quality/alignment nudge.
            clock: "Now" for staleness and recency.
            canon: Shared Reference statements (or a callable returning them) for conflict.
            relatedness: A sentence model's similarity, for the arbiter (D68).

        Raises:
            HRMError: VALIDATION_FAILED when the policy is inconsistent.
        """
        policy = policy if policy is not None else current_policy()
        policy.validate()
        return cls(
            policy=policy,
            signal_engine=SignalEngine(policy, llm, clock=clock, canon=canon),
            arbiter=PreemptScoreArbiter(policy, clock=clock, relatedness=relatedness),
            preference_classifier=PreferenceClassifier(policy),
        )

    def arbitrate(
        self,
        turn_input: TurnInput,
        focus_state: FocusState,
        problem_registry: ProblemRegistry,
        *,
        signals: DerivedSignals | None = None,
        cues: Cues | None = None,
    ) -> ArbitrationDecision:
        """Derive signals (unless given), then decide stay | switch | ask | queue."""
        if signals is None:
            signals = self.signal_engine.derive(
                turn_input=turn_input,
                context=focus_state.context,
                artifacts=(),
                agent_outputs=None,
            )
        return self.arbiter.decide(
            turn_input=turn_input,
            focus_state=focus_state,
            problem_registry=problem_registry,
            signals=signals,
            cues=cues,
        )

    def derive_signals(
        self,
        turn_input: TurnInput,
        context: HRMContext,
        artifacts: Sequence[str] = (),
        agent_outputs: Sequence[AgentOutputLike] | None = None,
        *,
        canon: CanonSource | None = None,
    ) -> DerivedSignals:
        """All signals for the WriteGate and other consumers."""
        return self.signal_engine.derive(
            turn_input=turn_input,
            context=context,
            artifacts=artifacts,
            agent_outputs=agent_outputs,
            canon=canon,
        )

    def classify_preference(
        self, statement: str, source: str = "user"
    ) -> PreferenceClassification:
        """Classify a statement for the preference truth model (001 §12.4)."""
        return self.preference_classifier.classify(statement, source)

    def check_interrupt_condition(self, condition: str) -> bool:
        """Whether `condition` warrants interrupting the person (policy INTERRUPT_CONDITIONS)."""
        return condition in self.policy.INTERRUPT_CONDITIONS
