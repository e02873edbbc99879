"""The one small engine the rule tables run on: a phrase table is module-level data (a kind, a
compiled pattern, a confidence), matched sentence by sentence, each match an `Intent` whose
span is the match inside its sentence.

Patterns are anchored or prefixed with a cheap literal test (`Rule.needs`), never nested
quantifiers over the same characters, so a table reads a message in time linear in its length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hrm.reading.types import Intent, IntentKind, Slots, Span

__all__ = ["NUMBER_WORDS", "TASK_VERBS", "Rule", "match_rules", "number_of", "sentence_at"]

_TASK_TEXT = """
write build create fix add implement refactor review plan design migrate deploy configure
generate draft prepare translate convert port debug optimise optimize upgrade install remove
delete rename schedule organise organize outline help set automate document investigate
clean update make
"""
TASK_VERBS = frozenset(_TASK_TEXT.split())
"""Verbs a task opens with ("Write a script that …", "i want make a website"): one table for
the readers that tell a task from a remark or a preference."""

NUMBER_WORDS: dict[str, int] = {
    "one": 1, "a": 1, "two": 2, "a couple of": 2, "couple of": 2, "three": 3, "a few": 3,
    "few": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
}  # fmt: skip
"""Spans people say in words ("the next two turns", "a couple of messages")."""
NUMBER = r"(?:\d{1,2}|" + "|".join(
    sorted((re.escape(w) for w in NUMBER_WORDS), key=len, reverse=True)
) + r")"
"""A count in digits or words, as a pattern (`number_of` reads it)."""


def number_of(said: str) -> int | None:
    """The count `said` gives ("3", "two", "a couple of"), or None."""
    word = " ".join(said.lower().split())
    if word.isdigit():
        return int(word)
    return NUMBER_WORDS.get(word)


SlotMaker = Callable[[re.Match[str]], Slots | None]
"""Builds an intent's slots from its match; None rejects the match (a guard)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One line of a phrase table."""

    kind: IntentKind
    pattern: re.Pattern[str]
    confidence: float
    """At or above the act threshold for a form that is sure; in the ask band for a weaker
    one ("forget about my cat" when nothing kept says "cat")."""
    needs: tuple[str, ...] = ()
    """Lower-case literals one of which the sentence must hold before the pattern runs."""
    slots: SlotMaker | None = None
    name: str = ""
    """Names the rule in the reader (``rules:<table>.<name>``)."""


def match_rules(
    rules: Sequence[Rule], said: str, spans: Sequence[Span], table: str
) -> list[Intent]:
    """Every rule's first match in each sentence, as intents (a sentence may hold several
    intents of different kinds; one kind is read once per sentence)."""
    found: list[Intent] = []
    for start, end in spans:
        sentence = said[start:end]
        low = sentence.lower()
        kinds: set[IntentKind] = set()
        for rule in rules:
            if rule.kind in kinds or (rule.needs and not any(n in low for n in rule.needs)):
                continue
            match = rule.pattern.search(sentence)
            if match is None:
                continue
            slots = rule.slots(match) if rule.slots is not None else Slots()
            if slots is None:
                continue
            kinds.add(rule.kind)
            reader = f"rules:{table}" + (f".{rule.name}" if rule.name else "")
            span = (start + match.start(), start + match.end())
            found.append(Intent(rule.kind, span, rule.confidence, reader, slots))
    return found


def sentence_at(spans: Sequence[Span], at: int) -> Span | None:
    """The sentence span holding offset `at`."""
    return next(((s, e) for s, e in spans if s <= at < e), None)
