"""Requests to remember a fact ("Remember that our API base URL is https://api.internal") and
to forget what was kept ("Forget what I said about paragraphs", D77: `read_forget_request`).

001 §12.4's truth model covers what a person says about themselves; a person also tells an
assistant what holds in their world and asks it to keep that: "Remember that staging runs on
db2", "Keep in mind we deploy on Fridays only", "For future reference, the on-call rota is in
Notion". Such a message went to the model as any other, and the fact was gone once the turn
fell out of the recent exchanges (D73). A request is read here; the turn writes its fact to the
Shared Reference through the write gate as ``fact.<slug>``; a fact that names one value ("the
staging DB is db2") is keyed by its subject, so that "Remember that the staging DB is db3" later
is a new version of that key, not a second, contradicting fact.

A sentence is a request when it opens (after "ok", "also", "please" or "can you") with
"remember that …" / "remember: …" / "remember to …", "keep in mind (that) …", "don't forget
(that / to) …", "for future reference, …" or "make a note (that) …", and what follows has words
of its own. "Remember when we fixed it?", "I remember that it worked" and "Do you remember
what I said?" are not requests.

Pure and deterministic (D12).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hrm._keywords import keywords as extract_keywords
from hrm.reading.cue_gates import has_cue
from hrm.reading.rules.answers import without_feedback
from hrm.reading.rules.cues import filler_pattern, without_announcement, without_trailing_aside
from hrm.reading.rules.preference_scope import sentences
from hrm.reading.sentences import IN_SENTENCE
from hrm.reading.slots import appositive_named, task_start
from hrm.reading.types import Intent, IntentKind, ReadingContext, Slots, Span

__all__ = [
    "DECISION_KEY",
    "POINTING",
    "ForgetRequest",
    "MemoryRequest",
    "bulk_kinds",
    "fact_key",
    "kept_matching",
    "kept_text",
    "names_fully",
    "pointed_request",
    "read_forget_request",
    "read_memory_intents",
    "read_memory_request",
    "without_clause",
    "without_discourse_lead",
    "without_keep_lead",
]

_LEAD = r"^\W*+(?:(?:ok(?:ay)?|also|and|so|btw|oh|hey|fyi)\b\W+)*"
_POLITE = r"(?:(?:please|(?:can|could|would|will) you(?:\s+please)?)\s+)?"
_THIS = r"(?:this|that|it)"
_SEP = r"\s*[,:\-–—]"
_NOT_FORGET = (
    r"(?:don'?t|do\s+not|not|never|(?:you\s+)?(?:must|should)\s*not|mustn'?t|shouldn'?t)"
    r"\s+forget"
)
"""A negated "forget", as people say it: "don't forget", "please not forget", "you must not
forget" — a request to keep, never to forget (D427)."""
_REQUEST = re.compile(
    _LEAD + _POLITE + r"(?:"
    r"remember(?:\s+(?:that|this)\s*:?|\s*[,:]|\s*[-–—]|(?=\s+to\s))"
    r"|you should know(?:\s+that|\s*[,:])|save(?:\s+" + _THIS + r")?\s+for later" + _SEP + r"?"
    r"|(?:keep|bear) in mind(?:\s+that|\s*:)?"
    r"|" + _NOT_FORGET + r"(?:\s+that|\s*:|(?=\s+to\s))?"
    r"|for (?:future|later) reference\s*[,:]?"
    r"|make a note(?:\s+(?:of\s+)?" + _THIS + r")?(?:\s+that|" + _SEP + r")"
    # A verb of keeping, its object "this", then what to keep: "keep this in mind, we ship on
    # Fridays", "store this: the flag service is LaunchDarkly", "write this down - …".
    r"|(?:keep|bear)\s+" + _THIS + r"\s+in mind" + _SEP + r"?"
    r"|(?:store|save|note|write|jot|log|record|memori[sz]e)\s+" + _THIS
    + r"(?:\s+down)?(?:\s+for (?:later|me|the future))?" + _SEP
    + r"|(?:note|write|jot)\s+down" + _SEP
    + r")\s+(?P<fact>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_REQUEST_AFTER = re.compile(
    # The fact ends at a character that is no separator or space, and the run after it is
    # taken whole (possessive): a run of 2,000 dashes is scanned once, not once a position.
    _LEAD + r"(?P<fact>\S.{5,}?)(?<![\s,;:\-–—])\s*+[,;:\-–—]++\s*+(?:(?:so\s+)?please\s+|pls\s+)?"
    r"(?:remember|(?:keep|bear)|note|save|store|" + _NOT_FORGET + r")\s+(?:that|this|it)"
    r"(?:\s+in mind)?(?:\s+(?:going forward|from now on|for later|for the future|please))?"
    r"\s*[.!]*$",
    re.IGNORECASE | re.DOTALL,
)
"""The request after the fact: "we use tabs in this repo, remember that going forward"."""
_LED = re.compile(
    r"^\W*+(?P<lead>[^:;?!.\n]{2,60}?)(?:\s*+:\s*+|\s++that\s++|\s++[-–—]++\s++)(?P<fact>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_LEAD_WORDS = 8
_TELLS_ONLY = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|also|and|so|btw|oh|hey|please|pls|just)\W+)*"
    r"(?:fyi|heads up|(?:just )?so you know|for the record|for your information|note|n\.?b\.?"
    r"|(?:i|we) (?!.*\byou\b).*)\W*$",
    re.IGNORECASE,
)
"""A lead that tells rather than asks to keep: "FYI: the build is red" is a report, "Note that
the server restarts" information, "I remember that it worked" a memory of one's own."""


def _led(sentence: str) -> re.Match[str] | None:
    """A request whose lead asks, in any words the fact cues hold (``data/cues.txt``), that
    what follows be kept: "for later: our AWS account is 1234", "I want you to know that my
    son's school ends at 3", "please keep track of this: the rate is 80 EUR/h"."""
    match = _LED.match(sentence)
    if match is None:
        return None
    lead = match.group("lead")
    if len(lead.split()) > _LEAD_WORDS or _TELLS_ONLY.match(lead):
        return None
    return match if has_cue(IntentKind.FACT, lead) else None


_REQUEST_WORDS = ("remember", "in mind", "forget", "reference", "make a note", "store", "save",
                  "note", "write", "jot", "log", "record", "memoris", "memoriz", "know", "later",
                  "future", "track")
"""A word every request form holds."""
_QUESTION_AFTER = re.compile(
    r"^(?:when|what|how|why|where|who|which|if|whether|me|us|it)\b", re.IGNORECASE
)
_POLITE_START = re.compile(r"^\W*(?:please\s+)?(?:can|could|would|will) you\b", re.IGNORECASE)
_NAMED_VALUE = re.compile(
    r"^(?:(?:update|correction|fyi|note|heads\s+up)\s*[:,-]\s*)?"
    r"(?P<subject>.{3,60}?)\s+(?:is|are|=|(?:is|are|has|have|was|were|got)?\s*(?:moved|changed"
    r"|switched|shifted|pushed|postponed|rescheduled)\s+to|(?:is|are)\s+now)\s+"
    r"(?:(?:on|at|in|by|from|until|till)\s+)?"
    r"(?P<value>\S+|(?-i:[0-9A-Z])[^.!?;\n]{0,80})$",
    re.IGNORECASE,
)
"""A fact that names one value ("our API base URL is https://…", "the staging DB is db2", "my
address is 12 Rua Augusta, Lisbon": a value of several words opening with a digit or a
capital, D464; "the team meeting is on Monday", "the standup is at 9:30": after a preposition
of time or place, D468; "the standup moved to 10:15": a change said as a move, D473): keyed
by its subject, so that a new value is a new version of the key."""
_TASK_AT_HAND = re.compile(
    r"\b(?:in|on|to|for|from|of|at|with|into|inside|before|after)\s+(?:that|this|these|those)"
    r"\s+(?!project|repo|repository|team|company|codebase|app|service|product)\w+"
    r"|\b(?:it|them|that one|this one|the above|here|there)\s*$",
    re.IGNORECASE,
)
"""What points into the conversation ("in that function", "fix it"): an instruction to do
something that leans on it ("remember to handle the None case in that function") is a to-do
for the work at hand, which a kept fact could not resolve later, not a fact to keep. "Remember
to run the linter before committing" and "… in this project" stand on their own."""
_KEY_LIMIT = 48
_SCAN_LIMIT = 2000
"""A request is a sentence of a message, not a paste; the first 2,000 characters are read."""


@dataclass(frozen=True)
class MemoryRequest:
    """What the person asked to be remembered."""

    statement: str
    """The sentence as said ("Remember that our API base URL is …"), left out of arbitration."""
    fact: str
    """What to remember ("our API base URL is …"), the canon's value."""
    subject: str
    """What the fact is about ("our API base URL"): the canon's key."""


_SAYS_SOMETHING = re.compile(
    r"^\W*(?:i|we|you|they|he|she)\s"
    r"|\b(?:is|are|was|were|am|be|been|has|have|had|will|would|can|could|should|must|do|does"
    r"|did)\b|['’](?:s|re|ve|ll|d|m)\b|\b\w+(?:ed|es)\b",
    re.IGNORECASE,
)
"""A clause with a verb in it: what a question asking to keep something must hold to state a
fact (D440)."""
_POINTING_KEEP = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|and|so|also|oh|pls|please)\W+)*"
    r"(?:(?:please|pls|can you|could you|will you|would you)\s+)?"
    r"(?:remember|memori[sz]e|note|save|store|keep|write)\s+(?:that|this|it)"
    r"(?:\s+(?:down|in mind|for (?:me|later)))*(?:\s+(?:please|pls|for me|too|as well))*"
    r"\s*[.!?]*\s*$",
    re.IGNORECASE,
)
"""A request to keep that points at what was said and says nothing else: "remember it
please", "note that down", "can you remember that?"."""
_POINTING_CHARS = 80
POINTING = "rules:memory.pointing"
"""The reader of a request to keep that only points (`_POINTING_KEEP`): its fact is the
person's message before it."""


def read_memory_request(text: str) -> MemoryRequest | None:
    """The first sentence of `text` that asks to remember a fact, if any (module docstring)."""
    head = text[:_SCAN_LIMIT]
    low = head.lower()
    if not any(word in low for word in _REQUEST_WORDS):
        return None  # most messages: no sentence to split and match
    for sentence in sentences(head):
        match = _REQUEST.match(sentence) or _REQUEST_AFTER.match(sentence) or _led(sentence)
        if match is None:
            continue
        said, statement = match.group("fact"), sentence
        task = task_start(said)
        if task is not None:
            # "Remember that we use 8px spacing, and write me the flexbox version": the task is
            # answered, the fact is what comes before it (D451)
            said, statement = said[:task], sentence[: match.start("fact") + task]
        fact = without_trailing_aside(said.strip()).rstrip(" .!;,")
        if statement.endswith("?") and (
            not _POLITE_START.match(statement) or not _SAYS_SOMETHING.search(fact)
        ):
            # "Remember that bug from last week?", "can you remember that bug from last week?"
            # recall a thing; "can you remember that my flight is at 9?" states one (D440)
            continue
        fact = fact.rstrip("?").strip()
        if _QUESTION_AFTER.match(fact) or len(extract_keywords(fact)) < 2:
            continue
        if _TASK_AT_HAND.search(fact) and fact.lower().startswith("to "):
            continue  # "remember to handle the None case in that function": a to-do for now
        if fact.lower().startswith("to "):
            fact = fact[3:].lstrip()  # "remember to run the linter": "run the linter" (D420)
        return MemoryRequest(statement=statement, fact=fact, subject=_subject(fact))
    return None


def pointed_request(statement: str, said_before: str) -> MemoryRequest | None:
    """The request "remember it please" (`statement`) makes of the message before it, when
    that stated something whole: not a question, not clipped, two content words or more."""
    fact = without_discourse_lead(said_before.strip()).rstrip(" .!;,")
    if not fact or fact.endswith(("?", "…")) or len(extract_keywords(fact)) < 2:
        return None
    return MemoryRequest(statement=statement, fact=fact, subject=_subject(fact))


def fact_key(request: MemoryRequest) -> str:
    """The Shared Reference key of a request's fact: ``fact.<subject slug>``."""
    words = re.findall(r"[a-z0-9]+", request.subject.lower())
    return "fact." + ("-".join(words)[:_KEY_LIMIT].strip("-") or "fact")


_KEEP_LEAD = re.compile(
    _LEAD + r"(?:please\s+)?(?:keep in mind|remember|note|just so you know|"
    r"for (?:future|later) reference|fyi|for the record|" + _NOT_FORGET + r")"
    r"(?:\s+that)?\s*[,:\-–—]?\s+(?=\S)",
    re.IGNORECASE,
)


def without_keep_lead(sentence: str) -> str:
    """`sentence` without what asks that it be kept: "Keep in mind I prefer tabs" → "I prefer
    tabs". A preference said as a request is the preference's (D73)."""
    rest = _KEEP_LEAD.sub("", sentence, count=1)
    if rest == sentence or not rest:
        return sentence
    return rest[0].upper() + rest[1:]


_DISCOURSE_LEAD = filler_pattern(
    ("fyi", "just so you know", "for the record", "honestly", "to be honest")
)
"""What opens a sentence without being part of what it says ("Actually, ", "Oh and "): the
filler every reader leaves out, and the asides a statement to keep opens with."""


def without_discourse_lead(sentence: str) -> str:
    """`sentence` without "Actually, " or "Oh and " before what it states (D84), nor an
    announcement ("Unrelated: ", D406), nor feedback on the last answer ("no, that's wrong, ",
    D419): the canon keeps "I prefer a formal tone in cover letters", under the key the plain
    sentence has."""
    rest = without_trailing_aside(
        _DISCOURSE_LEAD.sub("", without_feedback(without_announcement(sentence)), count=1)
    )
    if rest == sentence or not extract_keywords(rest):
        return sentence
    return rest[0].upper() + rest[1:]


def _subject(fact: str) -> str:
    """What a fact naming one value is about ("X is Y": X); else the fact itself.

    "The CI token is rotated monthly" and "the CI token is stored in Vault" are two facts
    about one subject: keyed by the subject, the second would silently replace the first.
    """
    match = _NAMED_VALUE.match(fact)
    return match.group("subject") if match else fact


@dataclass(frozen=True)
class ForgetRequest:
    """What the person asked hrm to forget (D77)."""

    clause: str
    """The words that ask ("Actually, forget that", "Forget the deadline I told you"), left
    out of arbitration; the rest of the message is answered as usual."""
    what: str | None
    """The words that name what to forget ("the deadline", "paragraphs"); None for "that",
    which is what the turn just before kept."""
    sure: bool = True
    """False for "Forget that I live in Lisbon", which asks to forget only if something kept
    says it: "Forget that I asked, the build is green" asks nothing of hrm's memory (D83)."""


_FORGET_LEAD = re.compile(
    r"\W*(?:(?:actually|oh|wait|hmm+|no|nah|sorry|ok(?:ay)?|also|and|so|on second thought"
    r"|never ?mind|nvm)\b\W+)*"
    r"(?:(?:please|(?:can|could|would|will) you(?:\s+please)?|you can|you may)\s+)?",
    re.IGNORECASE,
)
"""What may come before the verb in a sentence that asks to forget ("Actually, please …")."""
_FORGET_VERB = re.compile(
    r"\b(?:forget|scratch|disregard|ignore|undo|never ?mind|cancel|drop|delete|remove"
    r"|(?:don'?t|do not)\s+(?:save|keep|store|remember|note)"
    r"|stop remembering|no need to remember|you (?:don'?t|do not) need to remember)\b",
    re.IGNORECASE,
)
"""Where a request to forget can start: it is matched only there, not at every position."""
_FORGET_THAT = re.compile(
    r"(?:forget|scratch|disregard|ignore|undo|never ?mind|cancel|drop"
    r"|(?:don'?t|do not)\s+(?:save|keep|store|remember|note))\s+"
    r"(?:that|this|it)(?:\s+(?:one|preference|last one))?(?:\s+please)?"
    r"(?=\s*(?:[,.;:!?…—–-]|$))",
    re.IGNORECASE,
)
""""Forget that", "Actually, scratch that", "Never mind that", "never mind, don't save that"
(D463): what was just kept."""
_FORGET_NAMED = re.compile(
    r"(?:forget|disregard|ignore|never ?mind|drop)\s+(?:about\s+)?what\s+(?:i|we)\s+"
    r"(?:said|told you|mentioned|wrote|asked you to remember)\s+(?:about|regarding|on|re)\s+"
    r"(?P<about>" + IN_SENTENCE + r"+)"
    r"|(?:forget|disregard)\s+(?:about\s+)?(?:the|my|that|our)\s+"
    r"(?P<told>" + IN_SENTENCE + r"+?)"
    r"\s+(?:i|we)\s+(?:told you(?:\s+about)?|mentioned|gave you|said"
    r"|asked you to remember)(?=\W|$)" + IN_SENTENCE + r"*"
    r"|(?:forget|disregard|drop|delete|remove)\s+(?:about\s+)?(?:my|the|that)\s+"
    r"(?:preference|fact|note)s?\s+(?:for|about|on|that|regarding)\s+"
    r"(?P<kept>" + IN_SENTENCE + r"+)"
    r"|forget\s+that\s+(?P<said>(?:i|we)\s+(?:prefer|like|want|hate|use|said|told you)\b"
    + IN_SENTENCE + r"*)"
    r"|forget\s+that\s+(?P<guess>(?!(?:please|one|preference|last|too|as\s+well)\b)"
    r"[\w'’-]+\s+(?:[^.!?;,\n]|[.,](?=\S))+)"
    r"|(?:stop remembering|no need to remember|you (?:don'?t|do not) need to remember)\s+"
    r"(?:that\s+)?(?P<stop>(?:the|my|our)\s+" + IN_SENTENCE + r"+)",
    re.IGNORECASE,
)
""""Forget what I said about paragraphs", "Forget the deadline I told you", "Forget my
preference for tabs", "Forget that I prefer tabs", "Stop remembering the API URL". "Forget that
<a statement>" ("… that Leo is allergic to gluten", D499) acts only if something kept says it."""
_FORGET_WORDS = ("forget", "scratch", "disregard", "ignore", "undo", "mind", "cancel", "drop",
                 "delete", "remove", "remember", "save", "keep", "store", "note")
"""A word every request to forget holds."""


def read_forget_request(text: str) -> ForgetRequest | None:
    """The first request in `text` to forget something hrm keeps, if any (D77).

    Only a sentence that asks hrm itself, opening with the request: "I forgot my password",
    "Don't forget to call Sam" (a request to remember) and "Ignore the warnings" (no "that",
    nothing kept named) ask nothing of hrm's memory.
    """
    head = text[:_SCAN_LIMIT]
    low = head.lower()
    if not any(word in low for word in _FORGET_WORDS):
        return None  # most messages: no verb to look for at every position
    for verb in _FORGET_VERB.finditer(head):
        at = verb.start()
        start = _sentence_start(head, at)
        if _FORGET_LEAD.fullmatch(head, start, at) is None:
            continue
        named = _FORGET_NAMED.match(head, at)
        if named is not None:
            what = next(group for group in named.groups() if group is not None)
            clause = head[start : named.end()].strip()
            sure = named.group("guess") is None
            return ForgetRequest(clause=clause, what=what.strip(" ,"), sure=sure)
        that = _FORGET_THAT.match(head, at)
        if that is not None:
            return ForgetRequest(clause=head[start : that.end()].strip(), what=None)
    return None


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding position `at` starts: after a stop and a space, or a line
    break; 0 in the first sentence."""
    start = text.rfind("\n", 0, at) + 1
    for stop in ".!?;":
        i = text.rfind(stop, start, at)
        if i >= 0 and i + 1 < at and text[i + 1].isspace():
            start = max(start, i + 2)
    return start


def kept_text(value: Any) -> str | None:
    """What a canon value says, or None for one that says nothing now (a retracted one)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("value"), str):
        return str(value["value"])
    return None


def without_clause(statement: str, part: str) -> str | None:
    """`statement` without `part` when `part` is one of its clauses, else None (D83).

    "my name is Ana Costa and I live in Lisbon" without "I live in Lisbon" is "my name is Ana
    Costa": a clause is bounded by the statement's ends or by ", ", "; ", " and ", " but ".
    Nothing is left, or `part` is inside a clause ("Lisbon"): None.
    """
    wanted = part.strip(" .,;:!?").lower()
    if len(wanted.split()) < _CLAUSE_WORDS:
        return None  # "Garfunkel" is no clause of "my favourite band is Simon and Garfunkel"
    for found in _CLAUSE_PART.finditer(statement):
        if found.group("clause").strip(" .,;:!?").lower() != wanted:
            continue
        before, after = statement[: found.start()], statement[found.end():]
        # A middle clause leaves the next one's joiner; the first leaves none before it.
        rest = before + after if before.strip() else after.lstrip(" ,;")
        rest = _JOINER_AT_EDGES.sub("", rest).strip(" ,;")
        return rest if extract_keywords(rest) else None
    return None


_CLAUSE_WORDS = 3
"""Words a part needs to be a clause of its own ("I live in Lisbon")."""


_CLAUSE_PART = re.compile(
    r"(?:^|,\s*(?:and\s+|but\s+)?|;\s*|\s+(?:and|but)\s+)(?P<clause>[^,;]+?)"
    r"(?=\s*(?:,|;|\s+(?:and|but)\s+|[.!?]*\s*$))",
    re.IGNORECASE,
)
"""A clause of a kept statement and what joins it to the one before."""
_JOINER_AT_EDGES = re.compile(r"^\s*(?:and|but)\s+|\s+(?:and|but)\s*$", re.IGNORECASE)


DECISION_KEY = "decision."
"""How a decision the person stated, kept in a problem's working set, is named beside the
canon's preferences and facts when a request to forget is matched (D424)."""

_FORGETTABLE = ("preference.", "fact.", DECISION_KEY)


def kept_matching(canon: Mapping[str, Any], what: str) -> list[str]:
    """The kept preferences and facts that `what` names best: those sharing the most content
    words with it, none when no entry shares one. More than one is an ambiguity the person
    resolves, not hrm."""
    wanted = _stems(what)
    if not wanted:
        return []
    scored: list[tuple[int, str]] = []
    for key, value in canon.items():
        text = kept_text(value)
        if text is None or not key.startswith(_FORGETTABLE):
            continue
        shared = len(wanted & _stems(text))
        if shared:
            scored.append((shared, key))
    best = max((shared for shared, _ in scored), default=0)
    return [key for shared, key in scored if shared == best]


def names_fully(canon: Mapping[str, Any], what: str | None) -> bool:
    """Whether `what` names one kept entry by every word it says ("the billing db host" of
    "the billing db host is pg-billing-2"), not by a word it shares with it ("the billing
    migration"): only then is a request to forget acted on at once; otherwise it is asked
    about. "That" (None), nothing matched and several matched are answered as they are."""
    if what is None:
        return True
    keys = kept_matching(canon, what)
    if len(keys) != 1:
        return True
    return _stems(what) <= _stems(kept_text(canon[keys[0]]) or "")


def _stems(text: str) -> frozenset[str]:
    """The content words (stemmed) that can tell kept entries apart: every preference says
    "prefer", so "forget that I prefer tabs" must not name "I prefer short paragraphs"."""
    return frozenset(extract_keywords(text)) - _SAID_OF_EVERY_ENTRY


_BULK = re.compile(r"^\W*(?:all|every|everything|anything)\b", re.IGNORECASE)
_OF_THE_PERSON = frozenset(
    extract_keywords(
        "all every everything anything about me you know remember kept keep said told gave "
        "mentioned stored saved memory memories stuff things thing of it from your data info "
        "information have has on"
    )
)
"""Words a request to forget everything says besides which kind ("all my preferences")."""


_BULK_ASKED = re.compile(
    r"\b(?:forget|delete|erase|wipe|remove|clear|drop)\s+(?:about\s+)?"
    r"(?P<what>(?:all|every|everything|anything)\b[^.!?;\n]{0,80})",
    re.IGNORECASE,
)


def bulk_kinds(what: str | None, clause: str = "") -> tuple[str, ...]:
    """The kinds of kept entries "forget all my preferences" / "forget everything you know
    about me" asks to forget, as key prefixes; () when it names something (D436). `what` is
    the request's slot; `clause`, its words, read when the slot took only a part ("me")."""
    if (not what or _BULK.match(what) is None) and clause:
        asked = _BULK_ASKED.search(clause)
        what = asked.group("what") if asked is not None else None
    if not what or _BULK.match(what) is None:
        return ()
    said = frozenset(extract_keywords(what)) - _OF_THE_PERSON
    preferences = bool(said & _PREFERENCE_WORDS)
    facts = bool(said & _FACT_WORDS)
    if said - _PREFERENCE_WORDS - _FACT_WORDS:
        return ()  # "everything about the school" names the school
    if preferences != facts:
        return ("preference.",) if preferences else ("fact.",)
    return ("preference.", "fact.")


_SAID_OF_EVERY_ENTRY = frozenset(
    extract_keywords("prefer preference like want use hate love always never please rather")
)

_PREFERENCE_WORDS = frozenset(extract_keywords("preference preferences"))
_FACT_WORDS = frozenset(extract_keywords("fact facts detail details"))


# ── as intents (the rules tier) ─────────────────────────────────────────────

_FROM_MEMORY = re.compile(
    r"(?:^|(?<=[\s,;:]))(?:please\s+|pls\s+|can you\s+|could you\s+)?"
    r"(?:delete|remove|erase|wipe|clear|drop|forget)\s+"
    r"(?P<what>that|this|it|" + IN_SENTENCE + r"{2,80}?)"
    r"\s+(?:from|out of)\s+(?:your\s+|the\s+)?(?:memory|memories|notes|canon)\b",
    re.IGNORECASE,
)
"""Forms that say "memory" outright ("delete that from your memory", "remove my address from
memory"): sure, whatever else the sentence says."""
_FORGET_ABOUT = re.compile(
    r"^\W*(?:(?:please|pls|ok(?:ay)?|also|and|actually|oh)\W+)*(?:can you\s+|could you\s+)?"
    r"forget\s+about\s+(?P<what>(?:my|our|the|that|this)\s+[^.!?;,\n]{1,80}?)\s*[.!]*$",
    re.IGNORECASE,
)
""""Forget about my cat": a request to forget when something kept says it; else it may set
work aside ("Forget about the report") or ask to forget what was never kept."""
_FORGET_THE = re.compile(
    r"^\W*(?:(?:please|pls|ok(?:ay)?|also|and|actually|oh)\W+)*(?:can you\s+|could you\s+)?"
    r"forget\s+(?P<what>(?:my|our|the|this)\s+[^.!?;,\n]{1,80}?)\s*(?:[.!]*$|,\s)",
    re.IGNORECASE,
)
""""Forget the billing db host": a request to forget only when something kept says it — and
acted on only when one kept entry holds every word of it; "Forget the offsite for now" with
nothing kept about an offsite sets work aside (focus rules). A comment after a comma is the
request's too: "forget the coriander thing, i'm fine with it now" (D442)."""
_LOOSE_FORGET = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|also|and|actually|oh|so|please|pls)\W+)*"
    r"(?:drop|scrap|ditch|never\s*mind|disregard|ignore|lose|wipe|erase|clear)\s+"
    r"(?:the\s+|my\s+|that\s+|this\s+)?(?P<what>[^.!?;,\n]{2,60}?)"
    r"(?:\s+(?:thing|bit|part|stuff|one|preference|fact|note))?\s*[.!]*$",
    re.IGNORECASE,
)
""""Drop the Celsius thing", "scrap that tabs preference": perhaps a request to forget what is
kept, perhaps a set-aside. Read only when something kept matches, and then asked about."""
_THAT = frozenset({"that", "this", "it"})
_ANY_FORGET_WORD = (*_FORGET_WORDS, "erase", "wipe", "clear", "scrap", "ditch", "lose")
"""A word every form of a request to forget holds (`_FORGET_WORDS` and the loose forms)."""
FORGET_ACT = 0.9
FORGET_ASK = 0.6
"""A form that may be a figure of speech, matching something kept: asked about."""


_ASKS_WHAT_IS_KEPT = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|hey|hi|alright|btw)\W+)*(?:(?:can|could) you\s+(?:please\s+)?)?"
    r"(?:(?:tell|remind) me\s+)?"
    r"(?:what\s+(?:(?:do|did)\s+)?you\s+(?:know|remember|keep|have)\s+(?:about|on|of)\s+me"
    r"|what\s+(?:have|did)\s+you\s+(?:kept|remembered|stored|saved|noted)(?:\s+(?:about|on|of)\s+me)?"
    r"|what\s+(?:are|were)\s+my\s+preferences"
    r"|(?:list|show)(?:\s+me)?\s+(?:my\s+preferences|what\s+you\s+(?:know|remember|keep)"
    r"(?:\s+about\s+me)?)"
    r"|what(?:'s|\s+is)\s+in\s+your\s+memory(?:\s+about\s+me)?)"
    r"(?:\s+(?:so\s+far|right\s+now|now|please))?\s*[?.!]*\s*$",
    re.IGNORECASE,
)
"""A message that only asks what hrm keeps about the person: "What do you know about me?",
"what are my preferences?", "show me what you remember" (D421)."""
_KEPT_CHARS = 120


def read_memory_intents(
    said: str, spans: Sequence[Span], context: ReadingContext
) -> list[Intent]:
    """Requests to forget and facts to remember in `said`, and a question about what is kept,
    as intents."""
    found: list[Intent] = []
    if len(said) <= _KEPT_CHARS and _ASKS_WHAT_IS_KEPT.match(said):
        return [Intent(IntentKind.LIST_KEPT, (0, len(said)), 0.9, "rules:memory.list_kept")]
    forget = _forget_intent(said, spans, context)
    if forget is not None:
        found.append(forget)
    memo = read_memory_request(said)
    if memo is not None:
        at = said.find(memo.statement)
        if at >= 0:
            slots = Slots(statement=memo.fact, subject=memo.subject)
            found.append(Intent(IntentKind.FACT, (at, at + len(memo.statement)), 0.9,
                                "rules:memory.remember", slots))  # fmt: skip
    elif len(said) <= _POINTING_CHARS and _POINTING_KEEP.match(said):
        # "remember it please" keeps what the person said just before (D435)
        found.append(Intent(IntentKind.FACT, (0, len(said)), 0.9, POINTING, Slots()))
    return found


def _forget_intent(
    said: str, spans: Sequence[Span], context: ReadingContext
) -> Intent | None:
    head = said[:_SCAN_LIMIT]
    low = head.lower()
    if not any(word in low for word in _ANY_FORGET_WORD):
        return None  # most messages: nothing to match at every position
    outright = _FROM_MEMORY.search(head) if "memor" in low or "notes" in low else None
    if outright is not None:
        what = outright.group("what").strip()
        named = (
            appositive_named(head[outright.end() :]) if what.lower() in _THAT else what
        )
        start = _sentence_start(head, outright.start())
        span = (start, _sentence_end(head, outright.end()))
        return Intent(IntentKind.FORGET, span, FORGET_ACT, "rules:memory.from_memory",
                      Slots(what=named))  # fmt: skip
    request = read_forget_request(head)
    if request is not None:
        return _as_intent(head, request, context)
    for start, end in spans:
        about = _FORGET_ABOUT.match(head, start, end)
        if about is None:
            continue
        what = about.group("what").strip()
        if kept_matching(context.kept, what):
            return Intent(IntentKind.FORGET, (start, end), FORGET_ACT, "rules:memory.about",
                          Slots(what=what))  # fmt: skip
        if _names_work(what, context):
            return None  # "Forget about the report": set aside (focus rules)
        return Intent(IntentKind.FORGET, (start, end), FORGET_ASK, "rules:memory.about",
                      Slots(what=what))  # fmt: skip
    for start, end in spans:
        plain = _FORGET_THE.match(head, start, end)
        named = kept_matching(context.kept, plain.group("what")) if plain else []
        if plain is not None and named:
            what = plain.group("what").strip()
            sure = len(named) == 1 and names_fully(context.kept, what)
            if not sure and _names_work(what, context):
                return None  # "Forget the billing migration": the work in focus, set aside
            return Intent(IntentKind.FORGET, (start, end), FORGET_ACT if sure else FORGET_ASK,
                          "rules:memory.named", Slots(what=what))  # fmt: skip
    for start, end in spans:
        loose = _LOOSE_FORGET.match(head, start, end)
        if loose is not None and kept_matching(context.kept, loose.group("what")):
            return Intent(IntentKind.FORGET, (start, end), FORGET_ASK, "rules:memory.loose",
                          Slots(what=loose.group("what").strip()))  # fmt: skip
    return None


def _as_intent(head: str, request: ForgetRequest, context: ReadingContext) -> Intent | None:
    at = head.find(request.clause)
    if at < 0:
        return None
    span = (at, at + len(request.clause))
    if request.what is None:
        # "Forget that" is what the turn before kept; after nothing kept it is no request
        # about memory (a set-aside, "never mind").
        if context.just_kept is None:
            return None
        return Intent(IntentKind.FORGET, span, FORGET_ACT, "rules:memory.forget_that")
    if not request.sure and not kept_matching(context.kept, request.what):
        return None  # "Forget that I asked, …": nothing kept says it (D83)
    return Intent(IntentKind.FORGET, span, FORGET_ACT, "rules:memory.forget",
                  Slots(what=request.what, sure=request.sure))  # fmt: skip


def _names_work(what: str, context: ReadingContext) -> bool:
    """Does `what` name the work in focus or an open problem (by a content word)?"""
    words = set(extract_keywords(what))
    titles = (*context.open_problems, *([context.active_problem] if context.active_problem
                                         else []))  # fmt: skip
    return any(not words.isdisjoint(extract_keywords(title)) for title in titles) or not words


def _sentence_end(text: str, at: int) -> int:
    ends = [i for i in (text.find(stop, at) for stop in ".!?;\n") if i >= 0]
    return min(ends) + 1 if ends else len(text)
