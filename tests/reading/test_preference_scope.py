"""Which sentence of a message states a preference (001 §12.4's "stable object" rule, D45)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.config import PolicySurface
from hrm.governance.preferences import PreferenceClass, PreferenceClassifier
from hrm.reading.rules.preference_scope import StatedPreference, find_stated_preference, sentences

_CLASSIFIER = PreferenceClassifier(PolicySurface())


def _stated(text: str, source: str = "user") -> StatedPreference:
    return find_stated_preference(
        text, lambda s: _CLASSIFIER.classify(s, source=source), _CLASSIFIER.spans
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("I need to write a Python function that parses ISO dates. Can you help?", "asks"),
        ("I need help with the deploy script", "asks"),
        ("I need to write a bash script that backs up my postgres database every night", "asks"),
        ("I need to write a script that never deletes the newest backup", "asks"),
        ("I need you to run the migration every day at noon", "asks"),
        ("I want you to refactor the parser", "asks"),
        ("I'd like you to add tests", "asks"),
        ("Can you make the function faster? I want it under 1 ms", "asks"),
        ("Do I need to restart the server after this change?", "question"),
        ("What do I need to change in the config?", "question"),
        ("Should I always use async here?", "question"),
        ("Which one is better, A or B?", "question"),
        ("Tabs or spaces, which do you prefer?", "question"),
        ("I always get this error when I run the tests", "reports"),
        ("I always get a segfault when I run this", "reports"),
        ("I never get a response from the API", "reports"),
        ("I never said that", "reports"),
        ("I like this approach, can you extend it to handle lists?", "reacts"),
        ("I hate this bug", "reacts"),
        ("I hate that", "reacts"),
        ("That looks better, thanks", "reacts"),
        ("I liked the previous version more", "happened"),
        ("This is likely a race condition", "contains"),
        ("The build needs a clean cache", "not about"),
        ("Also, my sourdough starter smells like nail polish remover", "compares"),
        ("My code looks like spaghetti now", "compares"),
        # D69
        ("I'd rather not say", "declines"),
        ("I prefer not to answer that", "declines"),
        ("I'd prefer to finish the migration today", "asks"),
        ("I'm a big fan of your last suggestion, can you expand it?", "reacts"),
        ("I like your approach", "reacts"),
        ("I really hate that the build is slow", "how things are"),
    ],
)
def test_tasks_questions_reactions_and_reports_are_not_preferences(text: str, why: str) -> None:
    stated = _stated(text)
    assert stated.classification is None and stated.sentence is None
    assert stated.reason is not None and why in stated.reason


@pytest.mark.parametrize(
    ("text", "cls", "sentence"),
    [
        ("I prefer concise answers with code examples", "explicit",
         "I prefer concise answers with code examples"),
        ("I need answers in British English.", "explicit", "I need answers in British English"),
        ("I always use tabs for indentation", "explicit", "I always use tabs for indentation"),
        ("I never want emojis in commit messages", "explicit",
         "I never want emojis in commit messages"),
        ("I don't like long answers", "explicit", "I don't like long answers"),
        ("I'm the kind of person who reads the docs first", "explicit",
         "I'm the kind of person who reads the docs first"),
        ("I like it when you show the diff first", "explicit",
         "I like it when you show the diff first"),
        ("I need to be told before you delete files", "explicit",
         "I need to be told before you delete files"),
        ("I need a summary at the end of every answer", "explicit",
         "I need a summary at the end of every answer"),
        ("I need to always see the diff first", "explicit", "I need to always see the diff first"),
        ("I need to fix the login bug. I prefer tabs.", "explicit", "I prefer tabs"),
        ("I prefer tabs, is that ok?", "explicit", "I prefer tabs"),
        ("Thanks! I prefer tabs, I hate long lines - can you reformat this?", "explicit",
         "I prefer tabs, I hate long lines"),
        ("Dark mode seems better for late-night work", "inferred",
         "Dark mode seems better for late-night work"),
        ("I want you to always answer in French", "inferred",
         "I want you to always answer in French"),
        # D69: said as plainly as "I prefer", so canon at once (it was asked about).
        ("I'd rather you didn't use emojis", "explicit", "I'd rather you didn't use emojis"),
        ("I really prefer pytest over unittest", "explicit",
         "I really prefer pytest over unittest"),
        ("My preference is tabs over spaces", "explicit", "My preference is tabs over spaces"),
        ("I can't stand long meetings", "explicit", "I can't stand long meetings"),
        ("I don't really like long explanations", "explicit",
         "I don't really like long explanations"),
        ("Stop using emojis", "inferred", "Stop using emojis"),  # a lasting change, or a halt
        ("I'm a big fan of functional style", "explicit", "I'm a big fan of functional style"),
        ("I like that you ask before deleting files", "explicit",
         "I like that you ask before deleting files"),
    ],
)
def test_standing_preferences_are_still_found(text: str, cls: str, sentence: str) -> None:
    stated = _stated(text)
    assert stated.classification is not None
    expected = {"explicit": PreferenceClass.EXPLICIT,
                "inferred": PreferenceClass.INFERRED_CONFIRM_REQUIRED}[cls]
    assert stated.classification.preference_class is expected
    assert stated.sentence == sentence


def test_an_explicit_sentence_wins_over_an_earlier_inferred_one() -> None:
    stated = _stated("Dark mode seems better. I prefer tabs over spaces.")
    assert stated.sentence == "I prefer tabs over spaces"
    assert stated.classification is not None
    assert stated.classification.preference_class is PreferenceClass.EXPLICIT


def test_only_the_user_states_explicit_preferences() -> None:
    stated = _stated("I prefer concise answers", source="agent")
    assert stated.classification is not None
    assert stated.classification.preference_class is PreferenceClass.INFERRED_CONFIRM_REQUIRED


_OBJECT_WORDS = st.sampled_from([
    "short", "answers", "tabs", "spaces", "python", "examples", "tables", "links", "british",
    "spelling", "dark", "mode", "commit", "messages", "docs",
])
_OBJECTS = st.lists(_OBJECT_WORDS, min_size=1, max_size=6).map(" ".join)
_VERBS = st.sampled_from(["I prefer", "I always use", "I don't like", "I never want"])


@given(_VERBS, _OBJECTS)
def test_a_plain_preference_is_explicit_and_its_question_is_not(verb: str, obj: str) -> None:
    stated = _stated(f"{verb} {obj}.")
    assert stated.classification is not None
    assert stated.classification.preference_class is PreferenceClass.EXPLICIT
    assert stated.sentence == f"{verb} {obj}"
    asked = _stated(f"Do you think {verb[0].lower()}{verb[1:]} {obj}?")
    assert asked.classification is None and asked.reason == "it is a question"


@given(st.text(max_size=600))
def test_any_text_gives_a_sentence_of_its_own_or_a_reason(text: str) -> None:
    stated = _stated(text)
    if stated.classification is None:
        assert stated.sentence is None
    else:
        assert stated.sentence is not None and len(stated.sentence) <= 300
        assert stated.classification.preference_class in (
            PreferenceClass.EXPLICIT, PreferenceClass.INFERRED_CONFIRM_REQUIRED
        )
        assert any(stated.sentence in s for s in sentences(text))


@given(st.text(max_size=300), _VERBS, _OBJECTS)
def test_a_preference_said_anywhere_in_a_message_is_found(
    before: str, verb: str, obj: str
) -> None:
    stated = _stated(f"{before}\n{verb} {obj}.")
    assert stated.classification is not None
    assert stated.classification.preference_class is PreferenceClass.EXPLICIT
