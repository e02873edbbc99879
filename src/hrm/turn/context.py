"""What every step of a turn reads and writes: the typed `TurnContext`, and the `Outcome` that
ends a turn early.

A turn is an ordered tuple of named steps (`hrm.turn.loop.STEPS`). Each step is a function
``step(ctx) -> Outcome | None``: it reads what earlier steps left in the context, writes its
part of the decision record and of the context, and either lets the turn go on (``None``) or
ends it with hrm's own answer, a question or a queue (an `Outcome`). The context is the only
channel between steps: a step never calls another step or reaches into the facade.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hrm.reading.types import Reading

if TYPE_CHECKING:
    from hrm.config import HRMConfig
    from hrm.governance.arbiter import ArbitrationDecision
    from hrm.governance.problems import Problem
    from hrm.reading.rules.memory import ForgetRequest, MemoryRequest
    from hrm.reading.rules.problems import ProblemRequest
    from hrm.reading.types import Bands, Intent
    from hrm.storage.ledger import Ledger
    from hrm.storage.sqlite import Database
    from hrm.tracing import Tracer
    from hrm.turn.preferences import PreferenceReading
    from hrm.turn.records import DecisionRecord
    from hrm.turn.state import TurnState
    from hrm.types import HRMContext, Stance, TurnInput

__all__ = ["EventSink", "Outcome", "Step", "TurnContext", "TurnServices"]

EventSink = Callable[..., None]
"""``event(kind, /, **payload)``: one event of the turn, appended to HO2m with its record."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a turn ends: the answer, the action taken, whether it asks the person, and what the
    exchange was about when it was not the problem at hand (``preference``, ``memory``)."""

    response: str
    action: str
    asked: bool = False
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class TurnServices:
    """The stack's components a step may call, fixed for the life of the `HRM` object."""

    stack: Any
    """The `Stack` (canon, write gate, context assembly, executor)."""
    focus: Any
    """`FocusHRM`: stance, commitments, problems, arbitration."""
    kernel: Any
    """`GovernanceKernel`: signals and the preference classifier."""
    altitude: Any
    router: Any
    evaluator: Any
    feedback: Any
    db: Database
    decisions: Ledger
    config: HRMConfig
    bands: Bands
    """The confidence bands reading acts on (`reading.act_threshold`, `reading.ask_threshold`)."""

    @property
    def stance(self) -> Stance:
        current: Stance = self.focus.stance.get_current()
        return current


@dataclass(slots=True, kw_only=True)
class TurnContext:
    """One turn in progress: its input, what each step found, and the record being written.

    Fields after `notes` start empty and are filled by the step named in their docstring;
    a later step reads them, never an earlier one.
    """

    services: TurnServices
    state: TurnState
    record: DecisionRecord
    turn_input: TurnInput
    """The input as the turn answers it (an answer to "switch or queue?" may replace it with
    the input that was asked about, D43)."""
    event: EventSink
    tracer: Tracer
    notes: list[str] = field(default_factory=list)
    """Notes for the answer (shown after it when the answer shows notes)."""
    # pending
    confirmation: str | None = None
    """The note of a held preference this input settled (``pending``)."""
    decided: ArbitrationDecision | None = None
    """Arbitration the person decided by answering "switch or queue?" (``pending``)."""
    bare_switch: bool = False
    """A bare "switch" with no question pending (``pending``)."""
    switch_to: Problem | None = None
    """What a bare "switch" goes to: the topic hrm last queued (``pending``)."""
    # read
    reading: Reading = field(default_factory=lambda: Reading(text="", said=""))
    """The message read once (``read``)."""
    said: str = ""
    """The person's own words: the input without pasted material (``signals``)."""
    signals: Any = None
    """`GovernanceSignals` (``signals``)."""
    just_kept: str | None = None
    """The canon key the turn before kept: what "forget that" refers to (``forget``)."""
    forget: ForgetRequest | None = None
    """A request to forget that will be acted on or asked about (``forget``)."""
    forget_intent: Intent | None = None
    """The intent `forget` came from, with its confidence (``forget``)."""
    heard: TurnInput | None = None
    """The input without the commands acted on before arbitration (``forget``, ``problems``)."""
    told_of_closed: bool = False
    """What the message says beside closing the problem in focus tells of it (``problems``)."""
    asked_of: ProblemRequest | None = None
    """A request to resolve or park a problem, or list what is open (``problems``)."""
    preference: PreferenceReading | None = None
    """The preference the message states, or why none (``statements``)."""
    memo: MemoryRequest | None = None
    """A request to remember a fact (``statements``)."""
    arbitrated: TurnInput | None = None
    """What arbitration weighs: `heard` without the preference and the fact (``statements``)."""
    # arbitrate
    arbitration: Any = None
    """Focus's `TurnFocusResult` (``arbitrate``)."""
    problem: Problem | None = None
    """The problem in focus after arbitration (``arbitrate``)."""
    topic_is_new: bool = False
    """Arbitration made a new problem of this input (``topic``)."""
    # reasoning and execution
    classification: Any = None
    """The altitude classification (``altitude``)."""
    reasoning: Any = None
    """`ReasoningResult` (``reason``)."""
    action: Any = None
    """The action Focus allowed (``govern``)."""
    assembled: Any = None
    """The assembled context (``attend``)."""
    outcome: Any = None
    """The executor's outcome (``execute``)."""

    @property
    def text(self) -> str:
        return self.turn_input.text

    @property
    def hctx(self) -> HRMContext:
        """The `HRMContext` the layers below read (problem, topic, altitude)."""
        return self.turn_input.context

    def events_of(self, change: Any) -> None:
        """Record the events a Focus change carries (each ``{"event_type", "payload"}``)."""
        for ev in change.events:
            self.event(ev["event_type"], **ev["payload"])

    def close_after_arbitration(self) -> None:
        """Stance and commitment after an answer hrm gives right after arbitration."""
        self.record.stance_after = self.arbitration.stance_after.value
        from hrm.turn.records import CommitmentRecord

        self.record.commitment_after = CommitmentRecord.of(self.arbitration.commitment_after)


Step = Callable[[TurnContext], "Outcome | None"]
"""One named step of the turn loop."""
