"""The deliverable of a plan run and the verdict of its checks (issue 33 §5, D283, D284)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.plans.conftest import build_plan

from hrm.altitude.types import Plan, PlanStepStatus
from hrm.config import LLMConfig
from hrm.llm.capability import ModelCapability, model_capability
from hrm.plans.deliverable import plan_report, read_check
from hrm.plans.fitness import plan_refusal

CAPABLE = ModelCapability(True, "anthropic", "claude", "anthropic serves capable models")
SMALL = ModelCapability(False, "local", "smollm2-135m", "the in-process local model is too small")


def _ran(plan: Plan, **outputs: str | None) -> Plan:
    """Mark the named steps COMPLETE with their output (None: FAILED)."""
    for step in plan.steps:
        if step.step_id in outputs:
            output = outputs[step.step_id]
            step.status = PlanStepStatus.FAILED if output is None else PlanStepStatus.COMPLETE
            step.output = output
    return plan


def _verification(**outputs: str | None) -> Plan:
    plan = build_plan(
        (1, "execute", [], "Produce the result"),
        (2, "validate", [1], "Verify the result independently"),
        (3, "validate", [1], "Verify the result a second way"),
        (4, "respond", [2, 3], "Reconcile the verifications into one verdict"),
    )
    return _ran(plan, **outputs)


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("PASS", "pass"),
        ("PASS — the scripts match the plan.", "pass"),
        ("**Passed.** All good", "pass"),
        ("Verdict: PASS", "pass"),
        ("FAIL: step 3 drops the index", "fail"),
        ("failed - the rollback is missing", "fail"),
        ("The result looks fine", "unclear"),
        ("Passing the result on is up to you", "unclear"),
        ("", "unclear"),
        (None, "unclear"),
    ],
)
def test_a_check_is_read_by_its_first_word(text: str | None, reading: str) -> None:
    assert read_check(text) == reading


@given(st.text(max_size=40))
def test_a_check_that_begins_with_neither_word_is_unclear(rest: str) -> None:
    text = "Looks " + rest
    assert read_check(text) == "unclear"
    assert read_check("PASS " + rest) == "pass"
    assert read_check("FAIL: " + rest) == "fail"


def test_the_deliverable_is_the_product_not_the_reconciling_step() -> None:
    plan = _verification(step_1="CREATE TABLE x;", step_2="PASS", step_3="PASS",
                         step_4="Both checks agree.")
    report = plan_report(plan, CAPABLE)
    assert report.deliverable is not None
    assert report.deliverable.step_ids == ("step_1",)
    assert report.deliverable.content == "CREATE TABLE x;"
    assert report.verdict.status == "passed"
    assert report.verdict.checks == ("step_2", "step_3")
    assert report.text().startswith("CREATE TABLE x;")
    assert "Verification: passed" in report.text()


def test_a_check_by_the_same_small_model_is_never_a_pass() -> None:
    plan = _verification(step_1="git rename main", step_2="PASS", step_3="PASS",
                         step_4="PASS")
    verdict = plan_report(plan, SMALL).verdict
    assert verdict.status == "unverified"
    assert "same model that produced it" in verdict.reason and "smollm2-135m" in verdict.reason


def test_the_offline_model_is_unverified_too() -> None:
    offline = model_capability(LLMConfig(provider="offline"))
    plan = _verification(step_1="x", step_2="PASS", step_3="PASS")
    assert plan_report(plan, offline).verdict.status == "unverified"


@pytest.mark.parametrize(
    ("checks", "status"),
    [
        ({"step_2": "PASS", "step_3": "FAIL: wrong column"}, "failed"),
        ({"step_2": "PASS", "step_3": "It seems fine"}, "unverified"),
        ({"step_2": "PASS", "step_3": None}, "unverified"),
        ({}, "unchecked"),
    ],
)
def test_the_verdict_of_a_capable_model_reads_every_check(
    checks: dict[str, str | None], status: str
) -> None:
    plan = _verification(step_1="the result", **checks)
    assert plan_report(plan, CAPABLE).verdict.status == status


def test_a_decomposition_delivers_every_part_in_order() -> None:
    plan = build_plan(
        (1, "research", [], "Gather what the task needs"),
        (2, "execute", [1], "Do: write a migration plan"),
        (3, "execute", [2], "Do: write the scripts"),
        (4, "validate", [2, 3], "Check the result"),
    )
    _ran(plan, step_1="notes", step_2="1. copy 2. swap", step_3="migrate.sh", step_4="PASS")
    report = plan_report(plan, CAPABLE)
    assert report.deliverable is not None
    assert report.deliverable.step_ids == ("step_2", "step_3")
    content = report.deliverable.content
    assert content.index("1. copy 2. swap") < content.index("migrate.sh")
    assert "Do: write the scripts" in content and "notes" not in content


def test_an_exploration_delivers_its_synthesis() -> None:
    plan = build_plan(
        (1, "research", []), (2, "research", []), (3, "respond", [1, 2], "Synthesize")
    )
    _ran(plan, step_1="a", step_2="b", step_3="Option A or B")
    report = plan_report(plan, CAPABLE)
    assert report.deliverable is not None and report.deliverable.content == "Option A or B"
    assert report.verdict.status == "unchecked"


def test_a_run_that_produced_nothing_says_so() -> None:
    plan = _verification(step_1=None)
    report = plan_report(plan, CAPABLE)
    assert report.deliverable is None
    assert report.text().startswith("No step produced a result.")
    assert report.to_dict()["deliverable"] is None


@pytest.mark.parametrize(
    ("config", "refused"),
    [
        (LLMConfig(provider="local"), True),
        (LLMConfig(provider="openai", base_url="http://localhost:11434/v1"), True),
        (LLMConfig(provider="local", capable="on"), False),
        (LLMConfig(provider="anthropic"), False),
        (LLMConfig(provider="offline"), False),
    ],
)
def test_a_plan_is_refused_before_it_starts_only_on_a_real_small_model(
    config: LLMConfig, refused: bool
) -> None:
    why = plan_refusal(model_capability(config))
    assert (why is not None) is refused
    if why is not None:
        assert "cannot run a multi-step plan" in why and "hrm models" in why
