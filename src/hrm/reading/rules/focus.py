"""What a person's words ask of their focus: "let's focus on X for the next 3 turns".

001 §4.3 gives commitments a manager and no words that start one; the turn reads them here. A
focus request is the person directing their own focus, as "switch to X" is, so it decides which
problem the input belongs to as well as the commitment (D54): arbitration
(`PreemptScoreArbiter`) ties the request to the problem it names, else to the active problem it
is part of ("the billing migration script" under "the v2 launch of our billing service"), and
opens a problem titled by it only when nothing is active; the turn then commits to that
problem, holding focus when the person gave the length (D56). Read once per text: arbitration
and the commitment ask about the same input in one turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hrm._text import shorten
from hrm.reading.rules._engine import NUMBER, number_of
from hrm.reading.rules.cues import reports_on_the_work
from hrm.reading.slots import slots_for
from hrm.reading.types import Intent, IntentKind, Slots

__all__ = [
    "DEFAULT_TURNS",
    "FocusRequest",
    "SetAside",
    "asks_to_resume",
    "read_focus_intents",
    "read_focus_request",
    "read_set_aside",
    "without_resume",
]

DEFAULT_TURNS = 3
"""A request that names no span ("let's focus on X") commits for this many turns."""

_UNITS = r"(?:turns?|messages?|replies|repl(?:y)|exchanges?|answers?|questions?|rounds?)\b"
FOR_TURNS = re.compile(
    r"\b(?:(?P<for>(?:for|over|during)\s+)?(?:the\s+)?next\s+(?P<n>" + NUMBER + r")"
    r"|(?P<for_only>for\s+)(?:the\s+)?(?P<m>(?!a\s|one\s)" + NUMBER + r")(?=\s+(?:more\s+)?"
    r"(?:turns?|messages?|exchanges?|rounds?)\b))\s+(?:more\s+)?" + _UNITS,
    re.IGNORECASE,
)
"""The span of a commitment: "for the next 3 turns", "for the next two messages", "over the next
couple of turns", "for 4 turns" (not "for a reply" or "for two questions"); without "for"
("… the next 3 messages") only beside a focus verb."""
_SPAN_HINTS = ("next", "turn", "message", "repl", "exchange", "answer", "question", "round")
FOCUS_ON = re.compile(
    r"\b(?:let'?s|let us|we'?ll|we will|i want to|i'?d like to|commit to|please|pls) "
    r"(?:focus on|focus only on|work on|commit to|finish|ship|concentrate on|stick to|stick with"
    r"|stay on|stay focused on|only talk about|keep to)\s+(.{3,200})",
    re.IGNORECASE,
)
"""A topic the person commits to: "let's focus on X", "we'll finish X", "I want to ship X"."""
_BARE_FOCUS_ON = re.compile(
    r"\b(?:focus(?:ed)? on|work on|stick (?:to|with)|stay (?:on|with)|concentrate on)\s+(.{3,200})",
    re.IGNORECASE,
)
"""With a span said, the verb alone names the topic: "for the next 3 turns, focus on X"."""
_FOCUS_WORDS = ("focus", "work on", "commit", "finish", "ship", "concentrate", "stick",
                "stay on", "talk about", "keep to")
_SENTENCE_END = re.compile(r"[.;!?](?=\s|$)|\n")
_LEADING_ARTICLE = re.compile(r"^(?:the|my|our|a|an|this|that)\s+", re.IGNORECASE)
_EDGES = " \t.,;:!?…-–—\"'“”‘’()[]"
_HEAD_CHARS = 5000
"""Commitment language is in an input's first lines; a 1 MB paste is not searched whole."""
_SENTENCE_OPENING = (
    r"(?:^|(?<=[.!?])\s+|\n)\W*"
    r"(?:(?:ok(?:ay)?|so|anyway|anyhow|alright|all right|right|well|now|thanks|thank you|phew"
    r"|great|cool|good|sorry|oh|hi|hello|hey|(?:good )?(?:morning|afternoon|evening))\W+)*"
)
"""Where a move opens: a sentence's start, after the small words people open with."""
_RESUME = re.compile(
    _SENTENCE_OPENING +
    r"(?:where (?:were we|was i|did (?:we|i) (?:leave off|leave it|stop|get to))"
    r"|where (?:we|i) (?:were|was|left off|stopped)"
    r"|(?:(?:let'?s|let us|can we|could we|we can|shall we)\s+)?(?:(?:get|go|come|head)\s+)?"
    r"back to\s+(?:it|work|business"
    r"|what (?:we|i) (?:were|was) (?:doing|working on|talking about|discussing|on)"
    r"|where (?:we|i) (?:were|was|left off|stopped)"
    r"|the (?:previous|earlier|other|original|main) (?:topic|thing|task|problem|issue|subject"
    r"|question|one))"
    r"|(?:(?:let'?s|let us|can we|could we|shall we)\s+)?(?:pick (?:it )?up|continue|carry on"
    r"|resume)\s+(?:from\s+)?where (?:we|i) (?:left off|were|stopped)"
    r"|what were we (?:doing|talking about|working on|discussing|on)"
    r"|as (?:i|we) (?:was|were) saying)"
    r"(?:\s+(?:before|earlier|previously|last time|again|yesterday))?"
    r"(?:\s+(?:please|now|then))?(?=\s*(?:[.!?,:;…)—-]|$))",
    re.IGNORECASE,
)
"""A sentence that asks to return to the earlier thread without naming it: "Where were we?",
"Anyway, back to what we were doing", "Let's pick up where we left off". "Where were we with
the methods?" names its topic, and "I'll get back to it later" asks nothing now."""
_RESUME_WORDS = ("where", "back to", "saying", "what were we")
_RESUME_NAMED = re.compile(
    _SENTENCE_OPENING
    + r"(?:(?:let'?s|let us|can we|could we|shall we|we (?:can|should)|i(?:'d| would) like to"
    r"|i want to|i wanna)\s+(?:(?:go|get|come|head)\s+back\s+to|return\s+to|resume)"
    r"|(?:(?:go|get|come|head)ing\s+)?back\s+to|resume)\s+(?P<topic>[^.,;:!?\n]{2,80})",
    re.IGNORECASE,
)
"""A sentence that asks to go back to work it names: "back to the invoice stuff", "let's get
back to the garden project", "resume the wedding speech". A bare "go back to X" or "return to
X" is left to the sentence model: it is as often a request about the work ("go back to the
previous version of the function")."""
_NOT_A_PLACE = frozenset(
    {"square one", "drawing board", "basics", "normal", "sleep", "bed", "you", "me", "start",
     "beginning", "top", "reality", "life", "school", "office", "home", "town"}
)
"""Idioms and places "back to" names that are no work of the person's ("back to square one")."""


@dataclass(frozen=True, slots=True)
class FocusRequest:
    """A request to commit focus, as read from one input."""

    turns: int | None
    """The span the person gave ("for the next 3 turns"), or None (`DEFAULT_TURNS` applies)."""
    description: str
    """What to focus on: the topic a focus verb names ("focus on X"), else the rest of the input
    around the span ("for the next 2 turns, help me debug X"); empty when the input says
    nothing besides the span ("for the next 3 turns."). The commitment's description and what
    arbitration matches."""

    @property
    def title(self) -> str:
        """The description as a problem title: "the billing migration script" → "Billing
        migration script"."""
        bare = _LEADING_ARTICLE.sub("", self.description).strip() or self.description
        return shorten(bare[:1].upper() + bare[1:], 80)


def read_focus_request(text: str) -> FocusRequest | None:
    """The focus request `text` makes, or None when it makes none."""
    return _read(text[:_HEAD_CHARS])


@lru_cache(maxsize=8)
def _read(head: str) -> FocusRequest | None:
    low = head.lower()
    span = FOR_TURNS.search(head) if any(w in low for w in _SPAN_HINTS) else None
    topic = _topic(head) if any(word in low for word in _FOCUS_WORDS) else None
    if topic is None and span is not None:
        bare = _BARE_FOCUS_ON.search(head)
        topic = bare.group(1) if bare else None
        if topic is None and span.group("for") is None and span.group("for_only") is None:
            span = None  # "show me the next 3 messages" commits to nothing
    if span is None and topic is None:
        return None
    turns = number_of(span.group("n") or span.group("m")) if span else None
    if topic is not None:
        said = _without_span(_first_sentence(topic))
        if span is None and _WH_CLAUSE.match(said):
            return None  # "let's focus on what matters: how do I …?" names no work (D438)
        if said:
            return FocusRequest(turns, shorten(said, 80))
        if span is None:  # "let's focus on ..." names nothing and gives no span
            return None
    rest = _without_span(_first_sentence(_without_span(head)))
    return FocusRequest(turns, shorten(rest, 80))


_WH_CLAUSE = re.compile(r"^\W*(?:what|how|why|which|where|who|whatever|whichever)\b", re.I)
"""A focus "on what matters", "on how it works": a figure of speech unless it gives a span."""


def _topic(head: str) -> str | None:
    found = FOCUS_ON.search(head)
    if found is None:
        return None
    topic: str = found.group(1)
    return topic


def asks_to_resume(text: str) -> bool:
    """Does `text` ask to go back to the thread before the current one, naming no problem?

    After an interruption ("Urgent: my laptop crashed …", then "Found it, phew"), "Where were
    we?" stayed on the interruption: it has no words of a problem, so it continued the active
    one (D75). Arbitration takes it as a switch the person asked for, to the problem the
    conversation was on before (`HRMContext.earlier_topic`).
    """
    head = text[:_HEAD_CHARS].lower()
    if not any(word in head for word in _RESUME_WORDS):
        return False
    return _RESUME.search(head) is not None


def without_resume(text: str) -> str:
    """`text` without its requests to go back ("Where were we?"): what else it says."""
    return _RESUME.sub(" ", text) if asks_to_resume(text) else text


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()


def _without_span(text: str) -> str:
    """`text` without its "for the next N turns", and without punctuation at either end."""
    return FOR_TURNS.sub("", text).strip(_EDGES)


@dataclass(frozen=True, slots=True)
class SetAside:
    """A message that opens by setting something aside: "Forget the offsite for now, …"."""

    aside: str
    """What is set aside, as said ("the offsite"); empty for "Never mind, …"."""
    rest: str
    """What the message goes on to say: what the person turns to."""


_ASIDE_LEAD = (
    r"^\W*(?:(?:ok(?:ay)?|so|actually|hmm+|wait|sorry|oh|well|hey|right|alright|look|anyway)"
    r"\W+)*"
)
_FOR_NOW = r"(?:\s+for\s+(?:now|the\s+moment|today|a\s+(?:bit|moment|sec(?:ond)?|minute|while)))"
_ON_HOLD = r"(?:aside|on\s+hold|on\s+ice|on\s+pause|on\s+the\s+back\s*burner)"
_WE = r"(?:(?:let'?s|let\s+us|we\s+can|can\s+we|i'?ll|we'?ll)\s+)?"
_THING = r"(?P<aside>[^,;:.!?…—–\n]{1,80}?)"
_THEN = (
    r"\s*(?:[,;:.!…—–]+|\s-+|\s+(?:and|but|because|since|as|cause|'cause)\b|(?=\s*$))"
    r"\s*(?P<rest>.*)"
)
_SET_ASIDE = tuple(
    re.compile(_ASIDE_LEAD + clause + _THEN, re.IGNORECASE | re.DOTALL)
    for clause in (
        # "Forget the offsite for now", "Let's park the launch for a bit", "Drop that for now"
        _WE + r"(?:forget(?:\s+about)?|leave|drop|park|pause|shelve|skip|put)\s+" + _THING
        + r"(?:\s+" + _ON_HOLD + r")?" + _FOR_NOW,
        # "Put the offsite on hold", "Let's set the report aside"
        _WE + r"(?:put|set|leave)\s+" + _THING + r"\s+" + _ON_HOLD + _FOR_NOW + "?",
        # "Never mind the offsite", "Never mind, …", "Forget about the report"
        r"(?:never\s*mind|nevermind|nvm|forget\s+about)(?:\s+(?:about\s+)?" + _THING + r")?"
        + _FOR_NOW + "?",
        # "Forget that, …" (D77 reads it as well, when the turn before kept something)
        r"forget\s+(?P<aside>it|that|this)" + _FOR_NOW + "?",
        # "Enough about the offsite", "The offsite can wait"
        r"enough\s+(?:about|of|with)\s+" + _THING + _FOR_NOW + "?",
        # (not "I can wait", "we can wait": a person waiting sets nothing aside)
        r"(?!(?:i|we|you|they|he|she|someone|everyone)\s)" + _THING + r"\s+can\s+wait"
        + _FOR_NOW + "?",
    )
)
_NEVER_MIND = _SET_ASIDE[2]
"""The "never mind …" form: what follows it may be the answer found, not other work."""
_SET_ASIDE_WORDS = ("forget", "mind", "nvm", "leave", "drop", "park", "pause", "shelve", "skip",
                    "put", "set", "enough", "wait")
"""A word every set-aside form holds, in its first `_SET_ASIDE_REACH` characters."""
_SET_ASIDE_REACH = 160
"""Where a set-aside's verb can be: every form opens the message (a few leading words, at
most 80 characters of what is set aside, the verb)."""


def read_set_aside(text: str) -> SetAside | None:
    """What a message that opens by setting something aside sets aside, and what it turns to.

    "Forget the offsite for now, the payment webhook is failing in production." was a new
    problem titled by all of it, queued behind the offsite it set aside; its title then held
    "offsite", so "Let's get back to the offsite" no longer named one problem (D81).
    Arbitration reads the rest as the input, and a problem other than the active one that it
    is about is a switch the person asked for.
    """
    head = text[:_HEAD_CHARS]
    opening = head[:_SET_ASIDE_REACH].lower()
    return _set_aside(head) if any(w in opening for w in _SET_ASIDE_WORDS) else None


@lru_cache(maxsize=8)
def _set_aside(head: str) -> SetAside | None:
    for pattern in _SET_ASIDE:
        found = pattern.match(head)
        if found is not None:
            aside = (found.group("aside") or "").strip(_EDGES)
            rest = found.group("rest").strip()
            pointed = aside.lower() in ("", "it", "that", "this")
            if pattern is _NEVER_MIND and reports_on_the_work(rest if pointed else aside):
                # "nvm, it was the wrong user crontab": the question is withdrawn because the
                # answer was found — a report on the work, nothing set aside (D433).
                return None
            return SetAside(aside, rest)
    return None



# ── as intents (the rules tier) ─────────────────────────────────────────────


def read_focus_intents(said: str) -> list[Intent]:
    """Focus requests, requests to resume and a set-aside in `said`, as intents: moves that
    arbitration reads (their words stay in what it weighs)."""
    found: list[Intent] = []
    request = read_focus_request(said)
    if request is not None:
        span = FOR_TURNS.search(said[:_HEAD_CHARS])
        at = _sentence_of(said, span.start() if span else 0)
        found.append(Intent(IntentKind.FOCUS, at, 0.9, "rules:focus.focus",
                            Slots(turns=request.turns, topic=request.description or None)))
    if asks_to_resume(said):
        resume = _RESUME.search(said[:_HEAD_CHARS].lower())
        if resume is not None:
            start = resume.start() + len(resume.group(0)) - len(resume.group(0).lstrip())
            found.append(Intent(IntentKind.RESUME, (start, resume.end()), 0.9,
                                "rules:focus.resume"))
    else:
        found += _named_resumes(said)
    aside = read_set_aside(said)
    if aside is not None:
        end = len(said) - len(aside.rest) if aside.rest else len(said)
        found.append(Intent(IntentKind.SET_ASIDE, (0, max(1, end)), 0.85, "rules:focus.aside",
                            Slots(what=aside.aside or None, rest=aside.rest or None)))
    return [i for i in found if i.span[0] < i.span[1] <= len(said)]


def _named_resumes(said: str) -> list[Intent]:
    """Requests to go back to work the person names, as RESUME intents whose topic is what
    they name; "back to square one" names no work."""
    head = said[:_HEAD_CHARS]
    if "back to" not in head.lower() and "resum" not in head.lower():
        return []
    found: list[Intent] = []
    for match in _RESUME_NAMED.finditer(head):
        start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
        while start < len(head) and not head[start].isalnum():
            start += 1
        slots = slots_for(IntentKind.RESUME, head[start : match.end()])
        if slots.topic and not _names_no_work(match.group("topic")):
            found.append(Intent(IntentKind.RESUME, (start, match.end()), 0.9,
                                "rules:focus.resume_named", slots))  # fmt: skip
    return found


def _names_no_work(topic: str) -> bool:
    """Is "back to `topic`" an idiom or a place rather than work ("square one", "the office
    tomorrow")?"""
    bare = _LEADING_ARTICLE.sub("", topic.strip(_EDGES)).lower()
    return any(bare == idiom or bare.startswith(idiom + " ") for idiom in _NOT_A_PLACE)


def _sentence_of(said: str, at: int) -> tuple[int, int]:
    """The sentence of `said` around offset `at`."""
    start = max(said.rfind(stop, 0, at) for stop in ".!?\n") + 1
    ends = [i for i in (said.find(stop, at) for stop in ".!?\n") if i >= 0]
    end = min(ends) + 1 if ends else len(said)
    while start < end and said[start].isspace():
        start += 1
    return (start, end)
