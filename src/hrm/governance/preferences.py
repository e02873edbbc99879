"""The preference truth model (001 §12.4): which statements may become canon, and when.

A statement about what a person likes is only canon (the Shared Reference) when the person said
it plainly ("I prefer ...", from the user). Anything inferred waits for a yes, stays in the
working set, or — for usage patterns — is only ever an episode. The write gate (001 §12.6) and
the learnings repository (003, ``USER_PREFERENCE``) both enforce this through
`PreferenceClassifier`.

The regular expressions are 001 §12.4's, verbatim: the explicit patterns come from the policy
(``PREFERENCE_PATTERNS``, whose default adds six forms people use to the spec's eight, D69),
the behavioural markers and the weak preference indicators are fixed here. A hedge ("I prefer
tabs, I think") turns an explicit match into a question (D64). One rule is added to the explicit
tier: a standing instruction to the assistant ("From now on, always answer in bullet points",
`hrm.reading.rules.instructions`, D47), which the first-person patterns cannot match. The patterns
match far more than preferences in a conversation ("I need to …", "Do I need …?", "likely"): a
turn first finds the sentence that states one with `hrm.reading.rules.preference_scope` (001
§12.4's "stable object" condition, D45), then classifies that sentence here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from hrm._wordlists import HeadIndex
from hrm.errors import HRMError
from hrm.reading.rules.instructions import instruction_spans, standing_instruction

__all__ = [
    "PreferenceClass",
    "PreferenceClassification",
    "PreferenceClassifier",
    "PreferencePolicy",
    "confirm_required",
    "is_retracted",
    "preference_key",
]

_BEHAVIORAL_MARKERS: tuple[str, ...] = (
    r"user (often|usually|tends to)",
    r"(noticed|observed) that",
    r"based on (history|past|patterns)",
    r"statistically",
)
_PREFERENCE_INDICATORS: tuple[str, ...] = (
    r"(like|prefer|enjoy|want|need)",
    r"(don't like|hate|avoid|dislike)",
    r"(better|worse|rather)",
    # Beyond 001 §12.4's three: "Stop using emojis" asks for a change that lasts, or for a
    # halt ("stop running the tests"): asked about, never canon at once (D69).
    r"stop (using|adding|including|suggesting|writing|putting|giving|sending)",
)
_BEHAVIORAL = re.compile("|".join(f"(?:{m})" for m in _BEHAVIORAL_MARKERS), re.IGNORECASE)
_INDICATOR = re.compile("|".join(f"(?:{i})" for i in _PREFERENCE_INDICATORS), re.IGNORECASE)
"""Each list as one alternation: "any of them occurs" in one search."""
_HEDGE = re.compile(
    r"\b(?:i\s+(?:think|guess|suppose|believe|reckon|might|may)|i'm\s+not\s+(?:sure|certain)"
    r"|not\s+(?:sure|certain)|maybe|perhaps|probably|possibly)\b",
    re.IGNORECASE,
)
"""Words that take back the clarity an explicit preference needs ("I prefer tabs, I think"):
001 §12.4 canonizes what "the user stated clearly", so a hedged one is asked about (D64)."""
_BEHAVIORAL_LOWER = re.compile(_BEHAVIORAL.pattern)
_INDICATOR_LOWER = re.compile(_INDICATOR.pattern)
"""The same, for lower-cased ASCII text: a case-insensitive alternation with no literal prefix
is tried at every position, some three times slower than lower-casing first. For ASCII text
the two agree exactly; other text keeps the case-insensitive forms."""


class PreferencePolicy(Protocol):
    """What the classifier needs from a policy: `hrm.config.PolicySurface` satisfies it."""

    @property
    def PREFERENCE_PATTERNS(self) -> tuple[str, ...]:
        """Regular expressions of explicit preference statements ("I prefer", ...)."""
        ...


class PreferenceClass(str, Enum):
    """Preference classification for write-time enforcement (001 §12.4).

    EXPLICIT: the user stated it clearly, so it can be promoted to the Shared Reference.
    INFERRED_CONFIRM_REQUIRED: a pattern was detected; it needs the user's yes.
    INFERRED_SILENT: an observation only; it stays in the Working Set.
    BEHAVIORAL: a usage pattern; Episodic only, it never promotes.
    """

    EXPLICIT = "pref_explicit"
    INFERRED_CONFIRM_REQUIRED = "pref_inferred_confirm_required"
    INFERRED_SILENT = "pref_inferred_silent"
    BEHAVIORAL = "pref_behavioral"


@dataclass(frozen=True)
class PreferenceClassification:
    """Result of preference classification (001 §12.4)."""

    preference_class: PreferenceClass
    statement: str
    matched_pattern: str | None
    confidence: float
    can_canonize: bool
    """Can this be written to the Shared Reference (after confirmation, if one is needed)?"""
    needs_confirmation: bool
    """Must the user say yes first?"""


def confirm_required(
    statement: str, matched_pattern: str | None = None
) -> PreferenceClassification:
    """Tier 2: it might be a preference, so the person is asked before it is canon.

    `matched_pattern`: the explicit pattern a hedged statement matched (D64), for the record.
    """
    return PreferenceClassification(
        preference_class=PreferenceClass.INFERRED_CONFIRM_REQUIRED,
        statement=statement,
        matched_pattern=matched_pattern,
        confidence=0.5,
        can_canonize=True,
        needs_confirmation=True,
    )


def is_retracted(value: object) -> bool:
    """Is this canon value one the person replaced (D70) or asked to forget (D77), not a
    statement?"""
    return isinstance(value, dict) and value.get("retracted") is True


def preference_key(statement: str, limit: int = 48) -> str:
    """The Shared Reference key a statement is stored under: ``preference.<slug>``."""
    words = re.findall(r"[a-z0-9]+", statement.lower())
    return "preference." + ("-".join(words)[:limit].strip("-") or "preference")


class PreferenceClassifier:
    """Classifies statements for the preference truth model (001 §12.4).

    One-shot canonization: a statement from the user matching an explicit pattern ("I prefer",
    "I hate", "I always", "I never", "I'm the kind of person who", ...) or giving a standing
    instruction ("From now on, answer in French") is canon at once (tier 1).
    Inferred preferences, and explicit ones the person hedges ("I prefer tabs, I think", D64),
    need confirmation (tier 2), plain observations stay silent (tier 3),
    usage patterns are behavioural and never promote (tier 4). Pure and thread-safe.
    """

    def __init__(self, policy: PreferencePolicy) -> None:
        """Compile the policy's explicit patterns (case-insensitive).

        Raises:
            HRMError: ``VALIDATION_FAILED`` naming a pattern that is not a valid regex.
        """
        self.policy = policy
        self._patterns: list[re.Pattern[str]] = []
        for pattern in policy.PREFERENCE_PATTERNS:
            try:
                self._patterns.append(re.compile(pattern, re.IGNORECASE))
            except re.error as exc:
                raise HRMError.validation_failed(
                    f"PREFERENCE_PATTERNS entry {pattern!r} is not a valid regular expression: "
                    f"{exc}",
                    key="policy.PREFERENCE_PATTERNS",
                    pattern=pattern,
                ) from exc
        self._named = tuple((str(index), p) for index, p in enumerate(self._patterns))
        """The patterns in the policy's order, each under its name in `_index`."""
        self._index = _index_of(tuple(self._patterns))

    def classify(self, statement: str, source: str = "user") -> PreferenceClassification:
        """Classify a statement for preference handling.

        Args:
            statement: The text to classify.
            source: Who said it (user, agent, system); only a user states explicit preferences.

        Returns:
            The class with what it permits (canonize now, after confirmation, or never).
        """
        matched_pattern = self._match_preference_pattern(statement)
        if matched_pattern is None and source == "user":
            matched_pattern = standing_instruction(statement)  # D47
        if matched_pattern and source == "user":
            if _HEDGE.search(statement):
                return confirm_required(statement, matched_pattern)  # D64
            return PreferenceClassification(
                preference_class=PreferenceClass.EXPLICIT,
                statement=statement,
                matched_pattern=matched_pattern,
                confidence=0.9,
                can_canonize=True,
                needs_confirmation=False,
            )
        if self._is_behavioral_observation(statement):
            return PreferenceClassification(
                preference_class=PreferenceClass.BEHAVIORAL,
                statement=statement,
                matched_pattern=None,
                confidence=0.7,
                can_canonize=False,
                needs_confirmation=False,
            )
        if self._looks_like_preference(statement):
            return confirm_required(statement)
        return PreferenceClassification(
            preference_class=PreferenceClass.INFERRED_SILENT,
            statement=statement,
            matched_pattern=None,
            confidence=0.3,
            can_canonize=False,
            needs_confirmation=False,
        )

    def spans(
        self, statement: str, preference_class: PreferenceClass
    ) -> list[tuple[int, int]]:
        """Where in `statement` the patterns of `preference_class` matched, in order.

        Explicit: every match of every policy pattern, and each standing instruction's
        marker ("always", "from now on": `hrm.reading.rules.instructions`). Inferred (confirm
        required): every match of the preference indicators. Other classes match no words:
        empty. What `hrm.reading.rules.preference_scope` reads to judge what a match is about.
        """
        if preference_class is PreferenceClass.EXPLICIT:
            found = [m.span() for p in self._patterns for m in p.finditer(statement)]
            found += instruction_spans(statement)
        elif preference_class is PreferenceClass.INFERRED_CONFIRM_REQUIRED:
            found = [m.span() for m in _INDICATOR.finditer(statement)]
            if _HEDGE.search(statement):  # a hedged explicit statement is asked about (D64)
                found += [m.span() for p in self._patterns for m in p.finditer(statement)]
                found += instruction_spans(statement)
        else:
            return []
        return sorted(found)

    def _match_preference_pattern(self, statement: str) -> str | None:
        """The first explicit pattern, in the policy's order, that occurs in `statement`.

        Every turn asks; a pattern whose words cannot occur (`HeadIndex`) is not run.
        """
        maybe = self._index.candidates(statement)
        if not maybe:
            return None
        for name, pattern in self._named:
            if name in maybe and pattern.search(statement):
                return pattern.pattern
        return None

    @staticmethod
    def _is_behavioral_observation(statement: str) -> bool:
        if statement.isascii():
            return _BEHAVIORAL_LOWER.search(statement.lower()) is not None
        return _BEHAVIORAL.search(statement) is not None

    @staticmethod
    def _looks_like_preference(statement: str) -> bool:
        if statement.isascii():
            return _INDICATOR_LOWER.search(statement.lower()) is not None
        return _INDICATOR.search(statement) is not None


@functools.lru_cache(maxsize=8)
def _index_of(patterns: tuple[re.Pattern[str], ...]) -> HeadIndex:
    """The `HeadIndex` of a policy's patterns, each named by its position. Built once a process
    for each distinct list: parsing the patterns' heads takes ~12 ms, and every stack a process
    opens (a server's, a test suite's) compiles the same policy."""
    return HeadIndex({str(index): [pattern] for index, pattern in enumerate(patterns)})
