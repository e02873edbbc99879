"""Answers to a question hrm asked, and the conversation moves that carry no request of their
own: yes / no, switch / queue, a bare "switch", a thanks or a goodbye, and negative feedback on
the last answer.

A yes or a no is read only while a question is pending (`ReadingContext.pending`): "no" at
other times is the person's own word. "switch" with no question pending refers to the topic
hrm just said it queued (D43).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hrm.reading.rules._engine import Rule, match_rules
from hrm.reading.rules.cues import is_closing
from hrm.reading.types import Intent, IntentKind, ReadingContext, Slots, Span

__all__ = ["read_answers", "read_moves", "without_feedback"]

_I = re.IGNORECASE
_AFFIRM = re.compile(
    r"^\s*(?:yes|yep|yeah|yup|ya|sure|correct|confirm(?:ed)?|that'?s right|right|exactly"
    r"|please do|do it|ok(?:ay)?,? (?:do it|go ahead)|go ahead|absolutely|of course|definitely)\b",
    _I,
)
_DENY = re.compile(
    r"^\s*(?:(?:no|nope|nah|never mind|forget it|not really|no thanks)\b"
    r"|(?:don'?t|do not)(?:\s+(?:keep|save|store|remember|record|bother|do))?"
    r"(?:\s+(?:it|that|this|one))?(?=\s*(?:[,.!;]|$)))",
    _I,
)
"""A no to hrm's question. "Don't" is one alone or with what it refuses ("don't keep that"),
never as the start of an instruction: "Don't forget to include the price" asks for something
(D454)."""
_ONLY_AFTER = re.compile(
    r"[\s,.!]*(?:(?:please|pls|thanks|thank you|it is|i do|do|go ahead|remember it|replace it"
    r"|forget it|ok|okay)[\s,.!]*)*",
    _I,
)
"""What may follow a yes or a no in a reply that says nothing else ("yes please", "No, thanks.")."""
_ANSWER_CHARS = 60
_SWITCH_CHARS = 200
"""An answer to "switch or queue?" is short; a long input that starts with "no" is its own."""

SWITCH_ANSWERS = re.compile(
    r"^\s*(?:switch|interrupt|yes|yeah|yep|sure|ok(?:ay)?|now|go ahead|do it|please do|"
    r"let'?s (?:switch|do it|do that))\b",
    _I,
)
QUEUE_ANSWERS = re.compile(
    r"^\s*(?:queue|later|not now|no|nope|stay|keep going|carry on|continue|wait|"
    r"let'?s (?:stay|finish|continue))\b",
    _I,
)
_BARE_SWITCH = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|yes|sure|fine)[,!.]?\s+)?(?:let'?s\s+|please\s+)?switch"
    r"(?:\s+(?:over|(?:over\s+)?to\s+(?:it|that|this|that one|the new one)))?(?:\s+please)?"
    r"\s*[.!]*\s*$",
    _I,
)
"""A request to switch that names nothing: "switch", "ok, switch to it", "let's switch"."""
_NEGATIVE_FEEDBACK = re.compile(
    r"^\s*(?:no[,.!]|wrong|that'?s (?:wrong|not (?:it|right|what)|incorrect)|incorrect|"
    r"that (?:didn'?t|does ?n'?t) work|not helpful|bad answer)",
    _I,
)
_NEGATIVE_STARTS = ("no", "wrong", "that", "incorrect", "bad")
_FEEDBACK_CLAUSE = re.compile(
    r"^\s*(?:(?:no|nope|nah)\b[,.!]?\s*)?(?:(?:that'?s|that is|this is|it'?s|it is)\s+"
    r"(?:wrong|incorrect|not (?:it|right|correct|what i (?:asked|meant|said|wanted))|not it)"
    r"|wrong|incorrect|not what i (?:asked|meant|said|wanted)(?: for)?)?[^,.;:!?]{0,40}?"
    r"[,.;:!—–]+\s*",
    _I,
)
"""A clause of feedback a sentence opens with, up to its first mark ("no, ", "that's wrong, ",
"no, that is not what I asked, ")."""


def without_feedback(text: str) -> str:
    """`text` without the feedback on the last answer it opens with ("no, I prefer tabs" →
    "I prefer tabs"; D419); as it was when it opens with none, or nothing else is said."""
    rest = text
    for _ in range(2):  # "no, that is not what I asked, …": two clauses of it
        if not _NEGATIVE_FEEDBACK.match(rest) and not re.match(r"\s*(?:nope|nah)\b", rest, _I):
            break
        found = _FEEDBACK_CLAUSE.match(rest)
        if found is None or found.end() >= len(rest):
            break
        rest = rest[found.end() :]
    return rest if rest.strip() else text

_MOVES: tuple[Rule, ...] = (
    Rule(IntentKind.NEGATIVE_FEEDBACK, _NEGATIVE_FEEDBACK, 0.9, _NEGATIVE_STARTS,
         name="feedback"),
)  # fmt: skip


def read_answers(said: str, context: ReadingContext) -> list[Intent]:
    """The answer `said` gives to the pending question, or a bare "switch" with none pending."""
    whole = (0, len(said))
    if context.pending in ("preference", "intent") and len(said) <= 2000:
        for kind, pattern in ((IntentKind.YES, _AFFIRM), (IntentKind.NO, _DENY)):
            found = pattern.match(said)
            if found is not None:
                only = len(said) <= _ANSWER_CHARS and _ONLY_AFTER.fullmatch(
                    said, found.end()
                ) is not None
                rest = None if only else said[found.end() :].strip(" ,.!") or None
                span = whole if only else (found.start(), found.end())
                return [Intent(kind, span, 0.95, "rules:answers", Slots(rest=rest))]
        return []
    if context.pending == "switch":
        if len(said) > _SWITCH_CHARS:
            return []
        for kind, pattern in ((IntentKind.SWITCH, SWITCH_ANSWERS),
                              (IntentKind.QUEUE, QUEUE_ANSWERS)):  # fmt: skip
            found = pattern.match(said)
            if found is not None:
                return [Intent(kind, whole, 0.95, "rules:answers")]
        return []
    if len(said) <= _SWITCH_CHARS and _BARE_SWITCH.match(said):
        return [Intent(IntentKind.SWITCH, whole, 0.95, "rules:answers.bare_switch")]
    return []


def read_moves(said: str, spans: Sequence[Span]) -> list[Intent]:
    """A thanks or a goodbye that is the whole message, and negative feedback on the last
    answer (said at the start of the message)."""
    found = match_rules(_MOVES, said, spans[:1], "answers")
    if is_closing(said):
        kind = IntentKind.THANKS if "thank" in said.lower() else IntentKind.GOODBYE
        found.append(Intent(kind, (0, len(said)), 0.9, "rules:answers.closing"))
    return found
