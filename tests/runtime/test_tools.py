"""Tools: capabilities gate every call; file tools never leave their roots."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_support import Models, agent, context, proposal

from hrm.errors import ErrorCode, HRMError
from hrm.runtime import AgentRegistry, AgentRuntime, ToolRegistry
from hrm.types import ReducerType

READ = ["read_files"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "project"
    (base / "docs").mkdir(parents=True)
    (base / "docs" / "guide.md").write_text("# Guide\nHello.", encoding="utf-8")
    (base / "notes.txt").write_text("api_key = sk-ant-abcdefghijklmnopqrstuvwxyz012345\n")
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    return base


def test_read_file_and_list_dir_inside_the_root(root: Path) -> None:
    tools = ToolRegistry.with_builtins(allowed_roots=[root])
    read = tools.call("read_file", {"path": "docs/guide.md"}, capabilities=READ)
    assert read["content"] == "# Guide\nHello." and not read["truncated"]
    listing = tools.call("list_dir", {"path": "."}, capabilities=READ)
    assert [(e["name"], e["type"]) for e in listing["entries"]] == [
        ("docs", "dir"), ("notes.txt", "file"),
    ]


def test_file_contents_are_scrubbed_of_secrets(root: Path) -> None:
    tools = ToolRegistry.with_builtins(allowed_roots=[root])
    read = tools.call("read_file", {"path": "notes.txt"}, capabilities=READ)
    assert "sk-ant-abcdefghijklmnop" not in read["content"]


def test_large_files_are_cut_and_say_so(root: Path) -> None:
    (root / "big.txt").write_text("x" * 100)
    tools = ToolRegistry.with_builtins(allowed_roots=[root], max_read_bytes=10)
    read = tools.call("read_file", {"path": "big.txt"}, capabilities=READ)
    assert read["content"] == "x" * 10 and read["truncated"]


@pytest.mark.parametrize("path", ["../secret.txt", "docs/../../secret.txt", "/etc/passwd"])
def test_traversal_outside_the_roots_is_refused(root: Path, path: str) -> None:
    tools = ToolRegistry.with_builtins(allowed_roots=[root])
    with pytest.raises(HRMError) as info:
        tools.call("read_file", {"path": path}, capabilities=READ)
    assert info.value.code == ErrorCode.GATE_DENIED


def test_a_symlink_pointing_outside_is_refused(root: Path) -> None:
    os.symlink(root.parent / "secret.txt", root / "link.txt")
    os.symlink(root.parent, root / "escape")
    tools = ToolRegistry.with_builtins(allowed_roots=[root])
    for path in ("link.txt", "escape/secret.txt"):
        with pytest.raises(HRMError) as info:
            tools.call("read_file", {"path": path}, capabilities=READ)
        assert info.value.code == ErrorCode.GATE_DENIED
    with pytest.raises(HRMError):
        tools.call("list_dir", {"path": "escape"}, capabilities=READ)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["..", ".", "docs", "x", "/", "~", "notes.txt"]), max_size=6))
def test_no_path_ever_resolves_outside_the_root(tmp_path_factory: Any, parts: list[str]) -> None:
    base = tmp_path_factory.getbasetemp() / "prop-root"
    (base / "docs").mkdir(parents=True, exist_ok=True)
    tools = ToolRegistry.with_builtins(allowed_roots=[base])
    try:
        result = tools.call("list_dir", {"path": "/".join(parts)}, capabilities=READ)
    except HRMError as exc:
        assert exc.code in (ErrorCode.GATE_DENIED, ErrorCode.NOT_FOUND, ErrorCode.VALIDATION_FAILED)
    else:
        assert Path(result["path"]).is_relative_to(base.resolve())


def test_calls_without_the_capability_are_denied(root: Path) -> None:
    tools = ToolRegistry.with_builtins(allowed_roots=[root])
    with pytest.raises(HRMError) as info:
        tools.call("read_file", {"path": "notes.txt"}, capabilities=["search_memory"],
                   caller="writer")
    assert info.value.code == ErrorCode.GATE_DENIED
    assert info.value.context["capability"] == "read_files"
    assert "writer" in info.value.message


def test_search_tools_use_the_injected_callables() -> None:
    seen: list[tuple[str, int]] = []

    def memory(query: str, limit: int) -> list[dict[str, Any]]:
        seen.append((query, limit))
        return [{"id": "ep_1", "text": "we chose SQLite"}]

    tools = ToolRegistry.with_builtins(search_memory=memory,
                                       search_learnings=lambda q, n: [])
    assert tools.names() == ["search_learnings", "search_memory"]
    hits = tools.call("search_memory", {"query": "database", "limit": 3},
                      capabilities=["search_memory"])
    assert hits == [{"id": "ep_1", "text": "we chose SQLite"}] and seen == [("database", 3)]
    with pytest.raises(HRMError) as info:
        tools.call("search_memory", {"query": " "}, capabilities=["search_memory"])
    assert info.value.code == ErrorCode.VALIDATION_FAILED


def test_tools_that_could_not_work_are_absent() -> None:
    tools = ToolRegistry.with_builtins()
    assert tools.names() == []
    with pytest.raises(HRMError) as info:
        tools.call("read_file", {}, capabilities=READ)
    assert info.value.code == ErrorCode.NOT_FOUND


def test_tools_for_lists_what_capabilities_allow(root: Path) -> None:
    tools = ToolRegistry.with_builtins(allowed_roots=[root], search_memory=lambda q, n: [])
    assert [t.name for t in tools.tools_for(READ)] == ["list_dir", "read_file"]
    assert [t.name for t in tools.tools_for(["search_memory"])] == ["search_memory"]


def test_an_agent_calls_an_allowed_tool_and_gets_the_result(root: Path, models: Models) -> None:
    reader = agent("reader", capabilities=("read_files",), tools=("read_file",))
    models.script("reader", 'Tool: read_file {"path": "docs/guide.md"}', "The guide says Hello.")
    rt = AgentRuntime(AgentRegistry([reader]), models.llm_for,
                      tools=ToolRegistry.with_builtins(allowed_roots=[root]))
    result = rt.execute_bundle(proposal(["reader"], ReducerType.PASS_THROUGH), context())
    assert result.success and result.result == "The guide says Hello."
    second = models.adapters["reader"].calls[1].messages
    assert "Hello." in second[-1].content and second[-2].role == "assistant"
    assert "read_file" in models.adapters["reader"].calls[0].system
    models.assert_done()


def test_an_agent_calling_a_tool_beyond_its_capabilities_is_dropped(
    root: Path, models: Models
) -> None:
    writer = agent("writer")
    models.script("writer", 'Tool: read_file {"path": "notes.txt"}', "Here is a draft.")
    rt = AgentRuntime(AgentRegistry([writer]), models.llm_for,
                      tools=ToolRegistry.with_builtins(allowed_roots=[root]))
    result = rt.execute_bundle(proposal(["writer"]), context())
    assert [(d.agent_id, d.rule) for d in result.dropped] == [("writer", "capability_request")]
    assert "refused" in models.adapters["writer"].calls[1].messages[-1].content
