"""The SignalEngine (001 §12.2): deterministic signals first, model signals bounded.

Every signal a gate or the arbiter weighs comes from here. The deterministic part is
authoritative and cheap (regexes over one input, no I/O); a model, when one is given, may only
nudge ``source_quality`` and ``alignment_score`` between the deterministic floor and the
policy's ``LLM_SIGNAL_CEILING`` (001 §12.2 ``_bounded_signal``). Conflict, blast radius and
urgency never depend on a model: the small local models are not fit for governance verdicts
(``reference/local-models.md``).

What 001 §12.2 left as TODO, and how it is filled:

* **Source quality** (floor, capped at 0.6): base 0.3; +0.2 for the user's own words; +0.05 per
  citation up to +0.2 (URLs, "according to", ``[n]``, DOIs, file paths and ``file:line``
  references, pointers to docs/RFCs — `hrm.governance.policy.CITATION_PATTERNS`); +0.1 when a
  dated reference is recent (within ``RECENT_REFERENCE_DAYS`` of the injected clock), −0.05 when
  every dated reference is older; +0.1 when the turn's metadata says the user confirmed it.
* **Urgency** (clamped to [0, 1]): 001's base 0.3 + 0.05 × priority, plus 0.3 for an emergency
  marker, 0.1 per distinct urgency word (max 0.2), 0.1 per distinct deadline ("by tomorrow",
  "today", "now"; max 0.2), 0.05 per "!" (max 0.1). Every term only adds, so urgency is
  monotone in each marker.
* **Conflict with the Shared Reference**: see `find_contradictions`. A canonical statement and
  a claim in the input are reduced to small triples (subject, relation, object, polarity); a
  claim that negates a canonical statement, or replaces its object on the same subject, is a
  contradiction. Exact subject and an unhedged claim → HIGH; a partial subject match or a hedged
  claim ("maybe", "for now") → MEDIUM. Conflict is the worse of this and 001's agent
  disagreement rule.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from hrm._wordlists import HeadIndex
from hrm.errors import HRMError
from hrm.governance.policy import (
    CITATION_PATTERNS,
    DEADLINE_MARKERS,
    EMERGENCY_MARKERS,
    HEDGE_MARKERS,
    RECENT_REFERENCE_DAYS,
    URGENCY_MARKERS,
)
from hrm.governance.preferences import preference_key
from hrm.governance.problems import extract_keywords
from hrm.reading.pasted import spoken
from hrm.reading.rules.preference_scope import is_past_form
from hrm.scrubbing import scrub_text
from hrm.types import BlastRadius, Clock, ConflictLevel, HRMContext, TurnInput, system_clock

if TYPE_CHECKING:
    from hrm.config import PolicySurface
    from hrm.llm.types import ILLMAdapter

__all__ = [
    "CanonSource",
    "Claim",
    "Contradiction",
    "DerivedSignals",
    "SignalEngine",
    "count_citations",
    "dated_references",
    "deadline_markers_in",
    "emergency_markers_in",
    "extract_claims",
    "find_contradictions",
    "urgency_markers_in",
]

logger = logging.getLogger(__name__)

CanonSource = Mapping[str, Any] | Callable[[], Mapping[str, Any]]
"""Canonical statements (Shared Reference key → value), or a callable returning them per call."""

_SEVERE_TARGETS = ("sharedreference", "semanticsynthesis", "shared_reference", "semantic_synthesis")
_CONFLICT_RANK = {
    ConflictLevel.NONE: 0,
    ConflictLevel.LOW: 1,
    ConflictLevel.MEDIUM: 2,
    ConflictLevel.HIGH: 3,
}


class AgentOutputLike(Protocol):
    """What conflict detection reads from an agent output (001 §4.5 ``AgentOutput``)."""

    @property
    def content(self) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class DerivedSignals:
    """All signals derived from a single turn or action (001 §12.2)."""

    conflict_level: ConflictLevel
    blast_radius: BlastRadius
    source_quality: float
    """0.0-1.0; never below its deterministic floor."""
    alignment_score: float
    """0.0-1.0; never below its deterministic floor."""
    urgency: float
    """0.0-1.0; deterministic only."""
    deterministic_components: dict[str, Any] = field(default_factory=dict)
    """The authoritative inputs (floors, markers, contradictions) for the decision record."""
    llm_adjustments: dict[str, float] = field(default_factory=dict)
    """What the model estimated, already clamped to [0, 1]; empty without a model."""

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready form for decision records."""
        return {
            "conflict_level": self.conflict_level.value,
            "blast_radius": self.blast_radius.value,
            "source_quality": round(self.source_quality, 4),
            "alignment_score": round(self.alignment_score, 4),
            "urgency": round(self.urgency, 4),
            "deterministic": _jsonable(self.deterministic_components),
            "llm": dict(self.llm_adjustments),
        }


# ── markers ────────────────────────────────────────────────────────────────


def _compile(patterns: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


class _Markers:
    """One policy list of marker regexes, and which of them occur in a text.

    A turn asks about the same text several times (urgency, the decision record, the
    arbiter), so the last few answers are kept. Most inputs carry no marker at all: one
    `HeadIndex` over every list's words (`_maybe`) rules out, in one pass over the text's
    words, the patterns that cannot match, and only the rest are run.
    """

    __slots__ = ("_patterns", "count", "hits")

    def __init__(self, sources: Sequence[str]) -> None:
        self._patterns = _compile(sources)
        self.hits = lru_cache(maxsize=4)(self._hits)
        self.count = lru_cache(maxsize=4)(self._count)

    def _hits(self, text: str) -> tuple[str, ...]:
        """The words each matching pattern found, one per pattern ("blocking", "today"): the
        decision record shows what was said, not the regex that saw it.

        Only what the person says (`spoken`): ``ValueError: urgent: …`` in a pasted traceback,
        or ``"severity": "critical"`` in a pasted log, is the paste's word, not theirs (D71).
        """
        text = spoken(text)
        maybe = _maybe(text)
        found = (p.search(text) for p in self._patterns if p.pattern in maybe)
        return tuple(match.group(0) for match in found if match is not None)

    def _count(self, text: str) -> int:
        maybe = _maybe(text)
        return sum(len(p.findall(text)) for p in self._patterns if p.pattern in maybe)


_EMERGENCY = _Markers(EMERGENCY_MARKERS)
_URGENCY = _Markers(URGENCY_MARKERS)
_DEADLINE = _Markers(DEADLINE_MARKERS)
_CITATION = _Markers(CITATION_PATTERNS)
_MARKER_INDEX = HeadIndex(
    {
        p.pattern: [p]
        for markers in (_EMERGENCY, _URGENCY, _DEADLINE, _CITATION)
        for p in markers._patterns
    }
)


@lru_cache(maxsize=4)
def _maybe(text: str) -> frozenset[str]:
    """The sources of the marker patterns that may occur in `text` (the others cannot)."""
    return frozenset(_MARKER_INDEX.candidates(text))


_HEDGE = re.compile(r"\b(?:" + "|".join(re.escape(h) for h in HEDGE_MARKERS) + r")\b", re.I)


def emergency_markers_in(text: str) -> list[str]:
    """The emergency markers (`policy.EMERGENCY_MARKERS`) the person says in `text` (not in
    what it pastes: `_Markers._hits`), except in a question asking whether an urgent or
    emergency kind of something exists (`_ASKS_FOR_AN_OPTION`, D457)."""
    hits = _EMERGENCY.hits(text)
    if hits and _ASKS_FOR_AN_OPTION.search(text):
        return [hit for hit in hits if hit.lower() not in _OPTION_WORDS]
    return list(hits)


_ASKS_FOR_AN_OPTION = re.compile(
    r"(?:^|[.!?]\s+)\W*(?:(?:ok(?:ay)?|so|and|but|also)\W+)*"
    r"(?:can|could|may|do|does|is|are|should|will)\s+(?:i|we|you|they|there|it)\b"
    r"[^.!?]*?\b(?:an?|any|the)\s+(?:emergency|urgent)\s+\w[^.!?]*\?",
    re.IGNORECASE,
)
"""A question about an urgent or emergency kind of something ("can I do an emergency
appointment?", "is there an urgent processing option?"): it asks whether the option exists,
it declares no emergency, and the conversation it belongs to stays in focus."""
_OPTION_WORDS = frozenset({"emergency", "urgent"})


def urgency_markers_in(text: str) -> list[str]:
    """The urgency words (`policy.URGENCY_MARKERS`) the person says in `text`."""
    return list(_URGENCY.hits(text))


def deadline_markers_in(text: str) -> list[str]:
    """The deadline expressions (`policy.DEADLINE_MARKERS`) the person says in `text`.

    A question that asks when something is due names the deadline as what it wants to know,
    not as pressure: "When is the grant deadline?" was read as pressing, opened a problem of
    its own and was queued, and the follow-ups went after it (D76). Its "deadline" or "due"
    is not a marker.
    """
    hits = _DEADLINE.hits(text)
    if not hits:
        return []
    said = spoken(text)
    if "now" in (hit.lower() for hit in hits) and _STATE_NOW.search(said):
        hits = tuple(hit for hit in hits if hit.lower() != "now")
    if hits and _MOVED_DEADLINE.search(said):
        hits = tuple(hit for hit in hits if hit.lower() not in _ASKABLE)
    if not hits or not any(hit.lower() in _ASKABLE for hit in hits):
        return list(hits)
    asked = _ASKS_WHEN_DUE.search(said)
    if asked is None:
        return list(hits)
    return [hit for hit in hits if hit.lower() != asked.group("word").lower()]


_STATE_NOW = re.compile(
    r"(?:\b(?:is|are|am|was|were|be|been)|'s|'re|'m)\s+"
    r"(?!(?:needed|required|wanted|expected|due|urgent)\b)(?:[\w$€£%@.'/-]+\s+){0,3}now\b",
    re.IGNORECASE,
)
"""A state as it stands: "the budget is 350 now", "we're vegan now", "my email is x@y.z now".
Its "now" means "by this time", not "at once": it presses nothing (D426). Needs said with a
copula ("it's needed now") still do."""
_MOVED_DEADLINE = re.compile(
    r"\b(?:deadline|due date)\s+(?:was\s+|has\s+been\s+|got\s+|is\s+)?"
    r"(?:moved|changed|pushed|extended|postponed|shifted|delayed|bumped)\b",
    re.IGNORECASE,
)
"""A deadline said to have moved: news about the work's dates, not pressure of its own
("actually, the deadline moved to the 20th", D439)."""
_ASKABLE = frozenset(("deadline", "due"))
_ASKS_WHEN_DUE = re.compile(
    r"(?:^|(?<=[.!?])\s+|\n)\W*(?:so\W+|and\W+|also\W+|ok(?:ay)?\W+)*"
    r"(?:when|what)(?:'s|\s+is|\s+was|\s+are|\s+were)\b[^.!?\n]{0,80}?\b"
    r"(?P<word>deadline|due)\b[^.!?\n]{0,80}\?",
    re.IGNORECASE,
)
"""A question asking when something is due: "When is the grant deadline?", "What's the
deadline for the report?", "When is it due?"."""


def count_citations(text: str) -> int:
    """How many citations `text` carries, summed over `policy.CITATION_PATTERNS`."""
    return _CITATION.count(text)


_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
_ISO_DATE = re.compile(r"\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")
_MONTH_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})\s+)?({_MONTHS})[a-z]*\.?\s+(?:(\d{{1,2}}),?\s+)?((?:19|20)\d{{2}})\b",
    re.IGNORECASE,
)
_MONTH_INDEX = {
    name: i
    for i, name in enumerate(_MONTHS.replace("|sept", "").split("|"), start=1)
}


def dated_references(text: str) -> list[date]:
    """Calendar dates written in `text` (ISO ``2025-03-01``, ``March 2025``, ``1 Mar 2025``)."""
    found: list[date] = []
    if "19" not in text and "20" not in text:  # every date here has a year 19xx or 20xx
        return found
    for match in _ISO_DATE.finditer(text):
        year, month, day = (int(g) for g in match.groups())
        if 1 <= month <= 12 and 1 <= day <= 31:
            found.append(_safe_date(year, month, day))
    for match in _MONTH_DATE.finditer(text):
        day_before, month_name, day_after, year_text = match.groups()
        month_number = _MONTH_INDEX[str(month_name).lower()[:3]]
        found.append(_safe_date(int(year_text), month_number, int(day_before or day_after or 1)))
    return found


def _safe_date(year: int, month: int, day: int) -> date:
    for candidate in (day, 28, 1):
        try:
            return date(year, month, min(candidate, 31))
        except ValueError:
            continue
    return date(year, month, 1)


# ── claims and contradictions ──────────────────────────────────────────────

Relation = Literal["pref", "is"]


@dataclass(frozen=True, slots=True)
class Claim:
    """A statement reduced to what contradiction detection compares."""

    relation: Relation
    """``pref``: someone prefers/uses/wants the object; ``is``: the subject is the object."""
    subject: frozenset[str]
    """Keywords of the subject (``{"user"}`` for first-person and subjectless preferences)."""
    obj: frozenset[str]
    """Keywords of the object's core (before "for", "in", "when" ...)."""
    positive: bool
    """False for "not", "don't", "never", "hate", "avoid", and for the X of "over X"."""
    topic: frozenset[str] = frozenset()
    """What the object is for ("for indentation"), and a canon entry's descriptive key: the
    slot a different object replaces it in."""
    hedged: bool = False
    text: str = ""
    verb: str = ""
    """The participle of a passive ``is`` claim ("rotated" of "the CI token is rotated
    monthly"): claims with different verbs are about different things of one subject."""


@dataclass(frozen=True, slots=True)
class Contradiction:
    """A claim in the input that negates or replaces a canonical statement."""

    canon_key: str
    canon_value: str
    claim: str
    kind: Literal["negation", "replacement"]
    confidence: float
    level: ConflictLevel

    def to_record(self) -> dict[str, Any]:
        return {
            "canon_key": self.canon_key,
            "canon_value": self.canon_value,
            "claim": self.claim,
            "kind": self.kind,
            "confidence": round(self.confidence, 3),
            "level": self.level.value,
        }


_USER = frozenset({"user"})
_FIRST_PERSON = {"i", "we", "user", "me", "us"}
_NEGATORS = {"not", "don't", "dont", "doesn't", "doesnt", "didn't", "never", "no", "won't"}
_SKIP_BEFORE_VERB = _NEGATORS | {
    "always", "really", "strongly", "still", "now", "actually", "generally", "usually", "also",
    "definitely", "much", "do", "does", "did", "longer", "would", "will", "the", "kind", "sort",
    "of", "to", "starting", "think", "guess", "maybe", "probably", "honestly", "personally",
    "please", "pls", "plz", "just", "kindly",
}  # fmt: skip
_NEGATIVE_VERBS = {"hate", "dislike", "avoid", "detest"}
_PREF_VERB = re.compile(
    r"\b(prefer|like|love|want|use|choose|favou?r|hate|dislike|avoid|detest)(?:s|d)?\b", re.I
)
_COPULA = re.compile(
    r"\b(is|are|was|were|isn't|aren't|wasn't|weren't|should be|must be|will be|remains)\b"
    r"(\s+(?:not|no longer|never)\b)?\s+",
    re.I,
)
_CONTRAST = re.compile(r"\s+(?:over|instead of|rather than|not|versus|vs\.?)\s+", re.I)
_QUALIFIER = re.compile(
    r"\s+(for|in|when|with|on|at|because|since|while|as|during|if|across)\s+", re.I
)
_LEADING = re.compile(r"^(?:to\s+)?(?:use|using|have|having|go with|work with|write)\s+", re.I)
_CLAUSE = re.compile(r"[.;!?\n,]+|\s+but\s+|\s+and\s+(?=i\b|we\b)", re.I)
_PRONOUN_SUBJECTS = {"it", "this", "that", "there", "he", "she", "they", "what", "which", "who"}

_ALTERNATIVE_SETS = (
    "tabs spaces",
    "light dark",
    "vim emacs vscode",
    "true false",
    "enabled disabled",
    "sync async",
    "rebase merge squash",
    "monorepo polyrepo",
    "camelcase snakecase kebabcase",
    "single double",
    "postgres postgresql mysql sqlite mongodb",
    "python javascript typescript go rust java",
    "pytest unittest",
    "yaml json toml",
    "morning evening night",
    "short long",
    "formal casual informal",
    "verbose concise terse",
)
_ALTERNATIVES = tuple(
    frozenset(k for word in group.split() for k in extract_keywords(word))
    for group in _ALTERNATIVE_SETS
)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _are_alternatives(a: frozenset[str], b: frozenset[str]) -> bool:
    return any(a & group and b & group and not (a & b) for group in _ALTERNATIVES)


class _ClaimPatterns(NamedTuple):
    clause: re.Pattern[str]
    hedge: re.Pattern[str]
    pref_verb: re.Pattern[str]
    copula: re.Pattern[str]
    contrast: re.Pattern[str]
    qualifier: re.Pattern[str]
    leading: re.Pattern[str]


_CASED = _ClaimPatterns(_CLAUSE, _HEDGE, _PREF_VERB, _COPULA, _CONTRAST, _QUALIFIER, _LEADING)
_FOLDED = _ClaimPatterns(*(re.compile(p.pattern) for p in _CASED))
"""The claim patterns without IGNORECASE, for lower-cased ASCII text. Every pattern's source
is lower-case (a test holds it), so on ASCII text they match where the case-insensitive ones
do, about twice as fast: a case-insensitive search tries each alternation at every position.
"""


def _split_object(text: str, rx: _ClaimPatterns) -> tuple[str, str, str, str]:
    """(core, qualifier, contrast, the qualifier's word) of an object phrase: "spaces for
    python over tabs" is ("spaces", "python", "tabs", "for")."""
    contrast = ""
    parts = rx.contrast.split(text, maxsplit=1)
    if len(parts) == 2:
        text, contrast = parts
    parts = rx.qualifier.split(text, maxsplit=1)
    core, word, qualifier = (parts[0], parts[1], parts[2]) if len(parts) == 3 else (text, "", "")
    return rx.leading.sub("", core.strip()), qualifier, contrast, word.lower()


def _subject_before(prefix: str) -> frozenset[str] | None:
    """The preference's subject from the words before the verb; None for a third party."""
    words = re.findall(r"[\w']+", prefix.lower())
    for word in reversed(words[-5:]):
        if word in _SKIP_BEFORE_VERB:
            continue
        if word in _FIRST_PERSON:
            return _USER
        return frozenset(extract_keywords(word)) or None
    return _USER


def _negated(prefix: str) -> bool:
    words = re.findall(r"[\w']+", prefix.lower())[-4:]
    return any(w in _NEGATORS for w in words)


def _pref_claims(clause: str, folded: str, hedged: bool, rx: _ClaimPatterns) -> list[Claim]:
    # `folded` is `clause` as `rx` reads it (lower-cased, or as written); the claim quotes
    # `clause` and everything else is compared by keyword, whatever the case.
    match = rx.pref_verb.search(folded)
    if match is None:
        return []
    prefix = folded[: match.start()]
    subject = _subject_before(prefix)
    if subject is None:
        return []
    positive = not _negated(prefix)
    if match.group(1).lower() in _NEGATIVE_VERBS:
        positive = not positive
    core, qualifier, contrast, word = _split_object(folded[match.end() :], rx)
    contrast_core, contrast_qualifier, _, contrast_word = _split_object(contrast, rx)
    obj = frozenset(extract_keywords(core))
    # What a preference is for is its slot ("spaces for indentation" replaces "tabs for
    # indentation"); where it holds is not ("type hints in Python code" and "tabs in Python
    # code" both stand).
    purposes = [q for q, w in ((qualifier, word), (contrast_qualifier, contrast_word))
                if w == "for"]
    topic = frozenset(extract_keywords(" ".join(purposes)))
    claims: list[Claim] = []
    if obj:
        claims.append(Claim("pref", subject, obj, positive, topic, hedged, clause.strip()))
    contrast_obj = frozenset(extract_keywords(contrast_core))
    if contrast_obj and positive:
        claims.append(Claim("pref", subject, contrast_obj, False, topic, hedged, clause.strip()))
    return claims


def _copula_claims(clause: str, folded: str, hedged: bool, rx: _ClaimPatterns) -> list[Claim]:
    match = rx.copula.search(folded)
    if match is None:
        return []
    words = re.findall(r"[\w'.-]+", folded[: match.start()].lower())[-4:]
    if not words or words[-1] in _PRONOUN_SUBJECTS or words[-1] in _FIRST_PERSON:
        return []
    subject = frozenset(extract_keywords(" ".join(words)))
    core, qualifier, _, _ = _split_object(folded[match.end() :], rx)
    topic = frozenset(extract_keywords(qualifier))
    verb, _, rest = core.strip().partition(" ")
    if is_past_form(verb) and (rest or topic):
        # "is rotated monthly", "is stored in Vault": what is done to the subject, not a value
        # of it; its object is what follows the participle (D378).
        obj = frozenset(extract_keywords(rest)) | topic
    else:
        verb, obj = "", frozenset(extract_keywords(core))
    if not subject or not obj:
        return []
    positive = match.group(2) is None and "n't" not in match.group(1).lower()
    return [Claim("is", subject, obj, positive, topic, hedged, clause.strip(), verb)]


@lru_cache(maxsize=2048)
def extract_claims(text: str) -> tuple[Claim, ...]:
    """The preference and "X is Y" claims of `text`, one or two per clause."""
    if text.isascii():
        return _claims(text, text.lower(), _FOLDED)
    return _claims(text, text, _CASED)


def _claims(text: str, folded: str, rx: _ClaimPatterns) -> tuple[Claim, ...]:
    """`extract_claims`, reading `folded` (`text` as `rx` matches it: same length)."""
    claims: list[Claim] = []
    start = 0
    for end, after in [(m.start(), m.end()) for m in rx.clause.finditer(folded)] + [
        (len(folded), len(folded))
    ]:
        clause, clause_folded = text[start:end], folded[start:end]
        start = after
        if len(clause) < 3:
            continue
        hedged = rx.hedge.search(clause_folded) is not None
        found = _pref_claims(clause, clause_folded, hedged, rx)
        claims.extend(
            found
            or _copula_claims(clause, clause_folded, hedged, rx)
            or _instruction_claims(clause, hedged)
        )
    return tuple(claims)


_INSTRUCTION = re.compile(
    r"^\W*(?:(?:please|pls|plz|and|also|ok(?:ay)?|so|from now on|going forward)\W+)*"
    r"(?:always|never|stop|quit|no more|no longer|don'?t|do not|dont)\b",
    re.IGNORECASE,
)
"""A standing instruction with no verb of liking: "always answer in bullet points", "stop
using bullet points", "pls never reply in French" (a clause that opens on its marker)."""
_INSTRUCTION_MARKS = re.compile(
    r"\b(?:please|pls|plz|always|never|stop|quit|no more|no longer|don'?t|do not|dont"
    r"|from now on|going forward)\b",
    re.IGNORECASE,
)
_NEGATIVE_MARK = re.compile(
    r"\b(?:never|stop|quit|no more|no longer|don'?t|do not|dont)\b", re.IGNORECASE
)
_REMINDER = re.compile(r"\b(?:(?:don'?t|do not|dont|never)\s+forget|remember)\s+to\b", re.I)
""""Don't forget to add tests" asks for the tests: a reminder, not a negation."""


def _instruction_claims(clause: str, hedged: bool) -> list[Claim]:
    """A standing instruction as a preference of the person's: its content words, negative
    for "never", "stop", "don't" … (D415). "Stop using bullet points" negates "always answer in
    bullet points": half their words are the same, their polarities differ."""
    if _INSTRUCTION.match(clause) is None:
        return []
    reminded = _REMINDER.sub(" ", clause)
    positive = reminded != clause or _NEGATIVE_MARK.search(clause) is None
    obj = frozenset(extract_keywords(_INSTRUCTION_MARKS.sub(" ", reminded)))
    if not obj:
        return []
    return [Claim("pref", _USER, obj, positive, frozenset(), hedged, clause.strip())]


def _key_words(key: str) -> frozenset[str]:
    return frozenset(extract_keywords(re.sub(r"[_./:-]+", " ", key)))


@lru_cache(maxsize=4096)
def _canon_claims(key: str, value: str, kind: str) -> tuple[Claim, ...]:
    """The claims a canon entry makes; ``kind`` is ``text``, ``bool`` or ``scalar``.

    A descriptive key ("indentation") names the entry's slot. A stated preference's key is
    made from its own words (`preference_key`) and names no slot: counted as one, every later
    preference sharing a word with it ("I prefer short answers" after "always answer in
    bullet points") replaced it.
    """
    topic = frozenset() if kind == "text" and key == preference_key(value) else _key_words(key)
    if kind == "bool":
        return (Claim("pref", _USER, topic, value == "True", topic, False, f"{key}: {value}"),)
    parsed = extract_claims(value) if kind == "text" else ()
    if parsed:
        return tuple(
            Claim(c.relation, c.subject, c.obj, c.positive, c.topic | topic, False, c.text, c.verb)
            for c in parsed
        )
    obj = frozenset(extract_keywords(value))
    if not obj or not topic:
        return ()
    text = f"{key}: {value}"
    return (
        Claim("is", topic, obj, True, topic, False, text),
        Claim("pref", _USER, obj, True, topic, False, text),
    )


def _compare(claim: Claim, canon: Claim) -> tuple[str, float] | None:
    """(kind, confidence) when `claim` contradicts `canon`, else None."""
    if claim.relation != canon.relation or claim.verb != canon.verb:
        return None
    if claim.subject == canon.subject:
        subject_confidence = 1.0
    elif _jaccard(claim.subject, canon.subject) >= 0.5:
        subject_confidence = 0.6
    else:
        return None
    if _jaccard(claim.obj, canon.obj) >= 0.5:
        if claim.positive == canon.positive:
            return None
        kind, confidence = "negation", subject_confidence
    else:
        if not (claim.positive and canon.positive):
            return None
        if claim.relation == "is":
            factor = 0.85
        elif (canon.topic and canon.topic <= claim.obj | claim.topic) or _are_alternatives(
            claim.obj, canon.obj
        ):
            factor = 0.9
        else:
            return None
        kind, confidence = "replacement", subject_confidence * factor
    if claim.hedged:
        confidence *= 0.6
    return kind, confidence


def _level(confidence: float) -> ConflictLevel:
    if confidence >= 0.8:
        return ConflictLevel.HIGH
    if confidence >= 0.45:
        return ConflictLevel.MEDIUM
    return ConflictLevel.LOW


def _canon_kind(value: Any) -> tuple[str, str] | None:
    if isinstance(value, bool):
        return "bool", str(value)
    if isinstance(value, int | float):
        return "scalar", str(value)
    if isinstance(value, str):
        return "text", value
    if isinstance(value, Mapping) and isinstance(value.get("value"), str | bool | int | float):
        return _canon_kind(value["value"])
    return None


def find_contradictions(text: str, canon: Mapping[str, Any]) -> list[Contradiction]:
    """Claims in `text` that contradict canonical statements, strongest first.

    Canon values may be statements ("prefers tabs", "the API is REST"), plain values under a
    descriptive key (``{"database": "PostgreSQL"}``), booleans (``{"use_type_hints": True}``)
    or mappings with a ``value``. Heuristic, documented in the module docstring: a negation of
    the same object, or a different object for the same subject (for preferences only when the
    key/qualifier ties them or the objects are known alternatives such as tabs/spaces).
    """
    claims = extract_claims(text)
    if not claims or not canon:
        return []
    found: list[Contradiction] = []
    for key, value in canon.items():
        described = _canon_kind(value)
        if described is None:
            continue
        kind_name, value_text = described
        best: tuple[str, float, Claim] | None = None
        for canon_claim in _canon_claims(str(key), value_text, kind_name):
            for claim in claims:
                result = _compare(claim, canon_claim)
                if result and (best is None or result[1] > best[1]):
                    best = (result[0], result[1], claim)
        if best is not None:
            kind, confidence, claim = best
            found.append(
                Contradiction(
                    canon_key=str(key),
                    canon_value=value_text,
                    claim=claim.text,
                    kind="negation" if kind == "negation" else "replacement",
                    confidence=confidence,
                    level=_level(confidence),
                )
            )
    found.sort(key=lambda c: c.confidence, reverse=True)
    return found


# ── the engine ─────────────────────────────────────────────────────────────


class SignalEngine:
    """Derives all signals for the WriteGate and arbitration (001 §12.2).

    Args:
        policy: The tunables (floors, ceilings, weights, thresholds).
        llm: Optional model that may nudge source quality and alignment, bounded; None works.
        clock: "Now" for the recency of dated references.
        canon: Default Shared Reference statements for contradiction checks (a mapping, or a
            callable read on every call so a store can stay the truth). ``derive`` may pass its
            own.
    """

    def __init__(
        self,
        policy: PolicySurface,
        llm: ILLMAdapter | None = None,
        *,
        clock: Clock = system_clock,
        canon: CanonSource | None = None,
    ) -> None:
        self.policy = policy
        self.llm = llm
        self._clock = clock
        self._canon = canon

    def derive(
        self,
        turn_input: TurnInput,
        context: HRMContext,
        artifacts: Sequence[str] = (),
        agent_outputs: Sequence[AgentOutputLike] | None = None,
        *,
        canon: CanonSource | None = None,
    ) -> DerivedSignals:
        """Derive all signals for this turn: deterministic first, then the bounded model nudge."""
        det = self._deterministic(turn_input, context, artifacts, agent_outputs, canon)
        llm_adj = self._llm_assisted(turn_input, context) if self.llm else {}
        return DerivedSignals(
            conflict_level=det["conflict_level"],
            blast_radius=det["blast_radius"],
            source_quality=self._bounded_signal(
                det["source_quality_floor"], llm_adj.get("source_quality", 0.5)
            ),
            alignment_score=self._bounded_signal(
                det["alignment_floor"], llm_adj.get("alignment_score", 0.5)
            ),
            urgency=det["urgency"],
            deterministic_components=det,
            llm_adjustments=llm_adj,
        )

    # ── deterministic (authoritative) ──────────────────────────────────────

    def _deterministic(
        self,
        turn_input: TurnInput,
        context: HRMContext,
        artifacts: Sequence[str],
        agent_outputs: Sequence[AgentOutputLike] | None,
        canon: CanonSource | None,
    ) -> dict[str, Any]:
        text = turn_input.text
        # A claim is the person's; a pasted line contradicts nothing they hold (D71).
        contradictions = find_contradictions(spoken(text), self._resolve_canon(canon))
        return {
            "conflict_level": self._compute_conflict_level(agent_outputs, contradictions),
            "blast_radius": self._compute_blast_radius(artifacts),
            "source_quality_floor": self._compute_source_quality_floor(turn_input),
            "alignment_floor": self._compute_alignment_floor(context),
            "urgency": self._compute_urgency(turn_input),
            "citations": count_citations(text),
            "emergency_markers": emergency_markers_in(text),
            "urgency_markers": urgency_markers_in(text),
            "deadline_markers": deadline_markers_in(text),
            "contradictions": [c.to_record() for c in contradictions],
        }

    def _resolve_canon(self, canon: CanonSource | None) -> Mapping[str, Any]:
        source = canon if canon is not None else self._canon
        if source is None:
            return {}
        return source() if callable(source) else source

    def _compute_blast_radius(self, artifacts: Sequence[str]) -> BlastRadius:
        """SEVERE for SharedReference/SemanticSynthesis; MODERATE past the file threshold."""
        for artifact in artifacts:
            lowered = artifact.lower()
            if any(target in lowered for target in _SEVERE_TARGETS):
                return BlastRadius.SEVERE
        if len(artifacts) > self.policy.BLAST_RADIUS_FILE_THRESHOLD:
            return BlastRadius.MODERATE
        return BlastRadius.MINIMAL

    def _compute_conflict_level(
        self,
        agent_outputs: Sequence[AgentOutputLike] | None,
        contradictions: Sequence[Contradiction] = (),
    ) -> ConflictLevel:
        """The worse of agent disagreement (001 rule) and contradiction of the canon."""
        level = ConflictLevel.NONE
        if agent_outputs and len(agent_outputs) >= 2:
            confidences = [_confidence(o) for o in agent_outputs]
            if len({str(o.content) for o in agent_outputs}) > 1:
                gap = max(confidences) - min(confidences)
                if gap <= self.policy.CONFLICT_CONFIDENCE_GAP:
                    level = ConflictLevel.HIGH  # true ambiguity
                else:
                    level = ConflictLevel.LOW  # one clearly stronger
        for contradiction in contradictions:
            if _CONFLICT_RANK[contradiction.level] > _CONFLICT_RANK[level]:
                level = contradiction.level
        return level

    def _compute_source_quality_floor(self, turn_input: TurnInput) -> float:
        """Citations, recency and confirmation raise the floor; capped at 0.6 (the LLM can raise
        it further, never lower it)."""
        floor = 0.3
        if turn_input.source == "user":
            floor += 0.2
        floor += min(0.2, 0.05 * count_citations(turn_input.text))
        dates = dated_references(turn_input.text)
        if dates:
            today = self._clock().date()
            horizon = today - timedelta(days=RECENT_REFERENCE_DAYS)
            if any(horizon <= d <= today + timedelta(days=1) for d in dates):
                floor += 0.1
            else:
                floor -= 0.05
        if (turn_input.metadata or {}).get("confirmed") is True:
            floor += 0.1
        return max(0.0, min(floor, 0.6))

    def _compute_alignment_floor(self, context: HRMContext) -> float:
        """1.0 under an active commitment, 0.5 on a known problem, 0.2 otherwise (001)."""
        if context.commitment_id:
            return 1.0
        if context.problem_id:
            return 0.5
        return 0.2

    def _compute_urgency(self, turn_input: TurnInput) -> float:
        """Deterministic urgency: priority and markers; clamped to [0, 1]."""
        text = turn_input.text
        urgency = 0.3 + 0.05 * max(0, min(10, turn_input.priority))
        if emergency_markers_in(text):
            urgency += 0.3
        urgency += min(0.2, 0.1 * len(urgency_markers_in(text)))
        urgency += min(0.2, 0.1 * len(deadline_markers_in(text)))
        urgency += min(0.1, 0.05 * spoken(text).count("!"))  # not code's `!=`
        return max(0.0, min(1.0, urgency))

    # ── model-assisted (bounded) ───────────────────────────────────────────

    def _llm_assisted(self, turn_input: TurnInput, context: HRMContext) -> dict[str, float]:
        """The model's estimates of source quality and alignment, clamped to [0, 1].

        Anything malformed, and any adapter failure, yields ``{}``: the deterministic floors
        then stand alone (advisory signals must never block a turn).
        """
        if self.llm is None:
            return {}
        from hrm.llm.types import LLMCallConfig, Message

        goal = f"\nCurrent problem: {context.problem_id}" if context.problem_id else ""
        prompt = (
            "Rate the following on a 0.0-1.0 scale.\n"
            f"Input: {scrub_text(turn_input.text[:500])}{goal}\n\n"
            "source_quality: How well-grounded/cited is this information?\n"
            "alignment_score: How relevant is this to the user's stated goals?\n\n"
            'Return JSON: {"source_quality": X, "alignment_score": Y}'
        )
        try:
            response = self.llm.chat(
                [Message(role="user", content=prompt)],
                "You are a signal estimation engine. Return only JSON.",
                LLMCallConfig(temperature=0.1, max_tokens=100, json_mode=True, purpose="signals"),
            )
        except HRMError as exc:
            logger.info("model signals unavailable, deterministic floors stand: %s", exc)
            return {}
        return _parse_estimates(response.content)

    def _bounded_signal(self, deterministic_floor: float, llm_estimate: float) -> float:
        """``max(floor, min(ceiling, 0.4·floor + 0.6·estimate))`` with 001's weights, in [0, 1]."""
        p = self.policy
        floor = max(deterministic_floor, p.LLM_SIGNAL_FLOOR)
        estimate = max(0.0, min(1.0, llm_estimate))
        combined = (1 - p.LLM_SIGNAL_WEIGHT) * floor + p.LLM_SIGNAL_WEIGHT * estimate
        return max(0.0, min(1.0, max(floor, min(p.LLM_SIGNAL_CEILING, combined))))


def _confidence(output: AgentOutputLike) -> float:
    value = getattr(output, "confidence", 0.5)
    return float(value) if isinstance(value, int | float) else 0.5


_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.S)


def _parse_estimates(content: str) -> dict[str, float]:
    """The two estimates from a model's answer; unknown keys and non-numbers are dropped."""
    for candidate in _JSON_OBJECT.findall(content):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        estimates: dict[str, float] = {}
        for name in ("source_quality", "alignment_score"):
            value = data.get(name)
            if not isinstance(value, int | float) or isinstance(value, bool):
                continue
            if not math.isnan(value):
                estimates[name] = max(0.0, min(1.0, float(value)))
        if estimates:
            return estimates
    return {}


def _jsonable(value: Any) -> Any:
    kind = type(value)  # exact types first: a turn converts some thirty values
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {k: _jsonable(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_jsonable(v) for v in value]
    if isinstance(value, _SIGNAL_ENUMS):
        return value.value
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


_PLAIN = frozenset({str, int, float, bool, type(None)})
_SIGNAL_ENUMS = (ConflictLevel, BlastRadius)
