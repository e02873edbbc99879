"""Reducers (001 §8.4): how a bundle's validated outputs become one result.

Every orchestration mode is Map + Reduce: a pipeline passes the last output through, a parallel
bundle merges (concatenate, dedupe, select_best), a vote tallies, a hierarchy has its lead
synthesize. Reducers are pure over their inputs except `SynthesisReducer`, which makes the
lead's one model call. A reducer sees only outputs that passed the firewall.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.llm import task_message
from hrm.llm.types import LLMCallConfig, Message
from hrm.types import ReducerType

if TYPE_CHECKING:
    from hrm.llm.types import ILLMAdapter
    from hrm.reasoning.types import AgentBundleProposal
    from hrm.runtime.types import AgentOutput

__all__ = [
    "MERGE_STRATEGIES",
    "TIEBREAKERS",
    "MergeReducer",
    "PassThroughReducer",
    "Reducer",
    "SynthesisReducer",
    "VotingReducer",
    "answer_key",
    "reducer_for",
]

MERGE_STRATEGIES = ("concatenate", "dedupe", "select_best")
"""``MergeReducer`` strategies (001 §8.4; ``select_best`` from 000 §3.5)."""
TIEBREAKERS = ("first", "abstain", "escalate")
"""What a vote does without a single winner (000 §3.5)."""

_TRAILING_PUNCTUATION = re.compile(r"[\s.!?;:,]+$")


def answer_key(content: Any) -> str:
    """The comparison key of an answer: whitespace collapsed, case folded, end punctuation cut.

    Votes and dedupe compare answers, not their typography: "Yes." and "yes" agree.
    """
    text = " ".join(str(content).split()).casefold()
    return _TRAILING_PUNCTUATION.sub("", text)


class Reducer(ABC):
    """Combines validated outputs into one result."""

    name: str = "reducer"
    """The reducer's name in results and records."""

    @abstractmethod
    def reduce(self, outputs: list[AgentOutput]) -> Any:
        """The combined result of ``outputs`` (in agent order).

        Raises:
            HRMError: When no result can be formed (``ESCALATION_REQUIRED`` for an
                escalated vote, ``STRATEGY_FAILED`` for an abstention or nothing to reduce).
        """


class PassThroughReducer(Reducer):
    """Pipeline mode: the last output's content (``None`` when there is none)."""

    name = "pass_through"

    def reduce(self, outputs: list[AgentOutput]) -> Any:
        """The last output's content."""
        return outputs[-1].content if outputs else None


class MergeReducer(Reducer):
    """Parallel mode: concatenate, dedupe (first occurrence kept) or select_best (confidence).

    Args:
        strategy: One of `MERGE_STRATEGIES`.
    """

    name = "merge"

    def __init__(self, strategy: str = "concatenate") -> None:
        if strategy not in MERGE_STRATEGIES:
            raise HRMError.validation_failed(
                f"Merge strategy '{strategy}' is not one of {list(MERGE_STRATEGIES)}",
                strategy=strategy,
            )
        self.strategy = strategy

    def reduce(self, outputs: list[AgentOutput]) -> Any:
        """Contents merged by the strategy; ``select_best`` breaks confidence ties by order."""
        if self.strategy == "dedupe":
            seen: set[str] = set()
            kept: list[Any] = []
            for output in outputs:
                key = answer_key(output.content)
                if key not in seen:
                    seen.add(key)
                    kept.append(output.content)
            return kept
        if self.strategy == "select_best":
            if not outputs:
                return None
            # max keeps the first of equals, so ties go to the earlier agent
            return max(outputs, key=lambda o: _confidence(o.metadata)).content
        return [output.content for output in outputs]


class VotingReducer(Reducer):
    """Voting mode: the answer whose share of votes reaches ``threshold`` wins.

    A tie for the most votes is never a win, even above the threshold. Without a winner the
    tiebreaker decides: ``first`` takes the earliest answer among the most-voted ones,
    ``abstain`` gives no answer (``STRATEGY_FAILED``, so the caller falls back), ``escalate``
    raises ``ESCALATION_REQUIRED``.

    Args:
        threshold: Share of votes needed, in (0, 1].
        tiebreaker: One of `TIEBREAKERS`.
    """

    name = "vote"

    def __init__(self, threshold: float = 0.6, tiebreaker: str = "first") -> None:
        if not 0 < threshold <= 1:
            raise HRMError.validation_failed(
                f"Vote threshold must be in (0, 1], got {threshold}", threshold=threshold
            )
        if tiebreaker not in TIEBREAKERS:
            raise HRMError.validation_failed(
                f"Vote tiebreaker '{tiebreaker}' is not one of {list(TIEBREAKERS)}",
                tiebreaker=tiebreaker,
            )
        self.threshold = threshold
        self.tiebreaker = tiebreaker

    def tally(self, outputs: list[AgentOutput]) -> list[tuple[str, int, Any]]:
        """``(key, votes, first content)`` per answer, most votes first, then first given."""
        counts: dict[str, int] = {}
        first: dict[str, Any] = {}
        for output in outputs:
            key = answer_key(output.content)
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, output.content)
        ranked = sorted(counts, key=lambda k: -counts[k])  # stable: first given wins ties
        return [(key, counts[key], first[key]) for key in ranked]

    def reduce(self, outputs: list[AgentOutput]) -> Any:
        """The winning answer's content (as the first voter wrote it)."""
        tally = self.tally(outputs)
        total = len(outputs)
        if tally:
            _key, votes, content = tally[0]
            tied = len(tally) > 1 and tally[1][1] == votes
            if not tied and votes / total >= self.threshold:
                return content
        summary = ", ".join(f"{key!r}: {votes}" for key, votes, _ in tally) or "no votes"
        reason = f"no answer reached {self.threshold:.0%} of {total} vote(s) ({summary})"
        if self.tiebreaker == "first" and tally:
            return tally[0][2]
        if self.tiebreaker == "escalate":
            raise HRMError.escalation_required(
                f"Vote without consensus: {reason}", threshold=self.threshold, votes=summary
            )
        raise HRMError.strategy_failed("vote", f"{reason}; the vote abstained")


class SynthesisReducer(Reducer):
    """Hierarchical mode: the lead agent's model call over its delegates' outputs.

    Args:
        lead_agent: The lead's id (named in the prompt).
        llm: The lead's model.
        system_prompt: The lead's own system prompt; a generic one when ``None``.
        task: The bundle's task, so the synthesis answers it.
        config: Call settings for the lead (model, temperature, timeout).
    """

    name = "synthesize"

    def __init__(
        self,
        lead_agent: str,
        llm: ILLMAdapter,
        *,
        system_prompt: str | None = None,
        task: str = "",
        config: LLMCallConfig | None = None,
    ) -> None:
        self.lead_agent = lead_agent
        self.llm = llm
        self.system_prompt = system_prompt
        self.task = task
        self.config = config

    def reduce(self, outputs: list[AgentOutput]) -> Any:
        """The lead's synthesis text.

        Raises:
            HRMError: ``STRATEGY_FAILED`` when no delegate output is left to synthesize; the
                lead's model error otherwise.
        """
        if not outputs:
            raise HRMError.strategy_failed(
                "synthesize", f"no delegate output reached the lead '{self.lead_agent}'"
            )
        sections = [(task_message.SYNTHESIZE, "")] + [
            (task_message.output_label(index, output.agent_id), str(output.content))
            for index, output in enumerate(outputs, start=1)
        ]
        content = task_message.task_message(self.task, sections=sections)
        system = self.system_prompt or f"You are {self.lead_agent}, synthesizing delegate outputs."
        config = (self.config or LLMCallConfig()).resolve(LLMCallConfig(purpose="agent_synthesis"))
        response = self.llm.chat([Message(role="user", content=content)], system, config)
        return response.content


def reducer_for(
    proposal: AgentBundleProposal,
    llm: ILLMAdapter | None,
    *,
    task: str = "",
    lead_system_prompt: str | None = None,
    lead_config: LLMCallConfig | None = None,
) -> Reducer:
    """The reducer a proposal asks for, configured from its ``reducer_config``.

    Args:
        proposal: The approved bundle.
        llm: The lead's model (needed only for ``SYNTHESIZE``).
        task: The bundle's task, for the synthesis prompt.
        lead_system_prompt: The lead's system prompt, for the synthesis call.
        lead_config: The lead's call settings.

    Raises:
        HRMError: ``VALIDATION_FAILED`` for an unknown strategy or tiebreaker, a threshold
            outside (0, 1], or ``SYNTHESIZE`` without a lead or a model.
    """
    config = proposal.reducer_config or {}
    reducer = ReducerType(proposal.reducer)
    if reducer == ReducerType.PASS_THROUGH:
        return PassThroughReducer()
    if reducer == ReducerType.MERGE:
        return MergeReducer(str(config.get("strategy", "concatenate")))
    if reducer == ReducerType.VOTE:
        return VotingReducer(
            threshold=float(config.get("threshold", 0.6)),
            tiebreaker=str(config.get("tiebreaker", "first")),
        )
    lead = config.get("lead") or (proposal.agents[0] if proposal.agents else None)
    if not lead:
        raise HRMError.validation_failed("A SYNTHESIZE bundle needs a lead agent")
    if llm is None:
        raise HRMError.validation_failed(f"A SYNTHESIZE bundle needs a model for lead '{lead}'")
    return SynthesisReducer(
        str(lead), llm, system_prompt=lead_system_prompt, task=task, config=lead_config
    )


def _confidence(metadata: dict[str, Any]) -> float:
    value = metadata.get("confidence", 0.0)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
