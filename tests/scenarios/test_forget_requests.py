""""Forget that" and "Forget what I said about X" take back what hrm keeps (D77).

In a grant-writing conversation, "I prefer short paragraphs." was canon at once, and
"Actually, forget that, long paragraphs are fine." went to the model: the preference stayed in
every later prompt. "Forget the deadline I told you." did not forget the fact either, and was
queued as a problem of its own.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.governance.preferences import is_retracted
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reading.rules.memory import kept_matching, read_forget_request, without_clause
from hrm.storage.rebuild import rebuild
from hrm.testing import ScriptedAdapter, ScriptedReply

SHORT = "I prefer short paragraphs."
DEADLINE = "Remember that the grant deadline is March 3."


def _kept(h: HRM) -> dict[str, str]:
    return {k: v for k, v in h.stack.canon().items() if not is_retracted(v)}


def test_forget_that_takes_back_what_the_turn_before_kept(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'm drafting a grant proposal for a community garden project.")
        h.turn(SHORT)
        assert "preference.i-prefer-short-paragraphs" in _kept(h)
        result = h.turn("Actually, forget that, long paragraphs are fine.")
        assert "preference.i-prefer-short-paragraphs" not in _kept(h)
        assert "Forgotten: “I prefer short paragraphs”." in result.response
        memo = result.decision.memory_request
        assert memo["keys"] == ["preference.i-prefer-short-paragraphs"]
        assert memo["resolution"] == "forgotten"
        assert result.decision.writes[0]["retracted"] is True
        # the rest of the message is answered, and the preference no longer reaches the model
        assert result.action == "respond"
        later = h.turn("What sections does a typical grant proposal have?")
        assert "short paragraphs" not in later.response
        # the history keeps what was said, for rollback
        history = h.stack.bus.shared.history("preference.i-prefer-short-paragraphs")
        assert history[0].value == "I prefer short paragraphs"
        assert is_retracted(history[-1].value) and len(history) == 2


def test_forget_that_after_nothing_kept_is_not_about_memory(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(SHORT)
        h.turn("What sections does a typical grant proposal have?")
        result = h.turn("Scratch that. How long should the summary be?")
        assert result.decision.memory_request is None
        assert "preference.i-prefer-short-paragraphs" in _kept(h)


def test_a_request_naming_a_kept_fact_forgets_it_without_a_model_call(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(DEADLINE)
        h.turn(SHORT)
        result = h.turn("Forget the deadline I told you.")
        assert result.action == "remember" and not result.decision.execution
        assert result.response == "Forgotten: “the grant deadline is March 3”."
        assert list(_kept(h)) == ["preference.i-prefer-short-paragraphs"]
        assert h.focus.problem_registry.list() == []  # no problem titled by the request
    with HRM.open(home, "ADMIN", "offline") as again:  # another process: still forgotten
        answer = again.turn("When is the grant deadline?")
        assert "March 3" not in answer.response


def test_a_request_naming_nothing_kept_or_two_things_changes_nothing(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer short paragraphs in summaries.")
        h.turn("I prefer long paragraphs in the methods section.")
        before = dict(h.stack.canon())
        none = h.turn("Forget what I said about tabs")
        assert none.response == "Nothing I keep matches “tabs”, so nothing was forgotten."
        both = h.turn("Forget what I said about paragraphs")
        assert both.response.startswith("More than one thing I keep matches “paragraphs”:")
        assert both.decision.memory_request["resolution"] == "ambiguous"
        assert dict(h.stack.canon()) == before
        one = h.turn("Forget what I said about the methods section")
        assert one.response == "Forgotten: “I prefer long paragraphs in the methods section”."


def test_a_request_sharing_only_a_word_with_a_kept_fact_is_asked_about(home: HRMHome) -> None:
    # "forget the billing migration" shared "billing" with the one fact kept and forgot it
    # at once (D377): a person's data went on a word in common.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'm working on the billing migration to Postgres")
        h.turn("store this: the billing db host is pg-billing-2")
        asked = h.turn("forget the billing migration")
        assert asked.response == (
            "Do you want me to forget “the billing db host is pg-billing-2”? (yes/no)"
        )
        assert list(_kept(h)) == ["fact.the-billing-db-host"]
        assert h.turn("no").response.startswith("Understood — I still keep")
        assert list(_kept(h)) == ["fact.the-billing-db-host"]
        named = h.turn("forget the billing db host")  # every word of it: acted on at once
        assert named.response == "Forgotten: “the billing db host is pg-billing-2”."
        assert list(_kept(h)) == []


def test_forget_that_i_prefer_states_no_preference(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer tabs over spaces.")
        result = h.turn("Please forget that I prefer tabs over spaces.")
        assert result.response == "Forgotten: “I prefer tabs over spaces”."
        assert _kept(h) == {}
        said_again = h.turn("I prefer tabs over spaces.")  # a preference can be stated anew
        assert said_again.response == "Noted as canon: “I prefer tabs over spaces”."


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("Actually, forget that, long paragraphs are fine.", None),
        ("Never mind that.", None),
        ("Forget the deadline I told you.", "deadline"),
        ("Forget what I said about paragraphs", "paragraphs"),
        ("Forget my preference for tabs.", "tabs"),
        ("Can you forget the URL I gave you?", "URL"),
        ("Stop remembering the API base URL.", "the API base URL"),
    ],
)
def test_what_asks_to_forget(text: str, what: str | None) -> None:
    request = read_forget_request(text)
    assert request is not None and request.what == what


@pytest.mark.parametrize(
    "text",
    [
        "I forgot my password",
        "Don't forget to call Sam",  # a request to remember
        "Ignore the warnings",
        "Never mind the sections, can you help with the budget?",
        "Forget about it, the build passes now",
        "Remove the file I told you about",  # work to do, not memory
        "Forget about the budget, let's do the timeline",
    ],
)
def test_what_does_not_ask_to_forget(text: str) -> None:
    assert read_forget_request(text) is None


def test_kept_entries_are_matched_by_their_distinguishing_words() -> None:
    canon = {
        "preference.a": "I prefer short paragraphs",
        "fact.g": "the grant deadline is March 3",
        "preference.r": {"retracted": True, "forgotten": "forget that"},
    }
    assert kept_matching(canon, "the deadline") == ["fact.g"]
    assert kept_matching(canon, "I prefer tabs") == []  # "prefer" names no one entry
    assert kept_matching(canon, "forget that") == []


@given(st.text(max_size=300))
def test_reading_a_forget_request_never_fails(text: str) -> None:
    request = read_forget_request(text)
    if request is not None:
        assert request.clause and request.clause in text


NAME_AND_CITY = "Remember that my name is Ana Costa and I live in Lisbon."


def test_forgetting_one_clause_of_a_fact_keeps_the_rest(home: HRMHome) -> None:
    # D83: "Forget that I live in Lisbon." went to the model, and the whole fact stayed.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(NAME_AND_CITY)
        result = h.turn("Forget that I live in Lisbon.")
        kept = _kept(h)
        history = h.stack.bus.shared.history(next(iter(kept)))
    assert result.action == "remember" and not result.decision.execution
    assert result.response == "Forgotten: “I live in Lisbon”. Still kept: “my name is Ana Costa”."
    assert list(kept.values()) == ["my name is Ana Costa"]
    memo = result.decision.memory_request
    assert memo is not None and memo["resolution"] == "forgotten in part"
    assert len(history) == 2  # the whole statement stays in the key's history


def test_forget_that_i_did_something_is_not_about_memory_when_nothing_kept_says_it(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(NAME_AND_CITY)
        result = h.turn("Forget that I asked, the build is green now.")
        kept = _kept(h)
    assert result.decision.memory_request is None
    assert "Forgotten" not in result.response and "Nothing I keep" not in result.response
    assert list(kept.values()) == ["my name is Ana Costa and I live in Lisbon"]


@pytest.mark.parametrize(
    ("statement", "part", "rest"),
    [
        ("my name is Ana Costa and I live in Lisbon", "I live in Lisbon", "my name is Ana Costa"),
        ("my name is Ana Costa and I live in Lisbon", "My name is Ana Costa.", "I live in Lisbon"),
        ("we deploy on Fridays, the staging DB is db2, and backups run nightly",
         "the staging DB is db2", "we deploy on Fridays, and backups run nightly"),
        ("we deploy on Fridays; staging is db2", "we deploy on Fridays", "staging is db2"),
        ("my favourite band is Simon and Garfunkel", "Garfunkel", None),  # no clause
        ("my name is Ana Costa and I live in Lisbon", "Lisbon", None),
        ("I live in Lisbon", "I live in Lisbon", None),  # nothing would be left
    ],
)
def test_a_clause_comes_out_of_a_statement(statement: str, part: str, rest: str | None) -> None:
    assert without_clause(statement, part) == rest


@given(st.text(max_size=120), st.text(max_size=60))
def test_what_is_left_of_a_statement_is_made_of_its_own_words(statement: str, part: str) -> None:
    rest = without_clause(statement, part)
    if rest is not None:
        assert len(rest) < len(statement)
        assert set(re.findall(r"\w+", rest.lower())) <= set(re.findall(r"\w+", statement.lower()))


def _decisions(h: HRM) -> list[str]:
    active = h.focus.problem_registry.get_active()
    working = h.stack.bus.working.get(active.id) if active is not None else None
    return [] if working is None else [d["decision"] for d in working.local_decisions]


def _shown_decisions(result: Any) -> list[str]:
    retrieved = result.decision.attention_state["retrieved"]
    return [e["key"] for e in retrieved if e["source"] == "working_set"]


def test_a_stated_decision_can_be_forgotten(home: HRMHome) -> None:
    # "we decided to use sqlc instead of gorm" was kept in the problem's notes, and "forget
    # what I said about sqlc" was answered "Nothing I keep matches": the model went on being
    # shown a decision the person had taken back (D424).
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'm building a REST API in Go for a bookstore")
        h.turn("we decided to use sqlc instead of gorm")
        assert _decisions(h) == ["use sqlc instead of gorm"]
        asked = h.turn("which query library should the order service use?")
        assert _shown_decisions(asked) == ["decision.0"]  # the model is shown it
        h.turn("never suggest gorm to me again")
        both = h.turn("forget what I said about gorm")  # the preference and the decision
        assert both.response.startswith("More than one thing I keep matches “gorm”:")
        assert "“use sqlc instead of gorm”" in both.response
        assert _decisions(h) == ["use sqlc instead of gorm"]
        gone = h.turn("forget what I said about sqlc")
        assert gone.response == (
            "Forgotten the decision “use sqlc instead of gorm”; it is no longer part of the "
            "problem's notes."
        )
        assert gone.decision.memory_request["resolution"] == "forgotten"
        assert gone.decision.writes[-1]["target"] == "working_set"
        assert _decisions(h) == []
        assert "preference.never-suggest-gorm-to-me-again" in _kept(h)  # the rest stays
        shown = h.turn("which query library should the order service use?")
        assert _shown_decisions(shown) == []
    with HRM.open(home, "ADMIN", "offline") as again:  # another process: still gone
        assert _decisions(again) == []
    rebuild(home)  # the databases made anew from the ledgers: still gone
    with HRM.open(home, "ADMIN", "offline") as rebuilt:
        assert _decisions(rebuilt) == []


def test_forgetting_everything_is_asked_about_listing_what_goes(home: HRMHome) -> None:
    # D436: "forget everything you know about me" listed what was kept (read as "what do you
    # know about me") and "forget all my preferences" said nothing kept matched "all my
    # preferences": the person had no way to take it all back but one entry at a time.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer short answers")
        h.turn("remember that my daughter's school is St Mary's")
        h.turn("I like metric units")
        asked = h.turn("forget all my preferences")
        assert asked.response == (  # in the canon's order, by key
            "Do you want me to forget these 2 things I keep: “I like metric units”; "
            "“I prefer short answers”? (yes/no)"
        )
        assert h.turn("no").response == (
            "Understood — nothing was forgotten; I still keep these 2 things."
        )
        assert len(_kept(h)) == 3
        again = h.turn("can you forget everything I told you")
        assert again.response.startswith("Do you want me to forget these 3 things I keep:")
        done = h.turn("yes")
        assert done.response.startswith("Forgotten: ")
        assert _kept(h) == {}
        assert h.turn("forget all my preferences").response == (
            "I keep no preferences of yours, so nothing was forgotten."
        )
        # a request naming something is matched as before
        h.turn("remember that the school is St Mary's")
        named = h.turn("forget everything about the school")
        assert named.response == "Forgotten: “the school is St Mary's”."


def _sent(call: Any) -> str:
    """Everything a model call was sent: the system prompt and every message."""
    return "\n".join([call.system, *(m.content for m in call.messages)])


def test_what_was_forgotten_is_no_longer_shown_to_the_model(home: HRMHome) -> None:
    """D450: the forget retracted the fact, but the exchange that said it — and the answer that
    quoted it — went on reaching the model, which then knew where the person lives."""
    said = "Remember that I live in Lisbon. What's a good day trip from here?"
    model = ScriptedAdapter(
        [ScriptedReply(respond=lambda *_: "Sintra, since you live in Lisbon.")], repeat=True,
    )
    with HRM.open(home, "ADMIN", model) as h:
        h.turn(said)
        h.turn("and one for a weekend?")
        before = len(model.calls)
        assert h.turn("forget that I live in Lisbon").response == "Forgotten: “I live in Lisbon”."
        h.turn("and one by train?")
        after = [_sent(call) for call in model.calls[before:]]
        assert after and all("lisbon" not in text.lower() for text in after)
        # the exchanges are still shown, with the forgotten words marked
        assert "Remember that [forgotten]. What's a good day trip from here?" in after[-1]
        assert "Sintra, since you live in [forgotten]." in after[-1]
        assert h.stack.attention.last_failures == []
    replay = ScriptedAdapter([ScriptedReply(respond=lambda *_: "Try Évora.")], repeat=True)
    with HRM.open(home, "ADMIN", replay) as again:  # a new process rebuilds the same view
        again.turn("any day trip by train?")
        assert replay.calls and "lisbon" not in _sent(replay.calls[-1]).lower()
        # rolled back, it is said again, and shown again
        versions = again.stack.bus.shared.list_versions("fact.i-live-in-lisbon")
        again.stack.bus.shared.rollback("fact.i-live-in-lisbon", versions[0])
        again.turn("and a day trip by bus?")
        assert "I live in Lisbon" in _sent(replay.calls[-1])


def test_the_part_of_a_fact_forgotten_is_not_shown_to_the_model(home: HRMHome) -> None:
    """D450: the key the whole fact was kept under still said "…-and-i-live-in-lisbon"."""
    model = ScriptedAdapter([ScriptedReply(respond=lambda *_: "noted")], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Remember that my name is Ana Costa and I live in Lisbon")
        h.turn("Forget that I live in Lisbon")
        h.turn("what is my name, and where do I live?")
        sent = _sent(model.calls[-1])
        assert "lisbon" not in sent.lower()
        assert "my name is Ana Costa" in sent  # what is still kept is still shown
        assert h.stack.forgotten() == ("I live in Lisbon",)


def test_a_fact_holding_a_secret_is_said_back_as_kept(home: HRMHome) -> None:
    """D462: "Noted as canon: “my pin code is 9911”" while the canon kept it redacted."""
    with HRM.open(home, "ADMIN", "offline") as h:
        said = h.turn("Remember that my pin code is 9911").response
        assert "9911" not in said
        assert said.startswith("Noted as canon, without the secret in it: “my pin code is [")


@pytest.mark.parametrize("said", ["never mind, don't save that", "don't keep that", "nvm, don't store it"])
def test_dont_save_that_takes_back_what_was_just_kept(home: HRMHome, said: str) -> None:
    """D463: "never mind, don't save that" went to the model and the number stayed kept."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("remember my passport number is X1234567")
        result = h.turn(said)
        assert result.response == "Forgotten: “my passport number is X1234567”."
        assert _kept(h) == {}


@pytest.mark.parametrize(
    ("kept", "forget"),
    [
        ("Remember that my son Leo is allergic to gluten", "Forget that Leo is allergic to gluten"),
        ("Remember that Sam is vegan", "Forget that Sam is vegan"),
        ("Remember that the API base URL is https://api.example.com",
         "Forget that the API base URL is https://api.example.com"),
    ],
)
def test_forget_that_with_a_statement_about_someone_or_something_forgets_it(
    home: HRMHome, kept: str, forget: str
) -> None:
    # D499: only "forget that I / my / we …" was read; these went to the model in silence.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(kept)
        h.turn("How do I bake bread?")
        result = h.turn(forget)
        left = [k for k in h.stack.canon() if k.startswith("fact.") and h.stack.canon()[k]
                and isinstance(h.stack.canon()[k], str)]
    assert result.response.startswith("Forgotten: ")
    assert left == []
