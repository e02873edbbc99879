"""What a sentence may not be, whatever a classifier says: the guards every tier respects.

A question or a request for the assistant to do something is never a preference or a fact to
keep (issue 29 §4), nor a decision stated about the work (D88): "I hate how slow webpack is,
what are alternatives?" and "I prefer to know why this fails before patching it, can you
explain the traceback?" were stored as canon when a reader saw only their first clause. A
sentence that asks hrm to keep something ("Can you remember that the deploy key rotates
monthly?") is the one question that may be a fact: what it asks for is the keeping. A sentence
that opens with "when" or "where" is a question only with a verb after it ("where is …"):
"When you give me recipes, use grams" is a condition, not a question.

Pure, linear in the sentence's length (one pass of anchored patterns over at most
`GUARD_CHARS` characters), never raises.
"""

from __future__ import annotations

import re

from hrm.reading.rules.instructions import HABITUAL
from hrm.reading.types import IntentKind

__all__ = [
    "GUARD_CHARS",
    "answers_for",
    "asks_something",
    "barred_kinds",
    "doubts_a_rule",
    "is_keep_request",
    "may_carry",
    "quotes_someone_else",
    "readable",
    "said_of_the_person",
]

GUARD_CHARS = 600
"""Characters of a sentence the guards read: a question mark past them is in a paste."""

_YES_NO = frozenset({IntentKind.YES, IntentKind.NO})
_PENDING_ANSWERS = {
    "preference": _YES_NO,
    "intent": _YES_NO,
    "switch": frozenset({IntentKind.SWITCH, IntentKind.QUEUE}),
}
_NEVER_FOR_QUESTIONS = frozenset({IntentKind.PREFERENCE, IntentKind.FACT, IntentKind.DECISION})
"""A decision is stated, never asked ("should we go with Netlify?", D88)."""
_KEEP_QUESTION = _NEVER_FOR_QUESTIONS - {IntentKind.FACT}
_NOT_ASKED_AS_QUESTIONS = frozenset(
    {
        IntentKind.RESOLVE,
        IntentKind.PARK,
        IntentKind.FORGET,
        IntentKind.FOCUS,
        IntentKind.SET_ASIDE,
    }
)
"""A sentence that opens as a question about the work ("Is this resolved?", "What documents
do I need for that?", "Should I park it?") asks about it; it does not close, park, forget or
set anything aside. Asked as a favour ("Can you forget that?", "could we park this?") it does."""
_NONE: frozenset[IntentKind] = frozenset()

_LEAD = r"^\W*(?:(?:ok(?:ay)?|so|and|also|but|hey|oh|well|actually|pls|please)\b\W*)*"
_POLITE = r"(?:(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+)?)"
_KEEP_VERB = (
    r"(?:remember|rember|remembr|note|keep\s+in\s+mind|make\s+a\s+note|store|save|"
    r"write\s+(?:this|that|it)\s+down|add\s+(?:this|that|it)?\s*to\s+your\s+memory)"
)
_FAVOUR = re.compile(_LEAD + r"(?:can|could|would|will)\s+(?:you|u|we)\b", re.IGNORECASE)
_KEEP_REQUEST = re.compile(_LEAD + _POLITE + r"?" + _KEEP_VERB + r"\b", re.IGNORECASE)
_OPENS_AS_QUESTION = re.compile(
    _LEAD
    + r"(?:(?:what|how|why|which|who|whom|whose)(?:'s|'re|s)?\b"
    r"|(?:when|where)(?:'s|\s+(?:is|are|do|does|did|will|can|should|was|were))\b"
    r"|(?:can|could|would|will|do|does|did|is|are|was|were|should|shall|may|might|have|has)"
    r"\s+(?:you|u|i|we|it|they|there|this|that|people|anyone)\b)",
    re.IGNORECASE,
)
_ASKS_MIDWAY = re.compile(
    r"(?:[,;:—–-]\s*(?:(?:and|but|so|then|now)\s+)?|\s(?:and|but|so|then)\s+)"
    r"(?:(?:please|pls)\s+)?"
    r"(?:(?:can|could|would|will)\s+(?:you|u)|what\s+(?:are|is|was|were|do|does|about|if)"
    r"|how\s+(?:do|does|can|should|would|to)|why\s+(?:do|does|is|are)|is\s+there|are\s+there"
    r"|do\s+you|should\s+(?:i|we)|any\s+(?:tips|ideas|alternatives|suggestions))\b",
    re.IGNORECASE,
)


_ASKS_TO_BE_TOLD = re.compile(
    _LEAD + _POLITE + r"?(?:summari[sz]e|recap|remind\s+(?:me|us)|tell\s+(?:me|us)|show\s+(?:me|us)"
    r"|explain|describe|list|give\s+(?:me|us)|walk\s+(?:me|us)\s+through|go\s+(?:over|through)"
    r"|repeat|read\s+(?:me|us|back))\b",
    re.IGNORECASE,
)
"""A sentence that asks to be told something now ("Summarise what we decided about the cache",
"remind me what we agreed"): it names a decision or a fact to hear it, not to state it (D408).
Not a bar on preferences: "Show me type hints in every answer from now on" is an instruction."""
_TOLD_BARS = frozenset({IntentKind.FACT, IntentKind.DECISION})


_RECALLS = re.compile(
    _LEAD + _POLITE + r"?(?:do\s+you\s+)?remember\s+(?:when|how|what|where|who|why|which|whether|if"
    r"|the\s+(?:time|day|bug|issue|thing)|that\s+(?:time|day|bug|issue|thing))\b",
    re.IGNORECASE,
)
""""Remember when we talked about the staging server?", "remember the time the build broke":
asks to recall something, not to keep it (D451)."""


_UNDECIDED = re.compile(
    r"\b(?:(?:need|needs|have|has|got)\s+to|must|should)\s+(?:(?:still|first|now)\s+)?"
    r"(?:pick|choose|decide|select|settle\s+on|figure\s+out|make\s+a\s+(?:decision|choice))\b"
    r"|\b(?:haven'?t|have\s+not|not\s+yet|still\s+not|not)\s+(?:decided|chosen|picked|sure)\b",
    re.IGNORECASE,
)
"""A choice still to make ("we need to pick an ORM for the new service", "not decided yet"):
no decision is stated (D451)."""
_UNDECIDED_BARS = frozenset({IntentKind.DECISION})


_THIS_ONCE = re.compile(
    r"\b(?:(?:this|that)\s+(?:one|time|once)|just\s+this|for\s+(?:this|that)\s+(?:answer|reply"
    r"|response|question|one))\b",
    re.IGNORECASE,
)
"""An instruction scoped to what is at hand ("don't add comments in this one", "use a table for
this one comparison", "just this time, skip the intro"): asked for now, no standing preference
(D454)."""
_THIS_ONCE_BARS = frozenset({IntentKind.PREFERENCE})


def is_keep_request(sentence: str) -> bool:
    """Whether `sentence` opens by asking hrm to keep something ("remember that …", "can you
    note …"), not to recall something (`_RECALLS`: "remember when we …?")."""
    head = sentence[:GUARD_CHARS]
    return _KEEP_REQUEST.match(head) is not None and _RECALLS.match(head) is None


def asks_something(sentence: str) -> bool:
    """Whether `sentence` is a question or asks the assistant to do something: it ends with a
    question mark, opens as a question ("what are …", "can you …"), or goes on to ask one
    after a comma ("…, can you explain the traceback?")."""
    head = sentence[:GUARD_CHARS].rstrip()
    if head.endswith("?"):
        return True
    return _OPENS_AS_QUESTION.match(head) is not None or _ASKS_MIDWAY.search(head) is not None


_SAYS = (
    r"(?:^|[^a-z'])(?P<who>[a-z']+)\s+(?:always\s+|often\s+|keeps\s+|just\s+|once\s+)?"
    r"(?:said|says|saying|told\s+(?:me|us)|tells\s+(?:me|us)|wrote|writes|insists|insisted"
    r"|used\s+to\s+say|likes\s+to\s+say|swears)(?:\s+that)?\s*(?:[:,]\s*)?"
)
_QUOTING = re.compile(_SAYS + r"(?:['\"“‘]|(?<=:)\s*)", re.IGNORECASE)
"""Someone's words quoted: "My boss said 'always use metric units'", "The style guide says
'never use semicolons'", "My teacher always said: I prefer handwritten notes"."""
_SAID_OF_ME = re.compile(
    r"(?:^|[^a-z'])(?P<who>[a-z']+)\s+(?:always\s+|often\s+|still\s+|just\s+)?"
    r"(?:says|said|thinks|thought|assumes?|assumed|believes?|believed|claims?|claimed|insists"
    r"|insisted|tells\s+(?:me|everyone|people)|told\s+(?:me|everyone|people))\s+(?:that\s+)?"
    r"i(?:'m|\s+am|'d|\s+would)?\s",
    re.IGNORECASE,
)
"""Someone's claim about the person, unquoted: "My boss says I prefer long reports", "People
assume I prefer Java" — theirs to say, not the person's own statement (D497)."""
_QUOTED_UP_TO = re.compile(_SAYS + r"(?:['\"“‘][^'\"”’]{0,80}|(?<=:)[^.!?]{0,80})$", re.IGNORECASE)
_THEIRS_BARS = frozenset({IntentKind.PREFERENCE})
_DOUBTED = re.compile(
    r"\b(?:is|isn't)\s+(?:that|this|it)\s+(?:still\s+|really\s+|even\s+)?(?:true|right|correct"
    r"|accurate|valid|good\s+advice|sound\s+advice|a\s+good\s+(?:idea|rule|practice)|the\s+case)"
    r"|\bdo\s+you\s+agree\b|\bdoes\s+(?:that|this|it)\s+(?:still\s+)?(?:hold|apply)\b",
    re.IGNORECASE,
)
"""A rule put up for discussion: "never forget to close your file handles — is that still true
with pathlib?" asks about the rule; it does not state the person's (D471)."""
_SAYING_WORDS = ("said", "say", "told", "tell", "wrote", "writes", "insist", "swear", "think",
                 "thought", "assum", "believ", "claim")


def doubts_a_rule(text: str) -> bool:
    """Does `text` ask whether a rule holds ("… — is that still true with pathlib?", "Do you
    agree?")? The rule is then put up for discussion, not stated as the person's (D471)."""
    return "?" in text and _DOUBTED.search(text[:GUARD_CHARS]) is not None


def said_of_the_person(text: str) -> bool:
    """Does `text` end in someone else's claim about the person ("My boss says I prefer")?"""
    tail = text[-GUARD_CHARS:]
    claims = list(_SAID_OF_ME.finditer(tail))
    found = claims[-1] if claims else None
    return found is not None and found.group("who").lower() not in ("i", "we") and (
        len(tail) - found.end() <= 25  # the claim reaches the word asked about
    )


def quotes_someone_else(text: str, *, up_to_end: bool = False) -> bool:
    """Does `text` quote someone else's words ("My boss said 'always …'")? With `up_to_end`,
    do its last words lie inside such a quote (`text` is a sentence up to some word of it)?
    "I always say 'never deploy on Fridays'" is the person's own (D471)."""
    head = text[:GUARD_CHARS] if not up_to_end else text[-GUARD_CHARS:]
    low = head.lower()
    if not any(verb in low for verb in _SAYING_WORDS):  # most sentences: one scan, no regex
        return False
    for pattern in (_QUOTED_UP_TO,) if up_to_end else (_QUOTING, _SAID_OF_ME):
        found = pattern.search(head)
        if found is not None and found.group("who").lower() not in ("i", "we"):
            return True
    return False


def barred_kinds(sentence: str) -> frozenset[IntentKind]:
    """The intents `sentence` may not carry: preference, fact and decision for a question or
    request, except that a request to keep something may be a fact; fact and decision for a
    sentence asking to be told something ("Summarise what we decided …"); and for a sentence that
    opens as a question not asked as a favour, a request to close, park, forget, focus or set
    aside (`_NOT_ASKED_AS_QUESTIONS`); a decision for a sentence that says a choice is still
    to make (`_UNDECIDED`); and a preference for an instruction scoped to what is at hand
    (`_THIS_ONCE`); a preference for someone else's words quoted, or a rule asked about
    ("… — is that still true?", D471)."""
    theirs = _THEIRS_BARS if quotes_someone_else(sentence) or doubts_a_rule(sentence) else _NONE
    return theirs | _own_bars(sentence)


def _own_bars(sentence: str) -> frozenset[IntentKind]:
    if not asks_something(sentence):
        told = _ASKS_TO_BE_TOLD.match(sentence[:GUARD_CHARS]) is not None
        if told and not is_keep_request(sentence):
            return _TOLD_BARS
        head = sentence[:GUARD_CHARS]
        barred = _UNDECIDED_BARS if _UNDECIDED.search(head) else _NONE
        if _THIS_ONCE.search(head) and not HABITUAL.search(head.lower()):
            barred = barred | _THIS_ONCE_BARS
        return barred
    barred = _KEEP_QUESTION if is_keep_request(sentence) else _NEVER_FOR_QUESTIONS
    head = sentence[:GUARD_CHARS]
    if _OPENS_AS_QUESTION.match(head) is not None and _FAVOUR.match(head) is None:
        barred = barred | _NOT_ASKED_AS_QUESTIONS
    return barred


def may_carry(kind: IntentKind, sentence: str) -> bool:
    """Whether a tier that generalises (the sentence model, a model) may read `sentence` as
    `kind`: not barred (`barred_kinds`), and the sentence mentions one of the intent's cue
    words (`hrm.reading.cue_gates`)."""
    from hrm.reading.cue_gates import has_cue

    return kind not in barred_kinds(sentence) and has_cue(kind, sentence)


def answers_for(pending: str | None) -> frozenset[IntentKind]:
    """The answers a reply may be to the question hrm asked (`ReadingContext.pending`): yes or
    no to a held preference or a middle-band intent, switch or queue to "switch or queue?",
    none when nothing was asked — "yes" then answers no question of hrm's."""
    return _PENDING_ANSWERS.get(pending or "", _NONE)


def readable(text: str) -> str:
    """`text` with control characters and lone surrogates (which no tokenizer or encoder can
    take) replaced by spaces."""
    return "".join(" " if _unreadable(c) else c for c in text)


def _unreadable(char: str) -> bool:
    code = ord(char)
    return code < 32 or code == 127 or 0xD800 <= code <= 0xDFFF
