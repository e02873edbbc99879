"""Telling a repeat from a correction when a new learning is close to a stored one.

Word overlap alone calls "the beta flag is enabled in staging" a duplicate of "the beta flag is
disabled in staging", and misses "recieve" as a typo of "receive". So a close pair is compared
word by word: a word that differs only by a typo (difflib's ratio ≥ `TYPO_RATIO` between words of
four letters or more) counts as the same word; what is left decides:

- a negation (`data/learnings/negations.txt`) or a number one side has and the other lacks, or a
  value swapped for its partner (`data/learnings/opposites.txt`: enabled/disabled, on/off, …):
  the same statement with a changed value — a *correction*, stored as a new version that
  supersedes the old one;
- another content word replaced ("staging" → "production"): a *distinct* learning about
  something else, stored beside the old one;
- only words added or dropped, or typos: a *repeat*, rejected as a duplicate.

The same rule serves `store_learning` and `import_` (D234).
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Collection
from functools import lru_cache
from pathlib import Path

from hrm.continuity._fts import STOPWORDS

__all__ = ["TYPO_RATIO", "Closeness", "compare", "typo_jaccard"]

_DATA = Path(__file__).resolve().parent.parent / "data" / "learnings"
TYPO_RATIO = 0.8
"""difflib ratio at or above which two words of four letters or more are one word mistyped
("recieve"/"receive" 0.86; "enabled"/"disabled" 0.67, "staging"/"testing" 0.57)."""


class Closeness(enum.Enum):
    """How a new learning stands to a close stored one."""

    REPEAT = "repeat"
    CORRECTION = "correction"
    DISTINCT = "distinct"


def _lines(name: str) -> list[str]:
    text = (_DATA / name).read_text("utf-8")
    return [
        line.strip().casefold()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


@lru_cache(maxsize=1)
def _negations() -> frozenset[str]:
    return frozenset(_lines("negations.txt"))


@lru_cache(maxsize=1)
def _opposites() -> frozenset[frozenset[str]]:
    return frozenset(frozenset(line.split()) for line in _lines("opposites.txt"))


def is_typo(left: str, right: str) -> bool:
    """Whether two different words are one word mistyped."""
    if min(len(left), len(right)) < 4 or left[0].isdigit() or right[0].isdigit():
        return False
    if left in STOPWORDS or right in STOPWORDS:
        return False  # "here" / "there": two words, not one mistyped
    return difflib.SequenceMatcher(None, left, right).ratio() >= TYPO_RATIO


def _unpaired(words: Collection[str], others: Collection[str]) -> list[str]:
    """`words` that are not a typo of any of `others`."""
    return [w for w in words if not any(is_typo(w, o) for o in others)]


def typo_jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    """Word-set overlap where a word and its typo count as one word."""
    if not left and not right:
        return 1.0
    only_left, only_right = left - right, right - left
    paired = len(only_left) - len(_unpaired(only_left, only_right))
    shared = len(left & right) + paired
    return shared / (len(left | right) - paired)


def compare(new: frozenset[str], old: frozenset[str]) -> Closeness:
    """Whether `new` repeats `old` or corrects it (both close word sets; module docstring)."""
    added, dropped = new - old, old - new
    negations = _negations()
    if any(w in negations or any(c.isdigit() for c in w) for w in added | dropped):
        return Closeness.CORRECTION
    new_words = [w for w in _unpaired(added, dropped) if w not in STOPWORDS]
    old_words = [w for w in _unpaired(dropped, added) if w not in STOPWORDS]
    if not new_words or not old_words:
        return Closeness.REPEAT
    opposites = _opposites()
    if any(frozenset((n, o)) in opposites for n in new_words for o in old_words):
        return Closeness.CORRECTION
    return Closeness.DISTINCT
