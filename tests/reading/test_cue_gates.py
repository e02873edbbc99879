"""Cue gates: a request read by a tier that generalises must mention what it asks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.errors import HRMError
from hrm.reading import IntentKind
from hrm.reading.cue_gates import has_cue, load_cue_gates, parse_cue_gates

K = IntentKind


@pytest.mark.parametrize(
    ("kind", "sentence", "allowed"),
    [
        pytest.param(K.DECISION, "We're moving our infrastructure from CloudFormation to Terraform", False, id="work-is-no-decision"),
        pytest.param(K.DECISION, "We use Hermes already", False, id="state-is-no-decision"),
        pytest.param(K.DECISION, "Postgres it is.", True, id="it-is"),
        pytest.param(K.DECISION, "ok lets stick with sqlite for the prototype", True, id="stick-with"),
        pytest.param(K.FACT, "Here is my config: /var/log/app/*.log { daily }", False, id="paste-is-no-fact"),
        pytest.param(K.FACT, "On another note, the nightly ETL job took six hours", False, id="another-note"),
        pytest.param(K.FACT, "Note: our staging db is db2", True, id="note"),
        pytest.param(K.FACT, "pls remeber my kid is 4", True, id="typo-remeber"),
        pytest.param(K.FORGET, "fogret about my cat", True, id="typo-swap"),
        pytest.param(K.PREFERENCE, "I'm writing a cover letter for a data analyst job", False,
                     id="letter-is-no-typo-of-better"),
        pytest.param(K.PREFERENCE, "i preffer tabs", True, id="typo-after-the-first-letter"),
        pytest.param(K.FORGET, "don't store that", True, id="dont-store"),
        pytest.param(K.SET_ASIDE, "I'm building a Flask API for a todo app", False, id="building-is-no-aside"),
        pytest.param(K.PREFERENCE, "Something less academic, please", False, id="request-now"),
        pytest.param(K.PREFERENCE, "no emojis", True, id="no-x"),
        pytest.param(K.THANKS, "cheers!", True, id="thanks"),
        pytest.param(K.YES, "anything at all", True, id="answers-are-not-gated"),
        pytest.param(K.RESUME, "pls help w/ my resume", False, id="a-cv-is-no-resume"),  # D445
        pytest.param(K.RESUME, "lets resume where we left off", True, id="resume"),
    ],
)
def test_a_reading_needs_a_cue_of_its_intent(kind: IntentKind, sentence: str, allowed: bool) -> None:
    assert has_cue(kind, sentence) is allowed


def test_every_gated_intent_is_a_command_or_a_move() -> None:
    gates = load_cue_gates()
    assert K.YES not in gates.words and K.PREFERENCE in gates.words and K.FORGET in gates.words


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("preference prefer\n", "line 1: expected", id="no-colon"),
        pytest.param("preference: prefer,, like\n", "line 1: expected", id="empty-cue"),
        pytest.param("# c\nwish: want\n", "line 2: 'wish' is not an intent", id="unknown-intent"),
        pytest.param("fact: note\nfact: remember\n", "line 2: 'fact' is listed twice", id="twice"),
    ],
)
def test_a_malformed_cue_file_names_its_line(text: str, problem: str) -> None:
    with pytest.raises(HRMError) as caught:
        parse_cue_gates(text, source="cues.txt")
    assert f"cues.txt, {problem}" in caught.value.message


@given(st.sampled_from(sorted(load_cue_gates().words, key=str)), st.text(max_size=2000))
def test_a_gate_never_raises(kind: IntentKind, sentence: str) -> None:
    assert has_cue(kind, sentence) in (True, False)
