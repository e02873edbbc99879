"""Details of the work said in passing stay with it (D76, D79).

Found in conversations through the facade: planning a trip, "Our budget is about 5000 euros
excluding flights" opened a problem of its own and the questions after it went there; writing a
grant proposal, "When is the grant deadline?" was read as pressing and queued as a problem.
"""

from __future__ import annotations

import pytest

from hrm.continuity import embeddings
from hrm.home import HRMHome
from hrm.pipeline import HRM

TRIP = "I'm planning a 10-day trip to Japan in April with my partner."


@pytest.mark.embeddings
@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_a_detail_on_ones_own_subject_stays_with_the_work(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        trip = h.turn(TRIP).decision.arbitration["candidate_problem_id"]
        h.turn("We love food markets and hiking, not big on nightlife.")
        budget = h.turn("Our budget is about 5000 euros excluding flights.").decision
        assert budget.arbitration["candidate_problem_id"] == trip
        assert budget.arbitration["candidate_match"].startswith("a remark on its own subject, ")
        cities = h.turn("Which cities should we base ourselves in?").decision
        assert cities.arbitration["candidate_problem_id"] == trip
        # something of one's own that is unrelated is still a problem of its own
        bike = h.turn("My bike makes a clicking noise when I pedal hard.").decision
        assert bike.arbitration["is_new_candidate"] is True
        assert len(h.focus.problem_registry.list()) == 2


def test_asking_when_something_is_due_is_a_question_about_the_work(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        grant = h.turn("I'm drafting a grant proposal for a community garden project.")
        h.turn("Remember that the grant deadline is March 3.")
        asked = h.turn("When is the grant deadline?")
        arbitration = asked.decision.arbitration
        assert arbitration["candidate_problem_id"] == (
            grant.decision.arbitration["candidate_problem_id"]
        )
        assert arbitration["disposition"] == "stay"
        assert asked.decision.escalation["signals"]["deterministic"]["deadline_markers"] == []
        assert "March 3" in asked.response  # the fact was in the context
        assert len(h.focus.problem_registry.list()) == 1


def test_a_report_that_names_the_work_stays_with_it(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        work = h.turn("I'm adding rate limiting to our FastAPI service.")
        h.turn("How do I expose the limit headers?")
        failing = h.turn("The tests for it are failing now.").decision.arbitration
        worked = h.turn("ok that worked").decision.arbitration
        problem = work.decision.arbitration["candidate_problem_id"]
        assert failing["candidate_problem_id"] == problem
        assert failing["disposition"] == "stay"
        assert worked["candidate_problem_id"] == problem
        assert len(h.focus.problem_registry.list()) == 1


def test_a_preference_is_kept_without_the_words_that_lead_into_it(home: HRMHome) -> None:
    # D84: the canon kept "Actually, I prefer a formal tone in cover letters", under a key of
    # its own, and the plain sentence later was a second preference.
    with HRM.open(home, "ADMIN", "offline") as h:
        said = h.turn("Actually, I prefer a formal tone in cover letters.")
        again = h.turn("I prefer a formal tone in cover letters.")
        canon = h.stack.canon()
    assert said.response == "Noted as canon: “I prefer a formal tone in cover letters”."
    assert again.response == "Already canon: “I prefer a formal tone in cover letters”."
    assert list(canon) == ["preference.i-prefer-a-formal-tone-in-cover-letters"]


@pytest.mark.embeddings
@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_commands_opened_with_filler_or_an_announcement_are_still_commands(
    home: HRMHome,
) -> None:
    # D406: tried as a new user, "ok forget the password I just gave you" was answered as
    # ordinary text (and, with nothing open, opened a problem titled with it), and "Unrelated:
    # pls remember that …" kept the announcement in the canon.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("my db password is hunter2butlonger99, the user is app")
        forget = h.turn("ok forget the password I just gave you")
        kept = h.turn("Unrelated: pls remember that our staging box is stg-04")
        preference = h.turn("Quick question, actually I prefer tabs")
        canon = h.stack.canon()
        problems = [p.title for p in h.focus.problem_registry.list()]
    assert forget.response == (
        "Nothing I keep matches “the password I just gave you”, so nothing was forgotten."
    )
    assert not any("forget" in title.lower() for title in problems)
    assert kept.response == "Noted as canon: “our staging box is stg-04”."
    assert preference.response == "Noted as canon: “I prefer tabs”."
    assert sorted(canon) == ["fact.our-staging-box", "preference.i-prefer-tabs"]


@pytest.mark.embeddings
@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_asking_to_hear_the_decisions_states_none(home: HRMHome) -> None:
    # D408: "Summarise what we decided about the cache layer" was kept as the decision "about
    # the cache layer" (the sentence model read it at 0.77), one more in the problem's working
    # set each time it was asked, every one of them scored again on every turn.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("We're redesigning the cache layer of the notifications service.")
        stated = h.turn("We decided to use Redis for the cache layer.")
        for asked in ("Summarise what we decided about the cache layer",
                      "remind me what we agreed for the cache",
                      "ok so can you recap the decisions?"):
            told = h.turn(asked).decision
            assert not [w for w in told.writes if w["target"] == "working_set"], asked
        problem = stated.decision.problem["id"]  # type: ignore[index]
        working = h.stack.bus.working.get(problem)
    assert working is not None
    assert [d["decision"] for d in working.local_decisions] == ["use Redis for the cache layer"]


@pytest.mark.embeddings
@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_a_conversation_in_learners_english_keeps_its_decision_and_its_detour_apart(
    home: HRMHome,
) -> None:
    # D409: written as a new user whose English is a second language; "sorry other thing, …"
    # was a follow-up of the wedding and "we decide: buffet, …" no decision at all.
    with HRM.open(home, "ADMIN", "offline") as h:
        wedding = h.turn("me and my wife we plan the wedding for june, budget is 15k euro")
        detour = h.turn("sorry other thing, my laptop battery die very fast").decision
        back = h.turn("ok we go back to wedding").decision
        decided = h.turn("we decide: buffet, not seated dinner").decision
        problem = wedding.decision.problem["id"]  # type: ignore[index]
        working = h.stack.bus.working.get(problem)
    assert detour.arbitration["is_new_candidate"] is True
    assert detour.arbitration["disposition"] == "queue"
    assert back.problem["id"] == decided.problem["id"] == problem  # type: ignore[index]
    assert working is not None
    assert [d["decision"] for d in working.local_decisions] == ["buffet, not seated dinner"]


@pytest.mark.embeddings
@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_details_and_a_correction_of_one_stay_with_the_plan(home: HRMHome) -> None:
    # D412: planning a trip as a new user, "my partner eats fish now" was read as pressing (its
    # "now" a deadline word) and queued as a problem; the budget after it went to that problem,
    # and "forget that, my partner is vegan actually" set the trip aside for a new problem.
    with HRM.open(home, "ADMIN", "offline") as h:
        trip = h.turn("I'm planning a trip to Lisbon in May with my partner").decision
        h.turn("what neighbourhoods should we stay in?")
        fish = h.turn("my partner eats fish now").decision.arbitration
        budget = h.turn("our budget is about 2000 euros").decision.arbitration
        corrected = h.turn("forget that, my partner is vegan actually").decision.arbitration
        # trouble set aside the same way is still a problem of its own
        sink = h.turn("forget that, my kitchen sink is leaking everywhere").decision.arbitration
        problem = trip.problem["id"]  # type: ignore[index]
    for detail in (fish, budget, corrected):
        assert detail["candidate_problem_id"] == problem
        assert detail["disposition"] == "stay"
    assert corrected["candidate_match"].startswith("a correction after a set-aside")
    assert sink["is_new_candidate"] is True


def test_a_request_to_forget_that_from_memory_is_never_silent(home: HRMHome) -> None:
    # D416: "can you drop that from memory, the thing about charts" with nothing kept the turn
    # before was answered as ordinary text, and the chart note stayed kept.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'm preparing the quarterly report.")
        h.turn("remember that charts need a source line")
        h.turn("how many charts is too many?")
        nothing = h.turn("delete that from your memory")
        named = h.turn("can you drop that from memory, the thing about charts")
        said_back = h.turn("scratch that")  # takes back what was said: no request of hrm's
        canon = h.stack.canon()
    assert nothing.response == (
        "I kept nothing just before, so “that” names nothing and nothing was forgotten. Say "
        "what to forget (“forget my address”)."
    )
    assert named.response == "Forgotten: “charts need a source line”."
    assert not any(isinstance(v, str) for v in canon.values())
    assert said_back.decision.memory_request is None


@pytest.mark.embeddings
@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_a_cover_letter_a_detour_to_a_bike_and_back(home: HRMHome) -> None:
    # D417, D418, as a new user: the first message was asked about as a preference ("letter"
    # was one typo from the cue "better"); "my name is Priya and I have 3 years of …" was
    # queued as a problem ("have" read as a need) and the next question joined it; "park the
    # cover letter, I need to fix my bike first" parked nothing.
    with HRM.open(home, "ADMIN", "offline") as h:
        letter = h.turn("I'm writing a cover letter for a data analyst job").decision
        detail = h.turn("my name is Priya and I have 3 years of experience with SQL").decision
        parked = h.turn("park the cover letter, I need to fix my bike first")
        back = h.turn("ok back to the cover letter").decision
        problem = letter.problem["id"]  # type: ignore[index]
    assert letter.preference is None and letter.arbitration["is_new_candidate"] is True
    assert detail.arbitration["candidate_problem_id"] == problem
    assert parked.decision.problem_request is not None
    assert parked.decision.problem_request.resolution == "paused"
    assert "Parked ‘I'm writing a cover letter for a data analyst job’." in parked.response
    assert parked.decision.problem["title"] == "I need to fix my bike first"  # type: ignore[index]
    assert back.problem["id"] == problem  # type: ignore[index]


def test_feedback_with_a_correction_stays_with_the_work(home: HRMHome) -> None:
    # D419: "thats wrong, I said no mushrooms" queued a problem titled "I said no mushrooms".
    with HRM.open(home, "ADMIN", "offline") as h:
        meals = h.turn("hey, can you help me plan meals for the week?").decision
        h.turn("what can I cook on monday?")
        wrong = h.turn("thats wrong, I said no mushrooms").decision.arbitration
        problems = h.focus.problem_registry.list()
    assert wrong["candidate_problem_id"] == meals.problem["id"]  # type: ignore[index]
    assert wrong["disposition"] == "stay"
    assert len(problems) == 1


def test_a_stated_decision_stays_with_the_work_it_decides(home: HRMHome) -> None:
    # D420: "we're going with pg_dump for the initial copy" was a decision, and also a new
    # problem queued beside the migration; "what have we decided so far?" then joined it.
    with HRM.open(home, "ADMIN", "offline") as h:
        work = h.turn("I'm migrating our billing service from MySQL to Postgres").decision
        decided = h.turn("we're going with pg_dump for the initial copy").decision
        asked = h.turn("what have we decided so far?").decision
        kept = h.turn("remember to use numeric for money columns").response
        problems = h.focus.problem_registry.list()
    problem = work.problem["id"]  # type: ignore[index]
    assert decided.arbitration["candidate_problem_id"] == problem
    assert asked.arbitration["candidate_problem_id"] == problem
    assert len(problems) == 1
    assert kept == "Noted as canon: “use numeric for money columns”."


def test_what_hrm_knows_about_the_person_is_answered_from_the_canon(home: HRMHome) -> None:
    # D421: "What do you know about me?" went to the model and opened a problem of that title.
    with HRM.open(home, "ADMIN", "offline") as h:
        empty = h.turn("What do you know about me?")
        h.turn("I prefer concise answers with code examples")
        h.turn("Remember that our API base URL is https://api.internal.example.com")
        h.turn("I'm planning a team offsite for 12 people in March")
        told = h.turn("what do you know about me?")
        h.turn("forget the API base URL")
        after = h.turn("what are my preferences?")
        problems = [p.title for p in h.focus.problem_registry.list()]
    assert empty.response.startswith("I keep nothing about you yet")
    assert told.response == (
        "Your preferences: “I prefer concise answers with code examples”.\n"
        "Facts you asked me to keep: “our API base URL is https://api.internal.example.com”.\n"
        "“Forget …” takes one back."
    )
    assert not told.decision.execution  # hrm answered; no model call
    assert "api.internal" not in after.response
    assert problems == ["I'm planning a team offsite for 12 people in March"]


def test_saying_the_work_is_done_is_asked_about_and_a_yes_resolves_it(home: HRMHome) -> None:
    # D422: "the report is done" resolved nothing and asked nothing; a part of the work being
    # done ("the first draft is done") is no question.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'm drafting the quarterly report for the board")
        draft = h.turn("the first draft is done, what next?")
        asked = h.turn("the report is done")
        settled = h.turn("yes")
        problems = [(p.title, p.status.value) for p in h.focus.problem_registry.list()]
    assert "resolve" not in draft.response
    assert asked.response == (
        "Do you want me to resolve “I'm drafting the quarterly report for the board”? (yes/no)"
    )
    assert settled.response == "Resolved ‘I'm drafting the quarterly report for the board’."
    assert problems == [("I'm drafting the quarterly report for the board", "resolved")]


def test_a_bakery_website_in_learners_english(home: HRMHome) -> None:
    # D423, as a new user whose English is a second language: "hello i want make website for
    # my bakery" was asked about as a preference and opened no problem; "stop, other question:
    # …" was no detour; "website is finish" asked nothing.
    with HRM.open(home, "ADMIN", "offline") as h:
        site = h.turn("hello i want make website for my bakery").decision
        detour = h.turn("stop, other question: how i make invoice in excel?").decision
        back = h.turn("ok back to website").decision
        done = h.turn("website is finish, thank you")
    assert site.preference is not None and site.preference.not_a_preference == (
        "it asks for a task to be done; it is not a preference"  # D444
    )
    assert site.arbitration["is_new_candidate"] is True
    assert detour.arbitration["is_new_candidate"] is True
    assert back.problem["id"] == site.problem["id"]  # type: ignore[index]
    # titled without its greeting (D453)
    assert "Do you want me to resolve “I want make website for my bakery”?" in done.response


def test_remember_it_keeps_what_was_said_just_before(home: HRMHome) -> None:
    # D435: "i forget tell you, my boss name is Carla" then "remember it please" kept
    # nothing: the request named no fact of its own, and the one it pointed at was not read.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("i need make presentation for my boss about sales")
        h.turn("my boss name is Carla")
        kept = h.turn("remember it please")
        assert kept.response == "Noted as canon: “my boss name is Carla”."
        assert kept.action == "remember" and not kept.decision.execution
        h.turn("why march is down?")
        asked = h.turn("note that down")  # a question is nothing to keep
        assert asked.response.startswith("What should I keep?")
        canon = [v for v in h.stack.canon().values() if isinstance(v, str)]
    assert canon == ["my boss name is Carla"]


def test_a_task_wanted_after_a_thanks_is_no_preference_and_no_goodbye(home: HRMHome) -> None:
    # D444: "thx. now I want to set up pre-commit hooks for ruff and mypy" was asked about as
    # a preference by the sentence model, and what was left, "thx.", closed the exchange.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("how do I undo the last git commit but keep the changes?")
        task = h.turn("thx. now I want to set up pre-commit hooks for ruff and mypy")
    assert "preference" not in task.response
    assert task.decision.arbitration["candidate_match"] == "new"
    assert task.decision.preference is not None
    assert task.decision.preference.not_a_preference == (
        "it asks for a task to be done; it is not a preference"
    )
