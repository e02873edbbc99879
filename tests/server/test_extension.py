"""The `hrm` summary object and the provider-failure rule, over decision records of any age."""

from __future__ import annotations

import pytest

from hrm.config import PolicySurface
from hrm.errors import ErrorCode
from hrm.server.chat import provider_failure
from hrm.server.extension import LedgerPosition, arbitration_band, extension_of, usage_of

_AT = LedgerPosition(ledger="HO2/ledger/ADMIN/workorder.jsonl", seq=3, hash="ab" * 32)
_POLICY = PolicySurface()


@pytest.mark.parametrize(("score", "band"), [
    (None, None), (0.0, "below"), (_POLICY.ASK_BAND_LOW - 0.01, "below"),
    (_POLICY.ASK_BAND_LOW, "ask"), (_POLICY.AUTO_PREEMPT_THRESHOLD - 0.01, "ask"),
    (_POLICY.AUTO_PREEMPT_THRESHOLD, "preempt"), (1.0, "preempt"),
])
def test_the_band_is_where_the_score_falls_in_the_policy(score: float | None, band: str | None) -> None:
    assert arbitration_band(score, _POLICY) == band


def test_a_record_missing_every_part_gives_a_summary_not_an_error() -> None:
    summary = extension_of({}, action="respond", asked=False, position=_AT, policy=_POLICY)
    data = summary.to_dict()
    assert data["arbitration"] == {"disposition": None, "score": None, "band": None,
                                   "reason": None, "problem": None}
    assert data["memory_writes"] == [] and data["reading"] is None
    assert data["ledger"] == {"ledger": _AT.ledger, "seq": 3, "hash": _AT.hash}


def test_a_full_record_is_summarised() -> None:
    decision = {
        "turn": 4, "agent_class": "RESIDENT:a", "session_id": "S", "trace_id": "t",
        "arbitration": {"disposition": "ask", "preempt_score": 0.6, "reason": "close call",
                        "candidate": {"id": "p1", "title": "Trie"}},
        "governance": {"allowed_type": "ask", "fallback_used": True, "denied": ["agent gate"]},
        "stance_before": "sensemaking", "stance_after": "focused",
        "strategy": {"strategy": "dialogue"},
        "commitment_after": {"id": "c", "turns_remaining": 2},
        "writes": [{"key": "k", "target": "shared_reference", "approved": False,
                    "reason": "no evidence"}, "not a write"],
        "reading": {"intents": []},
    }
    data = extension_of(decision, action="ask", asked=True, position=_AT,
                        policy=_POLICY).to_dict()
    assert data["arbitration"]["band"] == "ask"
    assert data["arbitration"]["problem"] == {"id": "p1", "title": "Trie"}
    assert data["stance"] == {"before": "sensemaking", "after": "focused", "allowed": "ask",
                              "fallback_used": True, "denied": ["agent gate"]}
    assert data["memory_writes"] == [{"key": "k", "target": "shared_reference",
                                      "approved": False, "reason": "no evidence"}]
    assert data["reading"] == {"intents": []} and data["asked"] is True


def _call(outcome: str, code: str | None = None) -> dict[str, object]:
    return {"type": "llm_call", "provider": "openai", "model": "m", "outcome": outcome,
            "error_code": code, "error": "boom", "input_tokens": 3, "output_tokens": 2}


@pytest.mark.parametrize(("orders", "code"), [
    ([], None),
    ([_call("ok")], None),
    ([_call("error", "provider_error"), _call("ok")], None),
    ([_call("error", "provider_error")], ErrorCode.PROVIDER_ERROR),
    ([_call("error", "timeout")], ErrorCode.TIMEOUT),
    ([_call("error", "rate_limit")], ErrorCode.RATE_LIMIT),
    ([_call("error", "content_filtered")], None),
    ([{"type": "tool_call", "outcome": "error", "error_code": "provider_error"}], None),
])
def test_a_turn_failed_at_the_provider_only_when_every_model_call_did(
    orders: list[dict[str, object]], code: ErrorCode | None
) -> None:
    failure = provider_failure({"turn": 2, "agent_class": "ADMIN", "work_orders": orders})
    assert (failure.code if failure else None) is code
    if failure is not None:
        assert "turn is recorded as turn 2 of ADMIN" in failure.message


def test_usage_sums_every_model_call() -> None:
    usage = usage_of({"work_orders": [_call("ok"), _call("error", "timeout"), {"type": "x"}]})
    assert usage == {"prompt_tokens": 6, "completion_tokens": 4, "total_tokens": 10}
