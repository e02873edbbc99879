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

Routing (issue 33, D260, D263): the request classifier (`hrm.reasoning.requests`) reads the
request's class, and the routing table (`hrm.reasoning.routing_table`, data) says what that
class does in the current stance: answer directly, run a plan, run agents with a reducer, or
ask. The table's strategy replaces the rule path's (`StrategySelector` and escalation, still
computed and recorded as the score; a simple request whose escalation score reaches
``escalation_threshold`` is routed as one that needs perspectives), except when a learned
pattern decided it: Learning's evidence from this person's feedback outranks the table. A
simple request the rule path finds too vague to answer (dialogue) is asked about. The table's
candidate is the primary action; the priority signals rank the rest for the fallback. Focus
still governs what the table picks (stance, gates, commitments): the table never overrides a
hard rule.

Without a route (`routing_table=None`) the candidate that realises the strategy gets
dependency 0.9 and urgency + 0.2 and the stance's weights choose, as before issue 33.
Routing never fails: a pattern source that raises `HRMError` is logged and skipped.
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
from hrm.reasoning.requests import RequestClassifier, RequestReading, load_request_classifier
from hrm.reasoning.routing_table import Route, RoutingTable, load_routing_table
from hrm.reasoning.strategy import StrategySelector, with_strategy
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

SecondOpinion = Callable[[str, RequestReading], RequestReading]
"""A bounded model's second opinion on a request's class (`hrm.reasoning.assist`)."""

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
    request: RequestReading | None = None
    """The request's class and its evidence (issue 33)."""
    route: Route | None = None
    """The routing table's row that decided the strategy; None when a pattern did."""
    rule_strategy: str = ""
    """The strategy the rules, escalation and patterns chose before the table routed."""

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
        request_classifier: RequestClassifier | None = None,
        routing_table: RoutingTable | bool | None = True,
        second_opinion: SecondOpinion | None = None,
    ) -> None:
        self.classifier = classifier or InputClassifier()
        self.strategy_selector = strategy_selector or StrategySelector()
        self.escalation_manager = escalation_manager or EscalationManager()
        self.action_selector = action_selector or ActionSelector()
        self.pattern_source = pattern_source
        self.known_agents = tuple(known_agents)
        self.max_agents_per_bundle = max(1, max_agents_per_bundle)
        self.agent_timeout_ms = agent_timeout_ms
        self.request_classifier = request_classifier or load_request_classifier()
        self.routing_table: RoutingTable | None = (
            load_routing_table() if routing_table is True else routing_table or None
        )
        self.second_opinion = second_opinion
        """Asked when the cue tables are unsure; set when the model is capable (D265)."""

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
        stance = stance if stance is not None else context.stance
        request, route = self._route(input.text, conflict_hint, stance, strategy, initial, score)
        rule_strategy = strategy.strategy
        if route is not None:
            # The rule path's escalation (001 §3.4) stays in the record as what the rules
            # would have done; the table's strategy is what the turn does (D263).
            strategy = _routed(strategy, route, classification)
        proposal = (
            self._build_agent_proposal(strategy, classification)
            if strategy.requires_agents
            else None
        )
        candidates = self._generate_candidates(input, strategy, classification, proposal)
        routed = None
        if route is not None and any(c.id == route.candidate_id for c in candidates):
            routed = (route.candidate_id, route.describe())
        elif route is not None:
            notes.append(f"{route.describe()}: no {route.candidate_id} candidate; scored instead")
        selected = self.action_selector.select(
            candidates, context, stance=stance, classification=classification, routed=routed
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
            request=request,
            route=route if routed is not None else None,
            rule_strategy=rule_strategy,
        )

    def _route(
        self,
        text: str,
        conflict_hint: ConflictLevel | None,
        stance: Stance | None,
        strategy: StrategySelection,
        rule_strategy: str,
        escalation_score: float,
    ) -> tuple[RequestReading, Route | None]:
        """The request's class and the table's route for it; no route when a pattern decided
        the strategy (Learning's evidence wins) or there is no table."""
        request = self.request_classifier.classify(text, conflict_hint=conflict_hint)
        if self.second_opinion is not None:
            request = self.second_opinion(text, request)
        threshold = self.escalation_manager.threshold
        if request.request_class == "simple" and escalation_score >= threshold:
            # The dimensions call for more effort than the cue tables saw (the configured
            # escalation_threshold, 001 §3.4): look at the options before answering (D263).
            request.request_class = "needs_perspectives"
            request.cues.setdefault("needs_perspectives", []).append(
                f"escalation:{escalation_score:.2f}"
            )
        if self.routing_table is None or strategy.pattern_id is not None or not text.strip():
            return request, None
        route = self.routing_table.lookup(request.request_class, stance)
        if route.action == "respond_direct" and rule_strategy == "dialogue":
            # Too vague to answer: the rule path's question stands (D263).
            route = Route(route.request_class, route.stance, "ask", "dialogue")
        return request, route

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


def _routed(
    strategy: StrategySelection, route: Route, classification: InputClassification
) -> StrategySelection:
    """`strategy` moved to the route's, with the route's reducer and the reason saying so."""
    moved = with_strategy(
        strategy,
        route.strategy,
        reason=f"{route.describe()} (rules alone: {strategy.strategy})",
        classification=classification,
    )
    if route.reducer is not None:
        moved.suggested_reducer = route.reducer
    return moved


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
