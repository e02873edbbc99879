"""The request classifier (issue 33, D261): simple, multi-step, needs-perspectives,
high-stakes or conflict, read from cue tables kept as data (``hrm/data/routing/classes.toml``).

Why cue tables and not rules in code: the classes are about what a request asks for, and the
words that ask for it ("they disagree", "pros and cons", "then document it") are many and
varied; kept as data they are read, extended and measured (`bench/bench_routing.py`) without
touching the scorer. A cue is words, a word ending in ``*`` matches any word it begins, and
``~`` stands for up to eight words, so one cue covers its inflections and the filler people
put between its parts. Each class adds the weights of its distinct cues; `multi_step` also
scores the request's shape (how many things it asks to produce, in sequence or joined).
The first class in the file's ``order`` whose score reaches its threshold wins, else
``simple``. Only what the person says is read (`hrm.reading.pasted.spoken`): a pasted log
full of "conflict" is material, not a request. Pure and total: any string gets a class.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from hrm.errors import HRMError
from hrm.reading.pasted import spoken
from hrm.types import ConflictLevel

__all__ = [
    "RequestClassifier",
    "RequestReading",
    "load_request_classifier",
    "parse_request_classifier",
]

_FILE = "classes.toml"
_WORD = re.compile(r"[a-z0-9&]+(?:['-][a-z0-9]+)*")
_GAP = 8
"""How many words ``~`` may stand for."""
_SCAN_WORDS = 400
"""Cues are looked for in the first this-many words: a request says what it wants early."""
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+\S", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Cue:
    text: str
    parts: tuple[tuple[str, ...], ...]
    """Runs of words between ``~`` gaps; a word ending in ``*`` is a prefix."""
    weight: float

    def found_in(self, words: list[str], present: frozenset[str] | None = None) -> bool:
        """Whether the cue is in `words`; `present` (the set of `words`) lets a cue with a word
        the message does not hold be refused by set lookups before the ordered scan, which
        was over a quarter of a turn's CPU when every cue scanned every message."""
        if present is not None and not self._may_be_in(present):
            return False
        return _find(words, self.parts, 0, len(words))

    def _may_be_in(self, present: frozenset[str]) -> bool:
        for run in self.parts:
            for word in run:
                if word.endswith("*"):
                    stem = word[:-1]
                    if not any(w.startswith(stem) for w in present):
                        return False
                elif word not in present:
                    return False
        return True


@dataclass(frozen=True, slots=True)
class _Shape:
    verbs: tuple[tuple[str, ...], ...]
    sequence: frozenset[str]
    joiners: tuple[tuple[str, ...], ...]
    deliverables: frozenset[str]
    weights: dict[str, float]
    lead_in: frozenset[str]
    question_openers: frozenset[str]
    verbs_by_first: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    """`verbs` filed under their first word, each list in `verbs`' order."""


@dataclass(frozen=True, slots=True)
class _Class:
    name: str
    threshold: float
    cues: tuple[_Cue, ...]
    hint_weight: float = 0.0
    shape: _Shape | None = None


@dataclass
class RequestReading:
    """What a request was read as, with the evidence (for the decision record and /why)."""

    request_class: str
    scores: dict[str, float]
    cues: dict[str, list[str]] = field(default_factory=dict)
    """Per class, the cues (and shape features) that scored."""
    second_opinion: str | None = None
    """The model's class when it was asked (`hrm.reasoning.assist`), agreed or not."""

    def to_record(self) -> dict[str, Any]:
        return {
            "class": self.request_class,
            "scores": {k: round(v, 3) for k, v in self.scores.items()},
            "cues": {k: v[:6] for k, v in self.cues.items() if v},
            **({"second_opinion": self.second_opinion} if self.second_opinion else {}),
        }

    def margin(self, thresholds: dict[str, float]) -> float:
        """How far the closest class is from its threshold, either side (small: unsure)."""
        gaps = [abs(self.scores[name] - t) for name, t in thresholds.items() if name in self.scores]
        return min(gaps, default=1.0)


class _CueIndex:
    """Which cues a message can hold at all, from the words it has (D381).

    Each cue is filed under one word it cannot be found without: its first whole word, else
    (every word a prefix) its first prefix. A message's candidates are the cues filed under
    its words, so the ordered scan runs for a handful of cues instead of every one; a cue
    left out could not have matched, so what is found is the same. What a word files under
    is remembered, as a conversation repeats its words; the memory is bounded.
    """

    _REMEMBERED = 20_000

    def __init__(self, cues: Sequence[_Cue]) -> None:
        whole: dict[str, list[int]] = {}
        stems: dict[str, list[int]] = {}
        for number, cue in enumerate(cues):
            words = [word for run in cue.parts for word in run]
            key = next((word for word in words if not word.endswith("*")), None)
            if key is not None:
                whole.setdefault(key, []).append(number)
            else:
                stems.setdefault(words[0][:-1], []).append(number)
        self._whole = {word: tuple(numbers) for word, numbers in whole.items()}
        self._stems = tuple((stem, tuple(numbers)) for stem, numbers in stems.items())
        self._filed: dict[str, tuple[int, ...]] = {}

    def candidates(self, present: frozenset[str]) -> list[int]:
        """The numbers of the cues filed under any of `present`, ascending."""
        found: set[int] = set()
        filed = self._filed
        for word in present:
            numbers = filed.get(word)
            if numbers is None:
                numbers = self._file(word)
            found.update(numbers)
        return sorted(found)

    def _file(self, word: str) -> tuple[int, ...]:
        numbers = self._whole.get(word, ()) + tuple(
            number for stem, under in self._stems if word.startswith(stem) for number in under
        )
        if len(self._filed) >= self._REMEMBERED:
            self._filed.clear()  # a bound, not a cache policy: refilling costs microseconds
        self._filed[word] = numbers
        return numbers


class RequestClassifier:
    """Reads a request's class from the cue tables. Safe to share between threads: its only
    state is `_CueIndex`'s memory of words, where a lost or repeated entry changes nothing."""

    def __init__(self, classes: tuple[_Class, ...]) -> None:
        self._classes = classes
        self._cues = tuple(
            (position, cue) for position, cls in enumerate(classes) for cue in cls.cues
        )
        self._index = _CueIndex([cue for _, cue in self._cues])

    @property
    def thresholds(self) -> dict[str, float]:
        return {c.name: c.threshold for c in self._classes}

    def classify(
        self, text: str, *, conflict_hint: ConflictLevel | None = None
    ) -> RequestReading:
        """The class of `text`; `conflict_hint` is the governance signals' conflict level."""
        said = spoken(text) if isinstance(text, str) else str(text)
        words = _words(said)[:_SCAN_WORDS]
        present = frozenset(words)
        scores: dict[str, float] = {}
        evidence: dict[str, list[str]] = {}
        found_by_class: list[list[_Cue]] = [[] for _ in self._classes]
        for number in self._index.candidates(present):
            position, cue = self._cues[number]
            if cue.found_in(words, present):
                found_by_class[position].append(cue)
        for cls, hits in zip(self._classes, found_by_class, strict=True):
            score = sum(cue.weight for cue in hits)
            found = [cue.text for cue in hits]
            if cls.hint_weight and conflict_hint in (ConflictLevel.MEDIUM, ConflictLevel.HIGH):
                score += cls.hint_weight
                found.append(f"hint:{ConflictLevel(conflict_hint).value}")
            if cls.shape is not None:
                shape_score, shape_found = _shape_score(cls.shape, words, said)
                score += shape_score
                found += shape_found
            scores[cls.name] = round(score, 4)
            evidence[cls.name] = found
        winner = next(
            (c.name for c in self._classes if scores[c.name] >= c.threshold), "simple"
        )
        return RequestReading(winner, scores, evidence)


@cache
def load_request_classifier() -> RequestClassifier:
    """The classifier of the package's ``hrm/data/routing/classes.toml``, parsed once.

    Raises:
        HRMError: PARSE_ERROR naming the file and the entry that is wrong.
    """
    source = resources.files("hrm").joinpath("data", "routing", _FILE)
    return parse_request_classifier(
        source.read_text(encoding="utf-8"), source=f"hrm/data/routing/{_FILE}"
    )


def parse_request_classifier(text: str, *, source: str = _FILE) -> RequestClassifier:
    """A classifier from the TOML text of a cue table; strict."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HRMError.parse_error(str(exc), path=source) from exc
    order = data.get("order")
    tables = data.get("classes")
    if not isinstance(order, list) or not isinstance(tables, dict) or set(order) != set(tables):
        raise HRMError.parse_error("`order` must list exactly the [classes.*] tables", path=source)
    return RequestClassifier(tuple(_parse_class(name, tables[name], source) for name in order))


def _parse_class(name: str, table: Any, source: str) -> _Class:
    where = f"{source} [classes.{name}]"
    if not isinstance(table, dict):
        raise HRMError.parse_error("must be a table", path=where)
    threshold = table.get("threshold")
    if not isinstance(threshold, int | float) or threshold <= 0:
        raise HRMError.parse_error("threshold must be a positive number", path=where)
    cues = table.get("cues", {})
    if not isinstance(cues, dict):
        raise HRMError.parse_error("cues must be a table of cue = weight", path=where)
    parsed = tuple(_parse_cue(text, weight, where) for text, weight in cues.items())
    hint = table.get("hint_weight", 0.0)
    if not isinstance(hint, int | float):
        raise HRMError.parse_error("hint_weight must be a number", path=where)
    shape = _parse_shape(table["shape"], where) if "shape" in table else None
    return _Class(name, float(threshold), parsed, float(hint), shape)


def _parse_cue(text: str, weight: Any, where: str) -> _Cue:
    if not isinstance(weight, int | float) or isinstance(weight, bool):
        raise HRMError.parse_error(f"cue {text!r}: weight must be a number", path=where)
    parts = tuple(
        tuple(part.split()) for part in text.lower().split("~") if part.strip()
    )
    if not parts or text.strip().startswith("~") or text.strip().endswith("~"):
        raise HRMError.parse_error(f"cue {text!r}: needs words on both sides of ~", path=where)
    return _Cue(text, parts, float(weight))


def _parse_shape(table: Any, where: str) -> _Shape:
    if not isinstance(table, dict):
        raise HRMError.parse_error("shape must be a table", path=where)
    weights = {k: float(v) for k, v in table.items() if isinstance(v, int | float)}
    needed = {"verbs_two", "verb_sequence", "verb_joiner", "nouns_two", "list_items"}
    lists = (
        "production_verbs", "sequence_words", "joiners", "deliverables", "lead_in",
        "question_openers",
    )
    if needed - set(weights) or any(not isinstance(table.get(k), list) for k in lists):
        raise HRMError.parse_error(
            f"shape needs the weights {sorted(needed)} and the lists {list(lists)}", path=where
        )
    verbs = tuple(tuple(v.split()) for v in table["production_verbs"])
    if not all(verbs):
        raise HRMError.parse_error("production_verbs: a verb must have words", path=where)
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for verb in verbs:
        by_first.setdefault(verb[0], []).append(verb)
    return _Shape(
        verbs=verbs,
        sequence=frozenset(table["sequence_words"]),
        joiners=tuple(tuple(j.split()) for j in table["joiners"]),
        deliverables=frozenset(table["deliverables"]),
        weights=weights,
        lead_in=frozenset(table["lead_in"]),
        question_openers=frozenset(table["question_openers"]),
        verbs_by_first={first: tuple(under) for first, under in by_first.items()},
    )


def _shape_score(shape: _Shape, words: list[str], text: str) -> tuple[float, list[str]]:
    """The request's shape: what it asks to produce, and how the parts are strung.

    A production verb counts where a clause could open with it (`_clause_verbs`), so "the
    release" or "a design note" is no verb; a question ("how do I fix the build?") asks for an
    answer, not for work, and has no shape.
    """
    if _is_question(text, shape):
        return 0.0, []
    verb_at = _clause_verbs(shape, text)
    verbs = {verb for _, verb in verb_at}
    nouns = {w for w in words if w in shape.deliverables}
    w, found, score = shape.weights, [], 0.0
    if len(verbs) >= 2:
        score += w["verbs_two"]
        found.append("shape:verbs=" + "+".join(sorted(verbs)[:3]))
    after = words[words.index(verb_at[0][1].split()[0]) + 1 :] if verb_at else []
    if after and any(word in shape.sequence for word in after):
        score += w["verb_sequence"]
        found.append("shape:verb+sequence")
    if after and any(_positions(after, j) for j in shape.joiners):
        score += w["verb_joiner"]
        found.append("shape:verb+joiner")
    if len(nouns) >= 2:
        score += w["nouns_two"]
        found.append("shape:deliverables=" + "+".join(sorted(nouns)[:3]))
    if len(_LIST_ITEM.findall(text[:4000])) >= 3:
        score += w["list_items"]
        found.append("shape:list")
    return score, found


_CLAUSE = re.compile(r"[,;:.!?\n()]+|\b(?:and|then|also|plus)\b")


def _clause_verbs(shape: _Shape, text: str) -> list[tuple[int, str]]:
    """The production verbs that open a clause (after its lead-in words), in order."""
    found: list[tuple[int, str]] = []
    for number, clause in enumerate(_CLAUSE.split(text[:4000].lower())):
        words = _words(clause)
        while words and words[0] in shape.lead_in:
            words = words[1:]
        # Only verbs whose first word opens the clause can match: looked up, not all tried.
        for verb in shape.verbs_by_first.get(words[0], ()) if words else ():
            if tuple(words[: len(verb)]) == verb:
                found.append((number, " ".join(verb)))
                break
    return found


def _is_question(text: str, shape: _Shape) -> bool:
    words = _words(text[:300])
    return bool(words) and words[0] in shape.question_openers and text.rstrip().endswith("?")


def _words(text: str) -> list[str]:
    """The words of `text`; a hyphenated word is followed by its parts, so "multi-region"
    matches its cue and "billing-service-production" says "production"."""
    words: list[str] = []
    for word in _WORD.findall(text[:20_000].lower().replace("’", "'")):
        words.append(word)
        if "-" in word:
            words += [part for part in word.split("-") if part]
    return words


def _matches(word: str, cue: str) -> bool:
    return word.startswith(cue[:-1]) if cue.endswith("*") else word == cue


def _positions(words: list[str], run: tuple[str, ...]) -> list[int]:
    """Where the run of cue words starts in `words`.

    The run's first word is compared inline and the rest only where it matched: a call per
    word and per cue word had been a tenth of a turn (D381).
    """
    n = len(run)
    limit = len(words) - n + 1
    head = run[0]
    if head.endswith("*"):
        stem = head[:-1]
        starts = [i for i in range(limit) if words[i].startswith(stem)]
    else:
        starts = [i for i in range(limit) if words[i] == head]
    if n == 1 or not starts:
        return starts
    return [i for i in starts if all(_matches(words[i + k], run[k]) for k in range(1, n))]


def _find(words: list[str], parts: tuple[tuple[str, ...], ...], start: int, end: int) -> bool:
    """Whether the runs occur in order, each within `_GAP` words of the one before."""
    head, rest = parts[0], parts[1:]
    for i in _positions(words[start:end], head):
        after = start + i + len(head)
        if not rest or _find(words, rest, after, min(len(words), after + _GAP + len(rest[0]))):
            return True
    return False
