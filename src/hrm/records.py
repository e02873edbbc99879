"""What a turn returns: the answer and the full record of why (ARCHITECTURE §3, step 10)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["DecisionRecord", "TurnResult", "jsonable"]


_SCALARS = frozenset({str, int, float, bool, type(None)})


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of dataclasses, enums, datetimes and containers.

    Every turn converts its whole decision record (hundreds of values), so plain scalars, dicts
    and lists are recognised by exact type before the general checks.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): jsonable(v) for k, v in value.items()}
    if kind is list:
        return [jsonable(v) for v in value]
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


@dataclass
class DecisionRecord:
    """Every decision of one turn, in the order they were made. JSON-ready via `to_dict`."""

    turn: int
    session_id: str
    agent_class: str
    trace_id: str
    input_summary: str
    arbitration: dict[str, Any] = field(default_factory=dict)
    preference: dict[str, Any] | None = None
    memory_request: dict[str, Any] | None = None
    """A request to remember a fact (D73): its key, fact and what became of it."""
    problem_request: dict[str, Any] | None = None
    """A request to resolve or park a problem (D82), or to list what is open (D87): its words,
    the problem, what was done."""
    altitude: dict[str, Any] = field(default_factory=dict)
    classification: dict[str, Any] = field(default_factory=dict)
    patterns: list[dict[str, Any]] = field(default_factory=list)
    strategy: dict[str, Any] = field(default_factory=dict)
    escalation: dict[str, Any] = field(default_factory=dict)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    selected: dict[str, Any] = field(default_factory=dict)
    governance: dict[str, Any] = field(default_factory=dict)
    gate_decisions: list[dict[str, Any]] = field(default_factory=list)
    stance_before: str = ""
    stance_after: str = ""
    commitment_before: dict[str, Any] | None = None
    commitment_after: dict[str, Any] | None = None
    problem: dict[str, Any] | None = None
    attention_state: dict[str, Any] = field(default_factory=dict)
    execution: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, Any] = field(default_factory=dict)
    writes: list[dict[str, Any]] = field(default_factory=list)
    learning: list[dict[str, Any]] = field(default_factory=list)
    work_orders: list[dict[str, Any]] = field(default_factory=list)
    escalations: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Degradations and fallbacks, in words (never silent)."""

    def fields(self, *, omit: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The fields as they are, not copied, without those named in `omit`.

        For a writer that copies anyway (the ledger scrubs what it stores into a new value):
        the turn loop fills every field with JSON data, so converting it again would copy the
        whole record twice. Use `to_dict` for a copy that is JSON data whatever was put in.
        """
        return {
            name: getattr(self, name) for name in self.__dataclass_fields__ if name not in omit
        }

    def to_dict(self, *, omit: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The record as JSON data, without the fields named in `omit`."""
        return {
            name: jsonable(getattr(self, name))
            for name in self.__dataclass_fields__
            if name not in omit
        }


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
