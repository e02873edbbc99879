"""The ReasoningRouter (001 §3.1, §3.6): two phases, one action.

Phase 1 generates: classify the input, ask Learning for patterns, select a strategy, escalate
or de-escalate, and generate candidate actions. Phase 2 selects: the ActionSelector picks
exactly one primary action with a fallback. `reason` returns every intermediate result for the
decision record; `process` returns only the selected action.

Candidates (001 §3.6, with the hrm additions):

- ``respond_direct`` always;
- ``delegate_agents`` when the strategy requires agents and an agent bundle can be formed;
- ``ask_clarify`` when uncertainty > 0.5, or the strategy is dialogue;
- ``execute_plan`` for decomposition and verification (the plan engine runs it);
- ``wait`` alone when nothing is actionable (empty input).

The candidate that realises the chosen strategy (respond for quick_answer, ask for dialogue,
delegate for exploration and verification, execute_plan for decomposition) gets dependency
0.9 and urgency + 0.2, so the strategy shapes the choice without overriding the stance's
weights. Routing never fails: a pattern source that raises `HRMError` is logged and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.reasoning.actions import ActionSelector
from hrm.reasoning.classifier import InputClassifier
from hrm.reasoning.escalation import EscalationManager
from hrm.reasoning.strategy import StrategySelector
from hrm.reasoning.types import (
    STRATEGIES,
    AgentBundleProposal,
    CandidateAction,
    InputClassification,
    PatternMatch,
    RoutingDecision,
    SelectedAction,
    StrategySelection,
)
from hrm.types import JSONDict, ReducerType

if TYPE_CHECKING:
    from hrm.types import ConflictLevel, HRMContext, Stance, TurnInput

__all__ = ["DEFAULT_AGENTS", "PatternSource", "ReasoningResult", "ReasoningRouter"]

logger = logging.getLogger(__name__)

PatternSource = Callable[[dict[str, Any]], list[PatternMatch]]
"""Learning's pattern query: an input signature in, matches out (e.g.
`hrm.learning.FeedbackLoop.get_patterns_for_signal` or `hrm.learning.PatternStore.search`)."""

DEFAULT_AGENTS = ("researcher", "analyst", "writer", "critic", "verifier", "planner", "editor")
"""The agent ids a router may propose when it is not told which agents exist."""

_PREFERRED_AGENTS = {
    "exploration": ("researcher", "analyst", "critic"),
    "decomposition": ("planner", "analyst", "writer", "editor"),
    "verification": ("verifier", "critic", "analyst"),
}
_FIT = {
    "quick_answer": "respond_direct",
    "dialogue": "ask_clarify",
    "exploration": "delegate_agents",
    "decomposition": "execute_plan",
    "verification": "delegate_agents",
}


@dataclass
class ReasoningResult:
    """Everything Reasoning decided in one turn, for the decision record."""

    classification: InputClassification
    patterns: list[PatternMatch]
    strategy: StrategySelection
    escalated: bool
    deescalated: bool
    candidates: list[CandidateAction]
    selected: SelectedAction
    routing: RoutingDecision
    escalation_score: float = 0.0
    proposal: AgentBundleProposal | None = None
    """The agent bundle Focus must approve when the strategy needs agents."""
    notes: list[str] = field(default_factory=list)
    """Degradations (e.g. a pattern source that failed)."""
    initial_strategy: str = ""
    """The strategy selected before escalation or de-escalation."""

    def events(self) -> list[JSONDict]:
        """The decision-ledger events of this result (001 §8.3): ``pattern_matched`` when a
        pattern chose or pulled the strategy, ``escalation`` / ``deescalation`` when it moved.
        """
        events: list[JSONDict] = []
        if self.routing.pattern_match:
            events.append({
                "event_type": "pattern_matched",
                "payload": {
                    "pattern_id": self.routing.pattern_match,
                    "confidence": next(
                        (p.match_confidence for p in self.patterns
                         if p.pattern_id == self.routing.pattern_match),
                        self.strategy.confidence,
                    ),
                },
            })
        path = [self.initial_strategy]
        if self.escalated:
            path.append(_next(self.initial_strategy))
        if self.deescalated:
            path.append(self.strategy.strategy)
        kinds = (["escalation"] if self.escalated else []) + (
            ["deescalation"] if self.deescalated else []
        )
        for kind, (before, after) in zip(kinds, pairwise(path), strict=True):
            events.append({
                "event_type": kind,
                "payload": {"from": before, "to": after, "score": self.escalation_score},
            })
        return events


class ReasoningRouter:
    """Routes an input to one action: classification, strategy, escalation, selection.

    Holds no per-turn state; safe to reuse across turns and threads as long as the injected
    pattern source is.
    """

    def __init__(
        self,
        classifier: InputClassifier | None = None,
        strategy_selector: StrategySelector | None = None,
        escalation_manager: EscalationManager | None = None,
        action_selector: ActionSelector | None = None,
        *,
        pattern_source: PatternSource | None = None,
        known_agents: Sequence[str] = DEFAULT_AGENTS,
        max_agents_per_bundle: int = 5,
        agent_timeout_ms: int = 30_000,
    ) -> None:
        self.classifier = classifier or InputClassifier()
        self.strategy_selector = strategy_selector or StrategySelector()
        self.escalation_manager = escalation_manager or EscalationManager()
        self.action_selector = action_selector or ActionSelector()
        self.pattern_source = pattern_source
        self.known_agents = tuple(known_agents)
        self.max_agents_per_bundle = max(1, max_agents_per_bundle)
        self.agent_timeout_ms = agent_timeout_ms

    # ── 001 §3.1 ──────────────────────────────────────────────────────────

    def process(
        self,
        input: TurnInput,
        *,
        stance: Stance | None = None,
        context: HRMContext | None = None,
        conflict_hint: ConflictLevel | None = None,
    ) -> SelectedAction:
        """The single action (or coupled micro-batch) for Focus to govern."""
        return self.reason(
            input, stance=stance, context=context, conflict_hint=conflict_hint
        ).selected

    def route(self, input: TurnInput) -> RoutingDecision:
        """How this input is handled: strategy, confidence, agents, pattern, escalation."""
        return self.reason(input).routing

    def propose_agents(self, input: TurnInput) -> AgentBundleProposal | None:
        """The agent bundle the input needs, or None when its strategy needs no agents."""
        return self.reason(input).proposal

    def query_patterns(self, input_signature: dict[str, Any]) -> list[PatternMatch]:
        """Learning's patterns for a signature; empty without a source or when it fails."""
        return self._query(input_signature, [])

    # ── the two phases ────────────────────────────────────────────────────

    def reason(
        self,
        input: TurnInput,
        *,
        stance: Stance | None = None,
        context: HRMContext | None = None,
        conflict_hint: ConflictLevel | None = None,
    ) -> ReasoningResult:
        """Both phases, with every intermediate result (see the module docstring)."""
        context = context if context is not None else input.context
        notes: list[str] = []
        classification = self.classifier.classify(input, conflict_hint=conflict_hint)
        patterns = self._query(classification.signature(), notes)
        strategy = self.strategy_selector.select(classification, patterns)
        initial = strategy.strategy
        escalation = self.escalation_manager
        score = escalation.escalation_score(classification)
        escalated = escalation.should_escalate(classification, strategy)
        if escalated:
            strategy = escalation.escalate(strategy, classification)
        deescalated = False
        backing = _strongest_cheaper(patterns, strategy.strategy)
        if backing and escalation.should_deescalate(strategy, backing.match_confidence):
            strategy = escalation.deescalate(strategy, classification)
            strategy.pattern_id = backing.pattern_id
            deescalated = True
        proposal = (
            self._build_agent_proposal(strategy, classification)
            if strategy.requires_agents
            else None
        )
        candidates = self._generate_candidates(input, strategy, classification, proposal)
        selected = self.action_selector.select(
            candidates,
            context,
            stance=stance if stance is not None else context.stance,
            classification=classification,
        )
        routing = RoutingDecision(
            strategy=strategy.strategy,
            confidence=strategy.confidence,
            requires_agents=strategy.requires_agents,
            pattern_match=strategy.pattern_id,
            escalation_level=strategy.escalation_level,
        )
        return ReasoningResult(
            classification=classification,
            patterns=patterns,
            strategy=strategy,
            escalated=escalated,
            deescalated=deescalated,
            candidates=candidates,
            selected=selected,
            routing=routing,
            escalation_score=score,
            proposal=proposal,
            notes=notes,
            initial_strategy=initial,
        )

    def _query(self, signature: dict[str, Any], notes: list[str]) -> list[PatternMatch]:
        if self.pattern_source is None:
            return []
        try:
            return list(self.pattern_source(signature))
        except HRMError as exc:
            logger.warning("pattern query failed, routing without patterns: %s", exc)
            notes.append(f"patterns unavailable: {exc.code.value}")
            return []

    def _generate_candidates(
        self,
        input: TurnInput,
        strategy: StrategySelection,
        classification: InputClassification,
        proposal: AgentBundleProposal | None,
    ) -> list[CandidateAction]:
        if not input.text.strip():
            return [
                CandidateAction(
                    id="wait",
                    action_type="wait",
                    description="Nothing actionable: wait for more input",
                    momentum_score=0.2,
                    energy_cost=0.0,
                    alignment_score=0.5,
                    source=f"strategy:{strategy.strategy}",
                )
            ]
        urgency = min(1.0, 0.3 + 0.1 * max(0, input.priority))
        source = f"strategy:{strategy.strategy}"
        candidates = [
            CandidateAction(
                id="respond_direct",
                action_type="respond",
                description="Answer directly without agents",
                urgency=urgency,
                dependency_score=0.2,
                momentum_score=0.8,
                energy_cost=0.2,
                source=source,
            )
        ]
        if strategy.requires_agents and proposal is not None:
            candidates.append(
                CandidateAction(
                    id="delegate_agents",
                    action_type="delegate",
                    description=f"Delegate to agents: {proposal.agents}",
                    urgency=urgency,
                    dependency_score=0.3,
                    momentum_score=0.5,
                    energy_cost=0.7,
                    agent_proposal=proposal,
                    source=source,
                )
            )
        if classification.uncertainty > 0.5 or strategy.strategy == "dialogue":
            candidates.append(
                CandidateAction(
                    id="ask_clarify",
                    action_type="ask",
                    description="Ask user for clarification",
                    urgency=0.1,
                    dependency_score=0.5,
                    momentum_score=0.3,
                    energy_cost=0.1,
                    alignment_score=0.8,
                    source=source,
                )
            )
        if strategy.strategy in ("decomposition", "verification"):
            candidates.append(
                CandidateAction(
                    id="execute_plan",
                    action_type="execute",
                    description=f"Run a {strategy.strategy} plan through the plan engine",
                    urgency=urgency,
                    dependency_score=0.4,
                    momentum_score=0.6,
                    energy_cost=0.6,
                    source=source,
                )
            )
        fit = _FIT.get(strategy.strategy)
        for candidate in candidates:
            if candidate.id == fit:
                candidate.dependency_score = 0.9
                candidate.urgency = min(1.0, candidate.urgency + 0.2)
        return candidates

    def _build_agent_proposal(
        self, strategy: StrategySelection, classification: InputClassification
    ) -> AgentBundleProposal | None:
        """An agent bundle for the strategy from the known agents, or None if none are known."""
        wanted = _PREFERRED_AGENTS.get(strategy.strategy, ())
        preferred = [agent for agent in wanted if agent in self.known_agents]
        agents = (preferred or list(self.known_agents[:2]))[: self.max_agents_per_bundle]
        if not agents:
            return None
        reducer = strategy.suggested_reducer or ReducerType.MERGE
        if reducer == ReducerType.VOTE and len(agents) < 2:
            reducer = ReducerType.MERGE
        if reducer == ReducerType.SYNTHESIZE and len(agents) < 2:
            reducer = ReducerType.PASS_THROUGH
        return AgentBundleProposal(
            strategy=strategy.strategy,
            classification=classification,
            agents=agents,
            reducer=reducer,
            parallel=reducer != ReducerType.PASS_THROUGH,
            reducer_config=self._reducer_config(reducer, agents, classification),
            reason=strategy.reason,
            confidence=strategy.confidence,
            fallback=strategy.fallback_strategy,
        )

    def _reducer_config(
        self, reducer: ReducerType, agents: list[str], classification: InputClassification
    ) -> dict[str, Any]:
        """001 §3.5 reducer_config, with 000's timeout, tiebreaker and depth details."""
        if reducer == ReducerType.MERGE:
            return {"strategy": "dedupe", "timeout_ms": self.agent_timeout_ms}
        if reducer == ReducerType.VOTE:
            tiebreaker = "escalate" if classification.irreversible else "first"
            return {"threshold": 0.6, "tiebreaker": tiebreaker}
        if reducer == ReducerType.SYNTHESIZE:
            return {"lead": agents[0], "delegates": agents[1:], "max_depth": 2}
        return {}


def _next(strategy: str) -> str:
    position = STRATEGIES.index(strategy) if strategy in STRATEGIES else 0
    return STRATEGIES[min(position + 1, len(STRATEGIES) - 1)]


def _strongest_cheaper(patterns: list[PatternMatch], strategy: str) -> PatternMatch | None:
    """The most confident pattern recommending a cheaper strategy than ``strategy``."""
    if strategy not in STRATEGIES:
        return None
    position = STRATEGIES.index(strategy)
    cheaper = [
        p
        for p in patterns
        if p.recommended_strategy in STRATEGIES
        and STRATEGIES.index(p.recommended_strategy) < position
    ]
    return max(cheaper, key=lambda p: p.match_confidence, default=None)
