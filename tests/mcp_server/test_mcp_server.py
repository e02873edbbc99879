"""`hrm mcp` driven by the MCP SDK's own stdio client, as a real subprocess (issue 31 item 8)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from hrm.mcp_server import TOOL_NAMES  # noqa: E402
from hrm.pipeline import HRM  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"
Session = Callable[[str, dict[str, Any]], Awaitable[Any]]


@asynccontextmanager
async def server(home: Path, project: Path) -> AsyncIterator[ClientSession]:
    env = {"HRM_HOME": str(home), "PYTHONPATH": str(SRC), "PATH": os.environ.get("PATH", ""),
           "CLAUDE_PROJECT_DIR": str(project)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "hrm", "mcp"], env=env,
                                   cwd=str(project))
    quiet = open(os.devnull, "w")  # noqa: ASYNC230, SIM115 - /dev/null cannot block
    try:
        async with stdio_client(params, errlog=quiet) as streams, ClientSession(*streams) as s:
            await s.initialize()
            yield s
    finally:
        quiet.close()


def run(home: Path, project: Path, script: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with server(home, project) as session:
            return await script(session)

    return anyio.run(main)


def data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content)


def error(result: Any) -> str:
    assert result.is_error
    return str(result.content[0].text)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "app"
    folder.mkdir()
    return folder


def test_every_tool_is_listed_with_its_argument_schema(tmp_path: Path, project: Path) -> None:
    async def script(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in run(tmp_path / "home", project, script)}
    assert tuple(tools) == TOOL_NAMES
    assert tools["learnings_search"].input_schema["required"] == ["query"]
    assert "learnings" in tools["handoff_create"].input_schema["properties"]


def test_learnings_round_trip_scrubbed(tmp_path: Path, project: Path) -> None:
    secret = "sk-ant-api03-" + "Zx9" * 30

    async def script(session: ClientSession) -> Any:
        stored = data(await session.call_tool("learnings_store", {
            "content": f"The fix was to set the API key from the vault, not {secret}",
            "type": "error_fix", "tags": ["deploy"]}))
        found = data(await session.call_tool("learnings_search", {"query": "vault API key"}))
        duplicate = error(await session.call_tool("learnings_store", {
            "content": f"The fix was to set the API key from the vault, not {secret}",
            "type": "ERROR_FIX"}))
        return stored, found, duplicate

    stored, found, duplicate = run(tmp_path / "home", project, script)
    [hit] = found["results"]
    assert hit["id"] == stored["id"] and "deploy" in hit["tags"]
    assert secret not in hit["content"] and "[REDACTED" in hit["content"]
    assert f"already exists: {stored['id']}" in duplicate


def test_handoffs_create_latest_and_read(tmp_path: Path, project: Path) -> None:
    async def script(session: ClientSession) -> Any:
        created = data(await session.call_tool("handoff_create", {
            "task": "Port the parser to the new grammar", "status": "blocked",
            "next_steps": ["write the lexer tests"], "blockers": ["grammar spec unfinished"],
            "learnings": [{"type": "FAILED_APPROACH", "confidence": "verified",
                           "content": "Regex tokenising failed on nested template strings"}]}))
        latest = data(await session.call_tool("handoff_latest", {}))
        read = data(await session.call_tool("handoff_read", {"id": created["id"]}))
        searched = data(await session.call_tool("learnings_search",
                                                {"query": "nested template strings"}))
        outside = error(await session.call_tool("handoff_read", {"id": "/etc/passwd"}))
        return created, latest, read, searched, outside

    created, latest, read, searched, outside = run(tmp_path / "home", project, script)
    assert created["learnings_stored"] == 1
    assert latest["path"] == read["path"] == created["path"]
    assert latest["handoff"]["task"] == {"description": "Port the parser to the new grammar",
                                         "status": "blocked", "skills_used": []}
    assert latest["handoff"]["context"]["project_path"] == str(project)
    assert "hrm's handoff store" in latest["origin"]
    assert searched["results"][0]["type"] == "FAILED_APPROACH"
    assert "No handoff" in outside


WRONG_INPUT = [  # (case, tool, arguments, what the error must name)
    ("number-for-text", "learnings_search", {"query": 3}, "query"),
    ("text-for-number", "learnings_search", {"query": "x", "limit": "many"}, "limit"),
    ("limit-out-of-range", "learnings_search", {"query": "x", "limit": 10_000}, "limit"),
    ("missing", "learnings_search", {}, "query"),
    ("unknown-type", "learnings_store", {"content": "x", "type": "gossip"}, "learning type"),
    ("unknown-status", "handoff_create", {"task": "t", "status": "sleeping"}, "status"),
    ("list-expected", "handoff_create", {"task": "t", "learnings": "none"}, "learnings"),
    ("relative-project", "handoff_create", {"task": "t", "project_path": "relative/dir"},
     "absolute"),
    ("list-for-text", "skill_match", {"prompt": ["a"]}, "prompt"),
    ("turn-zero", "why", {"turn": 0}, "turn"),
    ("no-such-turn", "why", {"turn": 7}, "No turn"),
]


def test_wrong_input_is_a_clear_tool_error_and_the_server_keeps_serving(
    tmp_path: Path, project: Path
) -> None:
    """Every case on one server: each wrong call is a tool error naming what was wrong, and the
    same server answers the next call (one server for all: each start costs seconds)."""

    async def script(session: ClientSession) -> list[str]:
        wrong: list[str] = []
        for case, tool, arguments, message in WRONG_INPUT:
            failed = error(await session.call_tool(tool, arguments))
            alive = data(await session.call_tool("learnings_search", {"query": "anything"}))
            if message not in failed or alive["results"] != []:
                wrong.append(f"{case}: {failed!r} (the next call: {alive})")
        return wrong

    assert run(tmp_path / "home", project, script) == []


def test_skill_match_reads_the_projects_rules(tmp_path: Path, project: Path) -> None:
    rules = project / ".claude" / "skills" / "skill-rules.json"
    rules.parent.mkdir(parents=True)
    rules.write_text(json.dumps({"skills": {"db-migrations": {
        "enforcement": "suggest", "priority": "high", "description": "Schema changes",
        "promptTriggers": {"keywords": ["migration"], "intentPatterns": ["add.*?index"]}}}}))

    async def script(session: ClientSession) -> Any:
        return data(await session.call_tool("skill_match",
                                            {"prompt": "Add an index in a migration"}))

    found = run(tmp_path / "home", project, script)
    assert [m["skill"] for m in found["matches"]] == ["db-migrations"]
    assert found["matches"][0]["keywords"] == ["migration"]
    assert found["action"] == "suggest"


def test_why_is_what_hrm_why_json_prints(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    with HRM.open(home, "ADMIN", "offline") as hrm:
        hrm.turn("How do I rename a git branch?")

    async def script(session: ClientSession) -> Any:
        return data(await session.call_tool("why", {"turn": 1, "agent_class": "ADMIN"}))

    found = run(home, project, script)
    assert (found["agent_class"], found["turn"]) == ("ADMIN", 1)
    assert "strategy" in [row["layer"] for row in found["explanation"]]
