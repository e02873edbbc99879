"""Which sentence of a message states a preference, if any does.

001 §12.4 canonizes a statement that matches "I prefer", "I hate", "I always", "I never",
"I like", "I need", … — "AND the object is a stable preference/habit (not one-off
observation)". Its code checks only the first half, and in a conversation the patterns match
far more than preferences: "I need to write a parser", "Do I need to restart?", "I always get
this error", "I like this approach, can you extend it?". Each of those became canon, the
highest-ranked context of every later turn, and the weak indicators ("better", "want", "need",
inside words too: "likely") asked "Should I remember …?" of questions and requests (D45).

This module is the second half. A message is read sentence by sentence; a sentence states a
preference when a pattern matched in it and the match is not

- part of another word ("I likely", "unlikely") or in the past tense ("I needed", "I liked"):
  what happened, not what is preferred;
- in a question ("Do I need …?", "Which one is better?"), unless it asks for a standing
  instruction ("Could you always reply in French?", D47);
- a task or request for now ("I need to …", "I want you to …", "I need help", "I need the
  logs"), unless it says it holds from now on ("to always …", "every answer", "by default";
  "every night" schedules the task instead);
- a reaction to what is in front of us ("I like this", "I hate it", "That looks better", "I
  like your last suggestion") or to how things are ("I hate that the build is slow", D69);
- a refusal ("I'd rather not say") or a request for this once ("I'd prefer to finish the
  migration today", D69);
- a report of what happened ("I never said that", "I always get this error");
- about something other than the person ("The build needs a clean cache").

It reads only the message's text, deterministically. The classifier stays 001 §12.4's
verbatim; learnings a coding assistant stores as ``USER_PREFERENCE`` are not messages and are
classified without this step.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hrm.governance.preferences import (
    PreferenceClass,
    PreferenceClassification,
    confirm_required,
)
from hrm.reading.guards import doubts_a_rule, quotes_someone_else, said_of_the_person
from hrm.reading.rules._engine import TASK_VERBS
from hrm.reading.rules.instructions import HABITUAL, MARKERS, POLITE_REQUEST, is_imperative
from hrm.reading.sentences import sentence_spans

__all__ = [
    "INTERROGATIVES",
    "StatedPreference",
    "find_stated_preference",
    "is_past_form",
    "not_a_preference",
    "sentences",
]

_CLAUSE_MARK = re.compile(r"[,;:()]|\s[-–—]\s|\bbut\b")
_WORD = re.compile(r"[a-z0-9']+")
_MAX_SENTENCE = 300
"""Characters of a sentence kept as the statement (as the Shared Reference stores it)."""


def _words(listed: str) -> frozenset[str]:
    return frozenset(listed.split())


INTERROGATIVES = _words(
    "do does did should shall can could would will is are am was were what which how why when "
    "where who whom whose may might must have has had isn't aren't don't doesn't didn't won't "
    "wouldn't shouldn't can't couldn't"
)
_HABITUAL_WORDS = frozenset({"always", "never", "usually", "generally"})
_LIKING = frozenset({"rather", "stand", "fan", "preference"})
"""Words of the patterns beyond 001 §12.4's ("I'd rather", "I can't stand", "I'm a fan of",
"My preference is", D69): judged as "I prefer" is."""
_DECLINING = frozenset({"say", "answer", "discuss", "comment", "share", "tell"})
_ONE_OFF = re.compile(
    r"\b(?:now|today|tonight|tomorrow|this time|for now|right away|for this (?:one|answer))\b"
)
"""A request for this once ("I'd prefer to finish the migration today"), not a habit."""
_YOUR_LAST = _words(
    "last previous latest first second new suggestion answer idea approach explanation "
    "example solution version reply response code plan draft point summary fix"
)
"""After "your": the assistant's answer in front of us, reacted to."""
_DEICTIC = frozenset({"this", "these", "those", "it", "this's", "it's", "that's"})
_CLAUSE_AFTER_THAT = _words(
    "i you we they he she it the a an my our your his her their there this these those"
)
"""After "I like that", a word that opens a clause ("I like that you ask first"): "that" is
then a conjunction, not the thing being reacted to."""
_REQUEST_OBJECTS = _words(
    "help a an some the this that these those it more another one"
)
_PROBLEM_WORDS = re.compile(
    r"\b(?:error|errors|bug|bugs|fail\w*|crash\w*|exception|warning|issue|problem|timeout|"
    r"time out|broken|wrong)\b"
)
_PRESENT_EVENTS = _words(
    "get gets see sees hit hits run runs receive receives encounter encounters have has end "
    "ends lose loses"
)
_HAPPENS_TO = _words("get gets receive receives encounter encounters")
"""Verbs of what happens to a person: after "always" or "never" they report, whatever follows
("I always get a segfault when I run this", "I never get a response from the API")."""
_IRREGULAR_PAST = _words(
    "said got saw had did made went knew thought meant told heard found ran came took gave "
    "wrote read sent lost forgot left felt kept put set understood began chose built paid quit "
    "hit shut spent rebuilt reran redid reset rewrote been seen done gone taken written given"
)


_SAME_AS_BASE = _words("read put set quit hit shut reset cut let cost spread")
"""Verbs whose past is spelt as their base ("put", "set"): past only where a subject says so."""
_ASKS = _words("please pls plz and also so ok okay just")
"""Words a command may open with before "always"/"never"."""


def is_past_form(word: str) -> bool:
    """A past tense or participle: an irregular one, or a regular "-ed" ("restarted")."""
    return word in _IRREGULAR_PAST or (len(word) > 4 and word.endswith("ed"))
_PERSON = frozenset({"i", "i'd", "i'm", "i've", "i'll", "we", "we'd", "we're", "me", "my", "our"})
_WANTS = frozenset({"need", "needs", "want", "wants"})
_SOMEONE_ELSE = frozenset({"she", "he", "they", "she's", "he's", "they're", "it"})
"""Who says a preference word right before it when it is not the person's."""
_LIKES = _words(
    "like likes love loves hate hates prefer prefers dislike dislikes enjoy enjoys avoid "
    "avoids"
)
_COMPARATIVES = frozenset({"better", "worse", "rather"})
_SINCE_BEFORE = frozenset({"now", "today", "already", "again", "lately", "recently", "since"})
"""After "better"/"worse", a change over time ("better now"): a report, not a preference."""
_PERCEIVING = _words(
    "looks look looked smells smell smelled tastes taste sounds sound feels feel seems seem "
    "acts act behaves behave"
)
"""Before "like", a comparison: "my sourdough starter smells like nail polish remover"."""


@dataclass(frozen=True)
class StatedPreference:
    """What a message says about the person's preferences.

    `classification` and `sentence` are None when no sentence states one; `reason` then says
    why the first sentence a pattern matched in does not (for the decision record).
    """

    classification: PreferenceClassification | None
    sentence: str | None
    reason: str | None = None
    declined: str | None = None
    """The sentence `reason` is about: what no reader may read as a preference."""


def sentences(text: str) -> Iterator[str]:
    """The sentences of `text`, as every reader splits them (`hrm.reading.sentences`): after
    . ! ? ; and at line breaks, not after "Mr." or "e.g."; empty ones skipped."""
    for start, end in sentence_spans(text, len(text)):
        sentence = text[start:end].rstrip(";").rstrip()
        if sentence:
            yield sentence


def find_stated_preference(
    text: str,
    classify: Callable[[str], PreferenceClassification],
    spans: Callable[[str, PreferenceClass], list[tuple[int, int]]],
) -> StatedPreference:
    """The first sentence of `text` that states a preference, explicit ones first.

    Args:
        text: The message (callers bound its length).
        classify: 001 §12.4's classifier, applied to each sentence (with the message's source).
        spans: Where the classifier's patterns of a class matched in a sentence
            (`PreferenceClassifier.spans`).
    """
    inferred: StatedPreference | None = None
    first_reason: str | None = None
    declined: str | None = None
    for sentence in sentences(text):
        verdict = classify(sentence)
        tiers = [verdict.preference_class]
        if verdict.preference_class is PreferenceClass.EXPLICIT:
            tiers.append(PreferenceClass.INFERRED_CONFIRM_REQUIRED)
        for tier in tiers:
            if tier not in (PreferenceClass.EXPLICIT, PreferenceClass.INFERRED_CONFIRM_REQUIRED):
                continue
            reason = _first_reason(sentence, spans(sentence, tier))
            if reason is None:
                found = StatedPreference(
                    # An explicit pattern about something else, in wording that still
                    # suggests a preference: ask, as 001 §12.4 does for those.
                    verdict if tier is verdict.preference_class else confirm_required(sentence),
                    _statement(sentence) or sentence[:_MAX_SENTENCE],
                )
                if tier is PreferenceClass.EXPLICIT:
                    return found
                inferred = inferred or found
                break
            if first_reason is None:
                first_reason, declined = reason, sentence
    if inferred is not None:
        return inferred
    return StatedPreference(None, None, first_reason, declined)


ASKS_NOW = "it asks for something now; it is not a standing preference"
WANTS_A_TASK = "it asks for a task to be done; it is not a preference"
"""Final: no tier reads a preference there (D444), as no tier does in a declined answer."""
DECLINES_TO_SAY = "it declines to say; it states no preference"
REPORTS_AN_EVENT = "it reports what happened; it is not a habit"
SOMEONE_ELSES = "it says what someone else prefers, not you"
ASKS_ABOUT_IT = "it asks about the rule; it does not state yours"
FINAL_REASONS = frozenset(
    {DECLINES_TO_SAY, REPORTS_AN_EVENT, WANTS_A_TASK, SOMEONE_ELSES, ASKS_ABOUT_IT}
)
"""Reasons that say what the sentence is instead of a preference: no tier reads one there.
The others ("not about what you prefer", "only contains a preference word") say only that the
rule found no preference, which a paraphrase it does not know can still state."""


def not_a_preference(sentence: str, start: int, end: int) -> str | None:
    """Why the pattern match at ``sentence[start:end]`` states no standing preference.

    None when it does. The rules are the module docstring's, in that order.
    """
    low = sentence.replace("\u2019", "'").lower()
    if start > 0 and (low[start - 1].isalnum() or low[start - 1] == "'"):
        return f"‘{_word_at(low, start)}’ only contains a preference word"
    rest = re.match(r"[a-z']*", low[end:])
    tail = rest.group() if rest else ""
    words_in_match = _WORD.findall(low[start:end])
    head = (words_in_match[-1] if words_in_match else "") + tail
    if tail in ("ed", "d"):
        return "it says what happened, not what you prefer"
    if tail not in ("", "s", "'s"):
        return f"‘{head}’ only contains a preference word"
    if quotes_someone_else(low[max(0, start - 120):start], up_to_end=True) or said_of_the_person(
        low[max(0, start - 120):end + 1]
    ):
        return SOMEONE_ELSES  # "My boss said 'always use metric units'" (D471, D497)
    if doubts_a_rule(low[end : end + 200]):
        return ASKS_ABOUT_IT  # "never forget to close your file handles — is that still true?"
    clause_start, clause_end = _clause(low, start, end)
    clause_words = _WORD.findall(low[clause_start:clause_end])
    before = _WORD.findall(low[clause_start:start])
    after = _WORD.findall(low[end + len(tail) : clause_end])
    if _is_question(low, clause_start, clause_end, clause_words) and not (
        POLITE_REQUEST.match(low) and low[start:end] in MARKERS
    ):
        return "it is a question"
    habitual = HABITUAL.search(low) is not None
    first = clause_words[0] if clause_words else ""
    if (head in _WANTS or head in _LIKES) and _someone_elses(before, head):
        return SOMEONE_ELSES
    # "my wife just said she wants 2 days in Okinawa": the want is hers (D437)
    about_person = bool(_PERSON.intersection(before + words_in_match)) and not (
        _SOMEONE_ELSE.intersection(before[-1:] + words_in_match[:1])
    )
    if head in _WANTS or (head in ("like", "love") and before[-1:] in (["i'd"], ["would"])):
        if not about_person:
            return "it is not about what you prefer"
        if _is_request(after) and not _standing(after, habitual=habitual):
            return WANTS_A_TASK if _names_a_task(after) else ASKS_NOW
    elif head in _LIKES or not _LIKING.isdisjoint(words_in_match):
        if head == "like" and before[-1:] and before[-1] in _PERCEIVING:
            return "‘like’ there compares; it says nothing of what you prefer"
        if not about_person:
            return "it is not about what you prefer"
        if after[:1] == ["not"] and _DECLINING.intersection(after[1:3]):
            return DECLINES_TO_SAY  # "I'd rather not say"
        if not habitual and after[:1] == ["to"] and _ONE_OFF.search(" ".join(after)):
            return ASKS_NOW
        if not habitual and _reacts_to_something_present(after):
            return "it reacts to what is in front of us; it is not a standing preference"
        if not habitual and _about_how_things_are(after):
            return "it reacts to how things are; it is not a standing preference"
    elif head in ("always", "never"):
        commanded = not about_person and _ASKS.issuperset(before)
        if _reports_an_event(after, low, commanded=commanded):
            return REPORTS_AN_EVENT
    elif head in _COMPARATIVES and first in _DEICTIC | {"that"}:
        return "it reacts to what is in front of us; it is not a standing preference"
    elif head in _COMPARATIVES and after[:1] and after[0] in _SINCE_BEFORE:
        # "the tomatoes are better now thanks to the compost tea": how things went (D441)
        return "it reacts to how things are; it is not a standing preference"
    return None


def _first_reason(sentence: str, found: list[tuple[int, int]]) -> str | None:
    """None when some match states a preference, else the first match's reason."""
    first: str | None = None
    for start, end in found:
        reason = not_a_preference(sentence, start, end)
        if reason is None:
            return None
        first = first or reason
    return first or "no preference word in it"


_AT_HAND_TASK = re.compile(
    r"(?:,\s*(?P<so>(?:so|just)\s+(?:just\s+)?)?(?:and\s+)?(?:then\s+)?|;\s*|\s+and\s+then\s+)"
    r"(?:please\s+)?(?P<verb>[a-z']+)\b(?P<rest>[^.!?]*)",
    re.IGNORECASE,
)
_AT_HAND = re.compile(r"\b(?:this|that|these|those|it|here|above|below|line \d+)\b", re.I)


def _without_task(text: str) -> str:
    """`text` without a task for now joined after the preference ("Keep answers short from
    now on, and fix the bug in line 3": the task is answered, not stored as canon and lost).

    Only an instruction about something at hand ("this", "it", "line 3") is cut: "Always use
    type hints, and keep functions short" is one standing instruction in two parts. After
    "so" or "just" an instruction is for now unless it says it holds from now on ("I prefer
    metric, so convert 5 miles to km"; "I prefer metric, so always give km" is one
    preference): the consequence of a preference, asked for at once.
    """
    for match in _AT_HAND_TASK.finditer(text):
        if match.start() == 0 or not is_imperative(match.group("verb").lower()):
            continue
        rest = match.group("rest")
        if HABITUAL.search(f"{match.group('verb')}{rest}".lower()) is None and (
            match.group("so") or _AT_HAND.search(rest)
        ):
            return text[: match.start()]
    return text


def _statement(sentence: str) -> str:
    """What is stored: the sentence, without its closing stop, a question after the
    preference ("I prefer tabs, is that ok?" is stored as "I prefer tabs") or a task for now
    after it (`_without_task`)."""
    text = _without_task(sentence[:_MAX_SENTENCE].strip())
    if text.endswith("?"):
        marks = list(_CLAUSE_MARK.finditer(text.lower()))
        if marks and text[: marks[-1].start()].strip():
            text = text[: marks[-1].start()]
    return text.rstrip(" .!").strip()


def _word_at(low: str, index: int) -> str:
    begin = index
    while begin > 0 and (low[begin - 1].isalnum() or low[begin - 1] == "'"):
        begin -= 1
    match = _WORD.match(low, begin)
    return match.group() if match else low[begin:index]


def _clause(low: str, start: int, end: int) -> tuple[int, int]:
    """The span of the clause around the match: between commas, semicolons, dashes, "but"."""
    clause_start = 0
    for mark in _CLAUSE_MARK.finditer(low, 0, start):
        clause_start = mark.end()
    following = _CLAUSE_MARK.search(low, end)
    return clause_start, following.start() if following else len(low)


def _is_question(low: str, clause_start: int, clause_end: int, words: list[str]) -> bool:
    asked = low.rstrip().endswith("?")
    if not asked:
        return False
    last = not low[clause_end:].strip(" ?")
    first_word = _WORD.match(low.lstrip())
    opens_sentence = clause_start == 0 or not low[:clause_start].strip(" ,;:(-–—")
    return (
        last
        or (bool(words) and words[0] in INTERROGATIVES)
        or (opens_sentence and first_word is not None and first_word.group() in INTERROGATIVES)
    )


def _is_request(after: list[str]) -> bool:
    if after[:1] == ["to"] or after[:2] in (["you", "to"], ["u", "to"]):
        return True
    # "i want make website for my bakery": a task said without its "to" (D423)
    return bool(after) and (after[0] in _REQUEST_OBJECTS or after[0] in TASK_VERBS)


def _names_a_task(after: list[str]) -> bool:
    """"I want to set up pre-commit hooks", "i want make website": a want of a task (D444)."""
    verb = after[1:2] if after[:1] == ["to"] else after[:1]
    return bool(verb) and verb[0] in TASK_VERBS


_POSSESSIVES = frozenset({"my", "our", "his", "her", "their", "your"})


def _someone_elses(before: list[str], head: str) -> bool:
    """Whether the subject right before a preference verb is someone else (D451): "my kids
    prefer pasta", "our team prefers Slack", "teacher prefers max 10 slides", "my colleague
    hates tabs" — a noun after a possessive, or any subject but the person's before a liking
    verb's third-person form. "I really prefer" has the person before its adverb."""
    if not before or before[-1] in _PERSON or before[-1] in ("you", "u"):
        return False
    if _PERSON.intersection(before[-3:]) - {"my", "our"}:
        return False  # "I really prefer", "we honestly hate"
    # "prefers", "hates": never the person's form, and said of people ("the build needs" is
    # no one's preference, but no one else's either)
    feels = head.endswith("s") and head in _LIKES
    return feels or (len(before) >= 2 and before[-2] in _POSSESSIVES)


def _standing(after: list[str], *, habitual: bool) -> bool:
    """Does a need or request hold from now on, not just for this message?

    "I need to …" is a task unless what follows at once makes it a way of working ("to be
    told", "to always see"): a habit word further on belongs to the task ("a script that never
    deletes the newest backup"). Other requests hold when the sentence says so anywhere.
    """
    if after[:1] == ["to"]:
        return after[1:2] == ["be"] or not _HABITUAL_WORDS.isdisjoint(after[1:3])
    return habitual


def _reacts_to_something_present(after: list[str]) -> bool:
    if not after:
        return False
    if after[0] == "your" and after[1:2] and after[1] in _YOUR_LAST:
        return True  # "I like your last suggestion", "I'm a fan of your approach"
    if after[0] in _DEICTIC:
        return after[1:2] not in (["when"], ["whenever"])  # "I like it when you …"
    if after[0] == "that":
        return after[1:2] == [] or after[1] not in _CLAUSE_AFTER_THAT
    return False


def _about_how_things_are(after: list[str]) -> bool:
    """"I hate that the build is slow": a clause after "that" whose subject is not the
    assistant ("I like that you ask first" is a way of working, and a preference)."""
    return after[:1] == ["that"] and after[1:2] != [] and after[1] in _CLAUSE_AFTER_THAT and (
        after[1] not in ("you", "your")
    )


def _reports_an_event(after: list[str], low: str, *, commanded: bool = False) -> bool:
    """Does "always/never <after>" report what happened rather than state a habit? `commanded`:
    nobody before "always" ("always put comments in scripts"), so a verb whose past is its base
    form is the imperative (D432)."""
    if not after:
        return False
    if is_past_form(after[0]) and not (commanded and after[0] in _SAME_AS_BASE):
        return True
    verb = after[0]
    if verb in _HAPPENS_TO:
        return True  # "I always get a segfault", "I never receive the emails": nobody chose it
    return verb in _PRESENT_EVENTS and _PROBLEM_WORDS.search(low) is not None
