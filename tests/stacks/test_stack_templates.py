"""A stack never starts with an invalid attention template (004 §6): it fails closed."""

from __future__ import annotations

import json
from pathlib import Path
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


# ── shipped templates are trusted only while they are byte for byte what hrm ships ──────────


def _shipped_dir() -> Any:
    from importlib import resources

    return resources.files("hrm").joinpath("data", "home", "HOT")


def test_every_shipped_template_is_valid_against_the_shipped_schema() -> None:
    """The premise that lets `load_templates` skip jsonschema for unchanged shipped files."""
    import jsonschema

    shipped = _shipped_dir()
    schema = json.loads(shipped.joinpath("schemas", "attention_template.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    names = [c.name for c in shipped.joinpath("config", "attention").iterdir()
             if c.name.endswith(".json")]
    assert names
    for name in names:
        data = json.loads(shipped.joinpath("config", "attention", name).read_text())
        assert list(validator.iter_errors(data)) == [], name


def test_an_edited_shipped_template_is_validated(home: HRMHome, config: Any) -> None:
    path = home.hot_config_dir / "attention" / "ATT-ADMIN-001.json"
    data = json.loads(path.read_text())
    data["pipeline"] = []
    path.write_text(json.dumps(data))
    with pytest.raises(HRMError) as info:
        create_stack("ADMIN", config, home)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "ATT-ADMIN-001" in str(info.value) and "pipeline" in str(info.value)


def test_an_edited_schema_revalidates_the_shipped_templates(home: HRMHome, config: Any) -> None:
    path = home.schemas_dir / "attention_template.schema.json"
    schema = json.loads(path.read_text())
    schema["properties"]["template_id"]["pattern"] = "^NEVER$"
    path.write_text(json.dumps(schema))
    with pytest.raises(HRMError) as info:
        create_stack("ADMIN", config, home)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "template_id" in str(info.value)


def test_a_template_that_is_not_utf8_is_a_parse_error(home: HRMHome, config: Any) -> None:
    (home.hot_config_dir / "attention" / "ATT-X-001.json").write_bytes(b'{"template_id": "\xff"}')
    with pytest.raises(HRMError) as info:
        create_stack("ADMIN", config, home)
    assert info.value.code is ErrorCode.PARSE_ERROR
    assert "ATT-X-001.json" in str(info.value) and "UTF-8" in str(info.value)


def test_a_stack_on_a_fresh_home_loads_neither_jsonschema_nor_the_agent_runtime(
    home: HRMHome,
) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from dataclasses import replace\n"
        "from hrm.config import load_config\n"
        "from hrm.home import HRMHome\n"
        "from hrm.stacks.factory import create_stack\n"
        f"home = HRMHome({str(home.root)!r})\n"
        "cfg = load_config(home).config\n"
        "stack = create_stack('ADMIN', replace(cfg, llm=replace(cfg.llm, provider='offline')),"
        " home)\n"
        "assert len(stack.attention.templates) >= 1\n"
        "assert stack.router.known_agents == ('analyst', 'critic', 'editor', 'planner',"
        " 'researcher', 'verifier', 'writer'), stack.router.known_agents\n"
        "stack.teardown()\n"
        "loaded = [m for m in ('jsonschema', 'hrm.runtime.agents') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_shipped_agent_files_are_named_by_their_id() -> None:
    """The premise that lets a stack name the built-in agents without parsing them."""
    from hrm.runtime.agents import AgentRegistry

    files = sorted(c.name for c in _shipped_dir().joinpath("config", "agents").iterdir())
    ids = AgentRegistry.load(Path("/nonexistent-home")).ids()
    assert sorted(ids) == sorted(name.rsplit(".", 1)[0] for name in files)


def test_a_stack_knows_the_agents_a_home_adds(home: HRMHome, config: Any) -> None:
    (home.agents_dir / "scout.yaml").write_text(
        "id: scout\nrole: Scout\nsystem_prompt: Look around.\n"
    )
    stack = create_stack("ADMIN", config, home)
    try:
        assert "scout" in stack.router.known_agents
        assert "writer" in stack.router.known_agents
    finally:
        stack.teardown()
