"""The ActionSelector (001 §3.6): exactly one next best action, with a fallback.

Candidates are scored with `PrioritySignals.compute_score` under stance-dependent weights
(`STANCE_WEIGHTS`, each set sums to 1.0; energy cost counts inverted, cheap scores high):

===========  =======  ==========  ========  ===========  =========
stance       urgency  dependency  momentum  energy_cost  alignment
===========  =======  ==========  ========  ===========  =========
EXECUTION    0.15     0.10        0.35      0.10         0.30
SENSEMAKING  0.10     0.30        0.15      0.30         0.15
DISCOVERY    0.30     0.30        0.20      0.10         0.10
EVALUATION   0.10     0.15        0.10      0.30         0.35
(none)       001's defaults: 0.20, 0.20, 0.25, 0.15, 0.20
===========  =======  ==========  ========  ===========  =========

EXECUTION favours momentum and alignment; SENSEMAKING dependency and low energy; DISCOVERY
urgency and dependency; EVALUATION alignment and low energy.

The primary is the highest score, ties broken by candidate order. The fallback is the best
candidate of a different action type; when there is none, one is made (``ask`` behind a
``respond``/``wait``, ``respond`` behind anything else), so a fallback is always present.
Voting follows 001 exactly: Stakes.HIGH and at least two candidates within 0.1 of the top
score and irreversible consequences. A micro-batch (2-3 actions) forms only when the top
candidates are all ``atomic`` and every pair is coupled (either lists the other in
``coupled_with``); unrelated actions are never batched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.reasoning.types import (
    DEFAULT_PRIORITY_WEIGHTS,
    CandidateAction,
    PrioritySignals,
    SelectedAction,
)
from hrm.types import Stakes, Stance

if TYPE_CHECKING:
    from hrm.reasoning.types import InputClassification
    from hrm.types import HRMContext

__all__ = ["MAX_BATCH", "STANCE_WEIGHTS", "VOTING_SCORE_BAND", "ActionSelector"]

MAX_BATCH = 3
"""At most this many actions in a micro-batch (001 §3.6: 2-3 max)."""
VOTING_SCORE_BAND = 0.1
"""Candidates within this of the top score count as "similar priority" for voting."""

STANCE_WEIGHTS: dict[Stance, dict[str, float]] = {
    Stance.EXECUTION: {
        "urgency": 0.15, "dependency": 0.10, "momentum": 0.35, "energy_cost": 0.10,
        "alignment": 0.30,
    },
    Stance.SENSEMAKING: {
        "urgency": 0.10, "dependency": 0.30, "momentum": 0.15, "energy_cost": 0.30,
        "alignment": 0.15,
    },
    Stance.DISCOVERY: {
        "urgency": 0.30, "dependency": 0.30, "momentum": 0.20, "energy_cost": 0.10,
        "alignment": 0.10,
    },
    Stance.EVALUATION: {
        "urgency": 0.10, "dependency": 0.15, "momentum": 0.10, "energy_cost": 0.30,
        "alignment": 0.35,
    },
}
"""Priority weights per stance (see the module docstring table)."""

def _contributions(signals: PrioritySignals) -> dict[str, float]:
    """Each signal's value as it enters the score (energy cost inverted)."""
    return {
        "urgency": signals.urgency,
        "dependency": signals.dependency,
        "momentum": signals.momentum,
        "energy_cost": 1 - signals.energy_cost,
        "alignment": signals.alignment,
    }


class ActionSelector:
    """Picks the next best action from candidates. Stateless; safe to share."""

    def weights_for(self, stance: Stance | None) -> dict[str, float]:
        """The priority weights used under a stance (001's defaults without one)."""
        return STANCE_WEIGHTS[Stance(stance)] if stance is not None else DEFAULT_PRIORITY_WEIGHTS

    def score(self, candidate: CandidateAction, stance: Stance | None = None) -> float:
        """A candidate's priority score in [0, 1] under the stance's weights."""
        return PrioritySignals.of(candidate).compute_score(self.weights_for(stance))

    def select(
        self,
        candidates: list[CandidateAction],
        context: HRMContext | None = None,
        stance: Stance | None = None,
        classification: InputClassification | None = None,
        routed: tuple[str, str] | None = None,
    ) -> SelectedAction:
        """Exactly one primary action (or a coupled micro-batch) with rationale and fallback.

        Args:
            candidates: What Reasoning generated; an empty list selects ``wait``.
            context: The turn's context; its stance applies when ``stance`` is not given.
            stance: The stance whose weights rank the candidates.
            classification: The input's classification, for the voting rule.
            routed: The candidate id the routing table chose and why (issue 33, D263): it is
                the primary; the scores rank the others for the fallback.
        """
        if stance is None and context is not None:
            stance = context.stance
        pool = list(candidates) or [_made("wait", "Nothing actionable: wait for more input")]
        weights = self.weights_for(stance)
        scored = [(PrioritySignals.of(c).compute_score(weights), i, c) for i, c in enumerate(pool)]
        ranked = sorted(scored, key=lambda item: (-item[0], item[1]))
        if routed is not None:
            chosen = [item for item in ranked if item[2].id == routed[0]]
            ranked = chosen[:1] + [item for item in ranked if item[2].id != routed[0]]
        top_score, _, primary = ranked[0]
        batch = _micro_batch([c for _, _, c in ranked])
        in_batch = {c.id for c in batch} if batch else {primary.id}
        fallback = next(
            (
                c
                for _, _, c in ranked
                if c.action_type != primary.action_type and c.id not in in_batch
            ),
            None,
        ) or _made_fallback(primary)
        use_voting = self._voting(classification, [s for s, _, _ in ranked])
        rationale = _rationale(primary, top_score, stance, weights, ranked)
        if routed is not None and primary.id == routed[0]:
            rationale = f"{routed[1]}; {rationale}"
        return SelectedAction(
            primary=primary,
            rationale=rationale,
            priority_score=round(top_score, 4),
            fallback=fallback,
            batch=batch,
            use_voting=use_voting,
        )

    def should_use_voting(
        self,
        candidates: list[CandidateAction],
        context: HRMContext | None = None,
        *,
        classification: InputClassification | None = None,
        stance: Stance | None = None,
    ) -> bool:
        """001's rule, exactly: Stakes.HIGH AND >= 2 candidates within 0.1 AND irreversible.

        Without a classification the stakes are unknown, so voting is never used.
        """
        if stance is None and context is not None:
            stance = context.stance
        weights = self.weights_for(stance)
        scores = sorted(
            (PrioritySignals.of(c).compute_score(weights) for c in candidates), reverse=True
        )
        return self._voting(classification, scores)

    @staticmethod
    def _voting(classification: InputClassification | None, scores: list[float]) -> bool:
        if classification is None or classification.stakes != Stakes.HIGH:
            return False
        if not classification.irreversible or len(scores) < 2:
            return False
        top = max(scores)
        return sum(1 for s in scores if top - s <= VOTING_SCORE_BAND + 1e-9) >= 2


def _coupled(a: CandidateAction, b: CandidateAction) -> bool:
    return a.id in b.coupled_with or b.id in a.coupled_with


def _micro_batch(ranked: list[CandidateAction]) -> list[CandidateAction] | None:
    """The top candidate plus the next best atomic ones coupled to every member (max 3)."""
    primary = ranked[0]
    if not primary.atomic:
        return None
    batch = [primary]
    for candidate in ranked[1:]:
        if len(batch) == MAX_BATCH:
            break
        if (
            candidate.atomic
            and candidate.id not in {m.id for m in batch}
            and all(_coupled(candidate, member) for member in batch)
        ):
            batch.append(candidate)
    return batch if len(batch) > 1 else None


def _made(action_type: str, description: str) -> CandidateAction:
    return CandidateAction(
        id=f"fallback_{action_type}" if action_type != "wait" else "wait",
        action_type=action_type,
        description=description,
        urgency=0.0,
        momentum_score=0.2,
        energy_cost=0.1,
        alignment_score=0.5,
        source="action_selector",
    )


def _made_fallback(primary: CandidateAction) -> CandidateAction:
    if primary.action_type in ("respond", "wait"):
        return _made("ask", "Ask the user how to proceed")
    return _made("respond", "Answer directly without further work")


def _rationale(
    primary: CandidateAction,
    score: float,
    stance: Stance | None,
    weights: dict[str, float],
    ranked: list[tuple[float, int, CandidateAction]],
) -> str:
    values = _contributions(PrioritySignals.of(primary))
    parts = sorted(((weights[name] * value, name) for name, value in values.items()), reverse=True)
    top = ", ".join(f"{name} {contribution:.2f}" for contribution, name in parts[:2])
    under = f"{Stance(stance).value} weights" if stance is not None else "default weights"
    text = f"{primary.id} ({primary.action_type}) scored {score:.3f} under {under}; led by {top}"
    if len(ranked) > 1:
        runner_score, _, runner = ranked[1]
        text += f"; next {runner.id} at {runner_score:.3f}"
    return text
