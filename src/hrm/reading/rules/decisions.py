"""A decision the person states about the work: "Let's go with Decimal for the totals" (D88).

001 §6.4 gives each problem a working set whose ``local_decisions`` hold what was decided for
it, and the context shows the working set of the problem at hand; but nothing a person said
ever reached it, so "What did we decide about the totals?" twenty turns on had only the recent
exchanges to go by. A sentence that states a decision is read here; the turn records it in the
working set of the problem the input went to.

A sentence states one when it opens (after "ok", "so", "then" …) with "let's go with / use /
stick with / pick X", "we'll / we will / we're going to go with / use / … X", "I'll go
with X", "we (have) decided / agreed / settled (to / on / that) X", "we're going with X", "go
with X", "decision: X" or "final answer / call / choice: X" (D455). A question ("Should we go
with X?") and "we use X" (how things are, not a decision) are none.

Pure and deterministic (D12).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hrm._keywords import keywords as extract_keywords
from hrm._text import shorten
from hrm.reading.sentences import IN_SENTENCE
from hrm.reading.types import Intent, IntentKind, Slots

__all__ = ["StatedDecision", "read_decision_intents", "read_stated_decision"]

_HEAD_CHARS = 2000
_LEAD = (
    r"(?:^|(?<=[.!?;])\s+|\n)\W*"
    r"(?:(?:ok(?:ay)?|so|then|alright|all right|right|great|cool|fine|perfect|good|yes|yeah"
    r"|sure|agreed|thanks)\W+)*"
)
_WHO = r"(?:we|i|our\s+team)"
"""Who decides: the person, or the team they speak for. "My manager decided to cancel it" is
news of someone else's decision, not one stated about the work."""
_CHOOSE = r"(?:go with|use|stick with|stay with|pick(?!\s+(?:up|back)\b)|choose|switch to|adopt)"
_FORMS = (
    r"(?:let'?s|let us)\s+" + _CHOOSE,
    r"(?:we|i)(?:'ll|\s+will|\s+shall|'re going to|\s+are going to|'m going to|\s+am going to)\s+"
    + _CHOOSE,
    _WHO + r"(?:'ve|\s+have|\s+has)?\s+(?:decided|agreed|settled)\s+(?:to|on|that|we'?ll|upon)",
    _WHO + r"(?:'ve|\s+have|\s+has)?\s+(?:all\s+)?(?:decided|agreed)"
    r"(?=\s+(?:the|our|we|it|on|that)\b)",
    r"(?:it'?s\s+)?decided\s*[:,-]",
    r"(?:we'?re|we are|i'?m|i am)\s+going\s+with",
    r"we\s+go\s+with",  # "ok we go with a range condition" (D455)
    r"go\s+with",
    r"(?:final\s+|the\s+)?decision(?:\s+is)?\s*:",
    r"(?:my\s+|our\s+|the\s+)?final\s+(?:answer|call|choice|pick|verdict)(?:\s+is)?\s*[:,-]?",
)
_DECISION = re.compile(
    _LEAD + r"(?P<lead>" + "|".join(_FORMS) + r")\s+"
    r"(?P<what>" + IN_SENTENCE + r"{3,200})(?P<end>[.!?;]|$)",
    re.IGNORECASE | re.MULTILINE,
)
_DECISION_WORDS = ("go with", "use", "stick with", "stay with", "pick", "choose", "switch to",
                   "adopt", "decided", "agreed", "settled", "going with", "decision", " it is",
                   "final")
_IT_IS = re.compile(
    r"(?:^|(?<=[.!?;])\s+|\n)\W*(?:(?:ok(?:ay)?|so|then|alright|right|fine|great)\W+)*"
    r"(?P<what>(?!(?:that|this|it|what|here|there|so|such|which|who|how|where|when)\b)"
    r"[\w][\w .+#/-]{0,40}?)\s+it\s+is\s*(?P<end>[.!]|$)",
    re.IGNORECASE | re.MULTILINE,
)
""""Postgres it is.", "Netlify it is!": a choice said as settled."""
"""A phrase every form holds: most messages have none."""


@dataclass(frozen=True, slots=True)
class StatedDecision:
    """A decision as the person stated it."""

    decision: str
    """What was decided, in the person's words ("go with Decimal for the totals")."""
    sentence: str
    """The sentence that states it."""


def read_stated_decision(text: str) -> StatedDecision | None:
    """The first decision `text` states, or None (module docstring)."""
    head = text[:_HEAD_CHARS]
    lowered = head.lower()
    if not any(phrase in lowered for phrase in _DECISION_WORDS):
        return None
    return _read(head)


@lru_cache(maxsize=8)
def _read(head: str) -> StatedDecision | None:
    for found in _IT_IS.finditer(head):
        what = found.group("what").strip()
        if extract_keywords(what):
            return StatedDecision(shorten(f"go with {what}", 200), found.group(0).strip())
    for found in _DECISION.finditer(head):
        if found.group("end") == "?":
            continue
        what = found.group("what").strip(" ,:;-–—\"'")
        if not extract_keywords(what):
            continue
        lead = " ".join(found.group("lead").lower().split()).rstrip(":")
        verb = _verb(lead)
        decision = f"{verb} {what}".strip() if verb else what
        return StatedDecision(shorten(decision, 200), found.group(0).strip())
    return None


def _verb(lead: str) -> str:
    """The choosing verb of a form ("let's go with" → "go with"); none for "decided to",
    whose object says it ("use Decimal"), or "decision:"."""
    for verb in ("go with", "stick with", "stay with", "switch to", "use", "pick", "choose",
                 "adopt"):
        if lead.endswith(verb):
            return verb
    if lead.endswith("going with"):
        return "go with"
    return ""


# ── as intents (the rules tier) ─────────────────────────────────────────────


def read_decision_intents(said: str) -> list[Intent]:
    """The first decision `said` states, as an intent: a move arbitration places (its words
    stay in what it weighs), recorded in the working set of the problem it goes to."""
    stated = read_stated_decision(said)
    if stated is None:
        return []
    at = said.find(stated.sentence)
    if at < 0:
        return []
    return [Intent(IntentKind.DECISION, (at, at + len(stated.sentence)), 0.85,
                   "rules:decisions", Slots(statement=stated.decision))]
