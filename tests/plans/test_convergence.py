"""ConvergenceEngine: every step complete converges; a real model may end a plan early."""

from __future__ import annotations

import json

from tests.plans.conftest import MakePlan, ScriptedModel, set_status

from hrm.llm.offline import OfflineAdapter
from hrm.plans.convergence import ConvergenceEngine, parse_judgement
from hrm.plans.types import SemanticValidationReport, ValidationIssue


def test_all_complete_converges(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", []), (2, "execute", [1])),
                      step_1="COMPLETE", step_2="COMPLETE")
    assessment = ConvergenceEngine().assess(plan)
    assert assessment.converged and assessment.reason_codes == ["ALL_STEPS_COMPLETE"]
    assert assessment.completeness_score == 1.0


def test_skipped_steps_count_as_done_but_one_must_complete(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", []), (2, "execute", [])),
                      step_1="COMPLETE", step_2="SKIPPED")
    assert ConvergenceEngine().assess(plan).converged
    set_status(plan, step_1="SKIPPED")
    assert not ConvergenceEngine().assess(plan).converged


def test_pending_failed_and_blocking_issues_prevent_convergence(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", []), (2, "execute", [])), step_1="FAILED")
    assert ConvergenceEngine().assess(plan).reason_codes == ["STEPS_PENDING", "STEPS_FAILED"]
    set_status(plan, step_1="COMPLETE", step_2="COMPLETE")
    report = SemanticValidationReport(validation_id="v", issues=[
        ValidationIssue(issue_type="goal_gap", severity="high", description="missing part")])
    assessment = ConvergenceEngine().assess(plan, validation_report=report)
    assert not assessment.converged
    assert assessment.reason_codes == ["ALL_STEPS_COMPLETE", "BLOCKING_ISSUES"]
    assert ConvergenceEngine().assess(make_plan()).reason_codes == ["NO_STEPS"]


def test_the_offline_model_is_never_asked(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", []), (2, "execute", [1])), step_1="COMPLETE")
    engine = ConvergenceEngine(OfflineAdapter())
    assert not engine.uses_model and not engine.assess(plan).converged


def test_a_confident_model_ends_the_plan_early(make_plan: MakePlan) -> None:
    model = ScriptedModel({"plan_convergence": [
        json.dumps({"converged": True, "confidence": 0.9, "reason": "answered"}),
        json.dumps({"converged": True, "confidence": 0.4, "reason": "maybe"}),
        "no idea",
    ]})
    plan = set_status(make_plan((1, "research", []), (2, "execute", [1])), step_1="COMPLETE")
    engine = ConvergenceEngine(model)
    first = engine.assess(plan, goal="g")
    assert first.converged and first.source == "model" and first.confidence == 0.9
    assert "MODEL_JUDGED_COMPLETE" in first.reason_codes
    second = engine.assess(plan, goal="g")
    assert not second.converged and "MODEL_JUDGED_INCOMPLETE" in second.reason_codes
    third = engine.assess(plan, goal="g")
    assert not third.converged and third.source == "deterministic"


def test_the_model_is_not_asked_when_a_step_failed(make_plan: MakePlan) -> None:
    model = ScriptedModel()
    plan = set_status(make_plan((1, "research", []), (2, "execute", []), (3, "ask", [])),
                      step_1="COMPLETE", step_2="FAILED")
    assert not ConvergenceEngine(model).assess(plan).converged
    assert model.purposes == []


def test_parse_judgement_is_defensive() -> None:
    assert parse_judgement({"converged": True, "confidence": 7}) == (True, 1.0)
    assert parse_judgement({"converged": "yes"}) is None
    assert parse_judgement({"converged": False, "confidence": True}) is None
    assert parse_judgement([1]) is None
