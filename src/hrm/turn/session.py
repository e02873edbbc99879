"""A stack's turn state across processes and sessions: read back from the decision ledger,
re-read when another process appended, and rolled over to a new session after 30 idle minutes
(D37), which retires queued and paused problems untouched for 30 days (D39)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from hrm.stacks.factory import new_session_id
from hrm.turn.state import STATE_TAIL, TurnState, clip, recent_from
from hrm.types import AltitudeLevel

if TYPE_CHECKING:
    from hrm.turn.context import TurnServices
    from hrm.types import Clock

__all__ = ["SESSION_IDLE_MINUTES", "Sessions"]

SESSION_IDLE_MINUTES = 30
"""A stack's session continues across processes until it has been idle this long."""


class Sessions:
    """The turn state of one stack and the session it belongs to.

    `state` is what the last ``turn`` record says; `mark` records what this process appended,
    so that only another process's append makes `refresh` read the ledger again.
    """

    def __init__(self, services: TurnServices, agent_class: str, clock: Clock) -> None:
        self.services = services
        self.agent_class = agent_class
        self._clock = clock
        self._seen_seq = 0
        self._seen_size = 0
        self.state = TurnState()

    # ── reading the state ───────────────────────────────────────────────────

    def load(self) -> TurnState:
        """Rebuild the turn state from the decision ledger (004 §8 recovery: read, not recall).

        The last ``turn`` record holds the state; a ``session_started`` after it (a session
        begun by an open that ran no turn yet) names the session and when it began.
        """
        services = self.services
        decisions, default = services.decisions, services.config.altitude_default_level.value
        self._seen_seq = 0
        self._seen_size = decisions.size()
        last = decisions.last()
        if last is None:
            state = TurnState(altitude=default)
        else:
            self._seen_seq = last.seq
            tail = decisions.tail(STATE_TAIL)
            turn = next((r for r in reversed(tail) if r.kind == "turn"), None)
            stored = turn.data.get("state", {}) if turn is not None else {}
            state = TurnState.from_dict(stored) if turn is not None else TurnState(
                altitude=default
            )
            if turn is not None and "recent" not in stored:
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
                forget_last_session(state)
        services.altitude.current_level = AltitudeLevel(state.altitude)
        services.evaluator.failure_streak = state.failure_streak
        if state.session_id:
            services.stack.join_session(state.session_id)
        self.state = state
        return state

    def refresh(self) -> None:
        """Read the state again if another process appended (or truncated) since."""
        decisions = self.services.decisions
        size = decisions.size()
        if size == self._seen_size:
            return
        self._seen_size = size
        last = decisions.last()
        if last is not None and last.seq != self._seen_seq:
            self.load()
            self.allocate_budget()

    def mark(self, seq: int, size: int) -> None:
        """This process appended up to `seq`, leaving the ledger `size` bytes long."""
        self._seen_seq, self._seen_size = seq, size

    def mark_end(self) -> None:
        """This process's append is the ledger's end."""
        decisions = self.services.decisions
        last = decisions.last()
        self.mark(last.seq if last is not None else 0, decisions.size())

    # ── sessions ────────────────────────────────────────────────────────────

    def idle(self) -> bool:
        """Has the session been idle longer than `SESSION_IDLE_MINUTES` (or never begun)?"""
        last_at = self.state.last_at
        if not (self.state.session_id and last_at):
            return True
        try:
            last = datetime.fromisoformat(last_at)
        except ValueError:  # a state record from elsewhere with an unreadable time: start anew
            return True
        if last.tzinfo is None:
            last = last.replace(tzinfo=UTC)
        return self._clock() - last > timedelta(minutes=SESSION_IDLE_MINUTES)

    def open(self, *, force: bool) -> None:
        """At open: continue the stack's session unless it went idle, or start one (D9)."""
        start = force or self.idle()
        stack = self.services.stack
        if start:
            stack.join_session(new_session_id())
        stack.record_created()
        if start:
            self.start()
        else:
            self.allocate_budget()

    def roll_over_if_idle(self) -> None:
        """A long-lived process (`hrm chat` left open) starts a new session when idle too."""
        if self.idle():
            self.services.stack.join_session(new_session_id())
            self.start()

    def start(self) -> None:
        """Begin the session the stack has just joined: recover, reset the stance, record it.

        What the last session left pending does not carry over: a preference held for
        confirmation goes unconfirmed, and the first "No, …" of the new session judges no
        answer from the old one (D37).
        """
        state, stack = self.state, self.services.stack
        previous = state.session_id or None
        if previous is not None:
            from hrm.stacks.lifecycle import recover

            recover(stack)  # a new session of this class reads what came before (004 §8)
        state.session_id = stack.session_id
        state.last_at = self._clock().isoformat()
        state.session_tokens_base = stack.tokens_spent_total
        reset = self.services.focus.stance.start_session("new session")
        records: list[tuple[str, dict[str, Any]]] = [
            (
                "session_started",
                {
                    "session_id": state.session_id,
                    "agent_class": self.agent_class,
                    "previous_session_id": previous,
                    "active_templates": stack.active_template_ids(),
                    "session_tokens_base": state.session_tokens_base,
                },
            ),
            (reset["event_type"], {"session_id": state.session_id, **reset["payload"]}),
        ]
        records += self._left_unanswered(state)
        forget_last_session(state)
        records += self._retired(state)
        decisions = self.services.decisions
        decisions.append_many(records)
        decisions.commit()
        self.mark_end()
        self.allocate_budget()

    def _left_unanswered(self, state: TurnState) -> list[tuple[str, dict[str, Any]]]:
        records: list[tuple[str, dict[str, Any]]] = []
        reason = "the session it was asked in ended unanswered"
        pending = state.pending_preference
        if pending:
            records.append(("preference_unconfirmed", {
                "session_id": state.session_id, "key": pending.get("key"), "reason": reason,
            }))  # fmt: skip
        if isinstance(state.pending_switch, dict):
            records.append(("switch_unanswered", {
                "session_id": state.session_id,
                "problem_id": state.pending_switch.get("problem_id"), "reason": reason,
            }))  # fmt: skip
        if state.pending_intent:
            records.append(("intent_unconfirmed", {
                "session_id": state.session_id, "kind": state.pending_intent.get("kind"),
                "reason": reason,
            }))  # fmt: skip
        return records

    def _retired(self, state: TurnState) -> list[tuple[str, dict[str, Any]]]:
        days = self.services.config.problem_retire_days
        if not days:
            return []
        retired = self.services.focus.problem_registry.retire_stale(timedelta(days=days))
        if not retired:
            return []
        return [("problems_retired", {
            "session_id": state.session_id,
            "untouched_days": days,
            "count": len(retired),
            "problems": [{"id": p.id, "title": clip(p.title, 80)} for p in retired[:50]],
        })]  # fmt: skip

    def allocate_budget(self) -> None:
        """The stack's token ceiling bounds one session, not the stack's whole life (D23)."""
        state, stack = self.state, self.services.stack
        if state.session_tokens_base is None:  # a session begun before budgets were per session
            state.session_tokens_base = stack.tokens_spent
        spent = stack.tokens_spent - state.session_tokens_base
        stack.allocate_session_budget(spent)


def forget_last_session(state: TurnState) -> None:
    """Drop what only the session that just ended could act on (D37)."""
    state.pending_preference = None
    state.pending_switch = None
    state.pending_intent = None
    state.last_topic = state.earlier_topic = state.last_kept = None
    state.last_signal = state.last_routing = None
