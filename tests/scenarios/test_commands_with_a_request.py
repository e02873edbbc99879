"""A command said with a request in the same sentence keeps only the command and answers the
request; what only looks like a command keeps nothing (D451).

Found by talking to hrm as new users: "I prefer metric, so convert 5 miles to km" was kept
whole as canon and never answered; "Remember when we talked about the staging server?" was
kept as a fact; "my kids prefer pasta over rice" was asked about as the person's preference;
"we need to pick an ORM" was kept as a decision.
"""

from __future__ import annotations

import pytest

from hrm.governance.preferences import is_retracted
from hrm.home import HRMHome
from hrm.pipeline import HRM


def _kept(h: HRM) -> dict[str, str]:
    return {k: str(v) for k, v in h.stack.canon().items() if not is_retracted(v)}


@pytest.mark.parametrize(
    ("said", "key", "kept"),
    [
        ("I prefer metric, so convert 5 miles to km", "preference.i-prefer-metric",
         "I prefer metric"),
        ("I can't stand long intros, so just tell me how to boil an egg",
         "preference.i-can-t-stand-long-intros", "I can't stand long intros"),
        ("Remember that our design system uses 8px spacing, and write me the flexbox version",
         "fact.our-design-system-uses-8px-spacing", "our design system uses 8px spacing"),
        ("remember that my flight is at 9, so remind me tomorrow", "fact.my-flight",
         "my flight is at 9"),
    ],
)
def test_the_command_is_kept_and_the_request_answered(
    home: HRMHome, said: str, key: str, kept: str
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn(said)
        assert result.action == "respond"  # the request went to the model
        assert _kept(h) == {key: kept}


def test_a_standing_instruction_after_so_stays_part_of_the_preference(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer metric, so always give distances in km")
        assert list(_kept(h).values()) == ["I prefer metric, so always give distances in km"]


@pytest.mark.parametrize(
    "said",
    [
        "Remember when we talked about the staging server?",
        "remember the time the build broke on friday?",
        "my kids prefer pasta over rice",
        "My colleague hates tabs",
        "teacher prefers max 10 slides",
        "we need to pick an ORM for our new fastapi service",
        # someone else's rule quoted, or a rule asked about (D471)
        "My boss said 'always use metric units'. Can you convert 5 miles to km?",
        "The style guide says 'never use semicolons in JavaScript'. Do you agree?",
        "My teacher always said: I prefer handwritten notes. Is that still good advice?",
        "never forget to close your file handles — is that still true with pathlib?",
        # someone else's claim about the person (D497)
        "My boss says I prefer long detailed reports, but I do not",
        "My wife thinks I prefer the window seat",
    ],
)
def test_what_only_looks_like_a_command_keeps_nothing_and_asks_nothing(
    home: HRMHome, said: str
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'm setting up a new web service for the shop")
        result = h.turn(said)
        assert "(yes/no)" not in result.response
        assert _kept(h) == {}
        assert not h.stack.forgettable()  # no decision kept either


@pytest.mark.parametrize(
    "said",
    [
        "don't add comments in this one",
        "Please use a table for this one comparison: iPhone vs Pixel",
        "just this time, skip the intro",
    ],
)
def test_an_instruction_for_what_is_at_hand_is_no_standing_preference(
    home: HRMHome, said: str
) -> None:
    """D454: "this one", "this time" scope an instruction to the answer at hand."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("write a python function that parses dates")
        result = h.turn(said)
        assert result.action in ("respond", "delegate") and "(yes/no)" not in result.response
        assert _kept(h) == {}


def test_an_instruction_that_opens_with_dont_is_no_answer_to_hrms_question(
    home: HRMHome,
) -> None:
    """D454: "Don't forget to include the price" was read as "no" to "Should I remember …?"."""
    with HRM.open(home, "ADMIN", "offline") as h:
        asked = h.turn("I prefer concise answers, I think")
        assert asked.response.endswith("(yes/no)")
        after = h.turn("Don't forget to include the price")
        assert "no" not in [i["kind"] for i in after.decision.reading["intents"]]
        assert "Understood — I will not treat that" not in after.response
        refused = h.turn("I prefer concise answers, I think")
        assert refused.response.endswith("(yes/no)")
        assert h.turn("don't keep that").decision.reading["intents"][0]["kind"] == "no"
