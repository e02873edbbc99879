"""Session-wide accounting through the facade (issue 33 §4, D280): two `HRM` objects on one
home — two processes, as `hrm turn` makes one per turn — share one session's budget and cost."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from hrm.config import HRMConfig, load_config
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.storage.ledger import Ledger


def _config(home: HRMHome, **llm: Any) -> HRMConfig:
    config = load_config(home).config
    return replace(config, llm=replace(config.llm, **llm)) if llm else config


def _work_orders(home: HRMHome) -> list[dict[str, Any]]:
    with Ledger(home.execution_ledger("ADMIN")) as ledger:
        return [r.data for r in ledger.records() if r.kind == "work_order"]


def test_two_instances_share_the_session_token_budget(home: HRMHome) -> None:
    HRM.open(home, "ADMIN", "offline").close()
    probe = _config(home)
    with HRM.open(home, "ADMIN", "offline", config=probe) as h:
        h.turn("How do I rename a git branch?")
    one_turn = sum(o["input_tokens"] + o["output_tokens"] for o in _work_orders(home))
    config = replace(probe, stack_token_budget=one_turn + one_turn // 2)
    with (
        HRM.open(home, "ADMIN", "offline", config=config, new_session=True) as first,
        HRM.open(home, "ADMIN", "offline", config=config) as second,
    ):
        assert first.session_id == second.session_id
        assert first.turn("How do I rename git branch one?").decision.execution.get("error") is None
        spent = first.stack.gateway.usage()["session_tokens"]
        assert second.stack.gateway.usage()["session_tokens"] == spent > 0
        assert second.stack.gateway.tokens_used == 0  # its own counter saw nothing
        refused = second.turn("How do I rename git branch two?").decision.execution["error"]
    assert refused["code"] == "budget_exhausted"
    assert f"{spent:,} of {config.stack_token_budget:,} tokens used" in refused["message"]


def test_the_cost_alert_fires_for_the_session_across_instances(home: HRMHome) -> None:
    HRM.open(home, "ADMIN", "offline").close()
    pricing = {"input_per_1k": 1.0, "output_per_1k": 1.0}
    quiet = _config(home, pricing=pricing, cost_alert_threshold=1000.0)
    with HRM.open(home, "ADMIN", "offline", config=quiet, new_session=True) as first:
        first.turn("How do I rename git branch one?")
        first.turn("And how do I delete git branch one?")
        session = first.session_id
    spent = sum(o["cost"] for o in _work_orders(home))
    assert spent > 0
    # The next process's own calls alone stay below the threshold; the session's do not.
    threshold = spent * 1.01
    config = _config(home, pricing=pricing, cost_alert_threshold=threshold)
    with HRM.open(home, "ADMIN", "offline", config=config) as second:
        second.turn("How do I rename git branch two?")
        assert second.session_id == session
        own, usage = second.stack.gateway.session_cost, second.stack.gateway.usage()
    assert 0 < own < threshold  # a per-process counter would not have fired
    assert usage["session_cost"] == pytest.approx(spent + own)
    with Ledger(home.execution_ledger("ADMIN")) as ledger:
        alerts = [r.data for r in ledger.records() if r.kind == "cost_alert"]
    [alert] = alerts
    assert alert["session_id"] == session
    assert alert["session_cost"] >= threshold
    assert alert["calls"] >= 2
    assert f"over {alert['calls']} calls" in alert["message"]
