"""Standing instructions to the assistant are explicit preferences (D47)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.config import PolicySurface
from hrm.governance.preferences import PreferenceClass, PreferenceClassifier
from hrm.reading.rules.instructions import MARKERS, instruction_spans, standing_instruction
from hrm.reading.rules.preference_scope import find_stated_preference

CLASSIFIER = PreferenceClassifier(PolicySurface())


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("From now on, always answer in bullet points", "from now on"),
        ("Always use type hints", "always"),
        ("Never push to main", "never"),
        ("Please always include tests.", "always"),
        ("OK, never use emojis", "never"),
        ("Let's always write the tests first", "always"),
        ("Use tabs from now on", "from now on"),
        ("Going forward, keep answers under ten lines", "going forward"),
        ("In future, ask before deleting files", "in future"),
        ("Can you use British spelling from now on?", "from now on"),
        ("Could you always reply in French?", "always"),
        ("Thanks. Always focus on the failing test first.", "always"),
        ("Don't use global variables in your examples.", "in your examples"),
        ("Do not use emojis in your answers", "in your answers"),
        ("In your answers, use British spelling", "in your answers"),
        ("Could you avoid jargon in your explanations?", "in your explanations"),
    ],
)
def test_an_instruction_that_holds_from_now_on_is_canon_at_once(text: str, marker: str) -> None:
    assert standing_instruction(text) == marker
    result = CLASSIFIER.classify(text)
    assert result.preference_class is PreferenceClass.EXPLICIT
    assert result.matched_pattern == marker
    stated = find_stated_preference(text, CLASSIFIER.classify, CLASSIFIER.spans)
    assert stated.classification is not None
    assert stated.classification.preference_class is PreferenceClass.EXPLICIT


@pytest.mark.parametrize(
    "text",
    [
        "Never mind, let's look at the parser",
        "Never again",
        "Always the same error",
        "Always fails on CI",
        "Never worked for me",
        "I will use tabs from now on",
        "What changes from now on?",
        "In future versions we should add caching",
        "Going forward, the team will use Rust",
        "By default, the server listens on 8080",
        "Will you always remember this?",
        "Could you always be this fast?",
        "It always crashes on start",
        "always",
        "Fix the bug in your code",
        "Explain the loop in your code",
        "Can you add comments in your code?",
        "I found a typo in your answer",
        "There is a bug in your code",
        "What did you mean in your answers?",
    ],
)
def test_a_statement_report_or_question_is_no_instruction(text: str) -> None:
    assert standing_instruction(text) is None
    assert instruction_spans(text) == []


@pytest.mark.parametrize(
    "text", ["Never got it working", "Always get an error when I run it", "Can I always use tabs?"]
)
def test_the_scope_still_turns_away_reports_and_questions(text: str) -> None:
    stated = find_stated_preference(text, CLASSIFIER.classify, CLASSIFIER.spans)
    assert stated.classification is None


def test_the_first_person_patterns_still_come_first() -> None:
    assert CLASSIFIER.classify("I prefer tabs. Always use them.").matched_pattern == "I prefer"


def test_only_the_person_gives_instructions() -> None:
    result = CLASSIFIER.classify("Always use type hints", source="agent")
    assert result.preference_class is not PreferenceClass.EXPLICIT


_WORDS = ["always", "never", "from", "now", "on", "going", "forward", "please", "use", "tabs",
          "the", "I", "it", "fails", "mind", "can", "you", "in", "future", ",", ".", "?", "\n",
          "Always", "From", "henceforth", "answer", "ok", "your", "answers", "examples", "don't",
          "fix"]


@given(st.one_of(st.lists(st.sampled_from(_WORDS), max_size=12).map(" ".join), st.text()))
def test_the_marker_returned_is_one_the_spans_point_at(text: str) -> None:
    marker = standing_instruction(text)
    spans = instruction_spans(text)
    assert (marker is None) == (not spans)
    for start, end in spans:
        assert text[start:end].lower() in MARKERS
    if marker is not None:
        assert marker in {text[a:b].lower() for a, b in spans}
