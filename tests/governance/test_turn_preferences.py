"""The preference steps of a turn: the statement kept, its key, and a held preference settled."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hrm.reading.reader import read
from hrm.reading.rules.preferences import preference_statement
from hrm.reading.types import IntentKind, ReadingContext
from hrm.turn.preferences import preference_key, resolve_pending
from hrm.turn.records import DecisionRecord
from hrm.turn.state import TurnState


def answers_only(text: str) -> bool:
    """Is `text`, read while hrm waits on "Should I remember …?", only a yes or a no?"""
    reading = read(text, ReadingContext(pending="preference"))
    return any(i.kind in (IntentKind.YES, IntentKind.NO) and i.slots.rest is None
               for i in reading.intents)


def _answer(text: str) -> IntentKind | None:
    reading = read(text, ReadingContext(pending="preference"))
    return next((i.kind for i in reading.intents), None)


def test_the_sentence_that_states_the_preference_is_kept() -> None:
    text = "Thanks for that. I prefer short answers with examples. Now, about the cache?"
    assert preference_statement(text) == "I prefer short answers with examples"
    assert preference_key("I prefer short answers!") == "preference.i-prefer-short-answers"


@given(st.text(max_size=5000))
def test_any_input_gives_a_bounded_statement_and_a_well_formed_key(text: str) -> None:
    statement = preference_statement(text)
    assert len(statement) <= 300
    assert re.fullmatch(r"preference\.[a-z0-9-]{1,48}", preference_key(statement))


class _Stack:
    def __init__(self) -> None:
        self.writes: list[tuple[str, str, bool]] = []

    def write_preference(self, statement: str, key: str, *, confirmed: bool) -> dict[str, Any]:
        self.writes.append((statement, key, confirmed))
        return {"key": key, "approved": True, "target": "shared_reference"}


def _record() -> DecisionRecord:
    return DecisionRecord(turn=2, session_id="S", agent_class="ADMIN", trace_id="t",
                          input_summary="")


def test_yes_canonizes_no_drops_and_anything_else_lets_it_go_unconfirmed() -> None:
    pending = {"statement": "I like dark mode", "key": "preference.i-like-dark-mode"}
    events: list[str] = []

    def event(kind: str, **_: Any) -> None:
        events.append(kind)

    stack, state = _Stack(), TurnState(pending_preference=dict(pending))
    record = _record()
    assert resolve_pending(stack, state, _answer("What about the cache?"), record, event) is None
    assert state.pending_preference is None and not stack.writes
    assert "went unanswered" in record.notes[0]
    # a later "yes" (to something else) has nothing to confirm
    assert resolve_pending(stack, state, _answer("yes"), _record(), event) is None and not stack.writes
    assert events == ["preference_unconfirmed"]
    events.clear()
    state.pending_preference = dict(pending)
    record = _record()
    assert "Remembered" in (resolve_pending(stack, state, _answer("yes please"), record, event) or "")
    assert stack.writes == [("I like dark mode", "preference.i-like-dark-mode", True)]
    assert record.preference == {**pending, "resolution": "confirmed"}
    assert state.pending_preference is None
    state.pending_preference = dict(pending)
    assert resolve_pending(stack, state, _answer("no"), _record(), event) is not None
    assert state.pending_preference is None and len(stack.writes) == 1
    assert events == ["preference_confirmed", "preference_declined"]


BARE = ["yes", "Yes!", "yes please", "Sure.", "yep, thanks", "correct", "No.", "no, thanks",
        "nope", "never mind", "Yes, I do.", "do it", "please do", "  yes  "]
GOES_ON = ["yes, and add tests to the parser", "No, I meant the other table",
           "Right, now refactor the parser", "sure, but first explain the cache",
           "no idea", "yesterday the build broke", "ok", "maybe", ""]


def test_a_bare_yes_or_no_is_told_from_a_reply_that_goes_on() -> None:
    assert [t for t in BARE if not answers_only(t)] == []
    assert [t for t in GOES_ON if answers_only(t)] == []


_POLITE = st.sampled_from(["please", "thanks", "thank you", "it is", "i do", "go ahead"])
_PUNCT = st.text(alphabet=" ,.!", max_size=3)


@given(st.sampled_from(["yes", "Yes", "sure", "no", "No", "nope"]),
       st.lists(st.tuples(_PUNCT, _POLITE), max_size=2), _PUNCT)
def test_an_answer_word_with_only_politeness_after_it_is_bare(
    word: str, tail: list[tuple[str, str]], end: str
) -> None:
    text = word + "".join(f"{p or ' '}{w}" for p, w in tail) + end
    assert answers_only(text) is (len(text) <= 60)


@given(st.sampled_from(["yes", "no", "sure"]), st.text(min_size=1, max_size=80))
def test_an_answer_followed_by_a_word_of_its_own_is_not_bare(word: str, rest: str) -> None:
    text = f"{word}, {rest}"
    stripped = re.sub(r"[\s,.!]", "", rest.lower())
    polite = {"please", "pls", "thanks", "thankyou", "itis", "ido", "do", "goahead",
              "rememberit", "forgetit", "ok", "okay"}
    # A word has a letter or a digit: "yes, {" is a bare yes with a stray brace after it.
    has_word = re.search(r"[^\W_]", rest) is not None
    if has_word and stripped and not any(stripped.startswith(p) for p in polite):
        assert not answers_only(text)
