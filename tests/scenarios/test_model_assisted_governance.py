"""Model-assisted governance, bounded (issue 33 item 2, D265), through the facade: on a capable
model the SignalEngine, the altitude governor and the request classifier consult it with
bounded calls recorded as work orders, and its answers stay inside their bands; on the small
local model none of these calls is made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from hrm.config import HRMConfig, LLMConfig, PolicySurface
from hrm.home import HRMHome
from hrm.llm import LLMCallConfig, Message
from hrm.pipeline import HRM
from hrm.reasoning.assist import ASSIST_MAX_TOKENS, ASSIST_TIMEOUT_MS
from hrm.storage.ledger import Ledger
from hrm.testing import ScriptedAdapter, ScriptedReply

GOVERNANCE = {"signals", "altitude", "request_class"}


def _answer(messages: list[Message], system: str, config: LLMCallConfig | None) -> str:
    """A model that answers each governance question with the most it may say."""
    if "signal estimation" in system:
        return json.dumps({"source_quality": 1.0, "alignment_score": 1.0})
    if "kind of work" in system:
        choices = messages[-1].content.splitlines()[0].removeprefix("Choices:").split(",")
        return json.dumps({"class": choices[-1].strip()})  # the runner-up, to be seen
    if '"level"' in system or "altitude" in system.lower():
        return json.dumps({"level": "strategy", "confidence": 0.9})
    return "Here is the answer."


def _open(home: HRMHome, capable: str) -> tuple[HRM, ScriptedAdapter]:
    model = ScriptedAdapter([ScriptedReply(respond=_answer)], repeat=True)
    config = HRMConfig(llm=LLMConfig(provider="local", capable=capable))  # type: ignore[arg-type]
    return HRM.open(home, "ADMIN", model, config=config), model


def _purposes(model: ScriptedAdapter) -> list[str]:
    return [(c.config.purpose if c.config else None) or "?" for c in model.calls]


@pytest.fixture
def capable(home: HRMHome) -> Iterator[tuple[HRM, ScriptedAdapter]]:
    h, model = _open(home, "on")
    yield h, model
    h.close()


def test_a_capable_model_is_consulted_within_bounds(
    capable: tuple[HRM, ScriptedAdapter], home: HRMHome
) -> None:
    h, model = capable
    result = h.turn("Maybe we should look at the deploy thing?")
    purposes = _purposes(model)
    assert "signals" in purposes
    assert GOVERNANCE & set(purposes) >= {"signals"}
    for call in model.calls:
        if call.config is not None and call.config.purpose in GOVERNANCE:
            assert call.config.max_tokens is not None
            assert call.config.max_tokens <= ASSIST_MAX_TOKENS
            assert call.config.timeout_ms is not None
            assert call.config.timeout_ms <= ASSIST_TIMEOUT_MS
    # The model said 1.0; the signal stays under the policy's ceiling (never a verdict).
    signals: dict[str, Any] = result.decision.escalation.signals  # type: ignore[union-attr]
    assert signals["source_quality"] <= PolicySurface().LLM_SIGNAL_CEILING
    h.stack.execution_ledger.commit()
    with Ledger(home.execution_ledger("ADMIN")) as ledger:
        recorded = [r.data.get("purpose") for r in ledger.records() if r.kind == "work_order"]
    assert "signals" in recorded  # each governance call is a work order


def test_the_second_opinion_only_chooses_between_the_cue_tables_two_best(
    capable: tuple[HRM, ScriptedAdapter],
) -> None:
    h, model = capable
    result = h.turn("Should we keep the current logging setup?")  # one weak cue: unsure
    request = result.decision.strategy["request"]
    if "request_class" in _purposes(model):
        assert request["second_opinion"] == request["class"]
        assert request["class"] in {"simple", "needs_perspectives"}


def test_hard_rules_still_govern_what_the_model_routes(
    capable: tuple[HRM, ScriptedAdapter],
) -> None:
    h, _ = capable
    result = h.turn("Delete the production database and restore it from the backup.")
    # High stakes and irreversible: agents need a commitment first; Focus falls back, saying so.
    assert result.decision.strategy["request"]["class"] == "high_stakes"
    governance = result.decision.governance
    assert governance is not None and governance.fallback_used
    assert governance.interrupt == "high_stakes_irreversible"
    assert result.action != "delegate"


def test_the_small_local_model_gets_no_governance_calls(home: HRMHome) -> None:
    h, model = _open(home, "auto")
    try:
        h.turn("Maybe we should look at the deploy thing?")
        h.turn("Design a distributed multi-region billing architecture.")
    finally:
        h.close()
    assert not GOVERNANCE & set(_purposes(model))
