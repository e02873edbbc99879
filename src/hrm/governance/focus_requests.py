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
from hrm._wordlists import HeadIndex

__all__ = ["DEFAULT_TURNS", "FocusRequest", "read_focus_request"]

DEFAULT_TURNS = 3
"""A request that names no span ("let's focus on X") commits for this many turns."""

FOR_TURNS = re.compile(r"\bfor the next (\d{1,2}) turns?\b", re.IGNORECASE)
"""The span of a commitment: "for the next 3 turns"."""
FOCUS_ON = re.compile(
    r"\b(?:let'?s|let us|we'?ll|we will|i want to|commit to) (?:focus on|work on|commit to|"
    r"finish|ship)\s+(.{3,200})",
    re.IGNORECASE,
)
"""A topic the person commits to: "let's focus on X", "we'll finish X", "I want to ship X"."""
_BARE_FOCUS_ON = re.compile(
    r"\b(?:focus on|work on|stick (?:to|with)|stay (?:on|with))\s+(.{3,200})", re.IGNORECASE
)
"""With a span said, the verb alone names the topic: "for the next 3 turns, focus on X"."""
_WORDS = HeadIndex({"for": [FOR_TURNS], "to": [FOCUS_ON]})
_SENTENCE_END = re.compile(r"[.;!?](?=\s|$)|\n")
_LEADING_ARTICLE = re.compile(r"^(?:the|my|our|a|an|this|that)\s+", re.IGNORECASE)
_EDGES = " \t.,;:!?…-–—\"'“”‘’()[]"
_HEAD_CHARS = 5000
"""Commitment language is in an input's first lines; a 1 MB paste is not searched whole."""


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
    maybe = _WORDS.candidates(head)
    span = FOR_TURNS.search(head) if "for" in maybe else None
    topic = FOCUS_ON.search(head) if "to" in maybe else None
    if topic is None and span is not None:
        topic = _BARE_FOCUS_ON.search(head)
    if span is None and topic is None:
        return None
    turns = int(span.group(1)) if span else None
    if topic is not None:
        said = _without_span(_first_sentence(topic.group(1)))
        if said:
            return FocusRequest(turns, shorten(said, 80))
        if span is None:  # "let's focus on ..." names nothing and gives no span
            return None
    rest = _without_span(_first_sentence(_without_span(head)))
    return FocusRequest(turns, shorten(rest, 80))


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()


def _without_span(text: str) -> str:
    """`text` without its "for the next N turns", and without punctuation at either end."""
    return FOR_TURNS.sub("", text).strip(_EDGES)
