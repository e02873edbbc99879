"""Core types shared by every layer (001 §1): the enums, the turn context and shared aliases.

Everything here is plain data with no I/O, so any layer may import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, TypeAlias

from hrm._clock import system_clock

__all__ = [
    "JSON",
    "AltitudeLevel",
    "BlastRadius",
    "Clock",
    "Complexity",
    "ConflictLevel",
    "GateType",
    "HRMContext",
    "JSONDict",
    "ProgressCallback",
    "ReducerType",
    "Stakes",
    "Stance",
    "TurnInput",
    "system_clock",
]

JSON: TypeAlias = Any
"""A value that `json.dumps` accepts (dict, list, str, int, float, bool, None)."""

JSONDict: TypeAlias = dict[str, Any]
"""A JSON object: the payload of ledger records, events and decision records."""

Clock: TypeAlias = Callable[[], datetime]
"""Returns the current time as an aware UTC datetime; injected so TTLs and decay are testable."""

ProgressCallback: TypeAlias = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while long work runs (records, bytes or items, as the
function taking it says); ``done`` never decreases and ends equal to ``total``. A function that
takes one does the same work, in the same order, whether or not it is given."""


class AltitudeLevel(str, Enum):
    """How high a message lives: identity down to the moment (001 §1.1)."""

    L4_IDENTITY = "identity"
    """Who are we, what do we value?"""
    L3_STRATEGY = "strategy"
    """What's the approach?"""
    L2_OPERATIONS = "operations"
    """How do we execute?"""
    L1_MOMENT = "moment"
    """What's happening now?"""

    @property
    def rank(self) -> int:
        """1 for L1 up to 4 for L4, so levels can be compared."""
        return _ALTITUDE_RANK[self]


_ALTITUDE_RANK = {
    AltitudeLevel.L1_MOMENT: 1,
    AltitudeLevel.L2_OPERATIONS: 2,
    AltitudeLevel.L3_STRATEGY: 3,
    AltitudeLevel.L4_IDENTITY: 4,
}


class Stance(str, Enum):
    """The four exclusive stances of Focus (001 §4.1)."""

    SENSEMAKING = "sensemaking"
    """Exploration + accuracy."""
    DISCOVERY = "discovery"
    """Exploration + momentum."""
    EXECUTION = "execution"
    """Exploitation + momentum."""
    EVALUATION = "evaluation"
    """Exploitation + accuracy."""


class GateType(str, Enum):
    """Checkpoints that state changes must pass (001 §1.1)."""

    FRAMING = "framing"
    COMMITMENT = "commitment"
    EVALUATION = "evaluation"
    EMERGENCY = "emergency"
    WRITE_APPROVAL = "write_approval"
    AGENT_APPROVAL = "agent_approval"


class ReducerType(str, Enum):
    """How the MapReduce orchestrator combines agent outputs (001 §1.1, §8.4)."""

    PASS_THROUGH = "pass_through"
    MERGE = "merge"
    VOTE = "vote"
    SYNTHESIZE = "synthesize"


class Complexity(str, Enum):
    SIMPLE = "simple"
    MODERATE = "moderate"
    COMPLEX = "complex"


class Stakes(str, Enum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class ConflictLevel(str, Enum):
    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class BlastRadius(str, Enum):
    MINIMAL = "minimal"
    MODERATE = "moderate"
    SEVERE = "severe"


@dataclass
class HRMContext:
    """The state of one stack's session as every layer sees it during a turn (001 §1.2)."""

    session_id: str
    turn_number: int
    problem_id: str | None
    altitude: AltitudeLevel
    stance: Stance
    commitment_id: str | None
    commitment_turns_remaining: int | None
    recent_inputs: list[str] = field(default_factory=list)
    recent_outputs: list[str] = field(default_factory=list)
    recent_decisions: list[dict[str, Any]] = field(default_factory=list)
    trace_enabled: bool = False
    debug_mode: bool = False
    agent_class: str = "ADMIN"
    """Which stack this context belongs to (004 §4)."""
    last_topic: dict[str, Any] | None = None
    """The problem the last input was attributed to and that input's keywords (``problem_id``,
    ``keywords``): a follow-up that shares their words continues that problem."""
    earlier_topic: dict[str, Any] | None = None
    """The problem the conversation was on before it moved to the last topic (``problem_id``,
    and ``last_input``, the last thing said there): where "Where were we?" goes back to (D75)."""
    topic_id: str | None = None
    """The problem this input went to (the active one, or the one it was queued as), once
    arbitration has decided: the recent turns the model is shown are that problem's (D80)."""
    topic_history: list[dict[str, Any]] = field(default_factory=list)
    """Exchanges on `topic_id` from before the recent ones, oldest first, read back from the
    decision ledger when none of the recent ones is on it (back on a problem after a long
    detour, D86)."""


@dataclass
class TurnInput:
    """One input to one turn (001 §1.2)."""

    text: str
    timestamp: datetime
    context: HRMContext
    source: str = "user"
    """user | system | agent"""
    priority: int = 0
    """Higher is more urgent; feeds the urgency signal."""
    metadata: dict[str, Any] = field(default_factory=dict)
