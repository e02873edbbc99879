"""The `HRM` facade (001 §8.1, ARCHITECTURE §3): open a stack over a home, run turns, read
what they decided.

`HRM.turn(text)` carries one input through every layer and returns a `TurnResult`: the answer and
the decision record. The turn itself is `hrm.turn`: an ordered tuple of named steps
(`hrm.turn.loop.STEPS`) over a typed `TurnContext`, run by `TurnRunner`, which writes the turn's
events and decision record to the decision ledger.

State lives in the home, never only in this object: stance, commitments and problems in
``memory.db``; the stack's turn state (altitude, the last routing, a pending preference) in the
last ``turn`` record of its decision ledger (`hrm.turn.session`). A second process opening the
same home and stack continues from there.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hrm.config import HRMConfig, LLMConfig, load_config
from hrm.errors import HRMError
from hrm.governance.problems import Problem, ProblemRegistry, ProblemStatus
from hrm.home import HRMHome, initialize, parse_agent_class
from hrm.reading.reader import exemplar_cache_dir, later_tiers
from hrm.reading.types import Bands
from hrm.stacks.turn_lock import TURN_WAIT_S, TurnLock
from hrm.storage.ledger import Ledger
from hrm.storage.sqlite import Database
from hrm.turn.context import TurnServices
from hrm.turn.records import TurnResult
from hrm.turn.runner import TurnRunner
from hrm.turn.session import SESSION_IDLE_MINUTES, Sessions
from hrm.turn.state import NOTES_START, TurnState, clean_text, clip
from hrm.types import AltitudeLevel, Clock, Stance, system_clock

__all__ = ["HRM", "NOTES_START", "SESSION_IDLE_MINUTES", "decision_of"]

logger = logging.getLogger(__name__)


class HRM:
    """One stack (agent class) of hrm, opened over a home.

    Use `HRM.open`; close with `close` or a ``with`` block. Not thread-safe for concurrent turns
    on one object (turns are serialised by an internal lock); several processes may open the
    same home and stack, and their turns of one stack run one at a time (`TurnLock`).
    """

    def __init__(
        self,
        home: HRMHome,
        config: HRMConfig,
        agent_class: str,
        *,
        llm: Any = None,
        clock: Clock = system_clock,
        new_session: bool = False,
        turn_wait_s: float = TURN_WAIT_S,
    ) -> None:
        from hrm.stacks.factory import create_stack

        self.home = home
        self.config = config
        self.agent_class = agent_class
        self._clock = clock
        self._lock = threading.Lock()
        # Turns of one stack run one at a time across processes (reading state to writing it).
        self._turn_lock = TurnLock(
            home.ho2_dir(agent_class) / "turn.lock", agent_class=agent_class, wait_s=turn_wait_s
        )
        self.stack = create_stack(
            agent_class, config, home, llm=llm, clock=clock, announce=False
        )
        s = self.stack
        self.db: Database = s.db
        self.bus = s.bus
        self.decisions: Ledger = s.decision_ledger
        self.executions: Ledger = s.execution_ledger
        self.focus = s.focus
        self.kernel = s.focus.kernel
        self.altitude = s.altitude
        self.planner = s.planner
        self.evaluator = s.evaluator
        self.router = s.router
        self.feedback = s.feedback
        self.patterns = s.patterns
        self.llm = s.gateway
        if config.trace_enabled:
            from hrm.tracing import Tracer, set_tracer

            set_tracer(Tracer.from_config(config, home, clock=clock))
        bands = Bands(act=config.reading.act_threshold, ask=config.reading.ask_threshold)
        services = TurnServices(
            stack=s, focus=s.focus, kernel=s.focus.kernel, altitude=s.altitude, router=s.router,
            evaluator=s.evaluator, feedback=s.feedback, db=s.db, decisions=s.decision_ledger,
            config=config,
            bands=bands,
            later_tiers=later_tiers(config, cache_dir=exemplar_cache_dir(home),
                                    llm=s.gateway, bands=bands),
        )  # fmt: skip
        self._sessions = Sessions(services, agent_class, clock)
        self._runner = TurnRunner(services, self._sessions, clock)
        try:
            with self._turn_lock:  # two processes opening at once start one session, not two
                self._sessions.load()
                self._sessions.open(force=new_session)
        except BaseException:
            self._turn_lock.close()
            try:
                self.stack.teardown()
            except Exception:  # the open's own error is the one to raise
                logger.exception("releasing the stack after a failed open failed")
            raise

    # ── opening ────────────────────────────────────────────────────────────

    @classmethod
    def open(
        cls,
        home: HRMHome | str | Path | None = None,
        agent_class: str | None = None,
        llm: Any = None,
        *,
        config: HRMConfig | None = None,
        project_dir: str | Path | None = None,
        clock: Clock = system_clock,
        new_session: bool = False,
        turn_wait_s: float = TURN_WAIT_S,
    ) -> HRM:
        """Open a stack over a home, creating the home's layout if needed.

        Args:
            home: The home (default ``$HRM_HOME`` or ``~/.hrm``).
            agent_class: ``ADMIN`` or ``RESIDENT:<name>`` (default from config).
            llm: A provider name (``offline``, ``local``, ``anthropic``, ``openai``), an
                `LLMConfig`, or any `ILLMAdapter`; default from config (``auto``).
            config: A ready configuration; default `load_config(home, project_dir)`.
            project_dir: Where ``.hrm/config.yaml`` is looked up (default: cwd).
            clock: Time source (tests inject one).
            new_session: Start a new session even if the last one is recent.
            turn_wait_s: How long a turn (or this open) waits while another process runs a
                turn of the same stack; then ``DB_LOCKED``.
        """
        h = home if isinstance(home, HRMHome) else HRMHome.resolve(home)
        cfg = config if config is not None else load_config(h, project_dir).config
        ac = agent_class or cfg.default_agent_class
        parse_agent_class(ac)
        initialize(h, agent_class=ac)
        if isinstance(llm, str):
            cfg = _with_llm(cfg, LLMConfig(**{**cfg.llm.__dict__, "provider": llm}))
            llm = None
        elif isinstance(llm, LLMConfig):
            cfg = _with_llm(cfg, llm)
            llm = None
        return cls(
            h, cfg, ac, llm=llm, clock=clock, new_session=new_session, turn_wait_s=turn_wait_s
        )

    def close(self) -> None:
        """Make everything durable and release the stack (004 §8 teardown keeps all ledgers)."""
        try:
            self.stack.teardown()
        finally:
            self._turn_lock.close()

    def __enter__(self) -> HRM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ── properties a caller shows ──────────────────────────────────────────

    @property
    def session_id(self) -> str:
        return self._state.session_id

    @property
    def turn_number(self) -> int:
        return self._state.turn_number

    @property
    def stance(self) -> Stance:
        current: Stance = self.focus.stance.get_current()
        return current

    @property
    def current_altitude(self) -> AltitudeLevel:
        return AltitudeLevel(self._state.altitude)

    def status(self) -> dict[str, Any]:
        """Altitude, stance, commitment and active problem, for a status line."""
        commitment = self.focus.commitments.get_active()
        problem = self.focus.problem_registry.get_active()
        return {
            "agent_class": self.agent_class,
            "session_id": self.session_id,
            "turn": self.turn_number,
            "altitude": self._state.altitude,
            "stance": self.stance.value,
            "commitment": None
            if commitment is None
            else {
                "id": commitment.id,
                "description": commitment.description,
                "turns_remaining": commitment.turns_remaining,
                "turns_total": commitment.turns_total,
            },
            "problem": None if problem is None else {"id": problem.id, "title": problem.title},
            "provider": self.llm.provider,
            "model": self.llm.model,
        }

    def history(self, limit: int = 20) -> list[dict[str, Any]]:
        """The last turns of this stack as recorded in its decision ledger (newest last)."""
        turns = [r for r in self.decisions.tail(limit * 40) if r.kind == "turn"]
        return [
            {
                "turn": r.data.get("turn"),
                "ts": r.ts,
                "input": r.data.get("input"),
                "response": r.data.get("response"),
                "action": r.data.get("action"),
            }
            for r in turns[-limit:]
        ]

    def last_decision(self) -> dict[str, Any] | None:
        """The decision record of the last turn, read from the ledger."""
        for record in reversed(self.decisions.tail(200)):
            if record.kind == "turn":
                return decision_of(record.data)
        return None

    def last_events(self) -> list[dict[str, Any]]:
        """The events the last turn appended before its decision record, oldest first.

        Each is its payload with ``kind`` added: stance changes with the gate that passed
        them, commitments ticking and expiring, problems switched or queued — what the
        decision record names only by its outcome.
        """
        tail = self.decisions.tail(200)
        ends = [i for i, record in enumerate(tail) if record.kind == "turn"]
        if not ends:
            return []
        end = ends[-1]
        turn = tail[end].data.get("turn")
        start = ends[-2] + 1 if len(ends) > 1 else 0
        return [
            {**record.data, "kind": record.kind}
            for record in tail[start:end]
            if record.data.get("turn") == turn
        ]

    def resolve_problem(self, problem_id: str | None = None) -> Problem:
        """Mark a problem resolved (the active one by default) and record it in HO2m.

        A resolved problem no longer matches inputs or competes for focus; a commitment on it
        ends as completed. Resolving a resolved problem changes nothing.

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown id, or when no problem is active.
        """
        with self._lock, self._turn_lock:
            self._sessions.refresh()
            registry: ProblemRegistry = self.focus.problem_registry
            problem = registry.get(problem_id) if problem_id else registry.get_active()
            if problem is None:
                raise HRMError.not_found(
                    "problem", problem_id or "(active)", "`hrm problems list` shows them"
                )
            if problem.status is ProblemStatus.RESOLVED:
                return problem
            commitment = self.focus.commitments.get_active()
            ends_commitment = commitment is not None and commitment.problem_id == problem.id
            with self.db.transaction():
                resolved = registry.resolve(problem.id)
                if ends_commitment:
                    self.focus.commitments.complete()
            self.decisions.append_many(
                [
                    (
                        "problem_resolved",
                        {
                            "session_id": self._state.session_id,
                            "agent_class": self.agent_class,
                            "id": problem.id,
                            "title": clip(problem.title, 200),
                            "was": problem.status.value,
                            "commitment_completed": commitment.id
                            if ends_commitment and commitment is not None
                            else None,
                            "by": "person",
                        },
                    )
                ]
            )
            self.decisions.commit()
            self._sessions.mark_end()
            return resolved

    # ── the turn ───────────────────────────────────────────────────────────

    def turn(
        self,
        text: str,
        source: str = "user",
        *,
        priority: int = 0,
        metadata: dict[str, Any] | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> TurnResult:
        """Carry one input through every layer; returns the answer and why.

        Never leaves half-written state: each store writes atomically, ledgers append whole
        records, and a failure inside a step is recorded and answered with a fallback.

        Args:
            on_text: Called with each piece of the model's answer as it is produced (the
                respond step streams its call). The pieces make up the model's answer; the
                result's ``response`` is the whole answer, which may add notes after it, or
                replace it when the call failed part-way. Answers that need no model call
                (a question, a wait) or several (a plan, agents) come only in the result.
                A listener that raises is dropped for the rest of the turn, which goes on.

        Raises:
            KeyboardInterrupt: Ctrl-C during the turn, once the turn is recorded as
                ``interrupted`` (what it did before the interrupt stays recorded too).
        """
        with self._lock, self._turn_lock, self.db.pinned(), self.db.deferring():
            self.stack.text_sink = on_text
            try:
                return self._runner.run(clean_text(text), source, priority, metadata or {})
            except BaseException:
                self._reload_state()
                raise
            finally:
                self.stack.text_sink = None


    def _reload_state(self) -> None:
        """After a turn ended by an exception: the state is what the ledger says, not what the
        turn had changed in memory before it stopped."""
        try:
            self._sessions.load()
        except Exception:  # the turn's own exception is the one to raise
            logger.exception("re-reading the turn state after a failed turn failed")

    @property
    def _json_repairs(self) -> int:
        """Turns whose records held a value JSON cannot (stored converted: `TurnRunner`)."""
        return self._runner.json_repairs

    @property
    def _state(self) -> TurnState:
        """The stack's turn state (what the last ``turn`` record says, plus this process's)."""
        return self._sessions.state


def decision_of(turn: dict[str, Any]) -> dict[str, Any] | None:
    """The whole decision record of a stored ``turn`` record.

    The fields a turn record also carries as HO2m fields are stored only there (D24); records
    written before that carry them in both places, and either reads back the same.
    """
    decision = turn.get("decision")
    if not isinstance(decision, dict):
        return None
    whole = dict(decision)
    if "attention_state" not in whole:
        whole["attention_state"] = turn.get("attention_state") or {}
    if "arbitration" not in whole:
        outcomes = turn.get("arbitration_outcomes") or []
        whole["arbitration"] = outcomes[0] if outcomes and isinstance(outcomes[0], dict) else {}
    return whole


def _with_llm(cfg: HRMConfig, llm: LLMConfig) -> HRMConfig:
    from dataclasses import replace

    return replace(cfg, llm=llm)
