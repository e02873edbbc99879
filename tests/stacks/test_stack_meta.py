"""The meta agent: cross-stack patterns with evidence, written once, consultable by stacks."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hrm.home import HRMHome, initialize
from hrm.stacks.anchors import read_anchors
from hrm.stacks.meta import MetaAgent, meta_patterns_for, read_meta_patterns
from hrm.storage.ledger import Ledger

DPJ = "RESIDENT:DoPeJar"
SIG = {"complexity": "simple", "stakes": "low", "horizon": "immediate", "domain": ["code"]}


def outcome(home: HRMHome, agent_class: str, *, strategy: str, success: bool,
            signature: dict[str, Any] = SIG) -> None:
    initialize(home, agent_class=agent_class)
    with Ledger(home.episodic_ledger(agent_class)) as ledger:
        ledger.append("episode", {
            "entry_type": "learning_outcome",
            "content": {"signal": {**signature, "session_id": "SES-x"},
                        "routing": {"strategy": strategy}, "success": success},
        })


def turn(home: HRMHome, agent_class: str, *, problem: str, escalation: str | None = None) -> None:
    initialize(home, agent_class=agent_class)
    data: dict[str, Any] = {"decision": {"problem": {"id": f"prob_{abs(hash(problem))}",
                                                     "title": problem}},
                            "escalation_events": []}
    if escalation:
        data["escalation_events"] = [{"kind": "escalation", "strategy": escalation}]
    with Ledger(home.decision_ledger(agent_class)) as ledger:
        ledger.append("turn", data)


def meta_kinds(home: HRMHome) -> list[str]:
    if not home.meta_learning_ledger.exists():
        return []
    with Ledger(home.meta_learning_ledger) as ledger:
        return [r.kind for r in ledger.records()]


def test_a_strategy_succeeding_in_two_stacks_becomes_a_pattern_with_evidence(
    home: HRMHome,
) -> None:
    for stack in ("ADMIN", DPJ):
        outcome(home, stack, strategy="quick_answer", success=True)
        outcome(home, stack, strategy="quick_answer", success=True)
    report = MetaAgent(home).analyze()
    [pattern] = report.patterns
    assert pattern.pattern_type == "strategy_success"
    assert pattern.stacks == ["ADMIN", DPJ]
    assert pattern.key["strategy"] == "quick_answer"
    assert pattern.evidence_count == 4
    for evidence in pattern.evidence:
        with Ledger(home.episodic_ledger(evidence.stack)) as ledger:
            stored = next(r for r in ledger.records() if r.seq == evidence.seq)
        assert stored.hash == evidence.hash and evidence.ledger == "episodic"
    assert report.written == [pattern.pattern_id]


def test_one_stack_alone_makes_no_cross_stack_pattern(home: HRMHome) -> None:
    for _ in range(5):
        outcome(home, "ADMIN", strategy="quick_answer", success=True)
    assert MetaAgent(home).analyze().patterns == []
    assert meta_kinds(home) == []


def test_rerunning_writes_nothing_and_new_evidence_writes_a_revision(home: HRMHome) -> None:
    for stack in ("ADMIN", DPJ):
        outcome(home, stack, strategy="decomposition", success=False)
    first = MetaAgent(home).analyze()
    assert [p.pattern_type for p in first.patterns] == ["strategy_failure"]
    again = MetaAgent(home).analyze()
    assert again.written == [] and again.unchanged == first.written
    assert meta_kinds(home) == ["meta_pattern"]
    outcome(home, "RESIDENT:Third", strategy="decomposition", success=False)
    third = MetaAgent(home).analyze()
    assert third.written == first.written
    [latest] = read_meta_patterns(home)
    assert latest.stacks == ["ADMIN", DPJ, "RESIDENT:Third"]
    assert meta_kinds(home) == ["meta_pattern", "meta_pattern"]


def test_problems_escalations_and_failures_that_recur_across_stacks(home: HRMHome) -> None:
    turn(home, "ADMIN", problem="migrate the billing database", escalation="decomposition")
    turn(home, DPJ, problem="billing questions from my accountant", escalation="decomposition")
    for stack in ("ADMIN", DPJ):
        initialize(home, agent_class=stack)
        with Ledger(home.execution_ledger(stack)) as ledger:
            ledger.append("work_order", {"type": "llm_call", "outcome": "error",
                                         "error_code": "rate_limit"})
    types = {p.pattern_type: p for p in MetaAgent(home).analyze().patterns}
    assert types["shared_problem"].key == {"keyword": "billing"}
    assert types["recurring_escalation"].key == {"kind": "escalation",
                                                 "strategy": "decomposition"}
    assert types["recurring_failure"].key == {"error_code": "rate_limit"}
    assert {e.ledger for e in types["recurring_failure"].evidence} == {"ho1m"}


def test_stacks_consult_success_patterns_like_their_own(home: HRMHome) -> None:
    for stack in ("ADMIN", DPJ):
        outcome(home, stack, strategy="quick_answer", success=True)
        outcome(home, stack, strategy="decomposition", success=False)
    MetaAgent(home).analyze()
    [match] = meta_patterns_for(home, SIG)
    assert match.recommended_strategy == "quick_answer"
    assert match.match_confidence == 1.0 and match.evidence_count == 2
    far = {"complexity": "complex", "stakes": "high", "horizon": "far", "domain": ["legal"]}
    assert meta_patterns_for(home, far) == []
    items = read_anchors(home.meta_learning_ledger, kind="meta_pattern", agent_class=DPJ)
    assert {i["pattern_type"] for i in items} == {"strategy_success", "strategy_failure"}


def test_meta_reads_are_recorded_in_the_governance_ledger(home: HRMHome) -> None:
    outcome(home, "ADMIN", strategy="quick_answer", success=True)
    MetaAgent(home).analyze()
    with Ledger(home.governance_ledger) as ledger:
        reads = [r.data for r in ledger.records() if r.kind == "cross_stack_read"]
    assert {(r["role"], r["ledger"]) for r in reads} == {
        ("KERNEL.semantic", "episodic"), ("KERNEL.semantic", "ho2m"), ("KERNEL.semantic", "ho1m")}


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ADMIN", DPJ, "RESIDENT:C"]),
                          st.sampled_from(["quick_answer", "decomposition"]), st.booleans()),
                max_size=12))
def test_analysis_is_idempotent_for_any_outcomes(rows: list[tuple[str, str, bool]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = HRMHome(Path(tmp) / "home")
        initialize(home)
        for stack, strategy, success in rows:
            outcome(home, stack, strategy=strategy, success=success)
        first = MetaAgent(home).analyze()
        second = MetaAgent(home).analyze()
        assert second.written == []
        assert [p.fingerprint for p in first.patterns] == [p.fingerprint for p in second.patterns]
        assert len(meta_kinds(home)) == len(first.patterns)
        for pattern in first.patterns:
            assert len(pattern.stacks) >= 2


def test_hrm_meta_analyze_command(home: HRMHome) -> None:
    from hrm.cli.meta import app

    for stack in ("ADMIN", DPJ):
        outcome(home, stack, strategy="quick_answer", success=True)
    runner = CliRunner()
    result = runner.invoke(app, ["analyze", "--home", str(home.root), "--json"])
    assert result.exit_code == 0, result.output
    import json

    data = json.loads(result.stdout)
    assert len(data["written"]) == 1
    listed = runner.invoke(app, ["list", "--home", str(home.root)])
    assert "strategy_success" in listed.stdout
