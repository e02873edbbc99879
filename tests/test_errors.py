"""HRMError: codes, factories, recovery decisions, and crossing process boundaries."""

from __future__ import annotations

import pickle

import pytest

from hrm.errors import ErrorCode, HRMError, recover_from_error


def test_message_and_code_render_together() -> None:
    err = HRMError.gate_denied("commitment", "No active commitment")
    assert str(err) == "[gate_denied] No active commitment"
    assert err.context == {"gate": "commitment"}
    assert err.recoverable


def test_provider_error_is_retryable_only_for_server_and_transport_failures() -> None:
    assert HRMError.provider_error(503, "unavailable").recoverable
    assert HRMError.provider_error(0, "connection reset").recoverable
    assert not HRMError.provider_error(400, "bad request").recoverable


@pytest.mark.parametrize(
    ("error", "action"),
    [
        pytest.param(
            HRMError.rate_limit(5000), {"action": "retry", "delay_ms": 5000}, id="rate-limit"
        ),
        pytest.param(
            HRMError.gate_denied("g", "no"), {"action": "fallback", "delay_ms": 0}, id="gate"
        ),
        pytest.param(
            HRMError.stance_violation("evaluation", "execute"),
            {"action": "fallback", "delay_ms": 0},
            id="stance",
        ),
        pytest.param(
            HRMError.escalation_required("tie"),
            {"action": "escalate", "delay_ms": 0},
            id="escalate",
        ),
        pytest.param(
            HRMError.agent_violation("decided"), {"action": "abort", "delay_ms": 0}, id="violation"
        ),
        pytest.param(
            HRMError.token_limit(10, 20), {"action": "abort", "delay_ms": 0}, id="token-limit"
        ),
        pytest.param(
            HRMError.db_locked("/x.db"), {"action": "retry", "delay_ms": 100}, id="db-locked"
        ),
    ],
)
def test_recover_from_error_decides_by_code(error: HRMError, action: dict[str, object]) -> None:
    assert recover_from_error(error) == action


def test_errors_survive_pickling_for_worker_processes() -> None:
    err = HRMError.ledger_corrupt("/h/x.jsonl", 7, 6, "hash mismatch")
    copy = pickle.loads(pickle.dumps(err))
    assert copy.code is ErrorCode.LEDGER_CORRUPT
    assert copy.context["line"] == 7
    assert str(copy) == str(err)


def test_permission_denied_names_the_fallback() -> None:
    err = HRMError.permission_denied("/root/.hrm", "/tmp/hrm-1")
    assert "/tmp/hrm-1" in err.message
    assert err.context["fallback_path"] == "/tmp/hrm-1"


def test_to_dict_is_json_ready() -> None:
    import json

    err = HRMError.agent_violation("nope", agent_id="critic", rule="decision_marker")
    assert json.loads(json.dumps(err.to_dict()))["context"] == {
        "agent_id": "critic",
        "rule": "decision_marker",
    }
    assert "critic" in err.message and "decision_marker" in err.message
