"""The one reading stage: a message, read once, into a `Reading` (issue 29).

`read(text, context, tiers)` splits pasted material off (`reading.pasted`: code, logs,
tracebacks and JSON are material, not the person's words, D71), cuts what is left into
sentences (`reading.sentences`), runs the rules tier over every sentence and each later tier
(nearest exemplars on the sentence model, a capable model) only over the sentences no earlier
tier read with a confidence at or above the ask threshold; an earlier tier wins where two
overlap. What is left once the commands' words are out (`Reading.rest`) is what arbitration
weighs, and its `Cues` are read from it.

Bounded and total: a reader sees at most `MAX_READ_CHARS` of the person's words, every table is
linear in what it reads, and no text — empty, a megabyte, invalid UTF-8 carried as surrogates,
control characters — raises: a reader that fails is logged and its tier is left out.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from hrm._keywords import keywords
from hrm.reading.pasted import spoken
from hrm.reading.rules.cues import cues_of
from hrm.reading.rules.tier import RulesReader
from hrm.reading.sentences import MAX_READ_CHARS, sentence_spans
from hrm.reading.spelling import corrected
from hrm.reading.types import (
    SET_APART,
    Bands,
    Cues,
    Declined,
    Intent,
    IntentKind,
    Reader,
    Reading,
    ReadingContext,
    Span,
)

if TYPE_CHECKING:
    from hrm.config import HRMConfig
    from hrm.home import HRMHome
    from hrm.llm.types import ILLMAdapter
    from hrm.reading.rules.preferences import PreferenceRules

__all__ = ["available_tiers", "later_tiers", "read", "rest_of", "without_span_text"]

logger = logging.getLogger(__name__)

_NO_CONTEXT = ReadingContext()


def available_tiers(preferences: PreferenceRules | None = None) -> tuple[Reader, ...]:
    """The rules (always), then the exemplar classifier with its defaults when the
    `embeddings` extra is installed: what tests and benchmarks read with."""
    tiers: list[Reader] = [RulesReader(preferences)]
    exemplars = _exemplar_reader()
    if exemplars is not None:
        tiers.append(exemplars)
    return tuple(tiers)


def later_tiers(
    config: HRMConfig,
    *,
    cache_dir: Path | None,
    llm: ILLMAdapter | None,
    bands: Bands,
) -> tuple[Reader, ...]:
    """The tiers that read after the rules for a stack, as its configuration says: the
    exemplar classifier (``reading.sentence_model``; its index kept under `cache_dir`), then
    the model tier (``reading.model_tier``, through the stack's gateway `llm`, only for a
    capable model). Built once when a stack opens; each loads its model on first use.

    Raises:
        HRMError: ``VALIDATION_FAILED`` when a tier is set ``on`` and cannot run here.
    """
    from hrm.reading.model_reader import load_model_reader
    from hrm.reading.sentence import load_exemplar_reader

    tiers: list[Reader] = []
    exemplars = load_exemplar_reader(
        cache_dir=cache_dir, bands=bands, setting=config.reading.sentence_model
    )
    if exemplars is not None:
        tiers.append(exemplars)
    model = load_model_reader(config, llm, bands=bands)
    if model is not None:
        tiers.append(model)
    return tuple(tiers)


def exemplar_cache_dir(home: HRMHome) -> Path:
    """Where the exemplar index is kept between processes: beside the installed models
    (``<venv>/share/hrm/cache``), shared by every home, since it holds only what the package
    ships embedded by the model; the home's ``cache/`` when that folder cannot be written (a
    read-only install). Every new home and every server process would otherwise embed all
    the exemplars again, seconds each."""
    shared = Path(sys.prefix) / "share" / "hrm" / "cache"
    existing = next((p for p in (shared, *shared.parents) if p.exists()), None)
    if existing is not None and os.access(existing, os.W_OK):
        return shared
    return home.cache_dir


@lru_cache(maxsize=1)
def _exemplar_reader() -> Reader | None:
    """The exemplar tier with its defaults, once per process (tests, benchmarks); None
    without the `embeddings` extra. A stack builds its own from its config (`later_tiers`)."""
    from hrm.reading.sentence import load_exemplar_reader

    return load_exemplar_reader()


def read(
    text: str,
    context: ReadingContext = _NO_CONTEXT,
    tiers: Sequence[Reader] | None = None,
    *,
    bands: Bands = Bands(),  # noqa: B008 - frozen, never mutated
) -> Reading:
    """`text` read once by `tiers` (default: the rules alone). Never raises."""
    if not isinstance(text, str) or not text.strip():
        return Reading(text=text if isinstance(text, str) else "", said="")
    said = spoken(text)
    pasted = _lines(text) - _lines(said) if said is not text else 0
    said = corrected(said)  # "i prefr dark mode": every tier reads the cue as meant (D452)
    head = said[:MAX_READ_CHARS]
    spans = sentence_spans(head)
    readers = tuple(tiers) if tiers is not None else (RulesReader(),)
    intents: list[Intent] = []
    declined: list[Declined] = []
    ran: list[str] = []
    for tier in readers:
        todo = spans if not intents else _unread(spans, intents, bands)
        if not todo:
            break
        ran.append(tier.name)
        try:
            found = tier.read(head, todo, context, earlier=tuple(intents))
        except Exception:  # a reader must never fail a turn: its tier is left out
            logger.exception("reader %s failed; its tier is left out of this reading", tier.name)
            continue
        intents = _merge(intents, _not_declined(found, declined), bands)
        declined += getattr(tier, "declined", ())
    rest = rest_of(head, intents, bands)
    cues = _with_moves(cues_of(rest), intents, bands, head)
    return Reading(
        text=text, said=said, intents=tuple(intents), cues=cues,
        rest=rest, pasted_lines=pasted, readers=tuple(ran), declined=tuple(declined),
    )  # fmt: skip


_ABOUT_THE_WORK = frozenset({IntentKind.NEGATIVE_FEEDBACK, IntentKind.DECISION})
_CLOSINGS = frozenset({IntentKind.GOODBYE, IntentKind.THANKS})
"""Moves that speak of the conversation at hand: what else the message says continues it."""


def _with_moves(cues: Cues, intents: Sequence[Intent], bands: Bands, said: str) -> Cues:
    """`cues` with the moves a tier read at the act band that the rules' cue reading of the
    rest missed: a sentence model's "so, what was we doing before that?" is a resume, and
    arbitration must weigh it as one; "back to the offsite" is a switch to the work it names."""
    for intent in intents:
        if intent.confidence < bands.act:
            continue
        if intent.kind is IntentKind.RESUME and intent.slots.topic and not cues.resume_to:
            # Only the rules' sure forms ("back to X", "let's get back to X", "resume X") are
            # moves whatever X is; the sentence model also reads "go back to the previous
            # version of the function" as one, which is a request about the work.
            alone = intent.reader.startswith("rules") and not keywords(
                without_span_text(said, intent.span)
            )
            cues = replace(cues, resume_to=intent.slots.topic, resume_only=alone)
        elif intent.kind is IntentKind.RESUME and not cues.resume and not intent.slots.topic:
            cues = replace(cues, resume=True)
        elif intent.kind in _ABOUT_THE_WORK and not cues.opens_new_topic:
            # "That's wrong, I said no mushrooms" is about the last answer (D419); "we're
            # going with pg_dump for the initial copy" decides something of the work (D420).
            cues = replace(cues, follow_up=True)
        elif (
            intent.kind in _CLOSINGS and not cues.closing
            and not keywords(without_span_text(said, intent.span))
        ):
            # "thx thats all for today" read by the sentence model closes the conversation as
            # the rules' "thanks, that's all" does: no problem of its own, no switch (D458)
            cues = replace(cues, closing=True)
        elif intent.kind is IntentKind.FOCUS and not cues.focus:
            cues = replace(
                cues,
                focus=True,
                focus_turns=intent.slots.turns,
                focus_topic=intent.slots.topic or "",
            )
    return cues


def rest_of(said: str, intents: Sequence[Intent], bands: Bands = Bands()) -> str:  # noqa: B008
    """`said` without the words of the commands set apart (`SET_APART`, ask band and up)."""
    rest = said
    for intent in sorted(intents, key=lambda i: i.span, reverse=True):
        if intent.kind in SET_APART and intent.confidence >= bands.ask:
            rest = without_span_text(rest, intent.span)
    return rest.strip()


_LEFT_OVER = " \t\r\n.,;:!?-–—"
"""What a removed sentence leaves after it: its stop and the space before the next."""
_JOINING = " \t\r\n,;:-–—"
"""What a removed sentence leaves before it (the previous sentence keeps its stop)."""


def without_span_text(text: str, span: Span) -> str:
    """`text` without `text[span]`, joined as a sentence removed from a message is: "I prefer
    tabs. How do I …?" without the preference is "How do I …?"."""
    before = text[: span[0]].rstrip(_JOINING)
    after = text[span[1] :].lstrip(_LEFT_OVER)
    return (f"{before} {after}" if before and after else before or after).strip()


def _not_declined(found: Sequence[Intent], declined: Sequence[Declined]) -> list[Intent]:
    """`found` without what an earlier tier knew the same words not to be (`Declined.final`):
    a sentence the rules know states no preference ("I'd rather not say", "I always get this
    error") is not one because it sounds like the sentence model's examples of one."""
    return [
        i for i in found
        if not any(d.final and d.kind is i.kind and _overlap(d.span, i.span) for d in declined)
    ]  # fmt: skip


def _unread(spans: Sequence[Span], intents: Sequence[Intent], bands: Bands) -> list[Span]:
    """The sentences no intent read with a confidence at or above the ask threshold."""
    sure = [i.span for i in intents if i.confidence >= bands.ask]
    return [s for s in spans if not any(_overlap(s, span) for span in sure)]


def _merge(earlier: list[Intent], later: Sequence[Intent], bands: Bands) -> list[Intent]:
    """`earlier` and what a later tier read with confidence: a later tier's reading below the
    ask threshold is no reading (the sentence stays ordinary, and no note speaks of it); a
    sure later reading replaces an earlier unsure one of the same words; otherwise earlier
    tiers win where readings overlap."""
    sure = [i for i in later if i.confidence >= bands.ask]
    kept = [
        e for e in earlier
        if e.confidence >= bands.ask or not any(_overlap(e.span, i.span) for i in sure)
    ]  # fmt: skip
    added = [i for i in sure if not any(_overlap(e.span, i.span) for e in kept)]
    return sorted([*kept, *added], key=lambda i: i.span)


def _overlap(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _lines(text: str) -> int:
    """How many lines of `text` have something on them."""
    return sum(1 for line in text.split("\n") if line.strip())
