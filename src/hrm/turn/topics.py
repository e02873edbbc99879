"""Where the conversation is: the problem the last input went to, the one before it (for
"Where were we?", D75), and how hrm names a problem in its own answers."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hrm._text import shorten
from hrm.reading.pasted import spoken
from hrm.reading.rules.cues import cues_of
from hrm.turn.state import CONVERSATION_ACTIONS

if TYPE_CHECKING:
    from hrm.turn.records import DecisionRecord
    from hrm.turn.state import TurnState

__all__ = [
    "RESUMED",
    "TOPIC_WORDS",
    "about_the_closed",
    "closed_in_focus",
    "leave",
    "move_topic",
    "parked",
    "problem_title",
    "titled",
]

TOPIC_WORDS = 12
"""Keywords of the last input kept for the next turn's arbitration (`HRMContext.last_topic`)."""
RESUMED = "resume request: back to"
"""How arbitration names a resume request it answered with the earlier topic (D75)."""
_ABOUT_THE_WORK = CONVERSATION_ACTIONS | {"queue"}
"""Exchanges whose input was about a problem: answered, or queued as one."""
_LAST_INPUT_CHARS = 160
"""Characters of the input an earlier topic was left at, for "Where were we?"'s answer."""


def move_topic(state: TurnState, topic: dict[str, Any] | None) -> None:
    """Make `topic` the last one; when the conversation moved to another problem, the one it
    left is the earlier topic, where "Where were we?" goes back to (D75). A problem the last
    input was only queued as was never where the conversation was (D449): "jellyfin
    transcoding is super slow", queued while setting up a home server, then "where were we?"
    went back to it."""
    last = state.last_topic if isinstance(state.last_topic, dict) else {}
    before = last.get("problem_id")
    after = topic.get("problem_id") if topic is not None else None
    if before and after and before != after and not last.get("queued"):
        leave(state, before)
    state.last_topic = topic


def leave(state: TurnState, problem_id: str) -> None:
    """Make `problem_id`, which the last exchange about the work went to, the earlier topic.

    That exchange (one about a preference or a fact has no topic, and hrm's own "Switched to
    …" is procedure) is where "Where were we?" says it was left, in the person's own words,
    pastes left out.
    """
    last = next(
        (
            t["input"] for t in reversed(state.recent)
            if t.get("kind") is None and t.get("action", "respond") in _ABOUT_THE_WORK
        ),
        None,
    )
    said = " ".join(spoken(last).split()) if last else ""
    state.earlier_topic = {
        "problem_id": problem_id,
        "last_input": shorten(said, _LAST_INPUT_CHARS) if said else None,
    }


def closed_in_focus(record: DecisionRecord) -> bool:
    """Did this turn resolve the problem in focus (not one named elsewhere)?"""
    asked = record.problem_request
    return asked is not None and asked.resolution == "resolved" and (
        asked.ref is None or asked.was == "active"
    )


def about_the_closed(text: str) -> bool:
    """Does what a message says beside closing the problem in focus tell of that work ("Done,
    switched to Decimal and it passes.") rather than bring something ("How do I rename a
    branch?", "Our CI is broken", "Unrelated: …")?"""
    cues = cues_of(spoken(text))
    return "?" not in text and cues.follow_up and not cues.opens_new_topic


def parked(state: TurnState, record: DecisionRecord) -> None:
    """After "Let's park the offsite for now.", nothing follows the offsite: a question after
    it is not its follow-up (D67 would take it there). "Where were we?" goes back to the work
    the offsite had interrupted, when there was some (the person just set the offsite aside;
    D465), else to the offsite."""
    asked = record.problem_request
    topic = state.last_topic if isinstance(state.last_topic, dict) else {}
    if (
        asked is not None and asked.resolution == "paused"
        and asked.problem_id is not None and topic.get("problem_id") == asked.problem_id
    ):
        earlier = state.earlier_topic if isinstance(state.earlier_topic, dict) else {}
        if earlier.get("problem_id") in (None, asked.problem_id):
            leave(state, asked.problem_id)
        state.last_topic = None


def titled(title: str) -> str:
    """A problem's title quoted as the end of a sentence: its own stop serves as the sentence's
    (‘I need to finish the review by Friday.’, not ‘… Friday.’.)."""
    return f"‘{title}’" if title.endswith((".", "!", "?", "…")) else f"‘{title}’."


_LEADING_ARTICLE = re.compile(r"^(?:the|my|our|a|an|this|that)\s+", re.IGNORECASE)


def problem_title(named: str) -> str:
    """What a person named, as a problem's title: "the wedding speech" → "Wedding speech"."""
    bare = _LEADING_ARTICLE.sub("", named.strip()) or named.strip()
    return shorten(bare[:1].upper() + bare[1:], 80)
