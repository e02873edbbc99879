"""Step ``read``: the message read once (`hrm.reading.reader.read`), with what the turn knows —
the question hrm is waiting on, what the turn before kept, what the canon holds, the open
problems a "forget about X" may name instead. Every later step acts on this `Reading`; none
matches the message with patterns of its own. The reading the turn acted on is part of the
decision record (``reading``, written by the runner), so `/why` can say what was understood and
by which reader."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from hrm.reading.reader import read
from hrm.reading.rules.memory import kept_text
from hrm.reading.rules.preferences import PreferenceRules
from hrm.reading.rules.problems import FINISHED_WORDS
from hrm.reading.rules.tier import RulesReader
from hrm.reading.types import ReadingContext
from hrm.turn.steps.forget import just_kept

if TYPE_CHECKING:
    from hrm.reading.types import Reading
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["read_message", "reread"]


def read_message(ctx: TurnContext) -> Outcome | None:
    ctx.just_kept = just_kept(ctx.state, ctx.record.turn)
    ctx.reading = _read(ctx, pending=_pending(ctx))
    return None


def reread(ctx: TurnContext) -> Reading:
    """Read the turn's input again, with no question pending: after "switch", the input that
    was asked about is the one answered (D43)."""
    ctx.reading = _read(ctx, pending=None)
    return ctx.reading


def _read(ctx: TurnContext, *, pending: str | None) -> Reading:
    services, text = ctx.services, ctx.text
    kernel = services.kernel
    classify = partial(kernel.classify_preference, source=ctx.turn_input.source)
    rules = PreferenceRules(classify, kernel.preference_classifier.spans)
    context = ReadingContext(
        pending=pending, just_kept=ctx.just_kept, kept=_Kept(services.stack.canon()),
        open_problems=_open_titles(ctx) if _NAMES_PROBLEMS.search(text) else (),
    )  # fmt: skip
    tiers = (RulesReader(rules), *services.later_tiers)
    return read(text, context, tiers, bands=services.bands)


class _Kept(Mapping[str, str]):
    """What the canon keeps, key → text, read only when a rule asks (most messages ask
    nothing of memory, and the canon grows with every preference and fact)."""

    __slots__ = ("_canon",)

    def __init__(self, canon: Mapping[str, Any]) -> None:
        self._canon = canon

    def __getitem__(self, key: str) -> str:
        said = kept_text(self._canon[key]) if key.startswith(_KEPT) else None
        if said is None:
            raise KeyError(key)
        return said

    def __iter__(self) -> Iterator[str]:
        return (
            key for key, value in self._canon.items()
            if key.startswith(_KEPT) and kept_text(value) is not None
        )  # fmt: skip

    def __len__(self) -> int:
        return sum(1 for _ in self)


_KEPT = ("preference.", "fact.")


def _pending(ctx: TurnContext) -> str | None:
    state = ctx.state
    if state.pending_preference:
        return "preference"
    if isinstance(state.pending_switch, dict):
        return "switch"
    if state.pending_intent:
        return "intent"
    return None


_NAMES_PROBLEMS = re.compile(
    r"forget|park|pause|shelve|work|" + "|".join(w.split("-")[0] for w in FINISHED_WORDS),
    re.IGNORECASE,
)
"""Words of the requests whose reading needs the open problems' titles ("forget about X" may
name a problem instead of something kept; "park the X" pauses only an open problem's X; "the
report is done" asks about an open problem's report only)."""


def _open_titles(ctx: TurnContext) -> tuple[str, ...]:
    """Titles of the open problems: what "forget about X" may name instead of something kept,
    and what "park the X" may pause."""
    from hrm.governance.problems import ProblemStatus

    registry = ctx.services.focus.problem_registry
    return tuple(p.title for p in registry.list() if p.status is not ProblemStatus.RESOLVED)
