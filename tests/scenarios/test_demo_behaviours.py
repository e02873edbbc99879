"""The demo conversation, asserted on its decision records (one test per behaviour it shows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrm.demo import BEHAVIOURS, DEMO_SCRIPT, DemoReport, run_demo


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> DemoReport:
    return run_demo(tmp_path_factory.mktemp("demo") / "home", llm="offline")


def decision(report: DemoReport, turn: int) -> dict:
    return report.turns[turn - 1].decision.to_dict()


def test_every_behaviour_is_shown(report: DemoReport) -> None:
    assert report.missing() == []
    assert set(report.seen) >= {key for key, _ in BEHAVIOURS}
    assert len(report.turns) == len(DEMO_SCRIPT)


def test_new_session_senses_then_framing_gate_moves_to_execution(report: DemoReport) -> None:
    first, second = decision(report, 1), decision(report, 2)
    assert first["stance_before"] == first["stance_after"] == "sensemaking"
    assert (second["stance_before"], second["stance_after"]) == ("sensemaking", "execution")


def test_commitment_is_created_ticks_and_expires_into_evaluation(report: DemoReport) -> None:
    created = decision(report, 4)["commitment_after"]
    assert created["turns_total"] == 3 and created["status"] == "active"
    assert "for the next" not in created["description"]
    assert decision(report, 5)["commitment_after"]["turns_remaining"] == 2
    assert decision(report, 6)["commitment_after"]["turns_remaining"] == 1
    expired = decision(report, 7)
    assert expired["commitment_after"] is None
    assert (expired["stance_before"], expired["stance_after"]) == ("execution", "evaluation")


def test_explicit_preference_becomes_canon(report: DemoReport) -> None:
    d = decision(report, 2)
    assert d["preference"]["class"] == "pref_explicit"
    (write,) = d["writes"]
    assert write["approved"] and write["target"] == "shared_reference"


def test_inferred_preference_waits_for_confirmation_then_is_canonised(report: DemoReport) -> None:
    held = decision(report, 6)
    assert held["preference"]["class"] == "pref_inferred_confirm_required"
    assert held["writes"][0]["approved"] is False
    assert "needs_user_confirmation" in held["writes"][0]["conditions"]
    confirmed = decision(report, 7)
    assert confirmed["preference"]["resolution"] == "confirmed"
    assert confirmed["writes"][0]["approved"] and confirmed["writes"][0]["target"] == "shared_reference"


def test_arbitration_ask_returns_a_question_and_changes_nothing(report: DemoReport) -> None:
    before, asked = decision(report, 7), decision(report, 8)
    result = report.turns[7]
    assert result.asked and result.action == "ask_user"
    assert asked["arbitration"]["disposition"] == "ask"
    assert 0.55 <= asked["arbitration"]["preempt_score"] < 0.70
    assert asked["stance_before"] == asked["stance_after"] == before["stance_after"]
    assert asked["strategy"] == {} and asked["writes"] == []


def test_emergency_switches_problems(report: DemoReport) -> None:
    d = decision(report, 9)
    assert d["arbitration"]["disposition"] == "switch"
    assert d["arbitration"]["emergency"] is True
    assert d["problem"]["id"] == d["arbitration"]["candidate_problem_id"]


def test_complex_input_escalates(report: DemoReport) -> None:
    d = decision(report, 10)
    assert d["escalation"]["escalated"] is True
    assert d["escalation"]["level"] >= 1
    assert d["escalations"][0]["kind"] == "escalation"


def test_pattern_learned_after_three_successes_is_used_next(report: DemoReport) -> None:
    created_turn = report.seen["pattern_created"][-1]
    created = decision(report, created_turn)
    (event,) = [e for e in created["learning"] if e["event_type"] == "pattern_created"]
    assert len(event["evidence_ids"]) >= 3
    used = decision(report, created_turn + 1)
    assert used["strategy"]["pattern_id"] == event["pattern_id"]
    assert used["learning"][0]["event_type"] == "pattern_strengthened"


def test_every_turn_is_in_the_verified_ledger(report: DemoReport) -> None:
    from hrm.home import HRMHome
    from hrm.storage.ledger import verify_ledger

    assert report.home is not None
    home = HRMHome(Path(report.home))
    assert all(verify_ledger(p).ok for p in home.all_ledgers())
    from hrm.storage.ledger import Ledger

    with Ledger(home.decision_ledger("ADMIN")) as ledger:
        turns = [r for r in ledger.records() if r.kind == "turn"]
    assert [t.data["turn"] for t in turns] == list(range(1, len(DEMO_SCRIPT) + 1))
    for record in turns:
        for key in ("session_id", "agent_class", "work_order_log", "arbitration_outcomes",
                    "escalation_events", "meta_episodes", "attention_state", "active_templates"):
            assert key in record.data
