"""The memory bus (001 §6.1): one stack's door to its four compartments, behind the write gate.

Everything that writes memory comes through here, so every write is decided by the `WriteGate`
and leaves a ``write_completed`` episode (001 §8.3) — approved, redirected or denied — with the
requested target, the key, the decision's target and its reason. A redirect is carried out: a
HIGH-conflict fact asked for the Shared Reference really lands in the working set.

Return types: 001 §6.1 has ``write_to_shared`` and ``add_synthesis`` return ``bool``; 000 has
them return the `WriteDecision`. The bus returns the decision — ``decision.approved`` is the
bool, and a caller that was redirected or must ask for confirmation needs the rest.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from hrm.errors import HRMError
from hrm.home import HRMHome
from hrm.memory.episodic import EpisodicTraceStore
from hrm.memory.shared_reference import SharedReferenceStore
from hrm.memory.synthesis import SemanticSynthesisStore, new_pattern_id
from hrm.memory.types import (
    WRITE_COMPLETED,
    EpisodeEntry,
    MemoryTarget,
    SynthesizedPattern,
    WriteDecision,
    WriteRequest,
    WriteSignals,
    encode_json,
)
from hrm.memory.working_set import DEFAULT_TTL_HOURS, WorkingSetStore
from hrm.memory.write_gate import WriteGate
from hrm.storage.sqlite import Database
from hrm.types import Clock, system_clock

__all__ = [
    "DEFAULT_PROBLEM_ID",
    "WORKING_SET_EXPIRED",
    "MemoryBus",
    "default_write_gate",
]

logger = logging.getLogger(__name__)

DEFAULT_PROBLEM_ID = "default"
"""The working set that receives writes redirected there without a ``problem_id``."""
WORKING_SET_EXPIRED = "working_set_expired"
"""The episode type archiving a working set's summary when it expires."""


def default_write_gate() -> WriteGate:
    """A gate with the preference classifier of the default policy (001 §12.1)."""
    from hrm.config import PolicySurface
    from hrm.governance.preferences import PreferenceClassifier

    return WriteGate(PreferenceClassifier(PolicySurface()))


class MemoryBus:
    """Unified memory access for ONE stack (001 §6.1).

    The compartments are public attributes (``working``, ``shared``, ``episodic``,
    ``synthesis``) for reading; writes go through the bus's methods so they are gated and
    logged. Thread- and process-safe as its stores are.
    """

    def __init__(
        self,
        home: HRMHome,
        db: Database,
        agent_class: str = "ADMIN",
        *,
        gate: WriteGate | None = None,
        clock: Clock = system_clock,
        durability: str = "group",
        working_set_ttl_hours: float = DEFAULT_TTL_HOURS,
    ) -> None:
        """Open the stack's compartments in `home` over `db` (the stack's own database).

        Args:
            home: The home holding the stack's episodic ledger.
            db: The stack's own database (`hrm.storage.stack_db.open_stack_db`); the caller
                keeps ownership.
            agent_class: The stack: ``ADMIN`` or ``RESIDENT:<name>``.
            gate: The write gate; default `default_write_gate`.
            clock: Time for TTLs, versions and episodes.
            durability: Episodic ledger durability, ``"group"`` or ``"fsync"``.
            working_set_ttl_hours: Lifetime of working sets the bus creates.
        """
        self.home = home
        self.db = db
        self.agent_class = agent_class
        self.gate = gate if gate is not None else default_write_gate()
        self._clock = clock
        self._owns_db = False
        self.working = WorkingSetStore(
            db, agent_class, clock=clock, default_ttl_hours=working_set_ttl_hours
        )
        self.shared = SharedReferenceStore(db, agent_class, clock=clock)
        self.episodic = EpisodicTraceStore(
            db, home, agent_class, clock=clock, durability=durability
        )
        self.synthesis = SemanticSynthesisStore(db, self.episodic, clock=clock)

    @classmethod
    def open(
        cls,
        home: HRMHome | None = None,
        agent_class: str = "ADMIN",
        *,
        gate: WriteGate | None = None,
        clock: Clock = system_clock,
        durability: str = "group",
        working_set_ttl_hours: float = DEFAULT_TTL_HOURS,
    ) -> MemoryBus:
        """A bus over the stack's own database (D320), which `close` closes."""
        from hrm.storage.stack_db import open_stack_db

        resolved = home if home is not None else HRMHome.resolve()
        db = open_stack_db(resolved, agent_class)
        try:
            bus = cls(
                resolved,
                db,
                agent_class,
                gate=gate,
                clock=clock,
                durability=durability,
                working_set_ttl_hours=working_set_ttl_hours,
            )
        except BaseException:
            db.close()
            raise
        bus._owns_db = True
        return bus

    def commit(self) -> None:
        """Make appended episodes durable (a group-commit boundary, e.g. the end of a turn)."""
        self.episodic.commit()

    def close(self) -> None:
        """Commit, release the ledger, and close the database if the bus opened it."""
        self.episodic.close()
        if self._owns_db:
            self.db.close()

    def __enter__(self) -> MemoryBus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ── 001 §6.1 ───────────────────────────────────────────────────────────

    def write_to_working(self, problem_id: str, key: str, value: Any) -> bool:
        """Write to the problem's Working Set; no gate (local scope). Returns True.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a value that is not JSON data; nothing is
                written then.
        """
        self.working.set(problem_id, key, value)
        decision = WriteDecision(
            True, MemoryTarget.WORKING_SET, "Working set is problem-local: no gate required"
        )
        self._log_write(
            MemoryTarget.WORKING_SET,
            key,
            decision,
            problem_id=problem_id,
            source="local",
            request_reason="",
            outcome={"problem_id": problem_id},
        )
        return True

    def write_to_shared(
        self,
        key: str,
        value: Any,
        source: str,
        signals: WriteSignals,
        *,
        is_preference: bool = False,
        reason: str = "",
        problem_id: str | None = None,
    ) -> WriteDecision:
        """Ask to write `value` to the Shared Reference; the gate decides (see `write`)."""
        return self.write(
            WriteRequest(
                target=MemoryTarget.SHARED_REFERENCE,
                key=key,
                value=value,
                signals=signals,
                reason=reason,
                is_preference=is_preference,
                source=source,
                problem_id=problem_id,
            )
        )

    def log_episode(self, entry: EpisodeEntry) -> str:
        """Append to the Episodic Trace (append-only; no gate) and return the entry id."""
        return self.episodic.append(entry)

    def add_synthesis(
        self,
        pattern: SynthesizedPattern,
        signals: WriteSignals,
        *,
        reason: str = "",
        source: str = "learning",
    ) -> WriteDecision:
        """Ask to add `pattern` to Semantic Synthesis; the gate decides (the high bar).

        The pattern gets its id before the gate sees it, so the ``write_completed`` episode
        names the pattern; an approved decision stores it under that id.
        """
        if not pattern.id:
            pattern = dataclasses.replace(pattern, id=new_pattern_id())
        return self.write(
            WriteRequest(
                target=MemoryTarget.SYNTHESIS,
                key=pattern.id,
                value=pattern,
                signals=signals,
                reason=reason,
                source=source,
            )
        )

    def get_evidence_chain(self, pattern_id: str) -> list[EpisodeEntry]:
        """The episodes behind a synthesized pattern, in the order they were linked."""
        return self.synthesis.get_evidence_chain(pattern_id)

    # ── gated writes ───────────────────────────────────────────────────────

    def record_decision(self, problem_id: str, decision: dict[str, Any]) -> WriteDecision:
        """Add a decision the person stated to the problem's working set (``local_decisions``,
        001 §6.4; D88). No gate (local scope), as `write_to_working`; the same decision said
        again is not added twice. Logged as a ``write_completed`` episode.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a decision that is not JSON data.
        """
        said = str(decision.get("decision", ""))
        with self.working.db.transaction():
            working = self.working.get_or_create(problem_id)
            known = {str(d.get("decision", "")).casefold() for d in working.local_decisions}
            added = said.casefold() not in known
            if added:
                self.working.update(problem_id, local_decisions=[decision])
        reason = "Working set is problem-local: no gate required" + (
            "" if added else " (already recorded)"
        )
        verdict = WriteDecision(True, MemoryTarget.WORKING_SET, reason)
        self._log_write(
            MemoryTarget.WORKING_SET,
            "local_decisions",
            verdict,
            problem_id=problem_id,
            source="user",
            request_reason="the person stated a decision",
            outcome={"problem_id": problem_id, "added": added},
        )
        return verdict

    def forget_decision(self, problem_id: str, said: str, *, asked: str) -> WriteDecision:
        """Take a stated decision out of the problem's working set because the person asked
        (D424): what the model is shown of the problem no longer holds it. The turn record
        that heard it keeps it, as a forgotten preference's history does. Logged as a
        ``write_completed`` episode; a decision no longer there changes nothing.
        """
        wanted = said.casefold()
        with self.working.db.transaction():
            working = self.working.get(problem_id)
            decisions = [] if working is None else working.local_decisions
            kept = [d for d in decisions if _decision_text(d).casefold() != wanted]
            removed = len(decisions) - len(kept)
            if removed:
                self.working.update(problem_id, replace=True, local_decisions=kept)
        verdict = WriteDecision(
            True, MemoryTarget.WORKING_SET,
            "the person asked to forget it" if removed else "no such decision (already gone)",
        )  # fmt: skip
        self._log_write(
            MemoryTarget.WORKING_SET,
            "local_decisions",
            verdict,
            problem_id=problem_id,
            source="user",
            request_reason=f"the person asked to forget a decision ({asked})",
            outcome={"problem_id": problem_id, "removed": removed},
        )
        return verdict

    def write(self, request: WriteRequest) -> WriteDecision:
        """Evaluate `request` with the gate and carry the decision out.

        An approved decision writes to ``decision.target`` — which may differ from the
        request's target (a redirect). Every call logs a ``write_completed`` episode.

        Raises:
            HRMError: ``VALIDATION_FAILED`` naming the key when the value is not JSON data (or
                not a valid pattern for synthesis); nothing is written or logged then.
        """
        payload = _payload(request.value)
        encode_json(payload, what=f"{request.target.value} '{request.key}'")
        if request.target is MemoryTarget.SYNTHESIS and not isinstance(
            request.value, SynthesizedPattern
        ):
            request = dataclasses.replace(request, value=_as_pattern(payload, request.key))
        decision = self.gate.evaluate(request)
        outcome: dict[str, Any] = {}
        if decision.approved:
            outcome = self._carry_out(request, decision.target, payload)
        self._log_write(
            request.target,
            request.key,
            decision,
            problem_id=request.problem_id,
            source=request.source,
            request_reason=request.reason,
            outcome=outcome,
        )
        return decision

    def rollback_shared(self, key: str, to_version: int, *, source: str = "rollback") -> int:
        """Restore the exact value of `to_version` of `key` as a new version; return it.

        Not gated: it restores a value the gate already let in. Logged as ``write_completed``.

        Raises:
            HRMError: ``NOT_FOUND`` naming the key and its versions; nothing changes then.
        """
        version = self.shared.restore(key, to_version, source=source)
        decision = WriteDecision(
            True, MemoryTarget.SHARED_REFERENCE, f"Rollback to v{to_version} as v{version}"
        )
        self._log_write(
            MemoryTarget.SHARED_REFERENCE,
            key,
            decision,
            problem_id=None,
            source=source,
            request_reason="rollback",
            outcome={"version": version, "rollback_of": to_version},
        )
        return version

    def expire_working(self) -> int:
        """Archive each expired working set's summary as an episode, then delete them.

        Returns:
            How many working sets expired.
        """
        for working in self.working.stale():
            self.episodic.append(
                EpisodeEntry(
                    problem_id=working.problem_id,
                    entry_type=WORKING_SET_EXPIRED,
                    content={"summary": self.working.export_summary(working.problem_id)},
                    tags=["working_set", "expired"],
                )
            )
        return self.working.expire_stale()

    # ── internals ──────────────────────────────────────────────────────────

    def _carry_out(
        self, request: WriteRequest, target: MemoryTarget, payload: Any
    ) -> dict[str, Any]:
        if target is MemoryTarget.WORKING_SET:
            problem_id = request.problem_id or DEFAULT_PROBLEM_ID
            self.working.set(problem_id, request.key, payload)
            return {"problem_id": problem_id}
        if target is MemoryTarget.SHARED_REFERENCE:
            return {"version": self.shared.set(request.key, payload, request.source)}
        if target is MemoryTarget.EPISODIC:
            episode_id = self.episodic.append(
                EpisodeEntry(
                    problem_id=request.problem_id,
                    entry_type="observation",
                    content={
                        "key": request.key,
                        "value": payload,
                        "source": request.source,
                        "reason": request.reason,
                    },
                    tags=["memory_write"],
                )
            )
            return {"episode_id": episode_id}
        pattern = request.value
        if not isinstance(pattern, SynthesizedPattern):
            pattern = _as_pattern(payload, request.key)
        return {"pattern_id": self.synthesis.add_pattern(pattern)}

    def _log_write(
        self,
        target: MemoryTarget,
        key: str,
        decision: WriteDecision,
        *,
        problem_id: str | None,
        source: str,
        request_reason: str,
        outcome: dict[str, Any],
    ) -> str:
        content: dict[str, Any] = {
            "target": target.value,
            "key": key,
            "approved": decision.approved,
            "decision_target": decision.target.value,
            "reason": decision.reason,
            "conditions": list(decision.conditions),
            "source": source,
            "request_reason": request_reason,
            **outcome,
        }
        return self.episodic.append(
            EpisodeEntry(
                problem_id=problem_id,
                entry_type=WRITE_COMPLETED,
                content=content,
                tags=[
                    "write",
                    decision.target.value,
                    "approved" if decision.approved else "denied",
                ],
            )
        )


def _payload(value: Any) -> Any:
    if isinstance(value, SynthesizedPattern):
        return value.to_dict()
    return value


def _as_pattern(payload: Any, key: str) -> SynthesizedPattern:
    if not isinstance(payload, dict):
        raise HRMError.validation_failed(
            f"A synthesis write of '{key}' needs a SynthesizedPattern or a dict of its fields,"
            f" got {type(payload).__name__}",
            key=key,
        )
    data = dict(payload)
    data.setdefault("id", key)
    return SynthesizedPattern.from_dict(data)


def _decision_text(decision: Any) -> str:
    """What a stated decision in a working set says (``decision``), whatever its shape."""
    if isinstance(decision, dict):
        return str(decision.get("decision", ""))
    return str(decision)
