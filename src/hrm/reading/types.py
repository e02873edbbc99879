"""What a message means: the typed result of reading it once (ARCHITECTURE §3, step 1).

Every reader — the rules over tables, the nearest-exemplar classifier over sentence embeddings,
a bounded structured call to a capable model — returns the same records, so the turn loop acts
on a `Reading` and never re-reads the raw text with patterns of its own, and `/why` can say who
understood what and how sure it was.

A `Reading` is pure data: frozen, JSON-ready through `to_record`, cheap to build. It never holds
a reference to a store, a model or the turn.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

Span = tuple[int, int]
"""Start and end offsets of a piece of text (end exclusive)."""

__all__ = [
    "ANSWERS",
    "COMMANDS",
    "SET_APART",
    "Band",
    "Bands",
    "Cues",
    "Declined",
    "Intent",
    "IntentKind",
    "Reader",
    "Reading",
    "ReadingContext",
    "Slots",
    "Span",
]


class IntentKind(str, Enum):
    """What a span of a message asks of hrm, or tells it.

    The first group changes memory or focus and is acted on only above the act threshold
    (`Bands`); the answers settle a question hrm asked; the cues steer arbitration and never
    write anything.
    """

    # Memory and focus: acted on, asked about in the middle band, never silent.
    PREFERENCE = "preference"
    """How the person wants things done ("I prefer metric units", "pls use 2-space indents")."""
    FACT = "fact"
    """A fact about the person's world to keep ("Remember that our API base URL is …")."""
    FORGET = "forget"
    """Take back something kept ("forget that", "delete my cat from your memory")."""
    RESOLVE = "resolve"
    """Mark a problem done ("This is resolved", "close the webhook one")."""
    PARK = "park"
    """Pause a problem ("Let's park the offsite for now")."""
    FOCUS = "focus"
    """Commit focus for a span ("concentrate on X for the next three messages")."""
    RESUME = "resume"
    """Go back to earlier work ("Where were we?", "what were we working on before?")."""
    LIST_OPEN = "list_open"
    """Ask what is open ("What's still open?")."""
    LIST_KEPT = "list_kept"
    """Ask what hrm keeps about the person ("What do you know about me?")."""
    DECISION = "decision"
    """A decision stated about the work ("Decided: Netlify", "Postgres it is")."""
    SET_ASIDE = "set_aside"
    """Set the work in focus aside and turn to what follows ("Forget the offsite for now, …")."""
    CORRECT = "correct"
    """Correct what was just kept ("no I meant Fahrenheit", "make that Tuesday", D469)."""
    # Answers to a question hrm asked (the pending question in `ReadingContext`).
    YES = "yes"
    NO = "no"
    SWITCH = "switch"
    QUEUE = "queue"
    # Conversation moves that carry no request of their own.
    GOODBYE = "goodbye"
    THANKS = "thanks"
    NEGATIVE_FEEDBACK = "negative_feedback"
    """The previous answer was wrong or unhelpful ("no, that's wrong", "that didn't work")."""


COMMANDS: frozenset[IntentKind] = frozenset(
    {
        IntentKind.PREFERENCE,
        IntentKind.FACT,
        IntentKind.FORGET,
        IntentKind.RESOLVE,
        IntentKind.PARK,
        IntentKind.FOCUS,
        IntentKind.RESUME,
        IntentKind.LIST_OPEN,
        IntentKind.LIST_KEPT,
        IntentKind.DECISION,
        IntentKind.SET_ASIDE,
    }
)
"""Intents that ask hrm to change what it keeps or where it is: a message made only of these
opens no problem, and one read in the middle band is asked about, never dropped silently."""

ANSWERS: frozenset[IntentKind] = frozenset(
    {IntentKind.YES, IntentKind.NO, IntentKind.SWITCH, IntentKind.QUEUE}
)

SET_APART: frozenset[IntentKind] = frozenset(
    {
        IntentKind.PREFERENCE,
        IntentKind.FACT,
        IntentKind.FORGET,
        IntentKind.RESOLVE,
        IntentKind.PARK,
        IntentKind.LIST_OPEN,
        IntentKind.LIST_KEPT,
    }
)
"""Commands about the person or hrm's own memory and registry: their words are left out of what
arbitration weighs (`Reading.rest`). The other commands (focus, resume, set-aside, a decision)
are moves in the conversation that arbitration itself reads."""


class Band(str, Enum):
    """What the turn does with an intent, from its confidence (`Bands.of`)."""

    ACT = "act"
    ASK = "ask"
    """Ask the person one short question; the next yes/no settles it."""
    IGNORE = "ignore"


@dataclass(frozen=True, slots=True)
class Bands:
    """Confidence thresholds: at or above `act` hrm acts; from `ask` up to `act` it asks."""

    act: float = 0.75
    ask: float = 0.45

    def of(self, confidence: float) -> Band:
        if confidence >= self.act:
            return Band.ACT
        if confidence >= self.ask:
            return Band.ASK
        return Band.IGNORE


@dataclass(frozen=True, slots=True)
class Slots:
    """What an intent names. Every field is optional; which ones an intent fills depends on its
    kind (documented per field). Text slots are the person's words, trimmed, never rewritten."""

    what: str | None = None
    """FORGET: what to forget ("my cat", "the deadline"); None for "that" (what was just kept).
    SET_ASIDE: what is set aside ("the offsite"), empty for "never mind". CORRECT: the words the
    correction replaces ("MySQL" of "Postgres not MySQL"), when it names them."""
    ref: str | None = None
    """RESOLVE / PARK: words naming the problem ("the webhook"); None for the one in focus."""
    turns: int | None = None
    """FOCUS: the span in turns or messages ("next two turns" → 2); None when not given."""
    topic: str | None = None
    """FOCUS: what to focus on; RESUME: the work named, if any."""
    statement: str | None = None
    """PREFERENCE: the preference as a statement ("metric units, always"); FACT: the fact;
    DECISION: what was decided ("go with Netlify"); CORRECT: the new words ("Fahrenheit")."""
    subject: str | None = None
    """FACT: what the fact is about ("our API base URL"), the canon key's source."""
    scope: str | None = None
    """PREFERENCE: explicit | inferred | behavioural | instruction (a standing instruction)."""
    hedged: bool = False
    """PREFERENCE: said with a hedge ("I think I'd rather …"): asked, not kept outright."""
    sure: bool = True
    """FORGET: False when "forget that I …" may be a figure of speech and acts only if something
    kept matches (D83)."""
    rest: str | None = None
    """SET_ASIDE: what the message goes on to say. YES / NO: what follows the answer (None when
    the message is only the answer: "yes", "no thanks")."""
    pattern: str | None = None
    """PREFERENCE: the classifier pattern that matched ("I prefer"), for the record."""

    def filled(self) -> dict[str, object]:
        """The slots that carry a value, for records and tests."""
        out: dict[str, object] = {}
        for name in self.__slots__:
            value = getattr(self, name)
            default = True if name == "sure" else (False if name == "hedged" else None)
            if value != default:
                out[name] = value
        return out


@dataclass(frozen=True, slots=True)
class Intent:
    """One thing a message asks or tells, with where it is said and who read it."""

    kind: IntentKind
    span: Span
    """Character offsets in `Reading.said` of the words that carry the intent: what
    arbitration leaves out when it weighs the rest of the message."""
    confidence: float
    reader: str
    """Which reader produced it: ``rules:<table>``, ``exemplars``, ``model:<name>``."""
    slots: Slots = field(default_factory=Slots)

    def to_record(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "span": list(self.span),
            "confidence": round(self.confidence, 3),
            "reader": self.reader,
            **({"slots": self.slots.filled()} if self.slots.filled() else {}),
        }


@dataclass(frozen=True, slots=True)
class Declined:
    """What a rule matched but judged not an intent, and why ("I prefer to know why, can you
    explain the traceback?" uses a preference word in a request): shown in the record, so
    `/why` can say why nothing was kept."""

    kind: IntentKind
    span: Span
    reader: str
    reason: str
    pattern: str | None = None
    confidence: float = 0.0
    final: bool = False
    """The rule knows what the words are instead ("I'd rather not say" declines to answer, "I
    always get this error" reports one): no later tier reads `kind` in `span`. Most declines
    are not final — a rule that missed a paraphrase leaves it to the sentence model."""

    def to_record(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "span": list(self.span),
            "reader": self.reader,
            "reason": self.reason,
            **({"pattern": self.pattern} if self.pattern else {}),
        }


@dataclass(frozen=True, slots=True)
class Cues:
    """What arbitration weighs besides similarity, read from the rest of the message (the text
    outside every command's span), never from pasted material."""

    follow_up: bool = False
    """A question or request about the answer, or a remark that brings nothing of its own."""
    report: bool = False
    """A report on the work ("Fixed it", "the tests for it are failing now")."""
    opens_new_topic: bool = False
    """An opener that announces something unrelated ("Unrelated:", "Quick question,")."""
    own_subject: bool = False
    """A question or remark on a subject of the person's own ("Also, my laptop's battery …")."""
    urgency: bool = False
    """Something is on fire ("prod is down", "ASAP"): the urgency and emergency markers the
    governance signals found (set by the turn's ``signals`` step, which reads them anyway)."""
    remark: bool = False
    """A remark on a subject of the person's own that asks nothing ("Our budget is about 5000
    euros"): a sentence model may find it is about the work (D79)."""
    closing: bool = False
    """The whole message is a thanks or a goodbye: it brings no problem (D78)."""
    resume: bool = False
    """It asks to go back to the thread before the current one, naming none (D75)."""
    resume_to: str = ""
    """It asks to go back to work it names ("back to the garden project"): what it names."""
    resume_only: bool = False
    """… in the words of a move whatever it names ("back to X", "resume X"), and says nothing
    else: the message is the move."""
    focus: bool = False
    """It asks to commit focus (D54): `focus_topic` for `focus_turns` turns."""
    focus_turns: int | None = None
    focus_topic: str = ""
    aside: str | None = None
    """It opens by setting something aside ("Forget the offsite for now, …", D81): what,
    "" for "never mind"; `aside_rest` is what it turns to."""
    aside_rest: str = ""

    def to_record(self) -> dict[str, object]:
        """The cues that are set (flags as True, the focus span and topic, what is set aside)."""
        out: dict[str, object] = {
            name: True for name in self.__slots__ if getattr(self, name) is True
        }
        if self.focus_turns is not None:
            out["focus_turns"] = self.focus_turns
        if self.focus_topic:
            out["focus_topic"] = self.focus_topic
        if self.aside is not None:
            out["aside"] = self.aside
        if self.resume_to:
            out["resume_to"] = self.resume_to
        return out


@dataclass(frozen=True, slots=True)
class ReadingContext:
    """What the turn knows that changes how a message is read. All of it is optional."""

    pending: str | None = None
    """The question hrm asked last turn and is waiting on: ``preference`` (keep it? yes/no),
    ``switch`` (switch or queue?), ``intent`` (a middle-band intent asked about)."""
    just_kept: str | None = None
    """The canon key the turn before wrote: what "forget that" refers to."""
    kept: Mapping[str, str] = field(default_factory=dict)
    """Canon keys and their text, for matching what a forget request names."""
    open_problems: tuple[str, ...] = ()
    """Titles of the open problems, for matching what resolve/park/resume name."""
    active_problem: str | None = None
    """The title of the problem in focus, if any."""


@dataclass(frozen=True, slots=True)
class Reading:
    """One message, read once: every intent found, the cues for arbitration, and what is left.

    Invariants: spans lie inside `said` and are sorted by start; the commands' spans do not
    overlap one another (a move — focus, resume, set-aside, a decision, feedback — may share
    words with a command); `rest` is `said` without the spans of the commands in `SET_APART`
    read at or above the ask threshold. An empty or unreadable message gives a
    `Reading` with no intents, never an exception.
    """

    text: str
    said: str
    """The person's own words: `text` without pasted material (code, logs, tracebacks, JSON)."""
    intents: tuple[Intent, ...] = ()
    cues: Cues = field(default_factory=Cues)
    rest: str = ""
    """What arbitration weighs: the person's words outside the commands' spans."""
    pasted_lines: int = 0
    readers: tuple[str, ...] = ()
    """Every reader that ran on this message, in order (also those that found nothing)."""
    declined: tuple[Declined, ...] = ()
    """What a rule matched and judged not an intent, with the reason."""

    def __iter__(self) -> Iterator[Intent]:
        return iter(self.intents)

    def first(self, kind: IntentKind) -> Intent | None:
        """The surest intent of `kind` (the earliest among equals), or None."""
        found = [i for i in self.intents if i.kind is kind]
        return max(found, key=lambda i: i.confidence) if found else None

    def has(self, kind: IntentKind) -> bool:
        return any(i.kind is kind for i in self.intents)

    @property
    def has_command(self) -> bool:
        """Some intent of the message asks hrm to change what it keeps or where it is."""
        return any(i.kind in COMMANDS for i in self.intents)

    @property
    def only_commands(self) -> bool:
        """True when the message is nothing but commands: it opens no problem."""
        return bool(self.intents) and not self.rest.strip()

    def to_record(self) -> dict[str, object]:
        return {
            "intents": [i.to_record() for i in self.intents],
            **({"cues": self.cues.to_record()} if self.cues.to_record() else {}),
            "readers": list(self.readers),
            **({"pasted_lines": self.pasted_lines} if self.pasted_lines else {}),
            **({"declined": [d.to_record() for d in self.declined]} if self.declined else {}),
        }

    def text_of(self, intent: Intent | Declined) -> str:
        """The words of `said` an intent covers."""
        return self.said[intent.span[0] : intent.span[1]]


class Reader(Protocol):
    """One tier of reading. Readers are pure and bounded: linear in the message's length, no
    I/O beyond a model the reader owns, and they never raise on any text (an unreadable message
    yields no intents)."""

    name: str

    def read(
        self,
        said: str,
        spans: Sequence[Span],
        context: ReadingContext,
        *,
        earlier: Sequence[Intent] = (),
    ) -> tuple[Intent, ...]:
        """The intents this reader finds in the given sentence spans of `said` (the composer
        passes a later tier only the sentences no earlier tier read with confidence); every
        returned span lies inside one of `spans`. `earlier` is what the tiers before it read,
        for a tier that acts only where another agrees (the model tier's canon writes)."""
