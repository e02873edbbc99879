"""What a turn returns: the answer and the full record of why (ARCHITECTURE §3, step 10).

The decision record is built by the turn's steps, each writing its own part. The parts the turn
loop decides itself are typed records (`PreferenceRecord`, `ProblemRequestRecord`, …); the parts
another layer decides (arbitration, execution, attention) are that layer's own ``to_record()``.
Every part is stored as JSON in the ``turn`` record of the decision ledger, key for key as the
dictionaries the loop built before it had types, so ledgers written then read back the same and
``/why`` reads both. A typed part also reads like the dictionary it is stored as
(``decision.preference["class"]``): code and tests written against the stored form keep working.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hrm.storage.ledger import LedgerRecord

__all__ = [
    "AltitudeRecord",
    "CandidateRecord",
    "CommitmentRecord",
    "DecisionRecord",
    "EscalationRecord",
    "EscalationStep",
    "FactRequestRecord",
    "ForgetRequestRecord",
    "GovernanceRecord",
    "HeldPreferenceRecord",
    "PreferenceRecord",
    "ProblemRef",
    "ProblemRequestRecord",
    "RecordPart",
    "SelectedRecord",
    "TurnResult",
    "jsonable",
]


_SCALARS = frozenset({str, int, float, bool, type(None)})


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of dataclasses, enums, datetimes and containers.

    Every turn converts its whole decision record (hundreds of values), so plain scalars, dicts
    and lists are recognised by exact type before the general checks. A `RecordPart` becomes
    its stored form (`to_record`), not its fields.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): jsonable(v) for k, v in value.items()}
    if kind is list:
        return [jsonable(v) for v in value]
    if isinstance(value, RecordPart):
        return jsonable(value.to_record())
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {name: jsonable(getattr(value, name)) for name in fields}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


class RecordPart(Mapping[str, Any]):
    """A typed part of the decision record that reads like the dictionary it is stored as.

    Subclasses are dataclasses (``eq=False``, so that equality is the mapping's: a part equals
    the dictionary it is stored as) and say in `to_record` which keys they store, in the order
    the ledger has always had them.
    """

    __slots__ = ()

    @abstractmethod
    def to_record(self) -> dict[str, Any]:
        """The part as the ledger stores it."""

    def __getitem__(self, key: str) -> Any:
        return self.to_record()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_record())

    def __len__(self) -> int:
        return len(self.to_record())


# ── the parts the turn loop decides ─────────────────────────────────────────


@dataclass(eq=False, kw_only=True)
class PreferenceRecord(RecordPart):
    """What the preference classifier found in the message, and what became of it."""

    preference_class: str
    """The class (``pref_explicit``, ``pref_inferred_silent``, …), stored as ``class``."""
    matched_pattern: str | None = None
    confidence: float = 0.0
    needs_confirmation: bool = False
    not_a_preference: str | None = None
    """Why the pattern that matched states no standing preference (a silent reading only)."""
    silent: bool = False
    """No sentence states a preference: the record says why (`not_a_preference`)."""
    resolution: str | None = None
    """``already canon`` when the canon held it word for word."""

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "class": self.preference_class,
            "matched_pattern": self.matched_pattern,
            "confidence": self.confidence,
            "needs_confirmation": self.needs_confirmation,
        }
        if self.silent:
            out["not_a_preference"] = self.not_a_preference
        if self.resolution is not None:
            out["resolution"] = self.resolution
        return out


@dataclass(eq=False, kw_only=True)
class HeldPreferenceRecord(RecordPart):
    """A preference held for confirmation, settled by this turn's yes or no (D36, D70)."""

    statement: str
    key: str
    replaces: dict[str, str] | None = None
    """The canon entries a yes retracts (D70), key → text."""
    resolution: str
    """``confirmed`` | ``declined``."""

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"statement": self.statement, "key": self.key}
        if self.replaces is not None:
            out["replaces"] = self.replaces
        out["resolution"] = self.resolution
        return out


@dataclass(eq=False, kw_only=True)
class FactRequestRecord(RecordPart):
    """A request to remember a fact (D73): its canon key, the fact and what became of it."""

    key: str
    fact: str
    statement: str
    resolution: str | None = None

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "fact": self.fact, "statement": self.statement}
        if self.resolution is not None:
            out["resolution"] = self.resolution
        return out


@dataclass(eq=False, kw_only=True)
class ForgetRequestRecord(RecordPart):
    """A request to forget (D77): the words, what they name, the keys matched, the outcome."""

    forget: str
    what: str | None
    matched: list[str]
    """The canon keys the request matched, stored as ``keys``."""
    resolution: str | None = None
    kept: str | None = None
    """What stays of a fact forgotten in part (D83)."""

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"forget": self.forget, "what": self.what, "keys": self.matched}
        if self.resolution is not None:
            out["resolution"] = self.resolution
        if self.kept is not None:
            out["kept"] = self.kept
        return out


@dataclass(eq=False, kw_only=True)
class ProblemRequestRecord(RecordPart):
    """A request to resolve or park a problem (D82), or to list what is open (D87)."""

    kind: str
    """``resolve`` | ``park`` | ``list``."""
    ref: str | None
    clause: str
    problem_id: str | None = None
    title: str | None = None
    was: str | None = None
    resolution: str | None = None

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "ref": self.ref, "clause": self.clause}
        if self.problem_id is not None:
            out.update({"problem_id": self.problem_id, "title": self.title, "was": self.was})
        if self.resolution is not None:
            out["resolution"] = self.resolution
        return out


@dataclass(eq=False, kw_only=True)
class AltitudeRecord(RecordPart):
    """The input's altitude classification and the level the turn came from."""

    level: str
    confidence: float
    signals: list[Any]
    suggested_stance: Any
    allows_agents: bool
    came_from: str
    """The level before this input, stored as ``from``."""

    def to_record(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "confidence": self.confidence,
            "signals": self.signals,
            "suggested_stance": self.suggested_stance,
            "allows_agents": self.allows_agents,
            "from": self.came_from,
        }


@dataclass(eq=False, kw_only=True)
class EscalationRecord(RecordPart):
    """The governance signals, and the router's escalation score once reasoning ran."""

    signals: dict[str, Any]
    score: float | None = None
    escalated: bool = False
    deescalated: bool = False
    level: Any = None
    reasoned: bool = False
    """Reasoning ran: the score and the flags are part of the record."""

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"signals": self.signals}
        if self.reasoned:
            out.update({"score": self.score, "escalated": self.escalated,
                        "deescalated": self.deescalated, "level": self.level})  # fmt: skip
        return out


@dataclass(eq=False, kw_only=True)
class EscalationStep(RecordPart):
    """One escalation or de-escalation the router made (an HO2m escalation event)."""

    kind: str
    strategy: str
    level: Any
    score: float
    reason: str

    def to_record(self) -> dict[str, Any]:
        return {"kind": self.kind, "strategy": self.strategy, "level": self.level,
                "score": self.score, "reason": self.reason}  # fmt: skip


@dataclass(eq=False, kw_only=True)
class CandidateRecord(RecordPart):
    id: str
    action_type: str
    description: str

    def to_record(self) -> dict[str, Any]:
        return {"id": self.id, "action_type": self.action_type, "description": self.description}


@dataclass(eq=False, kw_only=True)
class SelectedRecord(RecordPart):
    """The action reasoning selected, with its fallback."""

    id: str
    action_type: str
    rationale: str
    priority_score: float
    fallback: str | None
    use_voting: bool
    batch: list[str] | None

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "action_type": self.action_type,
            "rationale": self.rationale,
            "priority_score": self.priority_score,
            "fallback": self.fallback,
            "use_voting": self.use_voting,
            "batch": self.batch,
        }


@dataclass(eq=False, kw_only=True)
class GovernanceRecord(RecordPart):
    """What Focus allowed of the selected action."""

    allowed: str
    allowed_type: str
    denied: Any
    fallback_used: bool
    interrupt: Any
    stance: str | None = None
    """The stance Focus governed in (what an ``action_governed`` record held: D331)."""

    def to_record(self) -> dict[str, Any]:
        out = {"allowed": self.allowed, "allowed_type": self.allowed_type,
               "denied": self.denied, "fallback_used": self.fallback_used,
               "interrupt": self.interrupt}  # fmt: skip
        if self.stance is not None:
            out["stance"] = self.stance
        return out


@dataclass(eq=False, kw_only=True)
class ProblemRef(RecordPart):
    """The problem the turn was about."""

    id: str
    title: str

    def to_record(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title}


@dataclass(eq=False, kw_only=True)
class CommitmentRecord(RecordPart):
    """The active commitment before or after the turn."""

    id: str
    problem_id: str | None
    description: str
    turns_remaining: int
    turns_total: int
    holds_focus: bool
    status: Any

    @classmethod
    def of(cls, commitment: Any) -> CommitmentRecord | None:
        if commitment is None:
            return None
        return cls(
            id=commitment.id,
            problem_id=commitment.problem_id,
            description=commitment.description,
            turns_remaining=commitment.turns_remaining,
            turns_total=commitment.turns_total,
            holds_focus=commitment.holds_focus,
            status=commitment.status,
        )

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "problem_id": self.problem_id,
            "description": self.description,
            "turns_remaining": self.turns_remaining,
            "turns_total": self.turns_total,
            "holds_focus": self.holds_focus,
            "status": self.status,
        }


# ── the record ───────────────────────────────────────────────────────────────


@dataclass
class DecisionRecord:
    """Every decision of one turn, in the order they were made. JSON-ready via `to_dict`."""

    turn: int
    session_id: str
    agent_class: str
    trace_id: str
    input_summary: str
    arbitration: dict[str, Any] = field(default_factory=dict)
    """Arbitration's own record (`ArbitrationDecision.to_record`)."""
    preference: PreferenceRecord | HeldPreferenceRecord | None = None
    memory_request: FactRequestRecord | ForgetRequestRecord | None = None
    """A request to remember a fact (D73) or to forget (D77) and what became of it."""
    problem_request: ProblemRequestRecord | None = None
    """A request to resolve or park a problem (D82), or to list what is open (D87): its words,
    the problem, what was done."""
    altitude: AltitudeRecord | None = None
    classification: dict[str, Any] = field(default_factory=dict)
    patterns: list[dict[str, Any]] = field(default_factory=list)
    """The best matched patterns and the one that decided, best first (at most a few: D330)."""
    patterns_matched: int = 0
    """How many patterns matched the input in all (`patterns` lists the best of them)."""
    strategy: dict[str, Any] = field(default_factory=dict)
    escalation: EscalationRecord | None = None
    candidates: list[CandidateRecord] = field(default_factory=list)
    selected: SelectedRecord | None = None
    governance: GovernanceRecord | None = None
    gate_decisions: list[dict[str, Any]] = field(default_factory=list)
    stance_before: str = ""
    stance_after: str = ""
    commitment_before: CommitmentRecord | None = None
    commitment_after: CommitmentRecord | None = None
    problem: ProblemRef | None = None
    attention_state: dict[str, Any] = field(default_factory=dict)
    execution: dict[str, Any] = field(default_factory=dict)
    """The executor's own record (`StepOutcome.to_record`)."""
    evaluation: dict[str, Any] = field(default_factory=dict)
    writes: list[dict[str, Any]] = field(default_factory=list)
    """The write gate's decisions, as the stack returns them."""
    learning: list[dict[str, Any]] = field(default_factory=list)
    work_orders: list[dict[str, Any]] = field(default_factory=list)
    escalations: list[EscalationStep] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Degradations and fallbacks, in words (never silent)."""
    reading: dict[str, Any] = field(default_factory=dict)
    """What the message was read as (`Reading.to_record`): the intents with their readers and
    confidence, the cues, what was declined and why."""

    def fields(self, *, omit: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The fields as they are stored, without those named in `omit`.

        Typed parts become their records; the rest is handed over as it is, not copied, for a
        writer that copies anyway (the ledger scrubs what it stores into a new value). Use
        `to_dict` for a copy that is JSON data whatever was put in.
        """
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            if name in omit:
                continue
            value = getattr(self, name)
            if isinstance(value, RecordPart):
                value = value.to_record()
            elif value is None and name in _EMPTY_WHEN_NONE:
                value = {}
            elif type(value) is list and value and isinstance(value[0], RecordPart):
                value = [item.to_record() for item in value]
            out[name] = value
        return out

    def to_dict(self, *, omit: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The record as JSON data, without the fields named in `omit`."""
        return {name: jsonable(value) for name, value in self.fields(omit=omit).items()}


_EMPTY_WHEN_NONE = frozenset({"altitude", "escalation", "selected", "governance"})
"""Parts stored as ``{}`` when the turn did not reach the step that fills them (as they were
stored when they were dictionaries)."""


@dataclass
class TurnResult:
    """The answer to one input and why it is that answer."""

    response: str
    action: str
    """respond | execute | delegate | ask | wait | ask_user (arbitration asked); answered by hrm
    itself: switch, queue, confirm, remember, resolve, park (D82), list (D87)."""
    decision: DecisionRecord
    asked: bool = False
    """True when the turn returned a question to the person instead of doing the work."""
    record: LedgerRecord | None = None
    """The turn's ``turn`` record as its decision ledger stored it (seq and hash: where `/why`
    and `hrm ledger` find it); None for a result built elsewhere."""

    @property
    def trace_id(self) -> str:
        return self.decision.trace_id

    def to_dict(self) -> dict[str, Any]:
        return {
            "response": self.response,
            "action": self.action,
            "asked": self.asked,
            "decision": self.decision.to_dict(),
        }
