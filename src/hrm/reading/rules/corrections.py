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
    r"(?:(?:no|nope|nah|sorry|sory|sry|srry|oops|wait|hmm+|actually|acutally|actualy|ah|oh"
    r"|err?|ugh|my bad|ok(?:ay)?|yes|yeah|yep|but)\b"
    r"[\s,.!:;—–-]*)"
)
_MARKER = re.compile(
    rf"^\W*{_LEAD}*"
    r"(?P<how>i\s+meant(?:\s+to\s+(?:say|write))?(?!\s+to\s)|i\s+mean(?!\s+to\s)"
    r"|(?:please\s+)?make\s+(?:that|it)|(?:please\s+)?change\s+(?:that|it)\s+to|correction|scratch\s+that|strike\s+that|let\s+me\s+correct\s+(?:that|myself)"
    r"|i\s+was\s+wrong(?:\s+about\s+[^,.;:]{1,60})?|i\s+got\s+(?:that|it)\s+wrong)\b"
    r"[\s,.:;!—–-]*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
"""A correction said outright: "I meant …", "make that …", "scratch that, …", "correction: …".
"I changed my mind, …" is not one: it may revise any preference kept, not the last (D428)."""
_LED = re.compile(rf"^\W*{_LEAD}+(?P<rest>.+)$", re.IGNORECASE | re.DOTALL)
""""sorry, …", "actually …": a correction only with the words it replaces ("…, not 8:30"), or
with one value of a kind alone ("actually Thursday")."""
_INSTEAD = re.compile(
    r"^(?P<new>.+?)\s*(?:,\s*)?(?:\bnot\b|\binstead\s+of\b|\brather\s+than\b)\s+(?P<old>[^,.;!?]+?)"
    r"\s*[.!]*$"
    r"|^not\s+(?P<old2>[^,.;!?]+?)\s*(?:,\s*(?:but\s+|it'?s\s+|it\s+is\s+)?|\s+(?:but|it'?s|it\s+is)\s+)"
    r"(?P<new2>.+?)\s*[.!]*$",
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
    r"|moved|lives?|works?|has|have|had|should|must|will|would|never|always|don'?t|avoid)\b"
    r"|['’](?:s|re|m)\b",
    re.IGNORECASE,
)


_CLAUSE_END = re.compile(r"\s*(?:[?;]|,\s*(?:and|but|so|also|then|plus)\b|\.\s)", re.IGNORECASE)
"""Where the correction's words end and the rest of the message begins ("no I meant
Fahrenheit, and what's 30C in that?")."""
_NOT_NEW_WORDS = re.compile(
    r"\b(?:it|that|this|those|these|them|what|which|one|ones|something|anything|everything"
    r"|here|there|said|say)\b"
    r"|^(?:a\s+(?:bit|little|lot)\s+|much\s+|way\s+|even\s+)?(?:more|less|shorter|longer"
    r"|bigger|smaller|simpler|clearer|briefer|faster|slower|better|worse|nicer|friendlier)\b",
    re.IGNORECASE,
)
"""New words that name no new value: a pronoun or a pointer ("no I meant it", "the staging
one", "what I said"), or a comparison about the answer ("make that a bit shorter")."""


def correction_clause(sentence: str) -> str:
    """The words of `sentence` that make the correction, without what follows it (a question,
    "and …"): what the turn takes out of the message."""
    marked = _MARKER.match(sentence) or _LED.match(sentence)
    if marked is None:
        return sentence
    cut = _CLAUSE_END.search(sentence, marked.start("rest"))
    return sentence[: cut.start()] if cut else sentence


def correction_slots(sentence: str) -> Slots:
    """The new words of a correction (`statement`) and the words they replace (`what`), if it
    names them. Empty slots when `sentence` says no correction."""
    marked = _MARKER.match(sentence)
    rest = marked.group("rest") if marked else None
    if rest is None:
        led = _LED.match(sentence)
        rest = led.group("rest") if led else sentence.strip()
        bare = _before_clause_end(rest).rstrip(".!")
        if led is not None and _of_a_kind(bare):
            return Slots(statement=bare)  # "actually Thursday", "no sorry, B3" (D501)
        if (led is None and not rest.lower().startswith("not ")) or _INSTEAD.match(
            _before_clause_end(rest)
        ) is None:
            return Slots()  # a lead word, or "not X, Y", and the words it replaces
    rest = _before_clause_end(rest).rstrip(".!")
    instead = _INSTEAD.match(rest)
    if instead is not None:
        new = _FILLER.sub("", (instead.group("new") or instead.group("new2") or "").strip(" ,"))
        old = (instead.group("old") or instead.group("old2") or "").strip(" ,")
    else:
        new, old = _FILLER.sub("", rest), ""
    fragment = _is_fragment(new)
    if not new or (fragment and _NOT_NEW_WORDS.search(new)):
        return Slots()
    return Slots(statement=new, what=old or None)


def _is_fragment(new: str) -> bool:
    """A few words with no verb ("Fahrenheit", "light mode"), not a statement of its own."""
    return len(_WORD.findall(new)) <= _MAX_FRAGMENT_WORDS and _VERB.search(new) is None


def _before_clause_end(text: str) -> str:
    cut = _CLAUSE_END.search(text.strip())
    return (text.strip()[: cut.start()] if cut else text).strip()


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
    without a verb replace the words of `kept` they line up with (`_aligned`): "Fahrenheit"
    the capitalised "Celsius", "Tuesday" the weekday, "4513" the number, "light mode" the
    "dark mode" that ends in the same word, "integer cents" what a decision went with.
    """
    new = (slots.statement or "").strip()
    if not new:
        return None
    fragment = _is_fragment(new)
    old = (slots.what or "").strip()
    if old:
        found = re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", kept, re.IGNORECASE)
        if found is None:
            return None  # "a friendly tone, not firm" corrects something else than `kept`
        if fragment:
            return kept[: found.start()] + new + kept[found.end():]
    if not fragment:
        return new
    span = _aligned(kept, new)
    if span is None:
        return None
    result = kept[: span[0]] + new + kept[span[1]:]
    return None if result.casefold() == kept.casefold() else result


_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november"
          r"|december)")
_KINDS = (
    re.compile(rf"\b{_WEEKDAY}s?\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?\b", re.IGNORECASE),
    re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b", re.IGNORECASE),
    re.compile(r"\b(?:the\s+)?\d{1,2}(?:st|nd|rd|th)\b", re.IGNORECASE),
    re.compile(r"[\w.-]*\d[\w.-]*"),
)
"""Kinds of value a few words may correct, each the same kind in the kept statement: a weekday,
a month (with its day), a time of day, an ordinal day, a token with a digit."""
_DECIDED_OBJECT = re.compile(
    r"^(?:go(?:ing)?\s+with|use|using|pick|choose|take|book|hire|stick\s+with)\s+"
    r"(?P<object>.+?)(?=\s+(?:for|as|in|on|over|instead)\s|$)",
    re.IGNORECASE,
)
_CAPITALISED = re.compile(r"(?<![\w-])(?!I\b)[A-Z][\w.+#-]*(?:\s+\d[\w.]*)?")


def _of_a_kind(words: str) -> bool:
    """Are `words` one value of a kind a correction lines up (a weekday, a time, a number…)?"""
    return any(kind.fullmatch(words.strip()) for kind in _KINDS)


def _aligned(kept: str, new: str) -> tuple[int, int] | None:
    """Where in `kept` the few words `new` take the place of; None when nothing lines up."""
    for kind in _KINDS:
        if kind.fullmatch(new.strip()):
            found = list(kind.finditer(kept))
            return found[-1].span() if found else None
    words = new.split()
    last = re.search(rf"(?<![\w-])(?:\S+\s+){{{len(words) - 1}}}{re.escape(words[-1])}(?![\w-])",
                     kept, re.IGNORECASE) if len(words) > 1 else None
    if last is not None and not _VERB.search(last.group()):
        return last.span()  # "light mode" for "dark mode"
    decided = _DECIDED_OBJECT.match(kept)
    if decided is not None:
        return decided.span("object")  # "go with Decimal for the amounts" → "integer cents"
    if new[:1].isupper():
        found = list(_CAPITALISED.finditer(kept))
        if len(found) == 1:
            return found[0].span()  # "I prefer Celsius" → "Fahrenheit"
    return None
