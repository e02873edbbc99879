"""Agent definitions: built-ins, layering home < project, schema errors naming file and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.runtime import AgentRegistry
from hrm.runtime.agents import parse_agent_definition
from hrm.runtime.firewall import check_output
from hrm.runtime.types import AgentOutput
from hrm.trust import TrustStore

BUILT_INS = {"analyst", "critic", "editor", "planner", "researcher", "verifier", "writer"}


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_built_in_agents_load_with_real_prompts(tmp_path: Path) -> None:
    reg = AgentRegistry.load(tmp_path / "empty-home")
    assert set(reg.ids()) == BUILT_INS
    assert reg.errors == []
    for definition in reg:
        assert definition.origin == "builtin"
        assert len(definition.system_prompt) > 200
        assert definition.role


def test_built_in_prompts_pass_the_firewall_themselves(tmp_path: Path) -> None:
    """An offline model quotes its prompt; the shipped prompts must not trip the firewall."""
    reg = AgentRegistry.load(tmp_path / "empty-home")
    for definition in reg:
        output = AgentOutput(agent_id=definition.id, output_type=definition.output_type,
                             content=definition.system_prompt)
        assert check_output(output, definition, agent_ids=reg.ids()) is None, definition.id


def test_initialised_home_copies_do_not_hide_the_builtin_origin(home: HRMHome) -> None:
    assert sorted(p.stem for p in home.agents_dir.glob("*.yaml")) == sorted(BUILT_INS)
    reg = AgentRegistry.load(home)
    assert {d.origin for d in reg} == {"builtin"}


def test_home_and_project_agents_add_and_override_by_id(tmp_path: Path) -> None:
    home = HRMHome(tmp_path / "home")
    write(home.agents_dir, "writer.yaml",
          "id: writer\nrole: House style writer\nsystem_prompt: Write in house style.\n")
    write(home.agents_dir, "scout.yaml",
          "id: scout\nrole: Scout\nsystem_prompt: Look around.\nprovider: offline\n")
    project = tmp_path / "project"
    write(project / ".hrm" / "agents", "scout.yml",
          "id: scout\nrole: Project scout\nsystem_prompt: Look here.\nmodel: tiny\n"
          "temperature: 0.2\n")
    TrustStore(home).trust(project)  # a project agent choosing its model needs trust (D219)
    reg = AgentRegistry.load(home, project)
    assert reg.get("writer").role == "House style writer"
    assert reg.get("writer").origin == "home"
    scout = reg.get("scout")
    assert (scout.role, scout.origin, scout.model, scout.temperature) == (
        "Project scout", "project", "tiny", 0.2,
    )
    assert scout.provider is None  # an override replaces the whole definition
    assert reg.get("critic").origin == "builtin"


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        ("id: x\nrole: r\n", "system_prompt", "is required"),
        ("id: Bad Id\nrole: r\nsystem_prompt: p\n", "id", "does not match"),
        ("id: x\nrole: r\nsystem_prompt: p\ntemperature: 7\n", "temperature", "maximum"),
        ("id: x\nrole: r\nsystem_prompt: p\ntools: read_file\n", "tools", "not of type"),
        ("id: x\nrole: r\nsystem_prompt: p\ncapabilites: []\n", "capabilites", "unknown field"),
        ("id: x\nrole: r\nsystem_prompt: p\ntools: [read_file]\n", "tools[0]",
         "needs capability 'read_files'"),
        ("id: x\nrole: r\nsystem_prompt: p\noutput_type: decision\n", "output_type", "is not one"),
        ("- just\n- a list\n", "(file)", "expected a mapping"),
        ("id: x\nrole: a: b\n", "line 2", "invalid YAML"),
    ],
)
def test_a_bad_file_is_reported_with_file_field_and_problem_and_others_still_load(
    tmp_path: Path, text: str, field: str, problem: str
) -> None:
    home = HRMHome(tmp_path / "home")
    bad = write(home.agents_dir, "broken.yaml", text)
    write(home.agents_dir, "fine.yaml", "id: fine\nrole: Fine\nsystem_prompt: Works.\n")
    reg = AgentRegistry.load(home)
    assert "fine" in reg and "x" not in reg
    assert set(reg.ids()) >= BUILT_INS
    assert len(reg.errors) >= 1
    error = reg.errors[0]
    assert error.path == str(bad)
    assert error.field == field
    assert problem in error.problem
    assert error.message.startswith(f"{bad}: {field}: ")


def test_two_files_with_one_id_in_a_directory_keep_the_first(tmp_path: Path) -> None:
    home = HRMHome(tmp_path / "home")
    write(home.agents_dir, "a.yaml", "id: dup\nrole: First\nsystem_prompt: p\n")
    second = write(home.agents_dir, "b.yaml", "id: dup\nrole: Second\nsystem_prompt: p\n")
    reg = AgentRegistry.load(home)
    assert reg.get("dup").role == "First"
    assert [(e.path, e.field) for e in reg.errors] == [(str(second), "id")]


def test_unknown_agent_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(HRMError) as info:
        AgentRegistry.load(tmp_path / "h").get("ghost")
    assert info.value.code == ErrorCode.NOT_FOUND
    assert "researcher" in info.value.message


def test_parse_raises_schema_mismatch_with_every_problem() -> None:
    with pytest.raises(HRMError) as info:
        parse_agent_definition({"id": "x", "temperature": -1}, source="inline")
    assert info.value.code == ErrorCode.SCHEMA_MISMATCH
    fields = [f for f, _ in info.value.context["problems"]]
    assert {"role", "system_prompt", "temperature"} <= set(fields)
    assert info.value.message.startswith("inline: ")


@settings(max_examples=60, deadline=None)
@given(
    st.from_regex(r"[a-z][a-z0-9_-]{0,20}", fullmatch=True),
    st.text(min_size=1, max_size=50).filter(str.strip),
    st.floats(min_value=0, max_value=2),
    st.lists(st.sampled_from(["search_memory", "search_learnings", "delegate"]), unique=True),
)
def test_valid_definitions_round_trip(
    agent_id: str, role: str, temperature: float, capabilities: list[str]
) -> None:
    data = {"id": agent_id, "role": role, "system_prompt": "Do the work.",
            "temperature": temperature, "capabilities": capabilities}
    definition = parse_agent_definition(data)
    assert definition.id == agent_id and definition.role == role.strip()
    back = parse_agent_definition({k: v for k, v in definition.to_dict().items()
                                   if v is not None and k not in ("origin", "source")})
    assert back == definition
