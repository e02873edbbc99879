"""The wording that marks a learning in a session's text: cue tables and the sentence reader.

Capture (`hrm.continuity.capture`) reads what the assistant and the person wrote during a
session and keeps the sentences that state something worth remembering: how an error was fixed,
an approach that failed and why, a decision and its reason. The wording varies, so it lives in
the tables below — one row a cue, with the learning type it marks — and one small engine reads a
sentence against them (STYLE §14): a new phrasing is a new row and a new labelled transcript in
``tests/fixtures/transcripts``, not new code.

Guards keep what only sounds like a learning out: questions, conditionals and hedges ("if the
fix is…", "maybe the problem is…"), plans ("the fix will be…") and sentences too short to say
anything. Every pattern is a plain alternation of words with at most single-character
repetitions, so a sentence (cut to `MAX_SENTENCE` characters first) is read in linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CUES", "MAX_SENTENCE", "Cue", "read_sentence", "sentences"]

MAX_SENTENCE = 400
"""Longer sentences are cut before they are read or stored."""
_MIN_WORDS = 6
"""A learning needs a subject and a reason: shorter sentences ("That fixed it.") say neither."""


@dataclass(frozen=True)
class Cue:
    """A wording that marks a sentence as a learning of `type`."""

    pattern: str
    type: str
    """A `LearningType` name."""
    name: str
    """Short label for the evidence (``fix-was``, ``did-not-work``); kept with the learning."""


_FIX = "ERROR_FIX"
_WORKS = "WORKING_SOLUTION"
_FAILED = "FAILED_APPROACH"
_DECISION = "ARCHITECTURAL_DECISION"

CUES: tuple[Cue, ...] = (
    Cue(r"\bthe (?:real |actual |underlying )?fix (?:was|is) (?:to |that |in |a |an |the )", _FIX,
        "fix-was"),
    Cue(r"\bfixed (?:it |this |that |the \w+ )?by\b", _FIX, "fixed-by"),
    Cue(r"\b(?:root cause|culprit) (?:was|is)\b", _FIX, "root-cause"),
    Cue(r"\bthe (?:problem|issue|bug|error|failure) (?:was|is) (?:that|caused by|because)\b",
        _FIX, "problem-was"),
    Cue(r"\b(?:failed|failing|broke|crashed) because\b", _FIX, "failed-because"),
    Cue(r"\bturns out\b", _FIX, "turns-out"),
    Cue(r"\bthe (?:solution|trick|answer|workaround) (?:was|is) (?:to |that |a |an |the |using )",
        _WORKS, "solution-was"),
    Cue(r"\b(?:works|passes|passing) now\b.{0,80}\b(?:because|after|since|that|with)\b", _WORKS,
        "works-now"),
    Cue(r"\b(?:that|this) (?:fixed|solved|resolved) (?:it|the)\b.{0,40}\b(?:because|by|:)", _WORKS,
        "that-fixed"),
    Cue(r"\b(?:that|this|it|which) (?:didn't|did not|doesn't|does not|won't|will not|can't|"
        r"cannot) work\b", _FAILED, "did-not-work"),
    Cue(r"\b(?:didn't|did not|doesn't|does not) (?:help|fix|solve|change anything)\b", _FAILED,
        "did-not-help"),
    Cue(r"\b(?:dead end|red herring|wrong track|rabbit hole)\b", _FAILED, "dead-end"),
    Cue(r"\b(?:abandon|drop|revert|back out|undo|give up on)(?:ing|ed|s)? (?:this|that|the|my|"
        r"our) (?:approach|idea|attempt|change|plan)\b", _FAILED, "abandon"),
    Cue(r"\bnot (?:the|a) (?:cause|culprit|problem|issue)\b", _FAILED, "not-the-cause"),
    Cue(r"\b(?:we|i|you)(?:'ve| have| had)? decided (?:to|on|that|against)\b", _DECISION,
        "decided"),
    Cue(r"\bdecision(?: was| is)?: ", _DECISION, "decision"),
    Cue(r"\b(?:let's|we'll|we will|i'll|i will|going to) (?:go with|use|stick with|keep|switch "
        r"to|move to)\b.{0,120}\b(?:instead of|rather than|over|because|since)\b", _DECISION,
        "go-with"),
    Cue(r"\b(?:chose|choose|picked|opted for|settled on|went with)\b.{0,120}\b(?:over|instead of"
        r"|rather than|because|since)\b", _DECISION, "chose"),
)
"""Most specific first: the first cue that reads a sentence names its type."""

_HEDGES = re.compile(
    r"(?i)(?:^|\b)(?:if|whether|maybe|perhaps|might|may be|could be|possibly|probably|i think|"
    r"i guess|not sure|let me check|let me try|let me see|i'll try|try to|we could|should we|"
    r"do you want|would you like|will be|would be|is going to be|hypothes[ie]s)\b"
)
_FAILED_HEDGES = re.compile(r"(?i)\b(?:if|whether|do you want|would you like|should we)\b")
_REQUIREMENT = re.compile(
    r"(?i)\b(?:is|was) that (?:we|you|they|it|the \w+) (?:need|needs|have|has|want|wants|should|"
    r"must)\b"
)
""""The issue is that we need to support both formats" states a requirement, not a cause."""
_COMPILED = tuple((re.compile(cue.pattern, re.IGNORECASE), cue) for cue in CUES)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])|\n+")
_MARKUP = re.compile(r"\*\*|__|^#+\s*|^\s*(?:[-*•]|\d+[.)])\s+")


def sentences(text: str) -> list[str]:
    """The sentences of a message: split at sentence ends and line breaks, markup dropped."""
    out = []
    for raw in _SPLIT.split(text):
        line = _MARKUP.sub("", raw.strip()).strip()
        if line:
            out.append(" ".join(line.split())[:MAX_SENTENCE])
    return out


def read_sentence(sentence: str) -> Cue | None:
    """The cue that makes `sentence` a learning, or None (guards included; see the module)."""
    if len(sentence.split()) < _MIN_WORDS or sentence.rstrip().endswith("?"):
        return None
    for regex, cue in _COMPILED:
        if regex.search(sentence) is None:
            continue
        guard = _FAILED_HEDGES if cue.type == _FAILED else _HEDGES
        if guard.search(sentence) is not None:
            return None
        if cue.type == _FIX and _REQUIREMENT.search(sentence) is not None:
            return None
        return cue
    return None
