"""The two flows of 004 §9 end to end on the offline model."""

from __future__ import annotations

from typing import Any

from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.stacks.anchors import add_anchor
from hrm.storage.ledger import Ledger

DPJ = "RESIDENT:DoPeJar"


def data(path: Any, kind: str) -> list[dict[str, Any]]:
    with Ledger(path) as ledger:
        return [r.data for r in ledger.records() if r.kind == kind]


def test_admin_shows_all_frameworks_and_reports_the_discrepancy(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as admin:
        result = admin.turn("Admin: show me all frameworks")
    text = result.response
    for fid in ("FMWK-008A", "FMWK-009", "FMWK-010", "FMWK-011"):
        assert fid in text
    assert "FMWK-011: missing directory" in text
    execution = result.decision.execution
    assert execution["flow"] == "admin_frameworks"
    assert [d["framework_id"] for d in execution["discrepancies"]] == ["FMWK-011"]
    orders = data(home.execution_ledger("ADMIN"), "work_order")
    tools = [o for o in orders if o["type"] == "tool_call"]
    assert [(o["step"], o["tool"], o["outcome"]) for o in tools] == [
        ("WO#1", "read_file", "ok"), ("WO#2", "list_dir", "ok")]
    llm = [o for o in orders if o["type"] == "llm_call"]
    assert [o["purpose"] for o in llm] == ["WO#3 format results"]
    assert execution["work_orders"] == {"WO#1": tools[0]["wo_id"], "WO#2": tools[1]["wo_id"],
                                        "WO#3": llm[0]["wo_id"]}
    [trace] = data(home.execution_ledger("ADMIN"), "flow_trace")
    assert trace["approved_source"] == "deterministic"
    events = {k for k in ("admin_query", "output_approved")
              if data(home.decision_ledger("ADMIN"), k)}
    assert events == {"admin_query", "output_approved"}


def test_admin_flow_only_takes_framework_inspections(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as admin:
        result = admin.turn("what is the capital of France?")
    assert result.decision.execution.get("flow") is None
    assert not data(home.execution_ledger("ADMIN"), "flow_trace")


def test_dopejar_hello_mentions_the_anchor_first_and_offers_a_choice(home: HRMHome) -> None:
    with HRM.open(home, DPJ, "offline") as first:
        first.turn("Let us work on the closet design for the bedroom")  # titled by its topic
        first.turn("Next, the control plane rollout needs a plan")
    add_anchor(home, "your daughter's dance recital is on Friday", agent_class=DPJ,
               must_mention=True)
    add_anchor(home, "ADMIN only note", agent_class="ADMIN", must_mention=True)
    with HRM.open(home, DPJ, "offline", new_session=True) as again:
        result = again.turn("hello")
    text = result.response
    assert text.startswith("Welcome back!")
    assert text.index("dance recital") < text.index("Closet design for the bedroom")
    assert "control plane" in text and "ADMIN only note" not in text
    arbitration = result.decision.execution["arbitration"]
    assert arbitration["strategy"] == "offer-choice"
    assert [m["text"] for m in arbitration["must_mention"]] == [
        "your daughter's dance recital is on Friday"]
    assert len(arbitration["options"]) == 2
    assert result.decision.execution["speech_act"]["speech_act"] == "reentry_greeting"
    orders = data(home.execution_ledger(DPJ), "work_order")
    flow_orders = [o for o in orders if o.get("flow") == "reentry_greeting"]
    assert [(o["step"], o["type"]) for o in flow_orders] == [
        ("WO#2", "trace_query"), ("WO#3", "policy_query")]
    purposes = [o.get("purpose") for o in orders if o["type"] == "llm_call"]
    assert "WO#1 classify speech act" in purposes and "WO#4 build response" in purposes
    ho2m = home.decision_ledger(DPJ)
    assert data(ho2m, "arbitration_outcome")[-1]["strategy"] == "offer-choice"
    assert "offer-choice" in data(ho2m, "meta_episode")[-1]["observation"]
    [trace] = data(home.execution_ledger(DPJ), "flow_trace")
    assert set(trace["work_orders"]) == {"WO#1", "WO#2", "WO#3", "WO#4"}


def test_a_first_hello_with_nothing_open_invites(home: HRMHome) -> None:
    with HRM.open(home, DPJ, "offline") as resident:
        result = resident.turn("hi there!")
    assert result.response == "Hello! What would you like to work on?"
    assert result.decision.execution["arbitration"]["strategy"] == "open-invite"


def test_the_two_stacks_ledgers_stay_apart(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as admin:
        admin.turn("show me all frameworks")
    with HRM.open(home, DPJ, "offline") as resident:
        resident.turn("hello")
    admin_text = home.decision_ledger("ADMIN").read_text() + home.execution_ledger(
        "ADMIN").read_text()
    dpj_text = home.decision_ledger(DPJ).read_text() + home.execution_ledger(DPJ).read_text()
    assert "reentry_greeting" not in admin_text and DPJ not in admin_text
    assert "FMWK-011" not in dpj_text and '"agent_class":"ADMIN"' not in dpj_text
