"""What a person's words ask of a problem itself: to close it ("Mark the webhook problem as
done") or to put it away for now ("Let's park the offsite for now.") — D82.

001 §12.3 gives problems a status and the person is the authority over their own focus, but
the only ways to resolve one were ``/resolve`` in `hrm chat` and ``hrm problems resolve``. In a
conversation, "Can we mark the webhook problem as done?" went to the model, the problem stayed
open, and it went on competing for focus. A request is read here; the turn acts on it before
arbitration, so the rest of the message is weighed with the problem already closed.

Only unambiguous forms are requests, because a problem closed by mistake stops matching what
the person says: "mark X (as) done/resolved/…", "call X done", "close/resolve the X
problem/issue/thread/topic/task" (a noun that names a problem: "resolve the merge conflict"
asks for help, "close it" may mean a file or a pull request), "we're done with this one / the
X issue", "this can be closed". What "it", "this", "this one", "this problem" mean is the work
in focus (`ProblemRequest.ref` is None). A bare set-aside of the work ("Let's park the offsite
for now.", "Put this on hold.") pauses it.

Pure and deterministic (D12).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from hrm._keywords import keywords as extract_keywords
from hrm.reading.rules.focus import read_set_aside
from hrm.reading.sentences import IN_PHRASE
from hrm.reading.types import Intent, IntentKind, ReadingContext, Slots, Span

__all__ = ["FINISHED_WORDS", "ProblemRequest", "read_problem_intents", "read_problem_request"]

_HEAD_CHARS = 2000
"""A request to close a problem is said in a message's first lines, not in a long paste."""

_LEAD = (
    r"(?:^|(?<=[.!?;])\s+|\n)\W*"
    r"(?:(?:ok(?:ay)?|so|great|good|cool|perfect|nice|alright|right|thanks|thank you|well|now"
    r"|awesome|excellent|yes|yep|done)\W+)*"
)
_POLITE = (
    r"(?:(?:let'?s|let us|we can|you can|can we|can you|could you|could we|please|go ahead and"
    r"|i'?d like to|i want to|feel free to|we should|you may)\s+(?:please\s+)?)?"
)
_NOUN = r"(?:problem|issue|task|thread|topic|ticket|item|one|matter)"
_DONE = r"(?:done|resolved|solved|complete|completed|finished|closed|fixed|sorted)"
_THE_WORK = r"(?:it|this|that)(?:\s+" + _NOUN + r")?"
_NAMED = r"(?:the|this|that|my|our)\s+" + IN_PHRASE + r"{0,60}?\b" + _NOUN + r"s?"
_ANY_REF = IN_PHRASE + r"{1,80}?"
_ABOUT = r"(?:\s+(?:for|on|with)\s+(?P<about>" + IN_PHRASE + r"{1,60}?))?"
_END = (
    r"(?=\s*(?:[.!?;,:](?!\w)|\s(?:now|please|then|too|already|for\s+good|and|again|after)\b"
    r"|$))"
)
_RESOLVE = tuple(
    re.compile(_LEAD + form + _END, re.IGNORECASE)
    for form in (
        # "Mark the webhook problem as done", "Can we mark this as resolved?"
        _POLITE + r"mark\s+(?P<ref>" + _ANY_REF + r")\s+(?:as\s+)?" + _DONE + _ABOUT,
        # "Let's call it done for the offsite", "Call the offsite finished"
        _POLITE + r"call\s+(?P<ref>" + _ANY_REF + r")\s+" + _DONE + _ABOUT,
        # "Close the webhook issue", "Resolve this problem", "Let's close this thread"
        _POLITE + r"(?:close|resolve)(?:\s+out)?\s+(?P<ref>" + _NAMED + r")",
        # "We're done with this one", "I'm done with the webhook issue"
        r"(?:we'?re|i'?m|we are|i am)\s+(?:all\s+)?done\s+with\s+(?P<ref>(?:it|this|that)\s+"
        + _NOUN + r"|" + _NAMED + r")",
        # "This can be closed", "The webhook issue can be marked as done"
        r"(?P<ref>" + _THE_WORK + r"|" + _NAMED + r")\s+(?:can|could|should)\s+(?:now\s+)?be\s+"
        r"(?:closed|resolved|marked\s+(?:as\s+)?" + _DONE + r")",
    )
)
_RESOLVE_WORDS = (" mark", " call", " close", " resolve", " done with", " be ")
"""A word every resolve form holds, as a word's start ("locally" holds no " call"): most
messages have none, which rules out five scans."""
_PAUSING = re.compile(
    r"\b(?:park|pause|shelve|on\s+hold|on\s+ice|on\s+pause|aside|back\s*burner|can\s+wait"
    r"|for\s+(?:now|the\s+moment|today|a\s+(?:bit|moment|sec(?:ond)?|minute|while)))\b",
    re.IGNORECASE,
)
"""Words that say a set-aside is for a while: it pauses the problem (`read_set_aside`)."""
_PRONOUNS = re.compile(r"^(?:it|this|that)(?:\s+" + _NOUN + r")?$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|this|that|my|our)\s+", re.IGNORECASE)
_TRAILING_NOUN = re.compile(r"\s+" + _NOUN + r"s?$", re.IGNORECASE)


_LIST_CHARS = 120
"""A question about what is open is short; a longer message says more and is the model's."""
_ASKS_WHAT_IS_OPEN = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|alright|right|now|then|hey|hi)\W+)*"
    r"(?:(?:can you|could you|please)\s+)?"
    r"(?:what(?:'s| is| are)\s+(?:still\s+)?(?:open|pending|on my plate|on our plate"
    r"|in (?:the|my|our) queue|queued)"
    r"|what (?:else )?(?:are|were) (?:we|i) working on"
    r"|what (?:problems|issues|tasks|topics|threads) (?:are|do (?:we|i) have) (?:still )?"
    r"(?:open|left|pending|queued)"
    r"|(?:list|show)(?: me)? (?:my|our|the|all)(?: the)? (?:open |pending |queued )?"
    r"(?:problems|issues|tasks|topics|threads))"
    r"(?:\s+(?:right now|now|then|today|for me|please))?\s*[?.!]*\s*$",
    re.IGNORECASE,
)
"""A message that only asks what is open: "What's still open?", "What's on my plate?",
"List my open problems." hrm answers it from the registry (D87)."""


@dataclass(frozen=True, slots=True)
class ProblemRequest:
    """A request about a problem's status, as read from one message."""

    kind: Literal["resolve", "park", "list"]
    ref: str | None
    """The words that name the problem ("the webhook"), or None for the work in focus (and for
    ``list``, which asks what is open)."""
    clause: str
    """The words that make the request, as said: what arbitration leaves out."""


def read_problem_request(text: str) -> ProblemRequest | None:
    """The request `text` makes about a problem's status, or None (module docstring)."""
    return _read(text[:_HEAD_CHARS])


@lru_cache(maxsize=8)
def _read(head: str) -> ProblemRequest | None:
    lowered = " " + head.lower().replace("\n", " ")
    if any(word in lowered for word in _RESOLVE_WORDS):
        for pattern in _RESOLVE:
            found = pattern.search(head)
            if found is not None:
                about = found.groupdict().get("about")
                return ProblemRequest("resolve", _ref(about or found.group("ref")),
                                      found.group(0).strip())  # fmt: skip
    if len(head) <= _LIST_CHARS and _ASKS_WHAT_IS_OPEN.match(head):
        return ProblemRequest("list", None, head.strip())
    aside = read_set_aside(head)
    if aside is not None and not extract_keywords(aside.rest) and _PAUSING.search(head):
        # "Let's park the offsite for now." sets the work aside and turns to nothing. "Never
        # mind." and "Forget that." take back what was just said; they pause nothing.
        return ProblemRequest("park", _ref(aside.aside), head.strip())
    return None


def _ref(words: str | None) -> str | None:
    """The words that name a problem, without "the … problem"; None for the work in focus."""
    said = (words or "").strip()
    if not said or _PRONOUNS.match(said):
        return None
    named = _TRAILING_NOUN.sub("", _ARTICLE.sub("", said)).strip()
    return named if extract_keywords(named) else None


# ── as intents (the rules tier) ─────────────────────────────────────────────

_SAID_DONE = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|great|good|cool|perfect|nice|alright|yes|yep|well)\W+)*"
    r"(?P<ref>this|that|the\s+(?:problem|issue|bug|task|ticket)|this\s+(?:problem|issue|one"
    r"|task|ticket))(?:'s|\s+is|\s+has\s+been|\s+was)\s+(?:now\s+|finally\s+|all\s+)?"
    r"(?:resolved|solved)(?:\s+now)?\s*(?:[.!]|,\s*(?:you\s+can|please|pls|go ahead and)\s+"
    r"(?:close|resolve|mark)\b[^.!?\n]*[.!]?|$)",
    re.IGNORECASE,
)
""""This is resolved.", "Problem is solved now, you can close it": the work in focus."""
_BARE_DONE = re.compile(
    r"^\W*(?P<ref>problem|issue)\s+(?:is\s+|'s\s+)?(?:now\s+)?(?:resolved|solved)(?:\s+now)?"
    r"\s*(?:[.!]|,\s*(?:you\s+can|please|pls|go ahead and)\s+(?:close|resolve)\b[^.!?\n]*"
    r"[.!]?|$)",
    re.IGNORECASE,
)
_CLOSE_THIS = (
    r"(?:close|resolve)\s+(?:it|this|that|this one|that one|the problem|this problem)"
    r"(?:\s+(?:now|please|pls))?\s*[.!]*\s*$"
)
"""How a request to close the work at hand ends a sentence ("… close it", "resolve this now")."""
_CLOSE_IT = re.compile(
    r"(?:^|(?<=[.,;!]\s))\W*(?:you\s+can|please|pls|go ahead and|feel free to)\s+" + _CLOSE_THIS,
    re.IGNORECASE,
)
_DONE_WORDS = (
    "went through|works|worked|passes|passed|succeeded|done|fixed|solved|resolved|sorted|sent|"
    "paid|set up|made|built|written|taken care of|over|ready|finished"
)
_WORKED_THEN_CLOSE = re.compile(
    # a report that something got done ("is booked", "got approved", "was sent", "works"), or
    # one that opens with what the person did ("booked it for June 3", "I paid the invoice") —
    # the shape of a report, not a list of its verbs (D466)
    r"(?:\b(?:is|are|was|were|got|been|'s)\s+(?:now\s+|all\s+|finally\s+|already\s+|just\s+)?"
    rf"(?:[a-z]+ed|{_DONE_WORDS})\b"
    rf"|\b(?:{_DONE_WORDS})\b"
    r"|^\W*(?:(?:i|we)\s+)?(?:just\s+|finally\s+|already\s+)?"
    r"(?:[a-z]+ed|paid|sent|did|made|built|wrote|got)\b)"
    r"[^.!?\n]*?,\s*(?:so\s+|and\s+)?(?:please\s+|pls\s+)?" + _CLOSE_THIS,
    re.IGNORECASE,
)
"""A report that the work went well followed by a bare "close this": "retried the export and it
went through, close this" (D459), "The inspection is booked for June 3, close it." (D466).
Alone, "close this" may mean a file or a pull request."""
_CLOSE_AFTER = re.compile(
    r"(?:\s+(?:now|already|finally|again))?\s*,?\s*(?:so\s+|and\s+)?"
    r"(?:you\s+can\s+|please\s+|pls\s+|go ahead and\s+)?" + _CLOSE_THIS,
    re.IGNORECASE,
)
""""…, close it" after "the ETL is fixed now": the person asks, so it is acted on (D459)."""
_KIND_OF = {"resolve": IntentKind.RESOLVE, "park": IntentKind.PARK,
            "list": IntentKind.LIST_OPEN}  # fmt: skip


_PARK_NAMED = re.compile(
    _LEAD + _POLITE + r"(?:park|pause|shelve)\s+(?P<ref>(?:the|my|our)\s+" + IN_PHRASE + r"{2,60}?)"
    + _END,
    re.IGNORECASE,
)
""""Park the cover letter, I need to fix my bike first": a pause of the problem it names,
whatever follows. Only when the name is an open problem's (`_names_open`): "park the car in
the garage" asks nothing of hrm."""


FINISHED_WORDS = (
    "done", "finished", "finish", "complete", "completed", "fixed", "solved", "sorted", "ready",
    "set-up", "working", "live", "shipped", "deployed", "merged", "sent", "submitted",
    "published", "green",
)  # fmt: skip
_FINISHED = r"(?:" + "|".join(w.replace("-", r"\s+") for w in FINISHED_WORDS) + r")"
"""What a piece of work is said to be when it may be over ("the report is sent", "the CI is
set up and green"): asked about, never acted on (D422, D441)."""
_NOT_ALL_OF_IT = re.compile(
    r"[^.!?;\n]*\b(?:but|except|still|yet|although|though|only)\b", re.IGNORECASE
)
"""What a sentence goes on to say after "the X works now" when the work is not over."""
_SAID_FINISHED = re.compile(
    _LEAD + r"(?:(?:i'?m|we'?re|i am|we are)\s+(?:all\s+)?(?:done|finished)\s+with\s+"
    r"(?P<ref>(?:the|my|our)\s+" + IN_PHRASE + r"{2,60}?)"
    r"|(?P<subject>(?:(?:the|my|our)\s+)?" + IN_PHRASE + r"{2,60}?)(?:\s+(?:is|are)|['’]s)\s+"
    r"(?:now\s+"
    r"|finally\s+|all\s+)?" + _FINISHED
    # said in a note's words, without "is": "windows fixed", "ok crash solved", "report sent"
    + r"|(?P<noted>(?:(?:the|my|our)\s+)?" + IN_PHRASE + r"{2,40}?)"
    r"\s+(?:fixed|solved|sorted|sent|submitted|merged|deployed|shipped|works?))"
    + _END,
    re.IGNORECASE,
)
""""The report is done", "I'm done with the cover letter", "crashing is fixed": the work may
be over, or only a part of it; asked about, never acted on (D422)."""
FINISHED_ASK = 0.6
"""In the middle band: "Do you want me to resolve …?" settles it."""


@dataclass(frozen=True, slots=True)
class _OpenProblemForm:
    """A form of words that asks something of an open problem it names, read only when the
    name is an open problem's (`_names_open`)."""

    kind: IntentKind
    pattern: re.Pattern[str]
    """Names the problem in its group ``ref`` (or ``subject``, or ``noted``)."""
    words: tuple[str, ...]
    """One of these is in every message the pattern matches: the others are not searched."""
    confidence: float
    reader: str


_NAMING_OPEN = (
    _OpenProblemForm(IntentKind.PARK, _PARK_NAMED, ("park", "pause", "shelve"), 0.9,
                     "rules:problems.park_named"),  # D418
    _OpenProblemForm(IntentKind.RESOLVE, _SAID_FINISHED,
                     (*(w.split("-")[0] for w in FINISHED_WORDS), "work"),
                     FINISHED_ASK, "rules:problems.said_finished"),  # D422
)  # fmt: skip


def _naming_open_problem(said: str, context: ReadingContext) -> Intent | None:
    """The first `_NAMING_OPEN` form `said` makes of an open problem it names, if any."""
    if not context.open_problems:
        return None
    low = said.lower()
    head = said[:_HEAD_CHARS]
    for form in _NAMING_OPEN:
        found = form.pattern.search(head) if any(w in low for w in form.words) else None
        if found is None or head[found.end() :].lstrip().startswith("?"):
            continue  # "does the laptop work?" asks, it says nothing is over
        if form.kind is IntentKind.RESOLVE and _NOT_ALL_OF_IT.match(head[found.end() :]):
            continue  # "the deploy works now on staging, but prod still fails" (D447)
        named = found.groupdict()
        ref = _ref(named.get("ref") or named.get("subject") or named.get("noted"))
        if ref is None or not _names_open(ref, context.open_problems):
            continue
        start = found.start() + len(found.group(0)) - len(found.group(0).lstrip())
        asked = _CLOSE_AFTER.match(head, found.end()) if form.kind is IntentKind.RESOLVE else None
        if asked is not None:  # "the ETL is fixed now, close it": said and asked (D459)
            return Intent(form.kind, (start, asked.end()), 0.9, form.reader,
                          Slots(ref=ref))  # fmt: skip
        return Intent(form.kind, (start, found.end()), form.confidence, form.reader,
                      Slots(ref=ref))  # fmt: skip
    return None


def _names_open(ref: str, titles: Sequence[str]) -> bool:
    """Are all of `ref`'s content words in one open problem's title?"""
    words = set(extract_keywords(ref))
    return bool(words) and any(words <= set(extract_keywords(title)) for title in titles)


def read_problem_intents(
    said: str, spans: Sequence[Span], context: ReadingContext | None = None
) -> list[Intent]:
    """A request to resolve, park or list problems in `said`, as one intent."""
    low = said.lower()
    said_done = "solved" in low or "close" in low or "resolve" in low
    for start, end in spans if said_done else ():
        for pattern in (_SAID_DONE, _BARE_DONE, _CLOSE_IT):
            if pattern.search(said, start, end) is not None:
                return [Intent(IntentKind.RESOLVE, (start, end), 0.85, "rules:problems.done")]
    request = read_problem_request(said)
    if request is None:
        named = _naming_open_problem(said, context) if context is not None else None
        if named is not None:
            return [named]
        # "retried the export and it went through, close this": the work in focus, once no
        # open problem is named ("the ETL is fixed now, close it" names one)
        for start, end in spans if said_done else ():
            if _WORKED_THEN_CLOSE.search(said, start, end) is not None:
                return [Intent(IntentKind.RESOLVE, (start, end), 0.85, "rules:problems.done")]
        return []
    at = said.find(request.clause)
    if at < 0:
        return []
    slots = Slots(ref=request.ref)
    return [Intent(_KIND_OF[request.kind], (at, at + len(request.clause)), 0.9,
                   f"rules:problems.{request.kind}", slots)]  # fmt: skip
