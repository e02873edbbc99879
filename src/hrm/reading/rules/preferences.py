"""The preference a message states (001 §12.4): explicit, inferred (asked about), hedged (D64),
behavioural, or a standing instruction (D47, D74) — and why a sentence that uses a preference
word states none.

The classifier and its patterns are the policy's (`governance.preferences`); this table finds
the sentence that states the preference (`preference_scope`, D45) and guards it: a sentence that
asks something or requests something now ("I hate how slow webpack is, what are
alternatives?", "I prefer to know why this fails, can you explain the traceback?") states no
preference, unless it is a standing instruction put as a question ("Could you always reply in
French?"). Texting forms ("pls use 2-space indentation in all code u send me") are read as
their words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from hrm.governance.preferences import (
    PreferenceClass,
    PreferenceClassification,
    confirm_required,
)
from hrm.reading.rules.focus import FOR_TURNS
from hrm.reading.rules.instructions import standing_instruction
from hrm.reading.rules.memory import without_discourse_lead, without_keep_lead
from hrm.reading.rules.preference_scope import (
    ASKS_NOW,
    FINAL_REASONS,
    find_stated_preference,
    sentences,
)
from hrm.reading.types import Declined, Intent, IntentKind, Slots, Span

__all__ = ["REVISION", "SCOPE_OF", "PreferenceRules", "preference_statement"]

SCOPE_OF: dict[PreferenceClass, str] = {
    PreferenceClass.EXPLICIT: "explicit",
    PreferenceClass.INFERRED_CONFIRM_REQUIRED: "inferred",
    PreferenceClass.BEHAVIORAL: "behavioural",
}
"""The slot a preference's class is recorded as (`Slots.scope`)."""
REVISION = "revision"
"""The scope of a want said as a change of mind (D428): asked about, in place of the kept
preferences it shares its words with."""

_SCAN_LIMIT = 4000
"""Characters of input searched for the preference sentence (a megabyte input stays cheap)."""
_PREF_SENTENCE = re.compile(
    r"([^.!?\n]*\b(?:I|I'm|I am)\b[^.!?\n]*\b(?:prefer|hate|always|never|like|need|kind of person|"
    r"better|rather|enjoy|want|avoid|dislike)\b[^.!?\n]*)",
    re.IGNORECASE,
)
_TEXTING = {"pls": "please", "plz": "please", "u": "you", "ur": "your", "thx": "thanks",
            "msgs": "messages", "msg": "message", "ppl": "people", "bc": "because"}  # fmt: skip
_TEXTING_WORD = re.compile(
    r"\b(?:" + "|".join(_TEXTING) + r")\b|\bmy preference\s*[:\-–—]\s*", re.IGNORECASE
)
"""Texting forms, and "My preference: X" said as "My preference is X"."""


def _as_words(match: re.Match[str]) -> str:
    word = match.group(0)
    return _TEXTING.get(word.lower()) or f"{word.split()[0]} preference is "
_REQUEST_NOW = re.compile(
    r"[,;:]\s*(?:and\s+|so\s+|but\s+)?(?:(?:can|could|would|will)\s+(?:you|u)\b"
    r"|(?:please|pls)\s+(?:explain|tell|show|help|look|check|fix|review|debug|walk)\b"
    r"|(?:what|how|why|which|where|when|who)\b)",
    re.IGNORECASE,
)
"""A clause after the preference that asks for something now: "…, can you explain …?"."""
_CHANGED_MIND = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|hmm+|wait|actually|sorry|no)\W+)*"
    r"(?:(?:i(?:'ve|\s+have)?\s+)?changed\s+my\s+mind|on\s+second\s+thoughts?)\b\W*",
    re.IGNORECASE,
)
"""A message that opens by taking back what the person said before."""
QUESTION_OR_REQUEST = "it asks something now: a question or a request states no preference"
FOR_A_SPAN = "it holds for a number of turns: a focus request, not a standing preference"


def preference_statement(text: str) -> str:
    """The sentence that states the preference (the whole input when none stands out)."""
    match = _PREF_SENTENCE.search(text[:_SCAN_LIMIT])
    sentence = (match.group(1) if match else text[:300]).strip()
    return sentence[:300]


@dataclass(frozen=True, slots=True)
class PreferenceRules:
    """The preference table over one stack's classifier (the policy's patterns)."""

    classify: Callable[[str], PreferenceClassification]
    """The classifier, the message's source bound."""
    spans: Callable[[str, PreferenceClass], list[tuple[int, int]]]
    """Where a class's patterns matched in a sentence (`PreferenceClassifier.spans`)."""

    def read(self, said: str) -> tuple[list[Intent], list[Declined]]:
        """The preference `said` states as an intent, or why it states none."""
        if not said:
            return [], []
        text = _TEXTING_WORD.sub(_as_words, said[:_SCAN_LIMIT])
        whole = self.classify(text[:2000])
        if whole.preference_class is PreferenceClass.INFERRED_SILENT:
            return [], []
        if whole.preference_class is PreferenceClass.BEHAVIORAL:
            statement = preference_statement(text)
            return [self._intent(said, text, statement, whole, statement)], []
        stated = find_stated_preference(text, self.classify, self.spans)
        if stated.classification is None or stated.sentence is None:
            span = _span_of(said, text, stated.declined) if stated.declined else (0, len(said))
            if stated.reason == ASKS_NOW and stated.declined and _CHANGED_MIND.search(text):
                # "I changed my mind, I want a friendly tone not firm": a want that revises
                # what the person said before may be a standing one; asked about (D428).
                revised = without_discourse_lead(_CHANGED_MIND.sub("", stated.declined, 1))
                asked = confirm_required(revised or stated.declined)
                intent = self._intent(said, text, stated.declined, asked, asked.statement)
                return [replace(intent, slots=replace(intent.slots, scope=REVISION))], []
            return [], [_declined(span, whole, stated.reason)]
        sentence = stated.sentence
        if _asks_now(said, text, sentence):
            return [], [_declined(_span_of(said, text, sentence), whole, QUESTION_OR_REQUEST)]
        if FOR_TURNS.search(_whole_sentence(text, sentence)):
            return [], [_declined(_span_of(said, text, sentence), whole, FOR_A_SPAN)]
        # "Keep in mind I prefer tabs" states "I prefer tabs", under the key saying it plainly
        # gives (D73).
        statement = without_discourse_lead(without_keep_lead(sentence))
        if _CHANGED_MIND.search(sentence):
            # "I changed my mind, I want short explanations, not long ones": whatever its
            # class, a preference said as a change of mind is asked about in place of the
            # kept ones it revises (D428, D475)
            revised = without_discourse_lead(_CHANGED_MIND.sub("", statement, 1)) or statement
            asked = confirm_required(revised)
            intent = self._intent(said, text, sentence, asked, asked.statement)
            return [replace(intent, slots=replace(intent.slots, scope=REVISION))], []
        return [self._intent(said, text, sentence, stated.classification, statement)], []

    @staticmethod
    def _intent(
        said: str, text: str, sentence: str, verdict: PreferenceClassification, statement: str
    ) -> Intent:
        slots = Slots(
            statement=statement,
            scope=SCOPE_OF.get(verdict.preference_class, "explicit"),
            pattern=verdict.matched_pattern,
            hedged=verdict.preference_class is PreferenceClass.INFERRED_CONFIRM_REQUIRED
            and verdict.matched_pattern is not None,
        )
        return Intent(IntentKind.PREFERENCE, _span_of(said, text, sentence), verdict.confidence,
                      "rules:preferences", slots)  # fmt: skip


def _asks_now(said: str, text: str, sentence: str) -> bool:
    """Is the sentence holding the preference a question or a request for something now?"""
    whole = _whole_sentence(text, sentence)
    if standing_instruction(whole) is not None:
        return False  # "Could you always reply in French?" is an instruction
    return whole.rstrip().endswith("?") or _REQUEST_NOW.search(whole) is not None


def _whole_sentence(text: str, part: str) -> str:
    return next((s for s in sentences(text) if part in s), part)


def _span_of(said: str, text: str, sentence: str) -> Span:
    """Where `sentence` (read in the normalised `text`) is in `said`."""
    at = said.find(sentence)
    if at >= 0:
        return (at, at + len(sentence))
    # Texting forms were read as words: the sentence of `said` in the same place.
    mine = list(sentences(text))
    theirs = list(sentences(said[:_SCAN_LIMIT]))
    index = next((i for i, s in enumerate(mine) if sentence in s), 0)
    if index < len(theirs):
        at = said.find(theirs[index])
        if at >= 0:
            return (at, at + len(theirs[index]))
    return (0, len(said))


def _declined(span: Span, whole: PreferenceClassification, reason: str | None) -> Declined:
    """Why the sentence at `span` states no preference (final for `FINAL_REASONS`)."""
    return Declined(
        IntentKind.PREFERENCE, span, "rules:preferences",
        reason or "",
        pattern=whole.matched_pattern, confidence=whole.confidence,
        final=reason in FINAL_REASONS,
    )  # fmt: skip
