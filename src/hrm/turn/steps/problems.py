"""Step ``problems``: a request to resolve or park a problem, or to list what is open (D82,
D87), is acted on before arbitration, which weighs the rest of the message with that problem
out of focus."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from hrm._keywords import keywords as extract_keywords
from hrm.reading.rules.problems import FINISHED_WORDS, ProblemRequest
from hrm.reading.types import IntentKind
from hrm.turn.intents import ask_about_problem
from hrm.turn.preferences import without_sentence
from hrm.turn.problems import act_on_problem
from hrm.turn.topics import about_the_closed, closed_in_focus, parked

if TYPE_CHECKING:
    from hrm.reading.types import Intent
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["problems"]

_SAID_OF_ANY_ENDING = frozenset(
    extract_keywords(" ".join(FINISHED_WORDS) + " next then now ok okay thanks close resolve")
)
"""Words any "it is done" says, whatever work it ends."""
_A_LIST = re.compile(r",[^,]+,|:[^:]+,|,\s*(?:and|then)\s")
"""A title that lists several pieces of work ("…: fix the login bug, review Ana's PR, and …")."""

_KINDS: dict[IntentKind, Literal["resolve", "park", "list"]] = {
    IntentKind.RESOLVE: "resolve", IntentKind.PARK: "park", IntentKind.LIST_OPEN: "list",
}  # fmt: skip


def problems(ctx: TurnContext) -> Outcome | None:
    if ctx.confirmation is not None or ctx.decided is not None:
        return None
    intent = next((i for i in ctx.reading.intents if i.kind in _KINDS), None)
    if intent is None or intent.confidence < ctx.services.bands.ask:
        return None
    asked_of = ProblemRequest(_KINDS[intent.kind], intent.slots.ref, ctx.reading.text_of(intent))
    ctx.asked_of = asked_of
    services, record = ctx.services, ctx.record
    if (intent.confidence < services.bands.act or _a_part_of_it(ctx, intent)) and (
        asked_of.kind != "list"
    ):
        # The middle band: one short question, settled by the next yes or no (D150).
        ctx.notes += ask_about_problem(ctx, intent, asked_of)
    else:
        ctx.notes += act_on_problem(
            services.focus, services.db, asked_of,
            last_topic=ctx.state.last_topic, record=record, event=ctx.event,
        )  # fmt: skip
        parked(ctx.state, record)
    before = ctx.heard or ctx.turn_input
    ctx.heard = without_sentence(before, asked_of.clause)
    if ctx.heard is not before:
        record.notes.append("the request about a problem was left out of arbitration")
    if closed_in_focus(record) and ctx.heard.text and about_the_closed(ctx.heard.text):
        # "Done, switched to Decimal and it passes. Close this one.": the rest tells of the
        # work just closed; it opens no problem of its own, and the model still answers all
        # of it (D82).
        ctx.heard = replace(ctx.heard, text="")
        ctx.told_of_closed = True
        record.notes.append("what the message tells of the closed problem opens none")
    return None


def _a_part_of_it(ctx: TurnContext, intent: Intent) -> bool:
    """Does a sentence-model "done" name only a part of the work in focus? "ok login bug done.
    next the PR", under "I have three things today: fix the login bug, review Ana's PR, and
    write the release notes", resolved all three (D443): asked about, as D422's statements are.
    The rules' forms say which problem they mean; a sentence naming nothing ("done with this")
    means the whole."""
    if intent.kind is not IntentKind.RESOLVE or intent.reader.startswith("rules"):
        return False
    active = ctx.services.focus.problem_registry.get_active()
    if active is None:
        return False
    if _A_LIST.search(active.title) is None:
        return False  # "the duplicate emails problem" names the problem by its subject
    named = set(extract_keywords(ctx.reading.text_of(intent))) - _SAID_OF_ANY_ENDING
    title = set(extract_keywords(active.title))
    return bool(named & title) and bool(title - named - _SAID_OF_ANY_ENDING)
