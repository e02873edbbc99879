"""PreemptScoreArbiter: candidates, emergencies, the four-term score and its thresholds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.config import PolicySurface
from hrm.governance.arbiter import (
    ArbitrationDisposition,
    FocusState,
    PreemptScoreArbiter,
    preempt_score,
    title_of,
)
from hrm.governance.problems import ProblemRegistry, ProblemStatus
from hrm.governance.signals import DerivedSignals
from hrm.storage.sqlite import Database
from hrm.types import AltitudeLevel, BlastRadius, ConflictLevel, HRMContext, Stance, TurnInput

POLICY = PolicySurface()


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Lease:
    id: str
    problem_id: str
    turns_remaining: int
    turns_total: int
    description: str = "the work"
    holds_focus: bool = False


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry(clock: FakeClock) -> ProblemRegistry:
    return ProblemRegistry(Database(":memory:"), "ADMIN", clock=clock)


@pytest.fixture
def arbiter(clock: FakeClock) -> PreemptScoreArbiter:
    return PreemptScoreArbiter(POLICY, clock=clock)


def ctx() -> HRMContext:
    return HRMContext("s", 1, None, AltitudeLevel.L2_OPERATIONS, Stance.EXECUTION, None, None)


def turn(text: str, *, priority: int = 0) -> TurnInput:
    return TurnInput(text=text, timestamp=datetime(2026, 1, 1, tzinfo=UTC), context=ctx(),
                     priority=priority)  # fmt: skip


def signals(urgency: float = 0.3) -> DerivedSignals:
    return DerivedSignals(
        conflict_level=ConflictLevel.NONE, blast_radius=BlastRadius.MINIMAL,
        source_quality=0.5, alignment_score=0.5, urgency=urgency,
    )  # fmt: skip


def state(commitment: Lease | None = None) -> FocusState:
    return FocusState(context=ctx(), stance=Stance.EXECUTION, commitment=commitment)


def test_no_active_problem_switches_to_an_unsaved_new_candidate(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    decision = arbiter.decide(turn("Fix the flaky CI pipeline"), state(), registry, signals())
    assert decision.disposition is ArbitrationDisposition.SWITCH
    assert decision.is_new_candidate and decision.candidate is not None
    assert decision.candidate.id.startswith("prob_")
    assert decision.candidate.title == "Fix the flaky CI pipeline"
    assert registry.list() == []  # the arbiter never writes


def test_empty_input_without_active_problem_stays(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    decision = arbiter.decide(turn("   "), state(), registry, signals())
    assert decision.disposition is ArbitrationDisposition.STAY
    assert decision.candidate is None


def test_input_about_the_active_problem_stays(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    active = registry.create("Fix the login bug", status=ProblemStatus.ACTIVE)
    for text in ("the login bug happens on logout too", "ok", "and also add a test for it"):
        decision = arbiter.decide(turn(text), state(), registry, signals())
        assert decision.disposition is ArbitrationDisposition.STAY, text
        assert decision.active_problem_id == active.id


def test_a_word_of_the_running_commitment_keeps_the_input_on_its_problem(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    active = registry.create("Design the caching layer", status=ProblemStatus.ACTIVE)
    # A subject of the person's: a question or a remark would stay anyway, as the
    # conversation's next move (D59, D62).
    text = "Our invalidation strategies for the product catalogue come up in every review"
    on_it = Lease("c1", active.id, 2, 3, "focus on the cache invalidation design")
    elsewhere = Lease("c2", "prob_other", 2, 3, "focus on the cache invalidation design")
    decision = arbiter.decide(turn(text), state(on_it), registry, signals())
    assert decision.disposition is ArbitrationDisposition.STAY
    assert decision.reason.endswith("(within the active commitment)")
    for lease in (elsewhere, None):
        decision = arbiter.decide(turn(text), state(lease), registry, signals())
        assert decision.disposition is not ArbitrationDisposition.STAY


def test_emergency_switches_regardless_of_commitment(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    registry.create("Write release notes", status=ProblemStatus.ACTIVE, priority=9)
    lease = Lease("c1", "p", turns_remaining=1, turns_total=10)
    for text, priority in (("production is down, the API returns 500", 0), ("the payment webhook", 9)):
        decision = arbiter.decide(turn(text, priority=priority), state(lease), registry, signals())
        assert decision.disposition is ArbitrationDisposition.SWITCH, text
        assert decision.emergency
        assert decision.reason == "Emergency gate triggered"


def test_low_score_queues_and_mid_score_asks(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry, clock: FakeClock
) -> None:
    registry.create("Write release notes", status=ProblemStatus.ACTIVE, priority=8)
    queued = arbiter.decide(turn("Someday rename the docs folder"), state(), registry, signals())
    assert queued.disposition is ArbitrationDisposition.QUEUE
    assert queued.preempt_score < POLICY.ASK_BAND_LOW
    clock.now += timedelta(minutes=45)  # the active problem went stale
    asked = arbiter.decide(
        turn("The checkout page is broken, fix it today"), state(), registry, signals(0.6)
    )
    assert asked.disposition is ArbitrationDisposition.ASK
    assert POLICY.ASK_BAND_LOW <= asked.preempt_score < POLICY.AUTO_PREEMPT_THRESHOLD
    assert set(asked.components) == {
        "candidate_priority", "active_priority", "urgency", "staleness", "switch_cost",
    }  # fmt: skip


def test_high_score_auto_preempts(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry, clock: FakeClock
) -> None:
    registry.create("Tidy the README", status=ProblemStatus.ACTIVE, priority=2)
    clock.now += timedelta(hours=2)
    decision = arbiter.decide(
        turn("The checkout page is broken, fix it today", priority=8), state(), registry,
        signals(0.9),
    )  # fmt: skip
    assert decision.disposition is ArbitrationDisposition.SWITCH
    assert decision.preempt_score >= POLICY.AUTO_PREEMPT_THRESHOLD


def test_explicit_request_to_go_back_switches_to_the_named_problem(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    login = registry.create("Fix the login bug", status=ProblemStatus.ACTIVE)
    notes = registry.create("Write release notes", status=ProblemStatus.ACTIVE)
    assert registry.get(login.id).status is ProblemStatus.PAUSED  # type: ignore[union-attr]
    decision = arbiter.decide(turn("Let's go back to the login bug"), state(), registry, signals())
    assert decision.disposition is ArbitrationDisposition.SWITCH
    assert decision.candidate_problem_id == login.id
    assert decision.explicit_request and not decision.is_new_candidate
    assert decision.active_problem_id == notes.id


BACKUP = "Our nightly backup job to S3 failed last night with an access denied error"


@pytest.mark.parametrize(
    "text",
    ["switch to the nightly backup job", "Let's go back to the backup job", "back to the backup",
     "resume the S3 backup",
     # a wish to take it up now (D430)
     "can we talk about the backup job for a bit", "let's work on the S3 backup",
     "i'd like to get to the nightly backup now",
     # the words any work is called by add nothing to its name (D445)
     "back to the backup job stuff", "switch to the S3 backup planning",
     "let's pick up the backup job again"],
)
def test_a_switch_request_names_a_problem_by_part_of_its_title(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry, text: str
) -> None:
    backup = registry.create(BACKUP, status=ProblemStatus.QUEUED)
    registry.create("How do I read a CSV file with pandas?", status=ProblemStatus.ACTIVE)
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert decision.disposition is ArbitrationDisposition.SWITCH
    assert decision.candidate_problem_id == backup.id and decision.explicit_request


@pytest.mark.parametrize(
    "text",
    ["can we talk about the weather for a bit", "let's work on the pricing page",
     "let's look at the backup job's error message"],  # "look at" looks, it does not move
)
def test_a_wish_to_take_up_work_no_open_problem_is_moves_nowhere(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry, text: str
) -> None:
    registry.create(BACKUP, status=ProblemStatus.QUEUED)
    registry.create("How do I read a CSV file with pandas?", status=ProblemStatus.ACTIVE)
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert not decision.explicit_request


def test_a_word_two_problems_share_names_neither(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    registry.create(BACKUP, status=ProblemStatus.QUEUED)
    registry.create("Which IAM permission does the backup role need?", status=ProblemStatus.QUEUED)
    registry.create("How do I read a CSV file with pandas?", status=ProblemStatus.ACTIVE)
    decision = arbiter.decide(turn("back to the backup"), state(), registry, signals())
    assert not decision.explicit_request
    # two words of one title still name it
    named = arbiter.decide(turn("back to the backup role"), state(), registry, signals())
    assert named.explicit_request and named.candidate is not None
    assert named.candidate.title.startswith("Which IAM permission")


def test_a_mention_still_needs_most_of_the_title(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    # "about X" is no request to switch: part of a title does not name it there.
    backup = registry.create(BACKUP, status=ProblemStatus.QUEUED)
    registry.create("How do I read a CSV file with pandas?", status=ProblemStatus.ACTIVE)
    decision = arbiter.decide(turn("a question about the backup job"), state(), registry,
                              signals())  # fmt: skip
    assert decision.candidate_match != "explicit mention"
    assert not decision.explicit_request
    # Two of its title's words tie it to the backup problem, for the score to arbitrate (D59).
    assert decision.candidate_match == "shares two words with its title"
    assert decision.candidate_problem_id == backup.id
    # A remark naming it by one word goes to it as the conversation's next move (D62), still
    # not as a request to switch.
    one_word = arbiter.decide(turn("a note about backups"), state(), registry, signals())
    assert one_word.candidate_match == "follow-up naming it" and not one_word.explicit_request


def test_similar_paused_problem_is_the_candidate(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    login = registry.create("Fix the login bug", description="session cookie expires early")
    registry.create("Write release notes", status=ProblemStatus.ACTIVE)
    decision = arbiter.decide(turn("session cookie expires on login again"), state(), registry,
                              signals())  # fmt: skip
    assert decision.candidate_problem_id == login.id
    assert not decision.is_new_candidate


def test_new_candidate_priority_comes_from_markers_and_turn_priority(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    def priority_of(text: str, turn_priority: int = 0) -> int:
        decision = arbiter.decide(turn(text, priority=turn_priority), state(), registry, signals())
        assert decision.candidate is not None
        return decision.candidate.priority

    assert priority_of("rename the docs folder") == 5
    assert priority_of("rename the docs folder by tomorrow") == 6
    assert priority_of("rename the blocking docs folder today") == 7
    assert priority_of("data loss in the backups") == 8
    assert priority_of("rename the docs folder", 7) == 7
    assert priority_of("rename the docs folder", 42) == 10


def test_staleness_uses_the_injected_clock(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry, clock: FakeClock
) -> None:
    active = registry.create("Fix the login bug", status=ProblemStatus.ACTIVE)
    assert arbiter._compute_staleness(active) == 0.0
    clock.now += timedelta(minutes=15)
    assert arbiter._compute_staleness(active) == pytest.approx(0.5)
    clock.now += timedelta(hours=5)
    assert arbiter._compute_staleness(active) == 1.0
    clock.now -= timedelta(days=2)  # a clock behind the record is not negative staleness
    assert arbiter._compute_staleness(active) == 0.0


def test_switch_cost_grows_near_the_finish_line(arbiter: PreemptScoreArbiter) -> None:
    assert arbiter._compute_switch_cost(state()) == pytest.approx(0.3)
    early = arbiter._compute_switch_cost(state(Lease("c", "p", 9, 10)))
    late = arbiter._compute_switch_cost(state(Lease("c", "p", 1, 10)))
    assert 0.3 < early < late <= 0.7


unit = st.floats(0, 1)
priority = st.integers(1, 10)


@settings(max_examples=200, deadline=None)
@given(
    cand=priority, act=priority, urgency=unit, staleness=unit, cost=unit, delta=st.floats(0, 0.5)
)
def test_preempt_score_is_bounded_and_monotone_in_each_term(
    *, cand: int, act: int, urgency: float, staleness: float, cost: float, delta: float
) -> None:
    def score(**changes: float) -> float:
        terms = {
            "candidate_priority": cand, "active_priority": act, "urgency": urgency,
            "staleness": staleness, "switch_cost": cost,
        }  # fmt: skip
        terms.update(changes)
        return preempt_score(POLICY, **terms)

    base = score()
    assert 0.0 <= base <= 1.0
    eps = 1e-12
    assert score(candidate_priority=min(10, cand + 1)) >= base - eps
    assert score(active_priority=min(10, act + 1)) <= base + eps
    assert score(urgency=min(1.0, urgency + delta)) >= base - eps
    assert score(staleness=min(1.0, staleness + delta)) >= base - eps
    assert score(switch_cost=min(1.0, cost + delta)) <= base + eps


def test_a_lease_the_person_sized_keeps_a_passing_topic_that_would_be_queued(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    active = registry.create("Design the caching layer", status=ProblemStatus.ACTIVE)
    # A task, not a question: a question stays anyway, as the conversation's next move (D59).
    text = "Write a script that renames the stale git branches"
    held = Lease("c1", active.id, 2, 3, "the cache invalidation design", holds_focus=True)
    decision = arbiter.decide(turn(text), state(held), registry, signals())
    assert decision.disposition is ArbitrationDisposition.STAY
    assert decision.candidate_problem_id == active.id and not decision.is_new_candidate
    assert decision.candidate_match == "within the active commitment"
    assert decision.components  # the score that would have queued it is kept in the record
    # a default lease ("let's work on X"), a lease on another problem, or none: queued
    for lease in (Lease("c2", active.id, 2, 3), Lease("c3", "prob_x", 2, 3, holds_focus=True),
                  None):
        decision = arbiter.decide(turn(text), state(lease), registry, signals())
        assert decision.disposition is ArbitrationDisposition.QUEUE


def test_a_lease_does_not_hide_an_input_that_scores_into_the_ask_band(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry, clock: FakeClock
) -> None:
    active = registry.create("Design the caching layer", status=ProblemStatus.ACTIVE)
    clock.now += timedelta(minutes=40)  # the active problem went stale: a new topic scores higher
    held = Lease("c1", active.id, 2, 3, "the cache invalidation design", holds_focus=True)
    text = "The quarterly tax filing is due by Friday"
    decision = arbiter.decide(turn(text), state(held), registry, signals(urgency=0.6))
    assert decision.disposition in (ArbitrationDisposition.ASK, ArbitrationDisposition.SWITCH)


def test_back_to_names_a_problem_by_one_word_no_other_title_has(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    # D59: "the sales data" is not made of title words ("data" is in none), but "sales" is in
    # one title only; what follows the colon is the question, not the reference.
    sales = registry.create(
        "I have a CSV of 2 million sales rows and pandas runs out of memory",
        status=ProblemStatus.QUEUED,
    )
    registry.create("Write the quarterly report for the board", status=ProblemStatus.ACTIVE)
    text = "Back to the sales data: how do I export the result to Parquet?"
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert decision.explicit_request and decision.candidate_problem_id == sales.id
    # "switch to X" may be about a tool: there, X must be made of title words
    tool = arbiter.decide(turn("Should we switch to the sales dashboard tool?"), state(),
                          registry, signals())  # fmt: skip
    assert not tool.explicit_request


def test_two_title_words_name_a_problem_unless_two_titles_share_them(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    split = registry.create(
        "Review my plan for splitting the monolith's billing module into a service",
        status=ProblemStatus.QUEUED,
    )
    registry.create("How do I undo the last commit?", status=ProblemStatus.ACTIVE)
    text = "OK so for the billing service, how do we migrate the data?"
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert decision.candidate_problem_id == split.id
    assert decision.candidate_match == "shares two words with its title"
    registry.create("Price the billing service for enterprise", status=ProblemStatus.QUEUED)
    tied = arbiter.decide(turn(text), state(), registry, signals())
    assert tied.candidate_match != "shares two words with its title"


def test_a_follow_up_naming_one_of_two_threads_goes_to_it(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    move = registry.create(
        "I'm migrating our billing service from MySQL to Postgres", status=ProblemStatus.QUEUED
    )
    registry.create("Our mobile app crashes on startup for Android 14 users",
                    status=ProblemStatus.ACTIVE)  # fmt: skip
    text = "For the Postgres move, how do we handle the enum columns?"
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert decision.candidate_problem_id == move.id
    assert decision.candidate_match == "follow-up naming it"
    # A statement is not read this way: "for the Postgres move" may be a new problem's setting.
    statement = "The enum columns break for the Postgres move in staging"
    assert arbiter.decide(turn(statement), state(), registry, signals()).candidate_match == "new"
    # Nor is "for X" inside what a follow-up says (D414): "we use the dirs crate for home
    # paths" named "Tests fail on Windows with a path error" by "path", and went there.
    inside = "how do we handle the enum columns for Postgres?"
    assert arbiter.decide(turn(inside), state(), registry, signals()).candidate_match != (
        "follow-up naming it"
    )


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Thanks. Our office wifi drops every afternoon", "Our office wifi drops every afternoon"),
        ("Also, my laptop's battery drains fast, any tips?", "My laptop's battery drains fast, any tips?"),
        ("OK so now the build fails on main", "The build fails on main"),
        ("Unrelated: how do I rename a git branch?", "How do I rename a git branch?"),
        ("Fix the flaky CI pipeline. It fails twice a day.", "Fix the flaky CI pipeline."),
        ("Hi!", "Hi!"),  # nothing with content: the text as it was
        # who the person is is no problem (D85)
        ("I manage the platform team. Our Kubernetes upgrade to 1.30 is stuck.",
         "Our Kubernetes upgrade to 1.30 is stuck."),
        ("I'm a data engineer at Spotify. How do I backfill an Airflow DAG?",
         "How do I backfill an Airflow DAG?"),
        ("We are a small startup. Our AWS bill doubled last month.",
         "Our AWS bill doubled last month."),
        ("I manage the platform team.", "I manage the platform team."),  # nothing else
        ("I'm a bit stuck on the parser. It fails on nested lists.",
         "I'm a bit stuck on the parser."),
        ("I'm planning a team offsite for 12 people.", "I'm planning a team offsite for 12 people."),
        # a greeting is never the title when anything else says something (D429)
        ("Hi! I run a small online shop selling handmade candles",
         "I run a small online shop selling handmade candles"),
        # sentences end where the readers end them: not after "Mr." or "e.g." (D429)
        ("My professor is Mr. Lindqvist, he asks about type 2 errors",
         "My professor is Mr. Lindqvist, he asks about type 2 errors"),
        ("Our API e.g. the orders endpoint times out", "Our API e.g. the orders endpoint times out"),
        # a greeting, or words taking back the message before, lead in (D453)
        ("Hello, I am planing a travel to Japan for 10 days",
         "I am planing a travel to Japan for 10 days"),
        ("forget that I asked, whats the weather like in munich in march?",
         "Whats the weather like in munich in march?"),
        ("Never mind that. My printer jams on every page", "My printer jams on every page"),
        ("Scratch that, how do I bake bread?", "How do I bake bread?"),
        # how pressing it is, not what it is about (D457)
        ("urgent!! disk full on db-2", "Disk full on db-2"),
        ("HELP! the wifi is gone", "The wifi is gone"),
    ],
)
def test_a_new_problem_is_titled_by_its_first_sentence_with_content(text: str, title: str) -> None:
    assert title_of(text) == title


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_a_title_is_short_and_never_empty_for_a_message_with_words(text: str) -> None:
    title = title_of(text)
    assert len(title) <= 80
    if text.strip():
        assert title.strip()


class _Model:
    """A stand-in sentence model: the score it is told to give, and what it was asked."""

    def __init__(self, score: float | None) -> None:
        self.score = score
        self.asked: list[tuple[str, str]] = []

    def __call__(self, first: str, second: str) -> float | None:
        self.asked.append((first, second))
        return self.score


@pytest.mark.parametrize(("score", "new"), [(0.01, True), (0.3, False), (None, False)])
def test_a_question_on_the_persons_own_subject_asks_the_sentence_model(
    clock: FakeClock, registry: ProblemRegistry, score: float | None, new: bool
) -> None:
    # D68: "Also, my laptop's battery drains …, any tips?" during a database upgrade followed
    # the conversation as every question does; only a sentence model tells it from "My
    # replica is on a different host, does it need upgrading first?".
    model = _Model(score)
    arbiter = PreemptScoreArbiter(POLICY, clock=clock, relatedness=model)
    registry.create("Upgrade our Postgres cluster to 16", status=ProblemStatus.ACTIVE)
    text = "Also, my laptop's battery drains really fast on Ubuntu, any tips?"
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert decision.is_new_candidate is new
    assert model.asked == [("Upgrade our Postgres cluster to 16", text)]
    if new:
        assert decision.candidate_match == (
            "new: its own subject, 0.01 alike to the conversation, below 0.03"
        )
    else:
        assert decision.candidate_match == "follow-up in the conversation"


def test_other_follow_ups_never_ask_the_sentence_model(
    clock: FakeClock, registry: ProblemRegistry
) -> None:
    model = _Model(0.0)
    arbiter = PreemptScoreArbiter(POLICY, clock=clock, relatedness=model)
    registry.create("Upgrade our Postgres cluster to 16", status=ProblemStatus.ACTIVE)
    for text in ("Should I use pg_upgrade with --link?", "Would powertop help?",
                 "I'm still seeing errors in the new cluster logs, any idea?"):
        decision = arbiter.decide(turn(text), state(), registry, signals())
        assert not decision.is_new_candidate, text
    assert model.asked == []


@pytest.mark.parametrize(
    ("score", "follows"), [(0.27, True), (0.1, True), (0.05, False), (None, False)]
)
def test_a_remark_on_the_persons_own_subject_asks_the_sentence_model(
    clock: FakeClock, registry: ProblemRegistry, score: float | None, follows: bool
) -> None:
    # D79: "Our budget is about 5000 euros excluding flights" while planning a trip was a
    # problem of its own, and the questions after it went to that problem.
    model = _Model(score)
    arbiter = PreemptScoreArbiter(POLICY, clock=clock, relatedness=model)
    registry.create("Plan a 10-day trip to Japan in April", status=ProblemStatus.ACTIVE)
    text = "Our budget is about 5000 euros excluding flights."
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert model.asked == [("Plan a 10-day trip to Japan in April", text)]
    assert decision.is_new_candidate is not follows
    if follows:
        assert decision.candidate_match == (
            f"a remark on its own subject, {score:.2f} alike to the conversation"
        )


def test_without_a_sentence_model_a_remark_is_its_own_subject(
    clock: FakeClock, registry: ProblemRegistry
) -> None:
    arbiter = PreemptScoreArbiter(POLICY, clock=clock)
    registry.create("Plan a 10-day trip to Japan in April", status=ProblemStatus.ACTIVE)
    decision = arbiter.decide(
        turn("Our budget is about 5000 euros excluding flights."), state(), registry, signals()
    )
    assert decision.is_new_candidate


def test_trouble_and_needs_on_ones_own_subject_never_ask_the_sentence_model(
    clock: FakeClock, registry: ProblemRegistry
) -> None:
    model = _Model(0.9)
    arbiter = PreemptScoreArbiter(POLICY, clock=clock, relatedness=model)
    registry.create("Plan a 10-day trip to Japan in April", status=ProblemStatus.ACTIVE)
    for text in ("Our nightly backup job failed again last night.",
                 "My passport needs renewing before the trip.",
                 "Our team wants to move the offsite to Lisbon."):
        decision = arbiter.decide(turn(text), state(), registry, signals())
        assert decision.is_new_candidate, text
    assert model.asked == []


def test_setting_the_work_aside_turns_to_what_follows(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    # D81: a new problem titled by all of it and queued behind what it set aside, before.
    registry.create("Plan a team offsite for 12 people in March",
                              status=ProblemStatus.ACTIVE)  # fmt: skip
    text = "Forget the offsite for now, the payment webhook is failing in production."
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert decision.disposition is ArbitrationDisposition.SWITCH and decision.explicit_request
    assert decision.is_new_candidate and decision.candidate is not None
    assert decision.candidate.title == "The payment webhook is failing in production."
    assert decision.candidate_match == "set aside for new"
    assert "turn to" in decision.reason
    # "Never mind, …" names nothing: it is the work in focus that is set aside
    plain = arbiter.decide(turn("Never mind that, how do I rotate the Stripe signing secret?"),
                           state(), registry, signals())  # fmt: skip
    assert plain.explicit_request and plain.is_new_candidate
    assert plain.candidate is not None and plain.candidate.title.startswith("How do I rotate")


def test_setting_a_part_of_the_work_aside_asks_for_no_switch(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry
) -> None:
    offsite = registry.create("Plan a team offsite for 12 people in March",
                              status=ProblemStatus.ACTIVE)  # fmt: skip
    # The catering is not the offsite: what follows is weighed as usual, titled by itself.
    text = "Skip the catering for now, the payment webhook is failing in production."
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert not decision.explicit_request
    assert decision.candidate is not None
    assert decision.candidate.title == "The payment webhook is failing in production."
    # … and what continues the work stays with it
    stays = arbiter.decide(turn("Forget the venue for now, pick a date in March"), state(),
                           registry, signals())  # fmt: skip
    assert stays.disposition is ArbitrationDisposition.STAY
    assert stays.active_problem_id == offsite.id


@pytest.mark.parametrize(
    ("text", "stays"),
    [
        ("the report needs AWS spend per team for october", True),
        ("OK so the report should list the spend of every team", True),
        ("this report has to go to the board", True),
        ("the report generator is down, urgent!", False),  # pressing: weighed as its own
    ],
)
def test_an_input_opening_on_the_work_in_focus_continues_it(
    arbiter: PreemptScoreArbiter, registry: ProblemRegistry, text: str, stays: bool
) -> None:
    # D434: "the report needs …" shared one word with "The CEO needs a cost report by
    # tomorrow" and was queued as a problem titled by itself.
    active = registry.create("The CEO needs a cost report by tomorrow", status=ProblemStatus.ACTIVE)
    decision = arbiter.decide(turn(text), state(), registry, signals())
    assert (decision.candidate_problem_id == active.id) is stays, decision.candidate_match
    if stays:
        assert decision.disposition is ArbitrationDisposition.STAY
