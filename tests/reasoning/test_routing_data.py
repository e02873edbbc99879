"""The routing table and the request classifier's cue tables are data, parsed strictly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import HRMError
from hrm.reasoning.requests import load_request_classifier, parse_request_classifier
from hrm.reasoning.routing_table import (
    REQUEST_CLASSES,
    load_routing_table,
    parse_routing_table,
)
from hrm.types import ConflictLevel, ReducerType, Stance

ANY_ROWS = "\n".join(
    f'[[route]]\nclass = "{c}"\nstance = "any"\naction = "respond_direct"\n'
    f'strategy = "quick_answer"\n'
    for c in REQUEST_CLASSES
)


@pytest.mark.parametrize("stance", list(Stance))
@pytest.mark.parametrize("request_class", REQUEST_CLASSES)
def test_every_class_has_a_route_in_every_stance(request_class: str, stance: Stance) -> None:
    route = load_routing_table().lookup(request_class, stance)
    assert route.request_class == request_class
    assert (route.action == "run_agents") == (route.reducer is not None)


@pytest.mark.parametrize(
    ("request_class", "stance", "action", "reducer"),
    [
        ("simple", Stance.EXECUTION, "respond_direct", None),
        ("multi_step", Stance.SENSEMAKING, "execute_plan", None),
        ("multi_step", Stance.EVALUATION, "execute_plan", None),
        ("needs_perspectives", Stance.SENSEMAKING, "run_agents", ReducerType.MERGE),
        ("needs_perspectives", Stance.EVALUATION, "run_agents", ReducerType.VOTE),
        ("high_stakes", Stance.EXECUTION, "run_agents", ReducerType.VOTE),
        ("high_stakes", Stance.DISCOVERY, "run_agents", ReducerType.SYNTHESIZE),
        ("conflict", Stance.SENSEMAKING, "run_agents", ReducerType.SYNTHESIZE),
    ],
)
def test_the_shipped_table(
    request_class: str, stance: Stance, action: str, reducer: ReducerType | None
) -> None:
    route = load_routing_table().lookup(request_class, stance)
    assert (route.action, route.reducer) == (action, reducer)


def test_a_plan_commits_and_perspectives_in_sensemaking_enter_discovery() -> None:
    table = load_routing_table()
    assert table.lookup("multi_step", Stance.SENSEMAKING).commit
    assert table.lookup("needs_perspectives", Stance.SENSEMAKING).enter is Stance.DISCOVERY


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('[[route]]\nclass = "nope"\nstance = "any"\naction = "ask"\nstrategy = "dialogue"\n',
         "class = 'nope'"),
        ('[[route]]\nclass = "simple"\nstance = "sideways"\naction = "ask"\n'
         'strategy = "dialogue"\n', "stance = 'sideways'"),
        ('[[route]]\nclass = "simple"\nstance = "execution"\naction = "run_agents"\n'
         'strategy = "exploration"\n', "needs a reducer"),
        ('[[route]]\nclass = "simple"\nstance = "execution"\naction = "ask"\n'
         'strategy = "dialogue"\ncolour = "red"\n', "unknown keys"),
        ('[[route]]\nclass = "simple"\nstance = "any"\naction = "ask"\nstrategy = "dialogue"\n',
         "repeats"),
    ],
)
def test_a_bad_row_is_refused_with_its_reason(extra: str, message: str) -> None:
    with pytest.raises(HRMError, match=message):
        parse_routing_table(ANY_ROWS + extra, source="t.toml")


def test_a_class_without_an_any_row_is_refused() -> None:
    text = '[[route]]\nclass = "simple"\nstance = "any"\naction = "ask"\nstrategy = "dialogue"\n'
    with pytest.raises(HRMError, match="missing for multi_step"):
        parse_routing_table(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('order = ["a"]\n', "order"),
        ('order = ["a"]\n[classes.a]\nthreshold = -1\n', "threshold"),
        ('order = ["a"]\n[classes.a]\nthreshold = 1\n[classes.a.cues]\n"x" = "heavy"\n', "weight"),
        ('order = ["a"]\n[classes.a]\nthreshold = 1\n[classes.a.cues]\n"~ x" = 1\n', "both sides"),
        ('order = ["a"]\n[classes.a]\nthreshold = 1\n[classes.a.shape]\nverbs_two = 1\n', "shape"),
    ],
)
def test_a_bad_cue_table_is_refused(text: str, message: str) -> None:
    with pytest.raises(HRMError, match=message):
        parse_request_classifier(text)


def test_cues_match_prefixes_and_gaps() -> None:
    classifier = parse_request_classifier(
        'order = ["c"]\n[classes.c]\nthreshold = 1\n[classes.c.cues]\n'
        '"disagre*" = 1\n"should we ~ or" = 1\n'
    )
    assert classifier.classify("They disagreed loudly").request_class == "c"
    assert classifier.classify("should we use kafka or rabbit").request_class == "c"
    far = "should we " + "word " * 12 + "or not"
    assert classifier.classify(far).request_class == "simple"  # the gap is bounded


def test_a_contradiction_with_what_was_said_counts_towards_conflict() -> None:
    classifier = load_request_classifier()
    text = "We use MySQL for the events store."
    assert classifier.classify(text).request_class == "simple"
    reading = classifier.classify(text, conflict_hint=ConflictLevel.HIGH)
    assert reading.request_class == "conflict"
    assert "hint:high" in reading.cues["conflict"]


def test_pasted_material_is_not_the_request() -> None:
    log = "\n".join(["ERROR conflict: teams disagree on lock"] * 3)
    text = f"What does this mean?\n```\n{log}\n```"
    assert load_request_classifier().classify(text).request_class == "simple"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_gets_a_class(text: str) -> None:
    reading = load_request_classifier().classify(text)
    assert reading.request_class in REQUEST_CLASSES
    assert set(reading.scores) == set(REQUEST_CLASSES) - {"simple"}
