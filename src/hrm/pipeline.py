"""The `HRM` facade and the governed turn loop (001 §8.1, ARCHITECTURE §3).

`HRM.turn(text)` carries one input through every layer and returns a `TurnResult`: the answer and
the decision record (arbitration, preference handling, altitude, classification, strategy,
escalation, candidates and the selected action, gate decisions, stance and commitment before and
after, attention state, execution, evaluation, writes, learning and work orders).

State lives in the home, never only in this object: stance, commitments and problems in
``memory.db``; the stack's turn state (altitude, the last routing, a pending preference) in the
last ``turn`` record of its decision ledger. A second process opening the same home and stack
continues from there. Every step is an event in the decision ledger (HO2m); every model call a
work order in the execution ledger (HO1m).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hrm._text import shorten
from hrm.config import HRMConfig, LLMConfig, load_config
from hrm.errors import ErrorCode, HRMError
from hrm.governance.arbiter import ArbitrationDisposition
from hrm.governance.focus_requests import DEFAULT_TURNS, read_focus_request, without_resume
from hrm.governance.follow_ups import is_follow_up, opens_new_topic
from hrm.governance.memory_requests import (
    kept_matching,
    read_forget_request,
    read_memory_request,
)
from hrm.governance.pasted import spoken
from hrm.governance.problem_requests import read_problem_request
from hrm.governance.problems import Problem, ProblemRegistry, ProblemStatus, extract_keywords
from hrm.governance.stated_decisions import read_stated_decision
from hrm.home import HRMHome, initialize, parse_agent_class
from hrm.records import DecisionRecord, TurnResult, jsonable
from hrm.stacks.factory import new_session_id
from hrm.stacks.turn_lock import TURN_WAIT_S, TurnLock
from hrm.storage.ledger import Ledger
from hrm.storage.sqlite import Database
from hrm.tracing import get_tracer
from hrm.turn_facts import forget_kept, keep_decision, remember_fact
from hrm.turn_preferences import (
    answers_only,
    handle_preference,
    read_preference,
    resolve_pending,
    without_preference,
    without_sentence,
)
from hrm.turn_problems import act_on_problem
from hrm.turn_state import (
    CONVERSATION_ACTIONS,
    NOTES_START,
    RECALL_REACH,
    RECALLED_TURNS,
    RECENT_TURNS,
    STATE_TAIL,
    TurnState,
    clean_text,
    clip,
    exchange_of,
    recent_exchange,
    recent_from,
    shown,
    topic_of_turn,
)
from hrm.turn_switch import asks_to_switch, held_question, last_queued, read_answer
from hrm.types import AltitudeLevel, Clock, HRMContext, Stance, TurnInput, system_clock

__all__ = ["HRM", "NOTES_START", "SESSION_IDLE_MINUTES"]

logger = logging.getLogger(__name__)

SESSION_IDLE_MINUTES = 30
"""A stack's session continues across processes until it has been idle this long."""

_NEGATIVE_FEEDBACK = re.compile(
    r"^\s*(no[,.!]|wrong|that'?s (wrong|not (it|right|what)|incorrect)|incorrect|"
    r"that (didn'?t|does ?n'?t) work|not helpful|bad answer)",
    re.IGNORECASE,
)
_NEGATIVE_STARTS = ("no", "wrong", "that", "incorrect", "bad")


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
        self._json_repairs = 0
        """Turns whose records held a value JSON cannot (stored converted; see `_append`)."""
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
        try:
            with self._turn_lock:  # two processes opening at once start one session, not two
                self._state = self._load_state()
                self._open_session(force=new_session)
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
            self._refresh_state()
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
            self._seen_seq = self.decisions.last().seq  # type: ignore[union-attr]
            self._seen_size = self.decisions.size()
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
                return self._turn(clean_text(text), source, priority, metadata or {})
            except BaseException:
                self._reload_state()
                raise
            finally:
                self.stack.text_sink = None

    def _reload_state(self) -> None:
        """After a turn ended by an exception: the state is what the ledger says, not what the
        turn had changed in memory before it stopped."""
        try:
            self._state = self._load_state()
        except Exception:  # the turn's own exception is the one to raise
            logger.exception("re-reading the turn state after a failed turn failed")

    def _turn(self, text: str, source: str, priority: int, metadata: dict[str, Any]) -> TurnResult:
        self._refresh_state()
        if self._session_idle():  # a long-lived process (`hrm chat` left open) rolls over too
            self.stack.join_session(new_session_id())
            self._start_session()
        tracer = get_tracer()
        trace_id = tracer.generate_id("hrm")
        state = self._state
        number = state.turn_number + 1
        events: list[tuple[str, dict[str, Any]]] = []
        work_orders: list[dict[str, Any]] = []
        self.stack.work_order_sink = work_orders
        record = DecisionRecord(
            turn=number,
            session_id=state.session_id,
            agent_class=self.agent_class,
            trace_id=trace_id,
            input_summary=clip(text, 200),
        )

        def event(kind: str, /, **payload: Any) -> None:
            events.append((kind, payload))  # JSON-ready parts; the ledger copies (`_append`)

        ctx = self._context(number)
        turn_input = TurnInput(
            text=text,
            timestamp=self._clock(),
            context=ctx,
            source=source,
            priority=priority,
            metadata=metadata,
        )
        event("turn_started", text=clip(text), length=len(text), source=source)
        with tracer.span("pipeline", "turn", "HRM", input_data=text[:200]) as span:
            interrupted: KeyboardInterrupt | None = None
            kind: str | None = None
            try:
                response, action, asked, kind = self._run(turn_input, record, event)
            except KeyboardInterrupt as stop:
                # The person stopped the turn (Ctrl-C): record how far it got, then let the
                # interrupt through, so a stopped answer is a recorded turn, not a lost one.
                interrupted = stop
                response = "The turn was interrupted before it finished."
                record.notes.append("interrupted by the person")
                event("turn_interrupted")
                action, asked = "interrupted", False
            except Exception as exc:
                # The supervisor (HO2) failed: degrade to a direct model call through the gateway,
                # recorded in HO1m (004 §8) — never silent.
                error = exc if isinstance(exc, HRMError) else HRMError.internal(
                    f"{type(exc).__name__}: {exc}"
                )
                if not isinstance(exc, HRMError):
                    logger.exception("supervisor failed; degrading to a direct model call")
                from hrm.stacks.lifecycle import degrade

                response, degradation = degrade(self.stack, turn_input, error)
                record.notes.append(f"supervisor failed ({error.code.value}); degraded to a "
                                    "direct model call")
                event("turn_degraded", error=error.to_dict(),
                      degradation_seq=degradation.get("seq"))
                action, asked = "degraded", False
            span.set_output(response[:200])
        record.work_orders = list(work_orders)
        self.stack.work_order_sink = None
        self._store_bookkeeping(record)
        state.turn_number = number
        state.last_at = self._clock().isoformat()
        kept = _kept(record.writes)
        if kept is not None:
            state.last_kept = {"key": kept, "turn": number}
        exchange = recent_exchange(
            text, len(text), response, len(response), action, kind, ctx.topic_id
        )
        state.recent = [*state.recent, exchange][-RECENT_TURNS:]
        turn_record = {
            **self.stack.ho2m_fields(
                work_orders=work_orders,
                arbitration=record.arbitration,
                escalations=record.escalations,
                attention_state=record.attention_state,
                meta_episodes=self._meta_episodes(record),
            ),
            "turn": number,
            "input": clip(text),
            "input_length": len(text),
            "response": clip(response),
            "response_length": len(response),
            "action": action,
            "asked": asked,
            # What the exchange was about, for the recent turns a new process rebuilds (D80)
            # and the turns read back after a detour (D86): only an exchange the model is
            # shown names its topic, so that read parses no other.
            **({"kind": kind} if kind is not None else {}),
            **({"topic": ctx.topic_id} if ctx.topic_id is not None and shown(exchange) else {}),
            # attention_state and arbitration are stored once, as the HO2m fields (D24).
            "decision": record.fields(omit=_STORED_ONCE),
            "state": state.to_dict(),
        }
        items = [
            (
                kind,
                {
                    "session_id": state.session_id,
                    "agent_class": self.agent_class,
                    "turn": number,
                    **payload,
                },
            )
            for kind, payload in events
        ]
        items.append(("turn", turn_record))
        written = self._append(number, items)
        # Our own append is not a change by another process; one that came after it is.
        self._seen_seq = written[-1].seq
        self._seen_size = self.decisions.appended_end
        self.stack.end_turn()
        if interrupted is not None:
            raise interrupted
        return TurnResult(response=response, action=action, decision=record, asked=asked)

    def _run(
        self, turn_input: TurnInput, record: DecisionRecord, event: Any
    ) -> tuple[str, str, bool, str | None]:
        """The turn's layers; returns the answer, the action taken, whether it asks the person,
        and what the exchange was about when not the problem at hand (``"preference"``)."""
        state = self._state
        text = turn_input.text
        ctx = turn_input.context
        notes: list[str] = []
        tracer = get_tracer()  # one span per layer (001 §7); a shared no-op when disabled

        # 0. A pending preference confirmation, else feedback on the previous answer: a "No."
        # that answers "Should I remember …? (yes/no)" does not judge the answer that asked.
        confirmation = resolve_pending(self.stack, state, text, record, event)
        # An answer to arbitration's "switch or queue?" decides this turn's arbitration; after
        # a switch, the input that was asked about is the one answered (D43).
        held, decided = state.pending_switch, None
        if isinstance(held, dict):
            choice = read_answer(text) if confirmation is None else None
            if choice is None:
                record.notes.append(f"the question about {held.get('title')!r} went unanswered")
                event("switch_unanswered", problem_id=held.get("problem_id"))
            else:
                decided = self.focus.answered(held, choice)
                if choice == "switch" and held.get("input"):
                    text = str(held["input"])
                    turn_input = replace(turn_input, text=text)
        state.pending_switch = None
        # "switch" with no question pending refers to the topic hrm just said it queued; it is
        # never a topic of its own, and hrm answers it without a model call.
        switch_to: Problem | None = None
        bare_switch = decided is None and confirmation is None and asks_to_switch(text)
        if bare_switch:
            switch_to = last_queued(state.last_topic, self.focus.problem_registry)
            decided = (
                self.focus.answered({"problem_id": switch_to.id}, "switch", asked=False)
                if switch_to is not None
                else self.focus.stay("The person asked to switch; no topic was queued last")
            )
        if confirmation is None and decided is None:
            self._feedback_on_previous(text, record, event)
        # Feedback judges the last answer only: this turn sets them again when its own answer
        # is a routed outcome. After a question (arbitration's ask, Focus's fallback to ask), a
        # wait or a degraded answer, "No, …" does not judge an answer given before it.
        state.last_signal = state.last_routing = None

        # 1. Signals and arbitration (001 §12.2, §12.3, §12.7).
        said = spoken(text)
        if said is not text:
            pasted = _lines(text) - _lines(said)
            record.notes.append(
                f"{pasted} pasted line(s) (code, logs, data) were read as material, not as the "
                "person's words: signals, preferences and arbitration's cues read the rest"
            )
        with tracer.span("governance", "derive_signals", "GovernanceKernel"):
            signals = self.kernel.derive_signals(turn_input, ctx, canon=self.stack.canon())
        record.escalation["signals"] = signals.to_record()
        # A request to forget what hrm keeps is about its memory, not a problem (D77); read
        # first, so that "Forget that I prefer tabs" states no preference. "Forget that"
        # means what the turn before kept, and after nothing kept it is not about memory.
        just_kept = _just_kept(state, record.turn)
        forget = read_forget_request(said) if confirmation is None else None
        if forget is not None and forget.what is None and just_kept is None:
            forget = None
        if (
            forget is not None and not forget.sure
            and not kept_matching(self.stack.canon(), forget.what or "")
        ):
            forget = None  # "Forget that I asked, …": nothing kept says it (D83)
        heard = turn_input
        told_of_closed = False
        if forget is not None:
            heard = without_sentence(turn_input, forget.clause)
            if heard is not turn_input:
                record.notes.append("the request to forget was left out of arbitration")
        # A request to resolve or park a problem (D82) is acted on first: the rest of the
        # message is weighed with that problem out of focus.
        asked_of = (
            read_problem_request(said) if confirmation is None and decided is None else None
        )
        if asked_of is not None:
            notes += act_on_problem(
                self.focus, self.db, asked_of,
                last_topic=state.last_topic, record=record, event=event,
            )  # fmt: skip
            _parked(state, record)
            before = heard
            heard = without_sentence(heard, asked_of.clause)
            if heard is not before:
                record.notes.append("the request about a problem was left out of arbitration")
            if _closed_in_focus(record) and heard.text and _about_the_closed(heard.text):
                # "Done, switched to Decimal and it passes. Close this one.": the rest tells of
                # the work just closed; it opens no problem of its own, and the model still
                # answers all of it (D82).
                heard = replace(heard, text="")
                told_of_closed = True
                record.notes.append("what the message tells of the closed problem opens none")
        # A stated preference is about the person, not a problem: arbitration reads the rest
        # of the message (D46). It is written after arbitration, in step 2.
        reading = read_preference(self.kernel, heard) if confirmation is None else None
        arbitrated = without_preference(heard, reading)
        if arbitrated is not heard:
            record.notes.append("the preference statement was left out of arbitration")
        # So is a request to remember a fact about the person's world (D73); a preference said
        # as one ("Keep in mind I prefer tabs") is the preference's.
        memo = (
            read_memory_request(said)
            if confirmation is None and (reading is None or reading.statement is None)
            else None
        )
        if memo is not None:
            before = arbitrated
            arbitrated = without_sentence(arbitrated, memo.statement)
            if arbitrated is not before:
                record.notes.append("the request to remember was left out of arbitration")
        with tracer.span("focus", "process_turn", "FocusHRM") as span:
            focus = self.focus.process_turn(arbitrated, signals, decided=decided)
            span.set_output(focus.arbitration.disposition.value)
        record.arbitration = focus.arbitration_record or focus.arbitration.to_record()
        record.stance_before = focus.stance_before.value
        record.commitment_before = _commitment(focus.commitment_before)
        for ev in focus.events:
            event(ev["event_type"], **ev["payload"])
        if focus.action == "ask_user":
            record.stance_after = focus.stance_after.value
            record.commitment_after = _commitment(focus.commitment_after)
            record.notes.append("arbitration asked the person; nothing else changed")
            state.pending_switch = held_question(focus.arbitration, text, record.turn)
            return focus.message, "ask_user", True, None
        if decided is not None and decided.disposition is ArbitrationDisposition.QUEUE:
            record.stance_after = focus.stance_after.value
            record.commitment_after = _commitment(focus.commitment_after)
            queued = decided.candidate.title if decided.candidate is not None else ""
            active = self.focus.problem_registry.get_active()
            staying = f"; staying on {_titled(active.title)}" if active is not None else "."
            return f"Queued ‘{queued}’ for later{staying}", "queue", False, None
        problem = self.focus.problem_registry.get_active()
        record.problem = None if problem is None else {"id": problem.id, "title": problem.title}
        ctx.problem_id = problem.id if problem else None
        if bare_switch:
            record.stance_after = focus.stance_after.value
            record.commitment_after = _commitment(focus.commitment_after)
            if switch_to is None or problem is None:
                return (
                    "No topic is waiting to switch to. `/problems` lists the open ones, and "
                    "“switch to” with a few words of a title moves to it.", "switch", False, None,
                )
            _move_topic(state, {
                "problem_id": problem.id,
                "keywords": list(extract_keywords(problem.title)[:_TOPIC_WORDS]),
            })
            ctx.topic_id = problem.id
            return f"Switched to {_titled(problem.title)}", "switch", False, None
        if (
            problem is not None
            and str(focus.arbitration.candidate_match or "").startswith(_RESUMED)
            and not extract_keywords(without_resume(said))
        ):
            # "Where were we?" and nothing else: hrm says where, as it answers "switch" (D75).
            left = state.earlier_topic if isinstance(state.earlier_topic, dict) else {}
            last = left.get("last_input") if left.get("problem_id") == problem.id else None
            # What was last said there is what a follow-up now continues.
            _move_topic(state, {
                "problem_id": problem.id,
                "keywords": list(extract_keywords(last or problem.title)[:_TOPIC_WORDS]),
            })
            record.stance_after = focus.stance_after.value
            record.commitment_after = _commitment(focus.commitment_after)
            ctx.topic_id = problem.id
            where = f" The last thing you said there: “{last}”" if last else ""
            return f"Back to {_titled(problem.title)}{where}", "switch", False, None
        # What a follow-up may continue: the problem this input went to — the active one, or
        # the one it was queued as (D51). An ask returned above and keeps the last topic as it
        # was; a message that was only a preference has no topic and keeps the last one too.
        went_to = (
            focus.arbitration.candidate_problem_id
            if focus.arbitration.disposition is ArbitrationDisposition.QUEUE
            else problem.id if problem is not None else None
        )
        ctx.topic_id = went_to  # the recent turns the model sees are this problem's (D80)
        topic_is_new = focus.arbitration.is_new_candidate
        topic = extract_keywords(arbitrated.text)[:_TOPIC_WORDS]
        last = state.last_topic if isinstance(state.last_topic, dict) else {}
        # "Ok", "Where were we?": no words of their own, so the thread's last words still say
        # what a follow-up continues.
        kept_words = not topic and went_to is not None and last.get("problem_id") == went_to
        if (topic or arbitrated is turn_input) and not kept_words:
            _move_topic(state, None if went_to is None else {
                "problem_id": went_to, "keywords": list(topic),
            })
        if confirmation is not None and answers_only(text):
            # A bare yes or no answers hrm's "Should I remember …?", which the model never saw:
            # hrm answers it, as it answers "queue" (D50).
            record.stance_after = focus.stance_after.value
            record.commitment_after = _commitment(focus.commitment_after)
            record.notes.append(confirmation)
            return confirmation, "confirm", False, None

        # 2. What the person asks hrm to forget (D77), preferences (001 §12.4, §12.6), and a
        # fact the person asks to be remembered (D73).
        if forget is not None:
            notes += forget_kept(
                self.stack, forget, just_kept=just_kept, record=record, event=event
            )
        if confirmation is None:
            notes += handle_preference(
                self.stack, state, reading, signals=signals, record=record, event=event
            )
        else:
            notes.append(confirmation)
        if memo is not None:
            notes += remember_fact(self.stack, memo, signals=signals, record=record, event=event)
        # A decision stated about the work goes to its problem's working set (D88), which
        # the context shows whenever that problem is at hand.
        stated = read_stated_decision(said) if went_to is not None else None
        if stated is not None and went_to is not None:
            record.writes.append(
                keep_decision(self.stack, went_to, stated, turn=record.turn, event=event)
            )
        if (
            notes and confirmation is None and arbitrated is not turn_input
            and not arbitrated.text and not told_of_closed
        ):
            # The message only stated a preference: hrm answers it, as it answers a bare yes or
            # no (D50). The canon carries it into every later prompt; a model shown it has
            # nothing to add and echoes it back (D58).
            record.stance_after = focus.stance_after.value
            record.commitment_after = _commitment(focus.commitment_after)
            record.notes += notes
            said_only = "preference" if memo is None and forget is None else "memory"
            only_problem = (
                asked_of is not None and memo is None and forget is None
                and (reading is None or reading.statement is None)
            )
            if only_problem and asked_of is not None:
                return "\n".join(notes), asked_of.kind, False, None
            return "\n".join(notes), "remember", False, said_only

        # 3. Altitude (001 §2.1).
        with tracer.span("altitude", "classify_input", "AltitudeGovernor") as span:
            classification = self.altitude.classify_input(turn_input)
            span.set_output(classification.level.value)
        before_level = self.altitude.current_level
        if classification.level is not before_level and self.altitude.transition(
            classification.level, f"input classified at {classification.level.value}"
        ):
            event(
                "altitude_transition",
                **{
                    "from": before_level.value,
                    "to": classification.level.value,
                    "reason": f"input classified at {classification.level.value}",
                },
            )
        record.altitude = {
            "level": classification.level.value,
            "confidence": classification.confidence,
            "signals": classification.signals,
            "suggested_stance": classification.suggested_stance,
            "allows_agents": classification.allows_agents,
            "from": before_level.value,
        }
        ctx.altitude = classification.level

        # 4. Reasoning (001 §3): classification, patterns, strategy, escalation, one action.
        with tracer.span("reasoning", "reason", "ReasoningRouter") as span:
            reasoning = self.router.reason(
                turn_input, stance=self.stance, context=ctx, conflict_hint=signals.conflict_level
            )
            span.set_output(f"{reasoning.strategy.strategy} -> {reasoning.selected.primary.id}")
        record.classification = jsonable(reasoning.classification)
        record.patterns = [jsonable(p) for p in reasoning.patterns]
        for match in reasoning.patterns:
            event("pattern_matched", pattern_id=match.pattern_id, confidence=match.match_confidence)
        record.strategy = jsonable(reasoning.strategy)
        record.escalation.update(
            {
                "score": reasoning.escalation_score,
                "escalated": reasoning.escalated,
                "deescalated": reasoning.deescalated,
                "level": reasoning.routing.escalation_level,
            }
        )
        if reasoning.escalated or reasoning.deescalated:
            esc = {
                "kind": "escalation" if reasoning.escalated else "deescalation",
                "strategy": reasoning.strategy.strategy,
                "level": reasoning.routing.escalation_level,
                "score": reasoning.escalation_score,
                "reason": reasoning.strategy.reason,
            }
            record.escalations.append(esc)
            event("escalation", **esc)
        record.candidates = [
            {"id": c.id, "action_type": c.action_type, "description": c.description}
            for c in reasoning.candidates
        ]
        selected = reasoning.selected
        record.selected = {
            "id": selected.primary.id,
            "action_type": selected.primary.action_type,
            "rationale": selected.rationale,
            "priority_score": selected.priority_score,
            "fallback": None if selected.fallback is None else selected.fallback.id,
            "use_voting": selected.use_voting,
            "batch": None
            if not selected.is_batch() or selected.batch is None
            else [c.id for c in selected.batch],
        }
        notes += reasoning.notes

        # 5. Focus governs the action (001 §4): stance, gates, fallback — never silent.
        with tracer.span("focus", "govern", "FocusHRM") as span:
            governed = self.focus.govern(selected, reasoning.classification)
            span.set_output(governed.allowed_action.id)
        for ev in governed.events:
            event(ev["event_type"], **ev["payload"])
        record.gate_decisions = [d.to_record() for d in governed.gate_decisions]
        action = governed.allowed_action
        record.governance = {
            "allowed": action.id,
            "allowed_type": action.action_type,
            "denied": governed.denied,
            "fallback_used": governed.fallback_used,
            "interrupt": governed.interrupt,
        }
        if governed.fallback_used:
            notes.append(
                f"Focus did not allow '{selected.primary.action_type}' in stance "
                f"{self.stance.value}; fell back to '{action.action_type}'"
            )
        self._maybe_commit(text, action.action_type, reasoning, event, record)

        # 6. Attention: assemble what the model sees (004 §6); back on a problem after a long
        # detour, with its earlier turns read back (D86).
        went_to = ctx.topic_id
        if (
            went_to is not None
            and not topic_is_new
            and not any(shown(t) and t.get("problem") == went_to for t in state.recent)
        ):
            ctx.topic_history = self._topic_history(went_to)
        with tracer.span("attention", "assemble", "AttentionPipeline") as span:
            assembled = self.stack.assemble_context(text, ctx, problem)
            span.add_metadata("tokens", assembled.tokens)
        record.attention_state = assembled.attention_state()

        # 7. Execution.
        with tracer.span("execution", action.action_type, "StackExecutor") as span:
            outcome = self.stack.execute(
                action, turn_input, assembled, reasoning, classification, event
            )
            span.set_output("ok" if outcome.result.success else "failed")
        record.execution = outcome.to_record()
        notes += outcome.notes
        # 7b-8. What the work changed commits together (see `_consequences`).
        with self._consequences():
            if outcome.delivered:
                change = self.focus.record_delivery(complete=True)
                for ev in change.events:
                    event(ev["event_type"], **ev["payload"])

            # 8. Evaluation and learning (001 §2.3, §5).
            with tracer.span("altitude", "evaluate_result", "AltitudeEvaluator"):
                evaluation = self.evaluator.evaluate_result(outcome.result, outcome.plan)
            record.evaluation = jsonable(evaluation)
            new_level = self.evaluator.should_transition(evaluation, self.altitude.current_level)
            if new_level is not None and new_level is not self.altitude.current_level:
                from_level = self.altitude.current_level
                if self.altitude.transition(new_level, "evaluation of the result"):
                    event(
                        "altitude_transition",
                        **{
                            "from": from_level.value,
                            "to": new_level.value,
                            "reason": "evaluation of the result",
                        },
                    )
            state.failure_streak = self.evaluator.failure_streak
            state.altitude = self.altitude.current_level.value
            signal = {**reasoning.classification.signature(), "session_id": state.session_id}
            routing = {
                "strategy": reasoning.strategy.strategy,
                "pattern_match": reasoning.routing.pattern_match,
                "action": action.action_type,
            }
            if action.action_type in ("respond", "execute", "delegate"):
                outcome_record = {
                    "success": evaluation.success,
                    "turn_number": record.turn,
                    "quality": evaluation.quality_score,
                }
                with tracer.span("learning", "record_outcome", "FeedbackLoop"):
                    self.feedback.record_outcome(
                        signal, routing, outcome_record, session_id=state.session_id
                    )
                for le in self.feedback.last_events:
                    record.learning.append({"event_type": le.event_type, **le.payload})
                    event(le.event_type, **le.payload)
                state.last_signal, state.last_routing = signal, routing
        stance_after = self.stance
        record.stance_after = stance_after.value
        record.commitment_after = _commitment(self.focus.commitments.get_active())
        record.notes += notes
        response = outcome.response
        if notes and outcome.show_notes:
            response = response.rstrip() + NOTES_START + "\n• ".join(notes)
        # A message that only stated a preference is canon now, not conversation (D50).
        only_preference = arbitrated is not turn_input and not arbitrated.text
        said_only = "preference" if memo is None and forget is None else "memory"
        kind = said_only if only_preference else None
        return response, action.action_type, action.action_type == "ask", kind

    # ── steps ──────────────────────────────────────────────────────────────

    def _store_bookkeeping(self, record: DecisionRecord) -> None:
        """Commit Focus's deferred bookkeeping if no transaction of the turn carried it.

        The turn's outcome transaction usually does; a degraded turn may end without one.
        Failing to store a progress stamp or a stance count must not lose the turn: it is
        dropped and said in the record.
        """
        if not self.db.has_deferred:
            return
        try:
            self.db.flush_deferred()
        except HRMError as exc:
            self.db.discard_deferred()
            record.notes.append(
                f"focus bookkeeping (progress stamp, stance turn) not stored: {exc.message}"
            )

    def _append(self, number: int, items: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        """Append the turn's records to HO2m as they were built, or their JSON-safe form.

        Events and the decision record are built from JSON-ready parts (`to_record` forms,
        numbers, strings), and the ledger validates and copies what it stores, so they are
        handed over without a copy of their own. Should a part carry something JSON cannot
        hold (a datetime, a dataclass), the ledger refuses the whole batch, having written
        nothing; the turn is then stored in its `jsonable` form and the slip is logged: a
        bug to fix, never a lost turn.
        """
        try:
            return self.decisions.append_many(items)
        except HRMError as exc:
            if exc.code is not ErrorCode.VALIDATION_FAILED:
                raise
            logger.warning("turn %d: %s; stored its JSON-safe form instead", number, exc.message)
            self._json_repairs += 1
        return self.decisions.append_many([(kind, jsonable(data)) for kind, data in items])

    @contextlib.contextmanager
    def _consequences(self) -> Iterator[None]:
        """One transaction for the delivery, the evaluation's consequences and the learning.

        Focus's deferred bookkeeping (progress stamp, lease tick, stance count: D32) runs first
        in it. They land together or not at all, in one commit, and after the model call, so no
        write lock is held while a model answers. A rollback may undo pattern changes the
        pattern store already cached, so its cache is dropped then.
        """
        try:
            with self.db.transaction():
                yield
        except BaseException:
            self.feedback.store.refresh()
            raise

    def _feedback_on_previous(self, text: str, record: DecisionRecord, event: Any) -> None:
        state = self._state
        if not (state.last_signal and state.last_routing):
            return
        # Every form of negative feedback starts with one of these: a cheap test first (for
        # ASCII text, where ignoring case is exactly `lower`).
        if text.isascii() and not text.lstrip()[:9].lower().startswith(_NEGATIVE_STARTS):
            return
        if not _NEGATIVE_FEEDBACK.match(text):
            return
        self.feedback.record_outcome(
            state.last_signal,
            state.last_routing,
            {
                "success": False,
                "reason": "the person said the last answer was wrong",
                "turn_number": record.turn - 1,  # the answer judged, not the turn judging it
                "feedback_turn": record.turn,
            },
            session_id=state.session_id,
        )
        for le in self.feedback.last_events:
            record.learning.append({"event_type": le.event_type, **le.payload})
            event(le.event_type, **le.payload)
        record.learning.append({"event_type": "negative_feedback", "turn": record.turn - 1})
        state.last_signal = state.last_routing = None

    def _maybe_commit(
        self, text: str, action_type: str, reasoning: Any, event: Any, record: DecisionRecord
    ) -> None:
        """Create a commitment on explicit commitment language, or for planned execution.

        Arbitration has already moved focus to the problem a focus request is about (D54), so
        the commitment is on the active problem; a request that names nothing of its own
        ("let's stay on this for the next 3 turns") is described by that problem's title.
        """
        problem = self.focus.problem_registry.get_active()
        if problem is None:
            return
        request = read_focus_request(spoken(text))
        active = self.focus.commitments.get_active()
        if request is not None:
            turns = max(1, min(request.turns or DEFAULT_TURNS, self.config.max_commitment_turns))
            description = request.description
            if not extract_keywords(description):
                description = problem.title
        elif action_type == "execute" and active is None:
            turns = max(2, min(self.config.max_commitment_turns, 3))
            description = f"{reasoning.strategy.strategy}: {text[:60]}".strip()
        else:
            return
        holds = request is not None and request.turns is not None
        change = self.focus.commit(description, turns, holds_focus=holds)
        for ev in change.events:
            event(ev["event_type"], **ev["payload"])
        record.notes.append(f"commitment created: {description!r} for {turns} turn(s)")

    # ── state ──────────────────────────────────────────────────────────────

    def _topic_history(self, problem_id: str) -> list[dict[str, Any]]:
        """The last exchanges on `problem_id` in the decision ledger's last `RECALL_REACH`
        bytes, oldest first (D86): after a long detour, what was said about the problem the
        person came back to. Read only on such turns, and only the `turn` records that name
        it as their topic are parsed."""
        found: list[dict[str, Any]] = []
        needles = (b'"topic":' + json.dumps(problem_id).encode(), b'"kind":"turn"')
        for stored in self.decisions.holding_back(needles, reach=RECALL_REACH):
            if stored.kind != "turn" or topic_of_turn(stored.data) != problem_id:
                continue
            exchange = exchange_of(stored.data)
            if shown(exchange):
                found.append(exchange)
                if len(found) >= RECALLED_TURNS:
                    break
        return found[::-1]

    def _context(self, number: int) -> HRMContext:
        commitment = self.focus.commitments.get_active()
        problem = self.focus.problem_registry.get_active()
        state = self._state
        return HRMContext(
            session_id=state.session_id,
            turn_number=number,
            problem_id=problem.id if problem else None,
            altitude=self.altitude.current_level,
            stance=self.stance,
            commitment_id=commitment.id if commitment else None,
            commitment_turns_remaining=commitment.turns_remaining if commitment else None,
            recent_inputs=[t["input"] for t in state.recent],
            recent_outputs=[t["output"] for t in state.recent],
            recent_decisions=[
                {"action": t.get("action", "respond"), "kind": t.get("kind"),
                 "problem": t.get("problem")}
                for t in state.recent
            ],
            trace_enabled=self.config.trace_enabled,
            agent_class=self.agent_class,
            last_topic=state.last_topic,
            earlier_topic=state.earlier_topic,
        )

    def _load_state(self) -> TurnState:
        """Rebuild the turn state from the decision ledger (004 §8 recovery: read, not recall).

        The last ``turn`` record holds the state; a ``session_started`` after it (a session
        begun by an open that ran no turn yet) names the session and when it began.
        """
        self._seen_seq = 0
        self._seen_size = self.decisions.size()
        last = self.decisions.last()
        if last is None:
            state = TurnState(altitude=self.config.altitude_default_level.value)
        else:
            self._seen_seq = last.seq
            tail = self.decisions.tail(STATE_TAIL)
            turn = next((r for r in reversed(tail) if r.kind == "turn"), None)
            state = (
                TurnState.from_dict(turn.data.get("state", {}))
                if turn is not None
                else TurnState(altitude=self.config.altitude_default_level.value)
            )
            if turn is not None and "recent" not in turn.data.get("state", {}):
                state.recent = recent_from(tail)
            # A turn whose record a quarantine set aside keeps its number (D187).
            from hrm.storage.ledger_quarantine import highest_turn

            state.turn_number = max(state.turn_number, highest_turn(tail))
            started = next((r for r in reversed(tail) if r.kind == "session_started"), None)
            if started is not None and (turn is None or started.seq > turn.seq):
                state.session_id = str(started.data.get("session_id") or "")
                state.last_at = started.ts
                base = started.data.get("session_tokens_base")
                state.session_tokens_base = base if isinstance(base, int) else None
                _forget_last_session(state)
        self.altitude.current_level = AltitudeLevel(state.altitude)
        self.evaluator.failure_streak = state.failure_streak
        if state.session_id:
            self.stack.join_session(state.session_id)
        return state

    def _refresh_state(self) -> None:
        # Another process's append (or a truncation) changes the size: only then re-read.
        size = self.decisions.size()
        if size == self._seen_size:
            return
        self._seen_size = size
        last = self.decisions.last()
        if last is not None and last.seq != self._seen_seq:
            self._state = self._load_state()
            self._allocate_budget()

    def _session_idle(self) -> bool:
        """Has the session been idle longer than `SESSION_IDLE_MINUTES` (or never begun)?"""
        last_at = self._state.last_at
        if not (self._state.session_id and last_at):
            return True
        try:
            last = datetime.fromisoformat(last_at)
        except ValueError:  # a state record from elsewhere with an unreadable time: start anew
            return True
        if last.tzinfo is None:
            last = last.replace(tzinfo=UTC)
        return self._clock() - last > timedelta(minutes=SESSION_IDLE_MINUTES)

    def _open_session(self, *, force: bool) -> None:
        """At open: continue the stack's session unless it went idle, or start one (D9)."""
        start = force or self._session_idle()
        if start:
            self.stack.join_session(new_session_id())
        self.stack.record_created()
        if start:
            self._start_session()
        else:
            self._allocate_budget()

    def _start_session(self) -> None:
        """Begin the session the stack has just joined: recover, reset the stance, record it.

        What the last session left pending does not carry over: a preference held for
        confirmation goes unconfirmed, and the first "No, …" of the new session judges no
        answer from the old one (D37).
        """
        state = self._state
        previous = state.session_id or None
        if previous is not None:
            from hrm.stacks.lifecycle import recover

            recover(self.stack)  # a new session of this class reads what came before (004 §8)
        state.session_id = self.stack.session_id
        state.last_at = self._clock().isoformat()
        state.session_tokens_base = self.stack.tokens_spent_total
        reset = self.focus.stance.start_session("new session")
        records: list[tuple[str, dict[str, Any]]] = [
            (
                "session_started",
                {
                    "session_id": state.session_id,
                    "agent_class": self.agent_class,
                    "previous_session_id": previous,
                    "active_templates": self.stack.active_template_ids(),
                    "session_tokens_base": state.session_tokens_base,
                },
            ),
            (reset["event_type"], {"session_id": state.session_id, **reset["payload"]}),
        ]
        pending = state.pending_preference
        if pending:
            records.append(
                (
                    "preference_unconfirmed",
                    {
                        "session_id": state.session_id,
                        "key": pending.get("key"),
                        "reason": "the session it was asked in ended unanswered",
                    },
                )
            )
        if isinstance(state.pending_switch, dict):
            records.append(
                (
                    "switch_unanswered",
                    {
                        "session_id": state.session_id,
                        "problem_id": state.pending_switch.get("problem_id"),
                        "reason": "the session it was asked in ended unanswered",
                    },
                )
            )
        _forget_last_session(state)
        if self.config.problem_retire_days:
            retired = self.focus.problem_registry.retire_stale(
                timedelta(days=self.config.problem_retire_days)
            )
            if retired:
                records.append(
                    (
                        "problems_retired",
                        {
                            "session_id": state.session_id,
                            "untouched_days": self.config.problem_retire_days,
                            "count": len(retired),
                            "problems": [
                                {"id": p.id, "title": clip(p.title, 80)} for p in retired[:50]
                            ],
                        },
                    )
                )
        self.decisions.append_many(records)
        self.decisions.commit()
        self._seen_seq = self.decisions.last().seq  # type: ignore[union-attr]
        self._seen_size = self.decisions.size()
        self._allocate_budget()

    def _allocate_budget(self) -> None:
        """The stack's token ceiling bounds one session, not the stack's whole life (D23)."""
        state = self._state
        if state.session_tokens_base is None:  # a session begun before budgets were per session
            state.session_tokens_base = self.stack.tokens_spent
        spent = self.stack.tokens_spent - state.session_tokens_base
        self.stack.allocate_session_budget(spent)

    def _meta_episodes(self, record: DecisionRecord) -> list[dict[str, Any]]:
        """Higher-order observations about the session (004 §4 meta_episodes)."""
        episodes: list[dict[str, Any]] = []
        arb = record.arbitration
        if arb.get("disposition") == "switch":
            episodes.append({"observation": "the person changed problems", "turn": record.turn})
        if record.escalations:
            episodes.append({"observation": "the input needed escalation", "turn": record.turn})
        if any(le.get("event_type") == "pattern_created" for le in record.learning):
            episodes.append({"observation": "a routing pattern was learned", "turn": record.turn})
        return episodes


def _forget_last_session(state: TurnState) -> None:
    """Drop what only the session that just ended could act on (D37)."""
    state.pending_preference = None
    state.pending_switch = None
    state.last_topic = state.earlier_topic = state.last_kept = None
    state.last_signal = state.last_routing = None


def _kept(writes: list[dict[str, Any]]) -> str | None:
    """The key of the last preference or fact this turn's writes kept in the canon, if any."""
    for write in reversed(writes):
        key = str(write.get("key") or "")
        if (
            write.get("approved") and write.get("target") == "shared_reference"
            and key.startswith(("preference.", "fact.")) and not write.get("retracted")
        ):
            return key
    return None


def _just_kept(state: TurnState, turn: int) -> str | None:
    """What "forget that" refers to: the key the turn just before kept, if it kept one."""
    kept = state.last_kept if isinstance(state.last_kept, dict) else {}
    return str(kept["key"]) if kept.get("key") and kept.get("turn") == turn - 1 else None


def _move_topic(state: TurnState, topic: dict[str, Any] | None) -> None:
    """Make `topic` the last one; when the conversation moved to another problem, the one it
    left is the earlier topic, where "Where were we?" goes back to (D75)."""
    before = state.last_topic.get("problem_id") if isinstance(state.last_topic, dict) else None
    after = topic.get("problem_id") if topic is not None else None
    if before and after and before != after:
        _leave(state, before)
    state.last_topic = topic


def _leave(state: TurnState, problem_id: str) -> None:
    """Make `problem_id`, which the last exchange about the work went to, the earlier topic.

    That exchange (one about a preference or a fact has no topic, and hrm's own "Switched to
    …" is procedure) is where "Where were we?" says it was left, in the person's own words,
    pastes left out.
    """
    last = next(
        (
            t["input"] for t in reversed(state.recent)
            if t.get("kind") is None and t.get("action", "respond") in _ABOUT_THE_WORK
        ),
        None,
    )
    said = " ".join(spoken(last).split()) if last else ""
    state.earlier_topic = {
        "problem_id": problem_id,
        "last_input": shorten(said, _LAST_INPUT_CHARS) if said else None,
    }


def _closed_in_focus(record: DecisionRecord) -> bool:
    """Did this turn resolve the problem in focus (not one named elsewhere)?"""
    asked = record.problem_request or {}
    return asked.get("resolution") == "resolved" and (
        asked.get("ref") is None or asked.get("was") == "active"
    )


def _about_the_closed(text: str) -> bool:
    """Does what a message says beside closing the problem in focus tell of that work ("Done,
    switched to Decimal and it passes.") rather than bring something ("How do I rename a
    branch?", "Our CI is broken", "Unrelated: …")?"""
    return "?" not in text and is_follow_up(text) and not opens_new_topic(text)


def _parked(state: TurnState, record: DecisionRecord) -> None:
    """After "Let's park the offsite for now.", nothing follows the offsite: a question after
    it is not its follow-up (D67 would take it there). "Where were we?" goes back to it."""
    asked = record.problem_request or {}
    topic = state.last_topic if isinstance(state.last_topic, dict) else {}
    if asked.get("resolution") == "paused" and topic.get("problem_id") == asked["problem_id"]:
        _leave(state, str(asked["problem_id"]))
        state.last_topic = None


def _titled(title: str) -> str:
    """A problem's title quoted as the end of a sentence: its own stop serves as the sentence's
    (‘I need to finish the review by Friday.’, not ‘… Friday.’.)."""
    return f"‘{title}’" if title.endswith((".", "!", "?", "…")) else f"‘{title}’."


_ABOUT_THE_WORK = CONVERSATION_ACTIONS | {"queue"}
"""Exchanges whose input was about a problem: answered, or queued as one."""
_LAST_INPUT_CHARS = 160
"""Characters of the input an earlier topic was left at, for "Where were we?"'s answer."""


_TOPIC_WORDS = 12
"""Keywords of the last input kept for the next turn's arbitration (`HRMContext.last_topic`)."""
_RESUMED = "resume request: back to"
"""How arbitration names a resume request it answered with the earlier topic (D75)."""

_STORED_ONCE = frozenset({"attention_state", "arbitration"})


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


def _lines(text: str) -> int:
    """How many lines of `text` have something on them."""
    return sum(1 for line in text.split("\n") if line.strip())


def _commitment(commitment: Any) -> dict[str, Any] | None:
    if commitment is None:
        return None
    return {
        "id": commitment.id,
        "problem_id": commitment.problem_id,
        "description": commitment.description,
        "turns_remaining": commitment.turns_remaining,
        "turns_total": commitment.turns_total,
        "holds_focus": commitment.holds_focus,
        "status": commitment.status,
    }
