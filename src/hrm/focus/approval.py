"""The AgentApprovalGate (001 §4.4): may this agent bundle run, here and now?

Four rules, checked in order; the first failure is the decision's reason (and
``metadata["rule"]``), so a denial is explainable and Reasoning's fallback can take over:

1. **Stance** — the stance allows this kind of agent work (`stance_allows`, the same table as
   the stance machine's ``delegate`` rule): SENSEMAKING exploration/verification, DISCOVERY
   exploration/decomposition, EXECUTION any reducer, EVALUATION vote/verification.
2. **Commitment alignment** — during a commitment the bundle must serve its problem: an explicit
   ``reducer_config["problem_id"]`` must equal the commitment's; without one, the
   classification's domains (and the proposal's reason) must share a keyword with the
   commitment's description. No shared keyword is a denial: gates fail closed.
3. **Authorization** — at least one agent, no duplicates, every id known to the registry, and no
   more than ``max_agents`` (``HRMConfig.max_agents_per_bundle``).
4. **Reducer compatibility** — VOTE: ≥ 2 agents, ``threshold`` in (0, 1] (default 0.6),
   ``tiebreaker`` first | abstain | escalate; SYNTHESIZE: a known ``lead`` (among or beside the
   agents) and ``max_depth`` ≥ 1 (default 2); MERGE: ``strategy`` concatenate | dedupe |
   select_best (default concatenate); PASS_THROUGH: ``parallel`` is False (a pipeline).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from hrm.focus.gates import GateDecision
from hrm.focus.stance import ACTION_RULES, proposal_purposes
from hrm.governance.problems import extract_keywords
from hrm.types import GateType, ReducerType, Stance

if TYPE_CHECKING:
    from hrm.config import PolicySurface
    from hrm.governance.arbiter import CommitmentView
    from hrm.reasoning.types import AgentBundleProposal

__all__ = ["MERGE_STRATEGIES", "VOTE_TIEBREAKERS", "AgentApprovalGate"]

VOTE_TIEBREAKERS = ("first", "abstain", "escalate")
MERGE_STRATEGIES = ("concatenate", "dedupe", "select_best")


class AgentApprovalGate:
    """Validates agent bundle proposals against governance state (001 §4.4).

    Args:
        policy: The policy; its MAX_CONCURRENT_AGENTS is the default bundle limit.
        agent_registry: The known agent ids, or a predicate answering "is this id known?".
        max_agents: Most agents one bundle may hold (``HRMConfig.max_agents_per_bundle``).
    """

    def __init__(
        self,
        policy: PolicySurface,
        agent_registry: Callable[[str], bool] | Collection[str],
        *,
        max_agents: int | None = None,
    ) -> None:
        self.policy = policy
        if callable(agent_registry):
            self._is_known: Callable[[str], bool] = agent_registry
        else:
            known = frozenset(agent_registry)
            self._is_known = known.__contains__
        self.max_agents = max_agents if max_agents is not None else policy.MAX_CONCURRENT_AGENTS

    def evaluate(
        self,
        proposal: AgentBundleProposal,
        stance: Stance,
        commitment: CommitmentView | None,
    ) -> GateDecision:
        """Apply rules 1–4 in order; approved only if all pass (001 returns the bool)."""
        checks: tuple[tuple[str, Callable[[], str | None]], ...] = (
            ("stance", lambda: self._check_stance(proposal, stance)),
            ("commitment", lambda: self._check_commitment(proposal, commitment)),
            ("authorization", lambda: self._check_authorization(proposal)),
            ("reducer", lambda: self._check_reducer(proposal)),
        )
        metadata: dict[str, Any] = {
            "agents": list(proposal.agents),
            "reducer": proposal.reducer.value,
            "strategy": proposal.strategy,
            "stance": stance.value,
            "commitment_id": getattr(commitment, "id", None),
        }
        for rule, check in checks:
            failure = check()
            if failure is not None:
                return GateDecision(
                    approved=False,
                    gate=GateType.AGENT_APPROVAL,
                    reason=failure,
                    metadata={**metadata, "rule": rule},
                )
        return GateDecision(
            approved=True,
            gate=GateType.AGENT_APPROVAL,
            reason=f"{len(proposal.agents)} agent(s) approved with {proposal.reducer.value}",
            metadata=metadata,
        )

    def stance_allows(self, proposal: AgentBundleProposal, stance: Stance) -> bool:
        """Whether `stance` allows this kind of agent work (001 §4.4's mapping)."""
        return self._check_stance(proposal, stance) is None

    # ── rules ──────────────────────────────────────────────────────────────

    @staticmethod
    def _check_stance(proposal: AgentBundleProposal, stance: Stance) -> str | None:
        rules = ACTION_RULES[stance]
        if "delegate" not in rules:
            return f"{stance.value} does not allow agent work"
        allowed = rules["delegate"]
        purposes = proposal_purposes(proposal)
        if allowed is None or purposes & allowed:
            return None
        return (
            f"{stance.value} allows agents only for {', '.join(sorted(allowed))};"
            f" this bundle is {', '.join(sorted(purposes))}"
        )

    @staticmethod
    def _check_commitment(
        proposal: AgentBundleProposal, commitment: CommitmentView | None
    ) -> str | None:
        if commitment is None or getattr(commitment, "status", "active") != "active":
            return None
        explicit = proposal.reducer_config.get("problem_id")
        if explicit is not None:
            if explicit == commitment.problem_id:
                return None
            return (
                f"Bundle serves problem {explicit}, but commitment {commitment.id} is on"
                f" {commitment.problem_id}"
            )
        description = str(getattr(commitment, "description", ""))
        committed = frozenset(extract_keywords(description))
        offered = frozenset(
            extract_keywords(" ".join([*proposal.classification.domain, proposal.reason]))
        )
        if committed & offered:
            return None
        return (
            f"Bundle does not serve commitment {commitment.id} ('{description}'): no shared"
            " domain; set reducer_config['problem_id'] to claim it does"
        )

    def _check_authorization(self, proposal: AgentBundleProposal) -> str | None:
        agents = list(proposal.agents)
        if not agents:
            return "The bundle names no agents"
        if len(set(agents)) != len(agents):
            return "The bundle names an agent more than once"
        if len(agents) > self.max_agents:
            return f"{len(agents)} agents exceed the limit of {self.max_agents} per bundle"
        unknown = [agent for agent in agents if not self._is_known(agent)]
        if unknown:
            return f"Unknown agent(s): {', '.join(unknown)}"
        return None

    def _check_reducer(self, proposal: AgentBundleProposal) -> str | None:
        config = proposal.reducer_config
        reducer = proposal.reducer
        if reducer is ReducerType.VOTE:
            if len(proposal.agents) < 2:
                return "A vote needs at least two agents"
            threshold = config.get("threshold", 0.6)
            if isinstance(threshold, bool) or not isinstance(threshold, int | float):
                return f"Vote threshold must be a number in (0, 1], got {threshold!r}"
            if not 0 < threshold <= 1:
                return f"Vote threshold must be in (0, 1], got {threshold}"
            tiebreaker = config.get("tiebreaker", "first")
            if tiebreaker not in VOTE_TIEBREAKERS:
                return f"Vote tiebreaker must be one of {', '.join(VOTE_TIEBREAKERS)}"
        elif reducer is ReducerType.SYNTHESIZE:
            lead = config.get("lead")
            if not isinstance(lead, str) or not lead:
                return "Synthesis needs a lead agent (reducer_config['lead'])"
            if lead not in proposal.agents and not self._is_known(lead):
                return f"Synthesis lead '{lead}' is not a known agent"
            depth = config.get("max_depth", 2)
            if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
                return f"Synthesis max_depth must be an integer ≥ 1, got {depth!r}"
        elif reducer is ReducerType.MERGE:
            strategy = config.get("strategy", "concatenate")
            if strategy not in MERGE_STRATEGIES:
                return f"Merge strategy must be one of {', '.join(MERGE_STRATEGIES)}"
        elif reducer is ReducerType.PASS_THROUGH and proposal.parallel:
            return "A pass-through pipeline runs serially: set parallel=False"
        return None
