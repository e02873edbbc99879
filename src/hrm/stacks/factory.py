"""The stack factory (004 §3): one isolated cognitive stack per agent class, same code for all.

`create_stack(agent_class, config, home)` builds the stack's HO2 process (Altitude, Reasoning,
Focus over this stack's state), its HO1 process (the model gateway and the executor of work
orders), its ledger partitions (``HO2/ledger/<class>/workorder.jsonl`` for decisions,
``HO1/ledger/<class>/worker.jsonl`` for work orders), a session id ``SES-<uuid>``, the attention
templates bound to it, and the token budget ceiling HO3 allocates to it, which the gateway
enforces. Every instance is built for exactly one agent class: nothing it holds can serve
another (004 Conformance 10).

Shared infrastructure (004 §1) is not per stack: the policy (HO3), the gateway code, the ledger
code, and the Meta Learning Ledger in ``HOT/ledger/meta_learning.jsonl``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from hrm._process import time_ordered_uuid
from hrm._shipped import SHIPPED_HOME, unchanged
from hrm.config import HRMConfig
from hrm.home import HRMHome, parse_agent_class, stack_dirname
from hrm.stacks.checkpoint import tokens_spent
from hrm.storage.ledger import Ledger
from hrm.storage.sqlite import Database
from hrm.storage.stack_db import open_stack_db
from hrm.types import Clock, HRMContext, system_clock

__all__ = ["CognitiveStack", "create_stack", "new_session_id"]

logger = logging.getLogger(__name__)


def new_session_id() -> str:
    """A session id of the form ``SES-<uuid>`` (004 §4); the UUID is of version 7, so ids sort
    by when their sessions began and a session's rows append to the indexes they key (D404)."""
    return f"SES-{time_ordered_uuid()}"


@dataclass
class CognitiveStack:
    """One agent class's HO2 + HO1 processes and their isolated state partitions."""

    agent_class: str
    home: HRMHome
    config: HRMConfig
    session_id: str
    db: Database
    decision_ledger: Ledger
    """HO2m."""
    execution_ledger: Ledger
    """HO1m."""
    bus: Any
    focus: Any
    altitude: Any
    planner: Any
    evaluator: Any
    router: Any
    patterns: Any
    feedback: Any
    gateway: Any
    executor: Any
    attention: Any
    budget_ceiling: int
    governance_ledger: Ledger
    tokens_spent: int = 0
    """Tokens the stack's earlier instances spent (summed from HO1m when this one was created)."""
    committer: Any = None
    """Group-commits the stack's ledgers at turn boundaries (see `_group_commit`)."""
    work_order_sink: list[dict[str, Any]] | None = None
    """While a turn runs, work orders recorded in HO1m are also collected here."""
    text_sink: Callable[[str], None] | None = None
    """While a turn runs for a listener (`HRM.turn(on_text=…)`), the answer's text as the model
    produces it: the respond step streams its call and hands each piece here."""
    _learnings: Any = field(default=None, repr=False)
    _home_db: Database | None = field(default=None, repr=False)
    _closed: bool = field(default=False, repr=False)
    _canon_view: tuple[Any, Mapping[str, Any]] | None = field(default=None, repr=False)
    _forgotten: tuple[Any, tuple[str, ...]] | None = field(default=None, repr=False)

    # ── HO2m ───────────────────────────────────────────────────────────────

    def active_template_ids(self) -> list[str]:
        return list(self.attention.template_ids)

    def ho2m_fields(
        self,
        *,
        work_orders: list[dict[str, Any]],
        arbitration: dict[str, Any],
        escalations: list[dict[str, Any]],
        attention_state: dict[str, Any],
        meta_episodes: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """The fields every HO2m entry carries (004 §4)."""
        return {
            "session_id": self.session_id,
            "agent_class": self.agent_class,
            "work_order_log": [
                {
                    "wo_id": wo.get("wo_id"),
                    "type": wo.get("type"),
                    "state": "completed" if wo.get("outcome") == "ok" else "failed",
                }
                for wo in work_orders
            ],
            "arbitration_outcomes": [arbitration] if arbitration else [],
            "escalation_events": list(escalations),
            "meta_episodes": list(meta_episodes),
            "attention_state": attention_state,
            "active_templates": self.active_template_ids(),
        }

    def record_work_order(self, kind: str, data: dict[str, Any]) -> Any:
        """The gateway's and runtime's record callback: HO1m, plus the current turn's log."""
        payload = {"session_id": self.session_id, "agent_class": self.agent_class, **data}
        rec = self.execution_ledger.append(kind, payload)
        if self.work_order_sink is not None and kind == "work_order":
            self.work_order_sink.append(payload)
        return rec

    # ── memory helpers the turn uses ───────────────────────────────────────

    def canon(self) -> Mapping[str, Any]:
        """The stack's Shared Reference (canonical statements): read-only, and the same view
        until the canon changes (a turn reads it several times; a large canon is not copied
        each time)."""
        latest = self.bus.shared.latest()
        view = self._canon_view
        if view is None or view[0] is not latest:
            view = self._canon_view = (latest, MappingProxyType(dict(latest)))
        return view[1]

    def forgettable(self) -> Mapping[str, Any]:
        """What a request to forget can name: the canon, and the decisions the person stated
        in the working sets still live (D424), each under ``decision.<problem id>.<n>``."""
        from hrm.reading.rules.memory import DECISION_KEY

        canon = self.canon()
        decisions = {
            f"{DECISION_KEY}{working.problem_id}.{i}": str(decision.get("decision", ""))
            for working in self.bus.working.list_active()
            for i, decision in enumerate(working.local_decisions)
            if isinstance(decision, dict) and decision.get("decision")
        }
        return {**canon, **decisions} if decisions else canon

    def forgotten(self) -> tuple[str, ...]:
        """What the person asked hrm to forget of its canon (D450), for context assembly to keep
        out of what the model is shown: the last statement of each entry a forget retracted,
        and the part a forget took out of a statement ("I live in Lisbon" of "my name is Ana
        Costa and I live in Lisbon", D83).

        A forget is a new version of the key, so the statement is still in the key's history
        (and `rollback` brings it back); the conversation that said it is still in the recent
        exchanges. Read again only when the canon changes. An entry replaced by a newer
        statement (D70) or rolled back is not forgotten.
        """
        from hrm.governance.preferences import is_retracted

        latest = self.bus.shared.latest()
        cached = self._forgotten
        if cached is not None and cached[0] is latest:
            return cached[1]
        forgets = {
            key for key, value in latest if is_retracted(value) and "forgotten" in value
        }
        texts: list[str] = []
        if latest:
            for key, values in self.bus.shared.values_by_key().items():
                taken = _taken_away(values, retracted=key in forgets)
                if taken:
                    texts.append(taken)
        self._forgotten = (latest, tuple(texts))
        return self._forgotten[1]

    def learnings(self) -> Any:
        """The home's learnings repository, on the home's database, built once.

        Learnings are the home's, not a stack's, so they stay in the home's ``memory.db``,
        which holds no stack's rows (D320). Built on first use (most turns of a fresh home
        never search learnings) and kept: its migration check and its term-frequency cache
        are not redone on every turn.
        """
        if self._learnings is None:
            from hrm.continuity.learnings import LearningsRepository

            self._home_db = Database(self.home.memory_db)
            self._learnings = LearningsRepository(self._home_db)
        return self._learnings

    def write_preference(
        self,
        statement: str,
        key: str,
        *,
        confirmed: bool,
        signals: Any = None,
        confidence: float = 0.9,
        inferred: bool = False,
        classification: Any = None,
    ) -> dict[str, Any]:
        """Write a preference through the write gate; returns the decision as a record.

        `classification` is the turn's reading of the statement (a `PreferenceClassification`);
        the gate's truth model applies to it instead of classifying the bare statement again.

        An explicit preference is first-hand testimony about the person, so its source quality is
        the classifier's confidence rather than the generic input floor (docs/decisions.md D7).
        A confirmed preference has already passed the truth model (the person said yes).
        """
        from hrm.types import ConflictLevel

        decision = self._write_said(
            key,
            statement,
            signals=signals,
            quality=0.95 if confirmed else confidence,
            conflict=ConflictLevel.NONE if confirmed else None,
            reason="confirmed by the person" if confirmed else "stated preference",
            is_preference=not confirmed,
            preference=None if confirmed else classification,
        )
        return _shared_write_record(decision, key, inferred=inferred)

    def write_fact(
        self, fact: str, key: str, *, signals: Any = None, conflict: Any = None
    ) -> dict[str, Any]:
        """Write a fact the person asked to be remembered through the write gate (D73).

        Like an explicit preference (D7), it is first-hand testimony — about the person's own
        world — given with the explicit wish that it be kept, so its source quality is 0.9,
        not the generic input floor that a Shared Reference write (SEVERE) would refuse.
        `conflict` overrides the turn's conflict level (a new value of the same fact, D378).
        """
        decision = self._write_said(
            key, fact, signals=signals, quality=0.9, reason="the person asked to remember it",
            conflict=conflict,
        )
        return _shared_write_record(decision, key)

    def _write_said(
        self,
        key: str,
        value: str,
        *,
        signals: Any,
        quality: float,
        reason: str,
        conflict: Any = None,
        is_preference: bool = False,
        preference: Any = None,
    ) -> Any:
        """A Shared Reference write of what the person said, through the write gate: the
        turn's conflict and alignment, unless `conflict` overrides the first."""
        from hrm.memory.types import MemoryTarget, WriteRequest, WriteSignals
        from hrm.types import BlastRadius, ConflictLevel

        if conflict is None:
            conflict = getattr(signals, "conflict_level", ConflictLevel.NONE)
        request = WriteRequest(
            target=MemoryTarget.SHARED_REFERENCE,
            key=key,
            value=value,
            signals=WriteSignals(
                progress_delta=0.1,
                conflict_level=conflict,
                source_quality=quality,
                alignment_score=float(getattr(signals, "alignment_score", 0.5)),
                blast_radius=BlastRadius.SEVERE,
            ),
            reason=reason,
            is_preference=is_preference,
            preference=preference,
            source="user",
        )
        return self.bus.write(request)

    def retract_preference(self, key: str, *, replaced_by: str) -> dict[str, Any]:
        """End the canon preference `key`: a new version that says it was replaced (D70).

        The Shared Reference is append-only (001 §6.3), so the earlier statement stays in the
        key's history and `hrm memory shared rollback` brings it back; readers of the canon
        skip a retracted preference (`is_retracted`). The person said so, in answer to hrm's
        question: the write is trusted, like a confirmed preference.
        """
        return self._retract(
            key, {"replaced_by": replaced_by},
            reason=f"replaced by {replaced_by}, as the person confirmed",
        )

    def forget(self, key: str, *, asked: str) -> dict[str, Any]:
        """End the canon entry `key` (a preference or a fact) because the person asked (D77).

        As a replaced preference is (D70): a new version marks it retracted, its history keeps
        what it said, and `hrm memory shared rollback` brings it back. `asked` is the request,
        kept with the version so the history says why.
        """
        return self._retract(key, {"forgotten": asked}, reason="the person asked to forget it")

    def record_decision(self, problem_id: str, decision: dict[str, Any]) -> dict[str, Any]:
        """Keep a decision the person stated in the problem's working set (D88); the write as
        the decision record keeps it, with the `forgettable` key it is kept under, so that
        "forget that" right after it takes it back (D424)."""
        from hrm.reading.rules.memory import DECISION_KEY

        verdict = self.bus.record_decision(problem_id, decision)
        said = str(decision.get("decision", "")).casefold()
        working = self.bus.working.get(problem_id)
        kept_as = next(
            (
                f"{DECISION_KEY}{problem_id}.{i}"
                for i, kept in enumerate(working.local_decisions if working is not None else ())
                if isinstance(kept, dict) and str(kept.get("decision", "")).casefold() == said
            ),
            None,
        )
        return _decision_write_record(verdict, decision.get("decision"), kept_as=kept_as)

    def forget_decision(self, key: str, said: str, *, asked: str) -> dict[str, Any]:
        """Take the stated decision `key` (a `forgettable` key) out of its working set (D424)."""
        from hrm.reading.rules.memory import DECISION_KEY

        problem_id = key.removeprefix(DECISION_KEY).rpartition(".")[0]
        verdict = self.bus.forget_decision(problem_id, said, asked=asked)
        return _decision_write_record(verdict, said, forgotten=True)

    def correct_kept(self, key: str, new: str, *, was: str, said: str) -> dict[str, Any]:
        """Replace what `key` keeps (a canon entry or a stated decision) with `new`: the person
        corrected it right after it was kept (D469). A canon entry gets a new version, trusted
        as a retraction is (the person said so; `rollback` brings `was` back); a decision is
        taken out of its working set and the corrected one recorded in its place."""
        from hrm.memory.types import WriteSignals
        from hrm.reading.rules.memory import DECISION_KEY

        if key.startswith(DECISION_KEY):
            problem_id = key.removeprefix(DECISION_KEY).rpartition(".")[0]
            self.bus.forget_decision(problem_id, was, asked=said)
            write = self.record_decision(problem_id, {"decision": new, "said": said})
            return {**write, "corrected": was}
        decision = self.bus.write_to_shared(
            key, new, "user", WriteSignals.trusted(),
            reason=f"the person corrected it ({said})",
        )  # fmt: skip
        return {**_shared_write_record(decision, key), "corrected": was}

    def forget_part(self, key: str, kept: str, *, asked: str) -> dict[str, Any]:
        """Keep only `kept` of the canon fact `key`: the person asked to forget the rest (D83).

        A new version, trusted as a retraction is (the person said so); the key's history
        keeps the whole, and `hrm memory shared rollback` brings it back.
        """
        from hrm.memory.types import WriteSignals

        decision = self.bus.write_to_shared(
            key, kept, "user", WriteSignals.trusted(),
            reason=f"the person asked to forget part of it ({asked})",
        )  # fmt: skip
        return _shared_write_record(decision, key)

    def _retract(self, key: str, why: dict[str, Any], *, reason: str) -> dict[str, Any]:
        """A trusted write of a retracted version of `key`: the person said so."""
        from hrm.memory.types import WriteSignals

        decision = self.bus.write_to_shared(
            key, {"retracted": True, **why}, "user", WriteSignals.trusted(), reason=reason
        )
        return _shared_write_record(decision, key, retracted=True)

    def assemble_context(self, text: str, ctx: HRMContext, problem: Any) -> Any:
        """The context the model sees this turn, through the bound attention templates."""
        return self.attention.assemble(text, ctx, problem)

    def execute(
        self,
        action: Any,
        turn_input: Any,
        assembled: Any,
        reasoning: Any,
        classification: Any,
        event: Callable[..., None],
    ) -> Any:
        """HO1: carry out the governed action."""
        return self.executor.execute(
            action, turn_input, assembled, reasoning, classification, event
        )

    # ── budget ─────────────────────────────────────────────────────────────

    @property
    def tokens_spent_total(self) -> int:
        """Tokens this agent class has spent over its whole history, this instance included."""
        return int(self.tokens_spent) + int(getattr(self.gateway, "tokens_used", 0))

    def allocate_session_budget(self, spent_in_session: int) -> None:
        """Give the gateway what the ceiling leaves the current session (D23).

        ``spent_in_session`` counts the session's tokens spent before this instance existed
        (an earlier process continuing the same session); this instance's own calls are
        already counted by the gateway.
        """
        if getattr(self.gateway, "usage_source", None) is not None:
            # The gateway counts the session from the ledger itself (D280): the ceiling is
            # its budget as it stands.
            self.gateway.budget_tokens = self.budget_ceiling
            return
        remaining = max(0, self.budget_ceiling - max(0, spent_in_session))
        self.gateway.budget_tokens = remaining + int(getattr(self.gateway, "tokens_used", 0))

    # ── lifecycle ──────────────────────────────────────────────────────────

    def record_created(self) -> None:
        """Record ``stack_created`` in the governance ledger, with the session it serves."""
        self.governance_ledger.append(
            "stack_created",
            {
                "agent_class": self.agent_class,
                "partition": stack_dirname(self.agent_class),
                "session_id": self.session_id,
                "budget_ceiling": self.budget_ceiling,
                "tokens_used_before": self.tokens_spent,
                "templates": self.attention.template_ids,
                "provider": self.gateway.provider,
                "model": self.gateway.model,
            },
        )
        self.governance_ledger.commit()
        logger.debug("stack %s created (session %s)", self.agent_class, self.session_id)

    def join_session(self, session_id: str) -> None:
        """Serve `session_id` from now on: HO2m and HO1m records carry it.

        A session outlives processes (D9): a process continuing one, or seeing another process
        start one, writes under that session's id, not the id it was created with.
        """
        self.session_id = session_id

    def end_turn(self) -> None:
        """A commit boundary: make this turn's records durable (group commit)."""
        self.committer.request()

    def _advance_checkpoints(self) -> None:
        """Move the recovery and token checkpoints to the ledgers' ends (D313).

        What this process appended is read once more here, so the next open reads only what
        came after it; a failure costs that open a longer read, never this teardown.
        """
        from hrm.errors import HRMError
        from hrm.stacks.checkpoint import advance

        try:
            advance(self.db, self.agent_class, self.decision_ledger, self.execution_ledger)
        except HRMError as exc:
            logger.warning("stack %s: checkpoints not moved: %s", self.agent_class, exc.message)

    def teardown(self, reason: str = "session end") -> None:
        """Release the instances; keep every ledger entry (004 §8). Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.committer.close()
            self.governance_ledger.append(
                "stack_teardown",
                {
                    "agent_class": self.agent_class,
                    "session_id": self.session_id,
                    "reason": reason,
                    "tokens_used": getattr(self.gateway, "tokens_used", 0),
                },
            )
            self.governance_ledger.commit()
            self.decision_ledger.commit()
            self.execution_ledger.commit()
            self.bus.commit()
            self._advance_checkpoints()
        finally:
            for ledger in (self.decision_ledger, self.execution_ledger, self.governance_ledger):
                ledger.close()
            self.bus.close()
            self.db.close()
            if self._home_db is not None:
                self._home_db.close()


def create_stack(
    agent_class: str,
    config: HRMConfig,
    home: HRMHome | None = None,
    *,
    llm: Any = None,
    clock: Clock = system_clock,
    announce: bool = True,
) -> CognitiveStack:
    """Build one stack for `agent_class` (004 §3). Records its creation in the governance ledger.

    Args:
        agent_class: ``ADMIN`` or ``RESIDENT:<name>`` (validated: no separators, no ``..``).
        config: The configuration (HO3 allocates ``stack_token_budget`` to the stack).
        home: The home; default the resolved one.
        llm: An `ILLMAdapter` to use instead of the configured provider.
        clock: Time source.
        announce: Record ``stack_created`` now. The turn loop passes False and calls
            `CognitiveStack.record_created` once it knows which session the stack serves
            (a process continuing a session takes that session's id, see `join_session`).

    Raises:
        HRMError: ``VALIDATION_FAILED`` for a bad agent class or an invalid attention template
            (a stack never starts with an invalid template).
    """
    from hrm.governance.kernel import GovernanceKernel
    from hrm.memory.bus import MemoryBus
    from hrm.reasoning.router import DEFAULT_AGENTS
    from hrm.stacks.attention import AttentionPipeline
    from hrm.stacks.executor import StackExecutor

    parse_agent_class(agent_class)
    h = home or HRMHome.resolve()
    _guard(h, agent_class)
    durability = config.ledger_durability
    attention = AttentionPipeline.bind(h, agent_class, config)  # fails closed before anything opens
    db = open_stack_db(h, agent_class)  # the stack's own file: no other stack's rows (D320)
    decision_ledger = Ledger(h.decision_ledger(agent_class), durability=durability, clock=clock)
    execution_ledger = Ledger(h.execution_ledger(agent_class), durability=durability, clock=clock)
    governance_ledger = Ledger(h.governance_ledger, durability=durability, clock=clock)
    bus = MemoryBus(
        h,
        db,
        agent_class,
        clock=clock,
        durability=durability,
        working_set_ttl_hours=config.working_set_default_ttl_hours,
    )
    known_agents = _known_agents(h) or list(DEFAULT_AGENTS)
    kernel = GovernanceKernel.create(
        config.policy, clock=clock, relatedness=_relatedness(config.topic_embeddings)
    )
    focus = _focus(db, agent_class, config, kernel, known_agents, clock)
    patterns, feedback = _learning(db, agent_class, bus, config, clock)
    used = tokens_spent(db, agent_class, execution_ledger)
    stack_holder: list[CognitiveStack] = []
    gateway = _gateway(llm, config, agent_class, execution_ledger, stack_holder, clock)
    altitude, planner, router = _thinking(config, gateway, kernel, feedback, h, known_agents, clock)
    stack = CognitiveStack(
        agent_class=agent_class,
        home=h,
        config=config,
        session_id=new_session_id(),
        db=db,
        decision_ledger=decision_ledger,
        execution_ledger=execution_ledger,
        bus=bus,
        focus=focus,
        altitude=altitude,
        planner=planner,
        evaluator=_evaluator(),
        router=router,
        patterns=patterns,
        feedback=feedback,
        gateway=gateway,
        executor=None,
        attention=attention,
        budget_ceiling=config.stack_token_budget,
        governance_ledger=governance_ledger,
        tokens_spent=used,
    )
    stack_holder.append(stack)
    _wire_commits(stack, config)
    stack.executor = StackExecutor(stack)
    attention.attach(stack)
    if announce:
        stack.record_created()
    return stack


def _focus(
    db: Database, agent_class: str, config: HRMConfig, kernel: Any, known_agents: list[str],
    clock: Clock,
) -> Any:
    """Focus over the stack's database: problems, commitments, stance and the gates."""
    from hrm.focus.focus import FocusHRM

    return FocusHRM.open(
        db,
        agent_class,
        kernel=kernel,
        agent_registry=set(known_agents),
        max_agents=config.max_agents_per_bundle,
        max_commitment_turns=config.max_commitment_turns,
        clock=clock,
    )


def _learning(
    db: Database, agent_class: str, bus: Any, config: HRMConfig, clock: Clock
) -> tuple[Any, Any]:
    """The stack's learned patterns and the feedback loop that logs each outcome as an
    episode of its bus."""
    from hrm.learning.feedback import FeedbackLoop
    from hrm.learning.patterns import PatternStore
    from hrm.memory.types import EpisodeEntry

    patterns = PatternStore(db, agent_class, clock=clock)

    def log_learning(payload: dict[str, Any]) -> str:
        entry = EpisodeEntry(
            entry_type="learning_outcome", content=payload, tags=["learning"], problem_id=None
        )
        return str(bus.log_episode(entry))

    return patterns, FeedbackLoop(patterns, log_learning, config, clock=clock)


def _gateway(
    llm: Any,
    config: HRMConfig,
    agent_class: str,
    execution_ledger: Ledger,
    stack_holder: list[CognitiveStack],
    clock: Clock,
) -> Any:
    """The stack's model gateway over `llm` (or the configured provider), recording each call
    as a work order of the stack `stack_holder` will hold."""
    from hrm.llm import LLMAdapterFactory, LLMGateway
    from hrm.llm.session_usage import LedgerUsage

    def record(kind: str, data: dict[str, Any]) -> Any:
        return stack_holder[0].record_work_order(kind, data)

    adapter = llm if llm is not None else LLMAdapterFactory.create(config.llm)
    # HO3 allocates the ceiling at stack creation (004 §3); the turn loop narrows it to what
    # the current session has left (D23), so a long-lived stack is never spent for good.
    # Budget, cost alert and rate limits count the session's work orders in HO1m, every
    # process's, not this gateway's alone (D280).
    return LLMGateway.from_config(
        adapter,
        config.llm,
        budget_tokens=config.stack_token_budget,
        record=record,
        usage=LedgerUsage(execution_ledger, lambda: stack_holder[0].session_id, now=clock),
        agent_class=agent_class,
    )


def _thinking(
    config: HRMConfig,
    gateway: Any,
    kernel: Any,
    feedback: Any,
    home: HRMHome,
    known_agents: list[str],
    clock: Clock,
) -> tuple[Any, Any, Any]:
    """Altitude's governor and planner and the reasoning router, with bounded model help for
    signals, altitude and routing on a capable model only (D265)."""
    from hrm.altitude.governor import AltitudeGovernor
    from hrm.altitude.planner import AltitudePlanner
    from hrm.reasoning.assist import wire_model_assistance

    provider = gateway.adapter.provider
    altitude = AltitudeGovernor(config, clock=clock)
    planner = AltitudePlanner(llm=gateway if provider not in ("offline", "local") else None)
    router = _router(config, feedback, home, known_agents)
    wire_model_assistance(
        config, gateway, altitude=altitude, signals=kernel.signal_engine, router=router
    )
    return altitude, planner, router


def _evaluator() -> Any:
    from hrm.altitude.evaluator import AltitudeEvaluator

    return AltitudeEvaluator()


def _router(config: HRMConfig, feedback: Any, home: HRMHome, known_agents: list[str]) -> Any:
    """The stack's reasoning router: its own learned patterns first, the meta ledger's
    cross-stack ones when it has none."""
    from hrm.reasoning.escalation import EscalationManager
    from hrm.reasoning.router import ReasoningRouter
    from hrm.reasoning.strategy import StrategySelector
    from hrm.stacks.meta import meta_patterns_for

    def patterns_for(signature: dict[str, Any]) -> Any:
        return feedback.get_patterns_for_signal(signature) or meta_patterns_for(home, signature)

    return ReasoningRouter(
        strategy_selector=StrategySelector.from_config(config),
        escalation_manager=EscalationManager.from_config(config),
        pattern_source=patterns_for,
        known_agents=known_agents,
        max_agents_per_bundle=config.max_agents_per_bundle,
        agent_timeout_ms=config.agent_execution_timeout_ms,
    )


def _wire_commits(stack: CognitiveStack, config: HRMConfig) -> None:
    """The stack's ledgers, memory and journal committed together, under group commit off the
    turn's path within ``ledger_group_commit_ms``, the home's manifest written once for all."""
    from hrm.stacks._group_commit import GroupCommitter

    db, durability = stack.db, config.ledger_durability
    interval = config.ledger_group_commit_ms if durability == "group" else 0
    commits: list[Callable[[], object]] = [
        stack.decision_ledger.commit, stack.execution_ledger.commit, stack.bus.commit,
        db.journal_commit,
    ]  # fmt: skip
    if db.journal is not None and durability == "fsync":
        db.journal.sync_each_commit = True  # memory is as durable as the turn records
    if interval > 0:  # WAL checkpoints move to the committer's thread too, off the turn's path
        db.defer_checkpoints()
        commits.append(db.checkpoint)
    stack.committer = GroupCommitter([_manifest_once(commits)], interval_ms=interval)


def _manifest_once(commits: list[Callable[[], object]]) -> Callable[[], None]:
    """The stack's commits as one, writing the home's manifest once for all of them.

    Each ledger's commit notes its head in the manifest; gathered, a group commit of four
    ledgers rewrites the manifest once instead of four times. One commit failing does not
    keep the others from running (each is logged, as the committer would).
    """
    from hrm.storage.manifest import batched

    def commit_all() -> None:
        with batched():
            for commit in commits:
                try:
                    commit()
                except Exception:  # a failing fsync is logged; the next boundary retries
                    logger.exception("group commit failed")

    return commit_all


def _guard(home: HRMHome, agent_class: str) -> None:
    """Refuse to open partitions that are not this stack's own (004 §7), when enforced here."""
    try:
        from hrm.stacks.visibility import guard_partitions
    except ImportError:
        return
    guard_partitions(home, agent_class)


def _known_agents(home: HRMHome) -> list[str]:
    builtin = _builtin_agents_only(home)
    if builtin is not None:
        return builtin
    try:
        from hrm.runtime.agents import AgentRegistry
    except ImportError:
        return []
    try:
        return sorted(AgentRegistry.load(home).ids())
    except Exception:  # an agent file problem must not stop the stack; the CLI reports it
        logger.warning("agent definitions could not be loaded", exc_info=True)
        return []


def _builtin_agents_only(home: HRMHome) -> list[str] | None:
    """The built-in agent ids, when every agent file in the home is one hrm ships, unchanged.

    Then the registry would hold exactly the built-ins, so neither PyYAML nor the agent
    runtime is imported to find their ids (a shipped file's id is its name: a test pins it).
    None means: load the registry.
    """
    relative = home.agents_dir.relative_to(home.root)
    try:
        files = [p for p in home.agents_dir.iterdir() if not p.name.startswith(".")]
    except FileNotFoundError:
        files = []
    except OSError:
        return None
    if not all(unchanged(p, relative / p.name) for p in files if p.suffix in (".yaml", ".yml")):
        return None
    return sorted(p.stem for p in (SHIPPED_HOME / relative).glob("*.yaml"))


def _relatedness(switch: str) -> Callable[[str, str], float | None] | None:
    """The sentence model the arbiter may ask (D68): None when `topic_embeddings` is off, or
    auto and the `embeddings` extra is missing.

    Raises:
        HRMError: ``VALIDATION_FAILED`` when it is on and the extra is not installed.
    """
    if switch == "off":
        return None
    from hrm.continuity.embeddings import EMBEDDINGS_INSTALL_HINT, sentence_relatedness
    from hrm.errors import HRMError

    found = sentence_relatedness()
    if found is None and switch == "on":
        raise HRMError.validation_failed(
            f"topic_embeddings is on but the embeddings extra is not installed: "
            f"{EMBEDDINGS_INSTALL_HINT}",
            key="topic_embeddings",
        )
    return found


_JOINERS = re.compile(r"^(?:\s|[,;.]|\band\b|\bbut\b|\balso\b)+|(?:\s|[,;.]|\band\b)+$", re.I)


def _taken_away(values: list[Any], *, retracted: bool) -> str | None:
    """What the last version of a key took away from the one before: the whole statement of
    a retraction the person asked for, or the clause a forget of part of it left out — the
    last version said in the one before, less than it ("my name is Ana Costa" of "my name is
    Ana Costa and I live in Lisbon"). None when nothing was taken away."""
    from hrm.reading.rules.memory import kept_text

    said = [text for text in (kept_text(v) for v in values) if text]
    if retracted:
        return said[-1] if said else None
    if len(values) < 2:
        return None
    now, before = kept_text(values[-1]), kept_text(values[-2])
    if not now or not before or now == before or now not in before:
        return None
    rest = _JOINERS.sub("", before.replace(now, " ", 1)).strip()
    return rest or None


def _decision_write_record(verdict: Any, decision: Any, **extra: Any) -> dict[str, Any]:
    """A write of a stated decision to a working set, as the decision record keeps it."""
    return {
        "target_requested": "working_set",
        "key": "local_decisions",
        "approved": verdict.approved,
        "target": getattr(verdict.target, "value", verdict.target),
        "reason": verdict.reason,
        "conditions": list(verdict.conditions),
        "decision": decision,
        **extra,
    }


def _shared_write_record(decision: Any, key: str, **extra: Any) -> dict[str, Any]:
    """A write gate decision on a Shared Reference key, as the decision record keeps it."""
    return {
        "target_requested": "shared_reference",
        "key": key,
        "approved": decision.approved,
        "target": getattr(decision.target, "value", decision.target),
        "reason": decision.reason,
        "conditions": list(decision.conditions),
        **extra,
    }
