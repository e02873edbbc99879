"""A stack never starts with an invalid attention template (004 §6): it fails closed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.stacks.factory import create_stack
from hrm.storage.ledger import Ledger

GOOD = {"template_id": "ATT-X-001", "applies_to": {"agent_class": ["ADMIN"]},
        "pipeline": [{"stage": "recent", "type": "recent_turns"}]}


def broken(**changes: Any) -> str:
    return json.dumps({**GOOD, **changes})


@pytest.mark.parametrize(
    ("content", "code", "names"),
    [
        pytest.param("{not json", ErrorCode.PARSE_ERROR, "ATT-X-001.json", id="bad-json"),
        pytest.param(broken(pipeline=[]), ErrorCode.VALIDATION_FAILED, "pipeline",
                     id="empty-pipeline"),
        pytest.param(broken(pipeline=[{"stage": "s", "type": "read_everything"}]),
                     ErrorCode.VALIDATION_FAILED, "pipeline/0/type", id="unknown-stage"),
        pytest.param(broken(applies_to={"agent_class": ["ROOT"]}), ErrorCode.VALIDATION_FAILED,
                     "applies_to/agent_class/0", id="unknown-agent-class"),
        pytest.param(broken(template_id="bad id"), ErrorCode.VALIDATION_FAILED, "template_id",
                     id="bad-id"),
        pytest.param(broken(pipeline=[{"stage": "r", "type": "registry_query",
                                       "config": {"target": "../../etc/passwd"}}]),
                     ErrorCode.VALIDATION_FAILED, "pipeline/0/config/target",
                     id="traversal-in-target"),
        pytest.param(broken(template_id="ATT-ADMIN-001"), ErrorCode.VALIDATION_FAILED,
                     "ATT-ADMIN-001", id="duplicate-id"),
        pytest.param(broken(extra=1), ErrorCode.VALIDATION_FAILED, "extra",
                     id="unknown-property"),
    ],
)
def test_an_invalid_template_stops_every_stack(
    home: HRMHome, config: Any, content: str, code: ErrorCode, names: str
) -> None:
    (home.hot_config_dir / "attention" / "ATT-X-001.json").write_text(content)
    with pytest.raises(HRMError) as info:
        create_stack("ADMIN", config, home)
    assert info.value.code is code
    assert names in str(info.value)
    if home.governance_ledger.exists():
        with Ledger(home.governance_ledger) as gov:
            assert "stack_created" not in [r.kind for r in gov.records()]
    assert not home.decision_ledger("ADMIN").exists()
