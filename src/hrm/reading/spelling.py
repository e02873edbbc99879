"""Cue words as people mistype them: "i prefr dark mode in all the apps", "forgt that" (D452).

A request names what it asks ("prefer", "forget", "remember", "resolved"), and the readers look
for those words: the rules by pattern, the sentence model by how a sentence embeds, and a word
one slip away ("prefr") is neither. `corrected` writes such a word as the cue it misspells before
any tier reads the message, so every tier, and what is kept, sees the word as meant.

A word is corrected only when it is one typing slip (a letter missing, added, changed, or two
swapped, after the same first letter: `cue_gates`) from a cue word of five letters or more, and
is itself no English word: "clean" is one slip from "clear" but a word of its own. A slip from
two cues takes the one listed first in ``cues.txt`` ("forgt" is "forget", not "forgot";
"remeber" is "remember", not the listed misspelling "rember").
English words are the whole words of the MiniLM tokenizer's vocabulary, which the core package
ships (about 22,000 of them), read only when a message holds a candidate.
"""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache
from importlib import resources

from hrm.reading.cue_gates import load_cue_gates

__all__ = ["corrected"]

_TOKEN = re.compile(r"[A-Za-z]{4,}")
_MIN_CUE = 5
_SCAN_CHARS = 2000
"""A request is said in a message's first sentences; a paste is not corrected."""
_VOCABULARY = "data/models/all-MiniLM-L6-v2/tokenizer.json"


def corrected(said: str) -> str:
    """`said` with each word one slip from a cue word written as that cue; `said` itself (the
    same object) when there is none, which is most messages."""
    changes: list[tuple[int, int, str]] = []
    for match in _TOKEN.finditer(said[:_SCAN_CHARS]):
        token = match.group()
        cue = _meant(token.lower())
        if cue is not None:
            changes.append((match.start(), match.end(),
                            cue.capitalize() if token[0].isupper() else cue))  # fmt: skip
    if not changes:
        return said
    out: list[str] = []
    at = 0
    for start, end, cue in changes:
        out += (said[at:start], cue)
        at = end
    out.append(said[at:])
    return "".join(out)


@lru_cache(maxsize=8192)
def _meant(word: str) -> str | None:
    """The cue `word` misspells, or None (a cue itself, an English word, or no cue near it).
    Remembered: a person's words recur from message to message."""
    cues, index = _cue_index()
    if word in cues:
        return None
    found = {cue for key in _keys(word) for cue in index.get(key, ())}
    if not found or _is_english(word):
        return None
    return min(found, key=cues.__getitem__)


def _keys(word: str) -> set[str]:
    """The word and its deletions after the first letter: two words one slip apart share one."""
    rest = word[1:]
    return {word, *(word[0] + rest[:i] + rest[i + 1 :] for i in range(len(rest)))}


@cache
def _cue_index() -> tuple[dict[str, int], dict[str, frozenset[str]]]:
    """Every cue word with its place in the file, and those of `MIN_CUE` letters or more by
    each of their keys."""
    cues = {word: rank for rank, word in enumerate(load_cue_gates().listed) if word.isalpha()}
    index: dict[str, set[str]] = {}
    for cue in cues:
        if len(cue) >= _MIN_CUE:
            for key in _keys(cue):
                index.setdefault(key, set()).add(cue)
    return cues, {key: frozenset(found) for key, found in index.items()}


_SUFFIXES = ("ing", "est", "es", "ed", "er", "ly", "s", "d")


def _is_english(word: str) -> bool:
    """A word of the vocabulary, or an inflection of one: the vocabulary holds "fix" but not
    "fixes", which must not become the cue "fixed"."""
    english = _english()
    if word in english:
        return True
    for suffix in _SUFFIXES:
        base = word.removesuffix(suffix)
        doubled = base[-1:] == base[-2:-1]  # "stopping": "stop"
        if base != word and len(base) >= 3 and (
            base in english or base + "e" in english or (doubled and base[:-1] in english)
        ):
            return True
    return False


@cache
def _english() -> frozenset[str]:
    """The tokenizer's whole words (lower-case letters only), as the words of English."""
    raw = resources.files("hrm").joinpath(_VOCABULARY).read_text(encoding="utf-8")
    vocabulary = json.loads(raw)["model"]["vocab"]
    return frozenset(word for word in vocabulary if word.isalpha() and word.islower())
