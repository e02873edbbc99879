"""InputClassifier: every dimension from deterministic markers, total on any text."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.reasoning.classifier import InputClassifier
from hrm.types import Complexity, ConflictLevel, Stakes

classifier = InputClassifier()


@dataclass(frozen=True)
class Case:
    text: str
    complexity: Complexity | None = None
    stakes: Stakes | None = None
    conflict: ConflictLevel | None = None
    horizon: str | None = None
    irreversible: bool | None = None


CASES = [
    pytest.param(Case("What time is it?", Complexity.SIMPLE, Stakes.LOW), id="simple-question"),
    pytest.param(
        Case(
            "First refactor the parser module, then update the tests, and finally write the "
            "docs. Also clean up the CLI and the config loader.",
            complexity=Complexity.COMPLEX,
        ),
        id="multi-step-complex",
    ),
    pytest.param(
        Case("Please drop table users in production", stakes=Stakes.HIGH, irreversible=True),
        id="drop-table-prod",
    ),
    pytest.param(Case("git push --force to main", irreversible=True), id="force-push"),
    pytest.param(Case("rm -rf the build folder", irreversible=True), id="rm-rf"),
    pytest.param(
        Case("Deploy the new build to production", stakes=Stakes.HIGH, irreversible=True),
        id="deploy-to-prod",
    ),
    pytest.param(Case("Update the config file", stakes=Stakes.MEDIUM), id="medium-stakes"),
    # The blast radius said in words: a move that "affects every team" was low stakes.
    pytest.param(
        Case("Should we move our whole infrastructure to Kubernetes? It affects every team.",
             stakes=Stakes.HIGH),
        id="every-team",
    ),
    pytest.param(Case("We had an outage last night", stakes=Stakes.HIGH), id="outage"),
    pytest.param(Case("Migrate the cron jobs", stakes=Stakes.MEDIUM), id="migrate"),
    pytest.param(Case("Each service needs a health check", stakes=Stakes.LOW), id="each"),
    pytest.param(Case("Rename the variable", stakes=Stakes.LOW, irreversible=False), id="low"),
    pytest.param(Case("Postgres vs SQLite for this?", conflict=ConflictLevel.LOW), id="vs"),
    pytest.param(
        Case("We want speed but also safety, and the goals are conflicting; a trade-off.",
             conflict=ConflictLevel.HIGH),
        id="three-conflict-markers",
    ),
    pytest.param(Case("Fix this now", horizon="immediate"), id="now"),
    pytest.param(Case("Can we ship it next week?", horizon="near"), id="next-week"),
    pytest.param(Case("Where should the roadmap go long-term?", horizon="far"), id="roadmap"),
    pytest.param(Case("Rename the variable", horizon="immediate"), id="no-horizon-marker"),
]


@pytest.mark.parametrize("case", CASES)
def test_dimensions_follow_the_markers(case: Case) -> None:
    result = classifier.classify_text(case.text)
    for name in ("complexity", "stakes", "conflict", "horizon", "irreversible"):
        expected = getattr(case, name)
        if expected is not None:
            assert getattr(result, name) == expected, (name, result.signals)


def test_uncertainty_grows_with_hedges_and_questions() -> None:
    plain = classifier.classify_text("Rename the variable to count.")
    hedged = classifier.classify_text("Maybe rename something? Not sure which, unclear.")
    assert plain.uncertainty < 0.3
    assert hedged.uncertainty > 0.7
    assert any(s.startswith("uncertainty:hedge") for s in hedged.signals)


def test_domains_come_from_lexicons_and_default_to_general() -> None:
    assert "code" in classifier.classify_text("There is a bug in this python function").domain
    assert classifier.classify_text("Tell me a joke").domain == ["general"]
    both = classifier.classify_text("Write a blog post about our sql database")
    assert {"writing", "data"} <= set(both.domain)


def test_conflict_hint_raises_but_never_lowers() -> None:
    assert classifier.classify_text("Rename it", conflict_hint=ConflictLevel.MEDIUM).conflict == (
        ConflictLevel.MEDIUM
    )
    marked = "a vs b, but also c vs d"
    assert classifier.classify_text(marked, conflict_hint=ConflictLevel.LOW).conflict == (
        ConflictLevel.HIGH
    )


def test_signals_name_the_markers_that_fired() -> None:
    result = classifier.classify_text("Delete the production database now")
    assert "irreversible:delete" in result.signals
    assert any(s.startswith("stakes:high:") for s in result.signals)


def test_signature_is_what_learning_matches_on(make_input) -> None:  # type: ignore[no-untyped-def]
    result = classifier.classify(make_input("How do I rename a git branch?"))
    assert result.signature() == {
        "complexity": "simple",
        "stakes": "low",
        "horizon": "immediate",
        "domain": ["code"],
    }


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("   \n\t ", id="whitespace"),
        pytest.param("\x00\x01\x1b[31m\x7f", id="control-characters"),
        pytest.param("delete " * 150_000, id="1MB-markers"),
        pytest.param("a" * 1_048_576, id="1MB-one-word"),
        pytest.param("?" * 1_048_576, id="1MB-punctuation"),
    ],
)
def test_classification_is_total(text: str) -> None:
    result = classifier.classify_text(text)
    assert 0.0 <= result.uncertainty <= 1.0
    assert 0.0 <= result.confidence <= 1.0
    assert result.horizon in ("immediate", "near", "far")
    assert result.domain


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=3000))
def test_classification_is_total_on_any_text(text: str) -> None:
    result = classifier.classify_text(text)
    assert isinstance(result.complexity, Complexity)
    assert isinstance(result.stakes, Stakes)
    assert isinstance(result.conflict, ConflictLevel)
    assert 0.0 <= result.uncertainty <= 1.0
    assert 0.0 <= result.confidence <= 1.0
    assert result.horizon in ("immediate", "near", "far")
    assert result.domain == sorted(set(result.domain), key=result.domain.index)


def test_huge_inputs_are_scanned_at_both_ends_only() -> None:
    """Markers count in the first and last window; length metrics see the whole text."""
    filler = "x " * 300_000
    assert classifier.classify_text("delete production " + filler).stakes == Stakes.HIGH
    assert classifier.classify_text(filler + " delete production").stakes == Stakes.HIGH
    buried = classifier.classify_text(filler + " delete production " + filler)
    assert buried.stakes == Stakes.LOW
    assert buried.complexity == Complexity.MODERATE  # length alone: > 200 words
