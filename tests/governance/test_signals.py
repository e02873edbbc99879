"""SignalEngine: deterministic signals authoritative, model signals bounded, canon contradictions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.config import PolicySurface
from hrm.errors import HRMError
from hrm.governance import signals as signals_module
from hrm.governance.preferences import preference_key
from hrm.governance.signals import (
    SignalEngine,
    count_citations,
    dated_references,
    deadline_markers_in,
    emergency_markers_in,
    extract_claims,
    find_contradictions,
)
from hrm.llm.types import LLMCallConfig, LLMResponse, Message, StreamChunk
from hrm.types import AltitudeLevel, BlastRadius, ConflictLevel, HRMContext, Stance, TurnInput

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
POLICY = PolicySurface()


def context(*, problem_id: str | None = None, commitment_id: str | None = None) -> HRMContext:
    return HRMContext(
        session_id="s1",
        turn_number=1,
        problem_id=problem_id,
        altitude=AltitudeLevel.L2_OPERATIONS,
        stance=Stance.SENSEMAKING,
        commitment_id=commitment_id,
        commitment_turns_remaining=None,
    )


def turn(text: str, *, source: str = "user", priority: int = 0, **metadata: Any) -> TurnInput:
    return TurnInput(
        text=text, timestamp=NOW, context=context(), source=source, priority=priority,
        metadata=metadata,
    )  # fmt: skip


def engine(**kwargs: Any) -> SignalEngine:
    return SignalEngine(POLICY, clock=lambda: NOW, **kwargs)


@dataclass
class Output:
    content: str
    confidence: float


class ScriptedModel:
    """A stand-in adapter answering every chat with a fixed text (or raising)."""

    provider = "scripted"
    model = "scripted"

    def __init__(self, answer: str | HRMError) -> None:
        self.answer = answer
        self.calls = 0

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        self.calls += 1
        if isinstance(self.answer, HRMError):
            raise self.answer
        return LLMResponse(
            content=self.answer, model="scripted", provider="scripted", input_tokens=1,
            output_tokens=1, total_tokens=2, finish_reason="stop", latency_ms=0,
        )  # fmt: skip

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        return iter(())

    def count_tokens(self, text: str) -> int:
        return len(text.split())


# ── blast radius and agent disagreement (001 rules) ───────────────────────


def test_blast_radius_levels() -> None:
    e = engine()
    assert e._compute_blast_radius(["memory/SharedReference/tabs"]) is BlastRadius.SEVERE
    assert e._compute_blast_radius(["a.py", "b.py", "c.py", "d.py"]) is BlastRadius.MODERATE
    assert e._compute_blast_radius(["a.py"]) is BlastRadius.MINIMAL


def test_agent_disagreement_with_small_gap_is_high_conflict() -> None:
    e = engine()
    close = [Output("yes", 0.7), Output("no", 0.6)]
    apart = [Output("yes", 0.95), Output("no", 0.3)]
    agree = [Output("yes", 0.9), Output("yes", 0.2)]
    assert e._compute_conflict_level(close) is ConflictLevel.HIGH
    assert e._compute_conflict_level(apart) is ConflictLevel.LOW
    assert e._compute_conflict_level(agree) is ConflictLevel.NONE
    assert e._compute_conflict_level([Output("x", 0.5)]) is ConflictLevel.NONE


# ── source quality ────────────────────────────────────────────────────────


def test_citations_are_counted() -> None:
    text = (
        "According to https://docs.python.org/3/ [1], see src/hrm/types.py:12 and "
        "doi:10.1000/xyz123"
    )
    assert count_citations(text) >= 5
    assert count_citations("I think it works") == 0


def test_source_quality_floor_rises_with_citations_and_recency_capped_at_06() -> None:
    e = engine()
    plain = e._compute_source_quality_floor(turn("it works", source="agent"))
    cited = e._compute_source_quality_floor(
        turn("per https://example.org/a and [2]", source="agent")
    )
    one_cite = e._compute_source_quality_floor(turn("per https://example.org/a", source="agent"))
    recent = e._compute_source_quality_floor(
        turn("per https://example.org/a, updated 2026-02-10", source="agent")
    )
    stale = e._compute_source_quality_floor(turn("as of 2019-02-10", source="agent"))
    assert plain == pytest.approx(0.3)
    assert cited > plain
    assert recent == pytest.approx(one_cite + 0.1)
    assert stale < plain
    loaded = "according to https://a.io https://b.io [1] [2] [3] 2026-01-01"
    assert e._compute_source_quality_floor(turn(loaded, confirmed=True)) == 0.6


def test_dated_references_parse_common_formats() -> None:
    dates = dated_references("released 2025-03-01, noted in March 2024 and 3 Oct 2023")
    assert [d.isoformat() for d in dates] == ["2025-03-01", "2024-03-01", "2023-10-03"]


# ── urgency ───────────────────────────────────────────────────────────────


def test_urgency_markers_raise_urgency() -> None:
    e = engine()
    base = e._compute_urgency(turn("please tidy the docs"))
    deadline = e._compute_urgency(turn("please tidy the docs by tomorrow"))
    urgent_word = e._compute_urgency(turn("this is blocking the release"))
    emergency = e._compute_urgency(turn("production is down!!!"))
    assert base == pytest.approx(0.3)
    assert deadline > base and urgent_word > base
    assert emergency >= 0.7
    assert e._compute_urgency(turn("outage now, urgent, asap!!!", priority=10)) == 1.0


@pytest.mark.parametrize(
    ("text", "deadline"),
    [
        ("I need it now", True),
        ("fix this now!", True),
        ("the report is due Friday", True),
        ("the invoice is overdue", True),
        # D59: the words in other senses are no deadline
        ("Now tighten the closing", False),
        ("From now on, always answer in bullet points", False),
        ("leave it as it is for now", False),
        ("what about the tests that call datetime.now()?", False),
        ("now that it works, what next?", False),
        ("How do I add a due date column?", False),
        ("the build failed due to a flaky test", False),
        # a state reached: "It was a bad config push, rolled back, everything is fine now"
        # made a report on an outage pressing, and it was queued as a problem of its own
        ("everything is fine now", False),
        ("it works now, thanks", False),
        ("the tests are passing now", False),
        ("ship it now please", True),
        # D76: a question asking when something is due wants the date, it is not pressed
        ("When is the grant deadline?", False),
        ("What's the deadline for the report?", False),
        ("Ok, when is it due?", False),
        ("When is it due? I need it by Friday", True),
        ("The deadline is tomorrow, what should I cut?", True),
        ("What should I do, the deadline is today?", True),
        ("The tests for it are failing now.", False),  # a trouble as it stands (D78)
        ("Fix the failing tests now", True),
        # D426: "now" closing a state as it stands
        ("actually the budget is 350 now", False),
        ("we're vegan now", False),
        ("my email is bob@x.io now", False),
        ("it is needed now", True),
        ("I need it now", True),
        # D439: a deadline that moved is news about the dates
        ("actually, the deadline moved to the 20th", False),
        ("the deadline got pushed to monday", False),
        ("the deadline is tomorrow!", True),
    ],
)
def test_deadline_markers_read_the_word_in_its_sense(text: str, deadline: bool) -> None:
    assert bool(deadline_markers_in(text)) is deadline


@pytest.mark.parametrize(
    ("text", "emergency"),
    [
        ("We are losing data!", True),
        ("there was data loss in the EU region", True),
        ("How do I add a column without losing data?", False),
        ("how do we prevent data loss during the migration?", False),
        ("no data loss is acceptable", False),
        # "What about an emergency fund?" switched focus to a new problem as an emergency.
        ("What about an emergency fund?", False),
        ("Who is my emergency contact?", False),
        ("This is an emergency!", True),
        # The words named, not said: each switched focus through the emergency gate.
        ("How do I mark a Jira ticket as urgent?", False),
        ("Can you review our outage postmortem template?", False),
        ("What counts as a breach of contract?", False),
        ("We have an outage in the EU region", True),
        ("There was a data breach last night", True),
        # asking whether an urgent kind of something exists (D457)
        ("can I do an emergency appointment?", False),
        ("is there an urgent processing option?", False),
        ("we have an urgent problem, can you help?", True),
        ("Can we get an urgent fix out? the site is down", True),
        ("is this urgent?", True),
    ],
)
def test_losing_data_is_an_emergency_only_when_it_happens(text: str, emergency: bool) -> None:
    assert bool(emergency_markers_in(text)) is emergency


@settings(max_examples=150, deadline=None)
@given(
    priority=st.integers(-5, 20),
    markers=st.lists(
        st.sampled_from(["urgent", "by tomorrow", "today", "blocking", "now", "!", "outage"]),
        max_size=6,
    ),
    extra=st.sampled_from(["urgent", "by tomorrow", "today", "blocking", "now", "!", "outage"]),
)
def test_urgency_stays_in_unit_interval_and_is_monotone(
    priority: int, markers: list[str], extra: str
) -> None:
    e = engine()
    text = "fix the docs " + " ".join(markers)
    value = e._compute_urgency(turn(text, priority=priority))
    assert 0.0 <= value <= 1.0
    assert e._compute_urgency(turn(text + " " + extra, priority=priority)) >= value
    assert e._compute_urgency(turn(text, priority=priority + 1)) >= value


# ── contradiction against the Shared Reference ───────────────────────────

CANON = {
    "indentation": "prefers tabs",
    "database": "PostgreSQL",
    "use_type_hints": True,
    "api_style": "The API is REST",
}


@pytest.mark.parametrize(
    ("text", "key", "level"),
    [
        ("I prefer spaces", "indentation", ConflictLevel.HIGH),
        ("I prefer spaces for indentation", "indentation", ConflictLevel.HIGH),
        ("I hate tabs", "indentation", ConflictLevel.HIGH),
        ("I prefer spaces over tabs", "indentation", ConflictLevel.HIGH),
        ("Maybe I prefer spaces", "indentation", ConflictLevel.MEDIUM),
        ("The database is MySQL", "database", ConflictLevel.HIGH),
        ("Our main database is not PostgreSQL", "database", ConflictLevel.MEDIUM),
        ("The API is not REST", "api_style", ConflictLevel.HIGH),
        ("The API is GraphQL", "api_style", ConflictLevel.HIGH),
        ("I don't use type hints", "use_type_hints", ConflictLevel.HIGH),
    ],
)
def test_contradictions_of_canon(text: str, key: str, level: ConflictLevel) -> None:
    found = find_contradictions(text, CANON)
    assert found, text
    assert found[0].canon_key == key
    assert found[0].level is level


@pytest.mark.parametrize(
    "text",
    [
        "I prefer tabs",  # agrees
        "the database is PostgreSQL",  # agrees
        "I prefer tea",  # unrelated preference
        "Alice prefers spaces",  # someone else's preference
        "it is fine",  # pronoun subject
        "please refactor the parser",  # no claim
    ],
)
def test_no_contradiction_when_consistent_or_unrelated(text: str) -> None:
    assert find_contradictions(text, CANON) == []


def test_claims_capture_contrast_as_negative() -> None:
    claims = extract_claims("I prefer spaces over tabs")
    assert [(sorted(c.obj), c.positive) for c in claims] == [(["space"], True), (["tab"], False)]


_CLAIM_WORDS = ["I", "We", "prefer", "PREFER", "don't", "Never", "like", "use", "spaces", "over",
                "Tabs", "for", "Python", "the", "API", "is", "IS", "not", "REST", "but", "and",
                "i", "think", "Maybe", "instead", "of", "isn't", "should", "be", "vs.", "rather",
                "than", "using", "Postgres", "in", "when", "hate", ",", ".", ";", "\n", "!"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.lists(st.sampled_from(_CLAIM_WORDS), max_size=14).map(" ".join),
    st.text(alphabet=st.characters(max_codepoint=127), max_size=60),
))
def test_claims_of_ascii_text_read_lower_cased_are_those_read_ignoring_case(text: str) -> None:
    # ASCII text is lower-cased and read with case-sensitive copies of the claim patterns;
    # the claims, quoted clauses included, must be exactly those of the case-insensitive ones.
    assert all(p.pattern == p.pattern.lower() for p in signals_module._CASED)
    assert signals_module._claims(text, text.lower(), signals_module._FOLDED) == (
        signals_module._claims(text, text, signals_module._CASED)
    )


def test_conflict_level_combines_canon_and_is_in_signals() -> None:
    e = engine(canon=CANON)
    signals = e.derive(turn("I prefer spaces"), context())
    assert signals.conflict_level is ConflictLevel.HIGH
    assert signals.deterministic_components["contradictions"][0]["canon_key"] == "indentation"
    # a per-call canon (callable) overrides the default one
    calm = e.derive(turn("I prefer spaces"), context(), canon=lambda: {"x": "prefers spaces"})
    assert calm.conflict_level is ConflictLevel.NONE


# ── bounded model signals ─────────────────────────────────────────────────


def test_without_a_model_signals_are_the_deterministic_floors() -> None:
    signals = engine().derive(turn("hello"), context(commitment_id="c1"))
    assert signals.llm_adjustments == {}
    assert signals.alignment_score == 1.0
    assert signals.source_quality == pytest.approx(0.5)
    assert signals.to_record()["conflict_level"] == "none"


def test_model_can_raise_but_never_lower_below_floor_or_above_ceiling() -> None:
    high = engine(llm=ScriptedModel('Sure! {"source_quality": 1.0, "alignment_score": 1.0}'))
    low = engine(llm=ScriptedModel('{"source_quality": 0.0, "alignment_score": 0.0}'))
    s_high = high.derive(turn("hello"), context(problem_id="p"))
    s_low = low.derive(turn("hello"), context(problem_id="p"))
    assert s_high.llm_adjustments == {"source_quality": 1.0, "alignment_score": 1.0}
    assert s_high.source_quality <= POLICY.LLM_SIGNAL_CEILING
    assert s_high.source_quality > 0.5
    assert s_low.source_quality == pytest.approx(0.5)  # the user floor
    assert s_low.alignment_score == pytest.approx(0.5)  # the same-problem floor


@pytest.mark.parametrize(
    "answer",
    [
        "not json at all",
        '{"source_quality": "high"}',
        '{"source_quality": true}',
        "[1, 2]",
        HRMError.provider_error(500, "boom"),
    ],
)
def test_malformed_or_failing_model_falls_back_to_floors(answer: str | HRMError) -> None:
    model = ScriptedModel(answer)
    signals = engine(llm=model).derive(turn("hello"), context())
    assert model.calls == 1
    assert signals.llm_adjustments == {}
    assert signals.source_quality == pytest.approx(0.5)


def test_model_out_of_range_values_are_clamped() -> None:
    model = ScriptedModel('{"source_quality": 7, "alignment_score": -3}')
    signals = engine(llm=model).derive(turn("hello"), context())
    assert signals.llm_adjustments == {"source_quality": 1.0, "alignment_score": 0.0}
    assert 0.0 <= signals.alignment_score <= 1.0


@settings(max_examples=200, deadline=None)
@given(
    floor=st.floats(0, 1),
    estimate=st.floats(-2, 3, allow_nan=False),
    higher=st.floats(0, 1),
)
def test_bounded_signal_stays_in_unit_interval_above_floor_and_monotone(
    floor: float, estimate: float, higher: float
) -> None:
    e = engine()
    value = e._bounded_signal(floor, estimate)
    assert 0.0 <= value <= 1.0
    assert value >= min(floor, 1.0) - 1e-12
    assert e._bounded_signal(floor, max(estimate, higher)) >= value - 1e-12


STATED = {
    preference_key(value): value
    for value in (
        "I prefer tabs over spaces in Python code",
        "From now on, always answer in bullet points",
        "I prefer pytest for Python testing",
    )
}
"""Canon as turns write it: each preference under a key made from its own words."""


@pytest.mark.parametrize(
    "text",
    [
        "I prefer type hints in Python code",  # another preference where the first holds
        "I prefer short answers",  # shares a word with a stated preference's key only
        "I prefer short answers with code samples",
        "I like Python",  # the slot's word, not the slot
    ],
)
def test_preferences_that_can_hold_together_do_not_conflict(text: str) -> None:
    assert find_contradictions(text, STATED) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I prefer spaces over tabs in Python code", "negation"),
        ("I prefer unittest for Python testing", "replacement"),  # the same purpose
        ("I prefer spaces", "negation"),
    ],
)
def test_a_stated_preference_is_still_contradicted(text: str, kind: str) -> None:
    found = find_contradictions(text, STATED)
    assert found and found[0].kind == kind and found[0].level is ConflictLevel.HIGH


PASSIVE_CANON = {
    "fact.ci-token": "the CI token is rotated monthly",
    "fact.api": "the API is hosted on AWS",
    "fact.build": "the build is broken",
}


@pytest.mark.parametrize(
    ("text", "contradicted"),
    [
        # What is done to a subject is a thing of its own: two facts, no contradiction (D378).
        ("the CI token is stored in Vault", []),
        ("the CI token is rotated weekly", ["fact.ci-token"]),  # the same doing, a new value
        ("the API is hosted on GCP", ["fact.api"]),
        ("the build is fixed", ["fact.build"]),  # a state, as before
    ],
)
def test_a_passive_claim_contradicts_only_the_same_doing(text: str, contradicted: list[str]) -> None:
    assert [c.canon_key for c in find_contradictions(text, PASSIVE_CANON)] == contradicted


@pytest.mark.parametrize(
    ("text", "contradicted"),
    [
        ("stop using bullet points", ["preference.from-now-on-always-answer-in-bullet-points"]),
        ("pls never use bullet points", ["preference.from-now-on-always-answer-in-bullet-points"]),
        ("no more bullet points please", ["preference.from-now-on-always-answer-in-bullet-points"]),
        ("don't forget to answer in bullet points", []),  # a reminder, not a negation
        ("always answer in bullet points", []),  # agrees
        ("never answer in French", []),  # another instruction
        ("the build never passes on Windows", []),  # a statement, no instruction
        ("please refactor the parser", []),
    ],
)
def test_a_standing_instruction_negates_another_on_the_same_words(
    text: str, contradicted: list[str]
) -> None:
    # D415: "stop using bullet points" after "always answer in bullet points" was kept beside
    # it: neither had a verb of liking, so neither made a claim to compare.
    found = find_contradictions(text, STATED)
    assert [c.canon_key for c in found] == contradicted
    assert all(c.kind == "negation" and c.level is ConflictLevel.HIGH for c in found)
