"""The rules tier: every table of `hrm.reading.rules` behind the `Reader` interface."""


from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from hrm.reading.rules.answers import read_answers, read_moves
from hrm.reading.rules.corrections import read_correction_intents
from hrm.reading.rules.decisions import read_decision_intents
from hrm.reading.rules.focus import read_focus_intents
from hrm.reading.rules.memory import read_memory_intents
from hrm.reading.rules.problems import read_problem_intents
from hrm.reading.types import ANSWERS, Declined, Intent, IntentKind, ReadingContext, Span

if TYPE_CHECKING:
    from hrm.reading.rules.preferences import PreferenceRules

__all__ = ["RulesReader", "default_preferences"]


class RulesReader:
    """The rules tier (`hrm.reading.types.Reader`), with the stack's preference patterns."""

    name = "rules"

    def __init__(self, preferences: PreferenceRules | None = None) -> None:
        """Rules reading preferences with `preferences` (a stack's policy patterns, its
        source bound); by default with the default policy's, as a fresh stack reads them."""
        self.preferences = preferences if preferences is not None else default_preferences()
        self.declined: tuple[Declined, ...] = ()
        """What the last `read` matched and judged no intent (read by the composer)."""

    def read(
        self,
        said: str,
        spans: Sequence[Span],
        context: ReadingContext,
        *,
        earlier: Sequence[Intent] = (),
    ) -> tuple[Intent, ...]:
        answers = read_answers(said, context)
        declined: list[Declined] = []
        if answers and context.pending in ("preference", "intent"):
            # The message answers hrm's question: it asks nothing else of hrm (D36, D50).
            self.declined = ()
            return tuple(answers)
        memory = read_memory_intents(said, spans, context)
        found: list[Intent] = [
            *answers,
            *(i for i in memory if i.kind in (IntentKind.FORGET, IntentKind.LIST_KEPT)),
        ]
        if not any(i.kind in ANSWERS for i in answers):
            # An answer to "switch or queue?" (or a bare "switch") decides arbitration: what
            # it says of a problem's status is not read (D43).
            found += read_problem_intents(said, spans, context)
        intents, declined = self.preferences.read(said)
        found += intents
        # "Keep in mind I prefer tabs" is the preference's, not a fact (D73).
        found += (i for i in memory if i.kind is IntentKind.FACT)
        found += read_decision_intents(said)
        found += read_focus_intents(said)
        found += read_moves(said, spans)
        found += read_correction_intents(said, spans, context)
        self.declined = tuple(declined)
        return _without_overlaps(found)


@cache
def default_preferences() -> PreferenceRules:
    """The preference table on the default policy's patterns, for a message from the user
    (built once a process: the classifier compiles the policy's patterns)."""
    from hrm.config import PolicySurface
    from hrm.governance.preferences import PreferenceClassifier
    from hrm.reading.rules.preferences import PreferenceRules

    classifier = PreferenceClassifier(PolicySurface())
    return PreferenceRules(classifier.classify, classifier.spans)


_MOVES_OVERLAP = frozenset({"focus", "resume", "set_aside", "decision", "negative_feedback",
                            "thanks", "goodbye", "correct"})  # fmt: skip
"""Moves arbitration reads: they may share words with a command (a set-aside that is also a
request to park, a decision in a sentence that also focuses)."""


def _without_overlaps(found: list[Intent]) -> tuple[Intent, ...]:
    """The intents in table order, dropping a command that overlaps one kept before it; moves
    may overlap anything. Sorted by where they start."""
    kept: list[Intent] = []
    for intent in found:
        clashes = intent.kind.value not in _MOVES_OVERLAP and any(
            other.kind.value not in _MOVES_OVERLAP
            and intent.span[0] < other.span[1] and other.span[0] < intent.span[1]
            for other in kept
        )
        if not clashes:
            kept.append(intent)
    return tuple(sorted(kept, key=lambda i: i.span))
