"""Corrections of what hrm just kept: "no I meant Fahrenheit", "actually, make that Tuesday",
"scratch that, I prefer answers in English", "sorry, 8:15 not 8:30" (D469).

A correction is read only right after a turn that kept something (`ReadingContext.just_kept`):
with nothing just kept, "no I meant the other file" corrects the conversation, not hrm's
memory, and is the model's to answer. What it says is split into the new words (`statement`)
and, when it names them, the words it replaces (`what`: "MySQL" of "Postgres not MySQL");
`corrected` applies them to the kept statement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hrm.reading.types import Intent, IntentKind, ReadingContext, Slots, Span

__all__ = ["corrected", "correction_slots", "read_correction_intents"]

CORRECT_ACT = 0.9

_LEAD = (
    r"(?:(?:no|nope|nah|sorry|oops|wait|hmm+|actually|ah|oh|err?|ugh|my bad|ok(?:ay)?)\b"
    r"[\s,.!:;—–-]*)"
)
_MARKER = re.compile(
    rf"^\W*{_LEAD}*"
    r"(?P<how>i\s+meant(?:\s+to\s+(?:say|write|type))?(?!\s+to\s)|i\s+mean(?!\s+to\s)|(?:please\s+)?make\s+(?:that|it)|(?:please\s+)?change\s+(?:that|it)"
    r"\s+to|correction|scratch\s+that|strike\s+that|let\s+me\s+correct\s+(?:that|myself)"
    r"|i\s+was\s+wrong(?:\s+about\s+[^,.;:]{1,60})?|i\s+got\s+(?:that|it)\s+wrong)\b"
    r"[\s,.:;!—–-]*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
"""A correction said outright: "I meant …", "make that …", "scratch that, …", "correction: …".
"I changed my mind, …" is not one: it may revise any preference kept, not the last (D428)."""
_LED = re.compile(rf"^\W*{_LEAD}+(?P<rest>.+)$", re.IGNORECASE | re.DOTALL)
""""sorry, …", "actually …": a correction only with the words it replaces ("…, not 8:30")."""
_INSTEAD = re.compile(
    r"^(?P<new>.+?)\s*(?:,\s*)?(?:\bnot\b|\binstead\s+of\b|\brather\s+than\b)\s+(?P<old>[^,.;!?]+?)"
    r"\s*[.!]*$"
    r"|^not\s+(?P<old2>[^,.;!?]+?)\s*,?\s*(?:but|it'?s|it\s+is)\s+(?P<new2>.+?)\s*[.!]*$",
    re.IGNORECASE | re.DOTALL,
)
_FILLER = re.compile(
    r"^(?:(?:it'?s|it\s+is|its|that'?s|that\s+is|to|remember\s+that|keep\s+in\s+mind\s+that"
    r"|i\s+meant|the\s+answer\s+is)\s+)+",
    re.IGNORECASE,
)
_WORD = re.compile(r"\S+")
_MAX_FRAGMENT_WORDS = 4
"""A correction of at most this many words and no verb replaces the kept statement's last words
("Fahrenheit", "light mode"); a longer one is the whole new statement."""
_VERB = re.compile(
    r"\b(?:is|are|was|were|am|be|prefer|like|want|use|need|hate|love|runs?|starts?|goes|go"
    r"|moved|lives?|works?|has|have|had|should|must|will|would)\b|['’](?:s|re|m)\b",
    re.IGNORECASE,
)


def correction_slots(sentence: str) -> Slots:
    """The new words of a correction (`statement`) and the words they replace (`what`), if it
    names them. Empty slots when `sentence` says no correction."""
    marked = _MARKER.match(sentence)
    rest = marked.group("rest") if marked else None
    if rest is None:
        led = _LED.match(sentence)
        if led is None or _INSTEAD.match(led.group("rest").strip()) is None:
            return Slots()
        rest = led.group("rest")
    rest = rest.strip().rstrip(".!")
    instead = _INSTEAD.match(rest)
    if instead is not None:
        new = instead.group("new") or instead.group("new2") or ""
        old = instead.group("old") or instead.group("old2") or ""
        return Slots(statement=_FILLER.sub("", new.strip(" ,")) or None,
                     what=old.strip(" ,") or None)
    return Slots(statement=_FILLER.sub("", rest) or None)


def read_correction_intents(
    said: str, spans: Sequence[Span], context: ReadingContext | None
) -> list[Intent]:
    """A correction of what the turn before kept, as one intent over its sentence; none when
    nothing was just kept."""
    if context is None or context.just_kept is None or "?" in said:
        return []
    for start, end in spans:
        slots = correction_slots(said[start:end])
        if slots.statement:
            return [Intent(IntentKind.CORRECT, (start, end), CORRECT_ACT, "rules:corrections",
                           slots)]  # fmt: skip
    return []


def corrected(kept: str, slots: Slots) -> str | None:
    """`kept` as the correction `slots` says it should read; None when it cannot be told.

    The words it replaces, when named and found in `kept`, are swapped for the new ones; a new
    statement of its own ("I prefer answers in English") replaces `kept` whole; a few words
    without a verb ("Fahrenheit", "light mode") replace as many words at its end ("I prefer
    Celsius" → "I prefer Fahrenheit").
    """
    new = (slots.statement or "").strip()
    if not new:
        return None
    words = _WORD.findall(new)
    fragment = len(words) <= _MAX_FRAGMENT_WORDS and _VERB.search(new) is None
    old = (slots.what or "").strip()
    if old:
        found = re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", kept, re.IGNORECASE)
        if found is None:
            return None  # "a friendly tone, not firm" corrects something else than `kept`
        if fragment:
            return kept[: found.start()] + new + kept[found.end():]
    if not fragment:
        return new
    kept_words = list(_WORD.finditer(kept.rstrip(" .!")))
    if len(kept_words) <= len(words):
        return None
    cut = kept_words[-len(words)].start()
    result = kept[:cut] + new
    return None if result.casefold() == kept.casefold() else result
