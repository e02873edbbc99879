"""What a request must mention: cue words per intent, as data (``data/cues.txt``).

The sentence model generalises over how people phrase a request, which is what it is for, and
it also finds requests in statements that only sound like them: "We're moving our
infrastructure to Terraform" scored as a decision, "Here is my config: …" as a fact to keep.
A request to keep, forget, close or decide something names what it asks ("remember",
"delete", "done", "go with"), however it is phrased around that, so a reading of one of these
intents by a tier that generalises needs one of the intent's cue words in the sentence. The
rules tier reads its own phrasings and is not gated.

A single-word cue of five letters or more also matches a word one slip away after the same first
letter (a letter missing, added or changed, or two swapped: "fogret", "remeber"; not "letter"
for "better"), through the deletion neighbourhoods of the cues, so a check is linear in the
sentence's length. Loaded on first use; a malformed file
fails with an error naming its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from hrm.errors import ErrorCode, HRMError
from hrm.reading.types import IntentKind

__all__ = ["CueGates", "has_cue", "load_cue_gates"]

_FILE = "cues.txt"
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_FUZZY_MIN = 5
"""Shorter cue words match only exactly: one edit turns "done" into "dine" or "gone"."""
_SCAN_CHARS = 600


@dataclass(frozen=True, slots=True)
class CueGates:
    """Each gated intent's cue words and phrases (lower-cased, apostrophes normalised)."""

    words: dict[IntentKind, frozenset[str]]
    phrases: dict[IntentKind, tuple[str, ...]]
    near: dict[IntentKind, frozenset[str]]
    """The deletion neighbourhood of each intent's long cue words, for one-slip typos."""
    unless: dict[IntentKind, tuple[str, ...]]
    """Phrases that use a cue word in another sense ("on another note"): the words of such a
    phrase are not cues."""
    listed: tuple[str, ...] = ()
    """Every single-word cue once, in the order of the file (`hrm.reading.spelling`)."""

    def allows(self, kind: IntentKind, sentence: str) -> bool:
        """Whether `sentence` mentions one of `kind`'s cues; an intent without cues is not
        gated."""
        words = self.words.get(kind)
        if words is None:
            return True
        low = sentence[:_SCAN_CHARS].lower().replace("’", "'")
        flat = " " + " ".join(_WORD.findall(low)) + " "
        for phrase in self.unless.get(kind, ()):
            flat = flat.replace(f" {phrase} ", " ")
        tokens = flat.split()
        if any(t in words for t in tokens):
            return True
        if any(f" {phrase} " in flat for phrase in self.phrases[kind]):
            return True
        near = self.near[kind]
        return any(len(t) >= _FUZZY_MIN - 1 and _near(t, words, near) for t in tokens)


def has_cue(kind: IntentKind, sentence: str) -> bool:
    """Whether `sentence` may carry `kind` as far as its cue words go (module docstring)."""
    return load_cue_gates().allows(kind, sentence)


@cache
def load_cue_gates() -> CueGates:
    """The gates of the package's ``data/cues.txt``, parsed once per process.

    Raises:
        HRMError: ``PARSE_ERROR`` naming the file and line of a malformed entry.
    """
    text = resources.files("hrm.reading").joinpath("data", _FILE).read_text(encoding="utf-8")
    return parse_cue_gates(text, source=f"hrm/reading/data/{_FILE}")


def parse_cue_gates(text: str, *, source: str) -> CueGates:
    """Parse cue lines (``intent: cue, cue, …``); `source` names the file in errors."""
    words: dict[IntentKind, frozenset[str]] = {}
    phrases: dict[IntentKind, tuple[str, ...]] = {}
    near: dict[IntentKind, frozenset[str]] = {}
    unless: dict[IntentKind, tuple[str, ...]] = {}
    in_order: dict[str, None] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, listed = line.partition(":")
        if not sep:
            raise _error(source, number, "expected 'intent: cue, cue, …'")
        name, negated = name.strip().removesuffix("!"), name.strip().endswith("!")
        kind = _kind(name, source, number)
        cues = [" ".join(_WORD.findall(c.lower().replace("’", "'"))) for c in listed.split(",")]
        if not all(cues):
            raise _error(source, number, "expected 'intent: cue, cue, …' with no empty cue")
        if negated:
            unless[kind] = (*unless.get(kind, ()), *cues)
            continue
        if kind in words:
            raise _error(source, number, f"{kind.value!r} is listed twice")
        single = frozenset(c for c in cues if " " not in c)
        in_order.update((c, None) for c in cues if " " not in c)
        words[kind] = single
        phrases[kind] = tuple(c for c in cues if " " in c)
        near[kind] = frozenset(
            c[0] + d for c in single if len(c) >= _FUZZY_MIN for d in _deletions(c[1:])
        )
    return CueGates(words=words, phrases=phrases, near=near, unless=unless,
                    listed=tuple(in_order))


def _kind(name: str, source: str, number: int) -> IntentKind:
    try:
        return IntentKind(name)
    except ValueError:
        raise _error(source, number, f"{name!r} is not an intent") from None


def _near(token: str, words: frozenset[str], near: frozenset[str]) -> bool:
    """One slip away after the same first letter: a letter missing, added, changed, or two
    letters swapped. People rarely mistype a word's first letter, and most English words one
    slip from a cue differ in it: "letter" is one from "better", "later" from "water" (D417)."""
    if token in near:
        return True
    first = token[0]
    return any(first + d in words or first + d in near for d in _deletions(token[1:]))


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _error(source: str, number: int, problem: str) -> HRMError:
    return HRMError(ErrorCode.PARSE_ERROR, f"{source}, line {number}: {problem}",
                    context={"path": source, "line": number})  # fmt: skip
