"""`hrm agents`: list, show and run, with JSON output and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli.agents import app
from hrm.home import HRMHome
from hrm.storage.ledger import Ledger

runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "proj"
    (base / ".hrm" / "agents").mkdir(parents=True)
    monkeypatch.chdir(base)
    return base


def test_list_json_shows_built_ins_and_project_agents_and_bad_files(project: Path) -> None:
    agents = project / ".hrm" / "agents"
    (agents / "scout.yaml").write_text("id: scout\nrole: Scout\nsystem_prompt: Look.\n")
    (agents / "broken.yaml").write_text("id: broken\nrole: Broken\n")
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    ids = {a["id"]: a for a in data["agents"]}
    assert {"researcher", "writer", "planner", "scout"} <= set(ids)
    assert ids["scout"]["origin"] == "project"
    assert data["errors"] == [
        {"path": str(agents / "broken.yaml"), "field": "system_prompt", "problem": "is required"}
    ]


def test_list_human_output_warns_about_skipped_files(project: Path) -> None:
    (project / ".hrm" / "agents" / "bad.yaml").write_text("id: 1\n")
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0
    assert "researcher" in result.stdout
    assert "skipped" in result.stderr and "bad.yaml" in result.stderr


def test_show_prints_the_definition(project: Path) -> None:
    result = runner.invoke(app, ["show", "verifier", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["id"] == "verifier" and "read_files" in data["capabilities"]
    human = runner.invoke(app, ["show", "critic"])
    assert "system prompt:" in human.stdout and "critic" in human.stdout


def test_show_unknown_agent_is_one_error_line(project: Path) -> None:
    result = runner.invoke(app, ["show", "ghost"])
    assert result.exit_code != 0
    assert "No agent 'ghost'" in result.stderr and "Traceback" not in result.stderr


def test_run_pipeline_with_the_offline_model_records_each_agent(project: Path) -> None:
    result = runner.invoke(
        app, ["run", "researcher", "writer", "Summarize how caching works", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["success"] and data["reducer"] == "pass_through"
    assert [o["agent_id"] for o in data["outputs"]] == ["researcher", "writer"]
    assert data["result"].startswith("(offline model)")
    home = HRMHome.resolve()
    with Ledger(home.execution_ledger("ADMIN")) as ledger:
        runs = [r.data for r in ledger.records() if r.data.get("type") == "agent_run"]
    assert [r["agent_id"] for r in runs] == ["researcher", "writer"]
    assert all(r["bundle_id"] == data["id"] for r in runs)


def test_run_parallel_merge_dedupe(project: Path) -> None:
    result = runner.invoke(app, ["run", "critic", "analyst", "Is the plan sound?",
                                 "--reducer", "merge", "--strategy", "dedupe", "--parallel",
                                 "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data["result"], list) and 1 <= len(data["result"]) <= 2


def test_run_synthesize_human_output(project: Path) -> None:
    result = runner.invoke(app, ["run", "planner", "researcher", "analyst",
                                 "Plan the storage migration", "--reducer", "synthesize"])
    assert result.exit_code == 0, result.output
    assert "(offline model)" in result.stdout


def test_run_needs_agents_and_a_task(project: Path) -> None:
    result = runner.invoke(app, ["run", "just-a-task"])
    assert result.exit_code != 0 and "agent id" in result.stderr
    bad = runner.invoke(app, ["run", "writer", "task", "--reducer", "magic"])
    assert bad.exit_code != 0 and "--reducer" in bad.stderr


def test_run_unknown_agent_fails_cleanly(project: Path) -> None:
    result = runner.invoke(app, ["run", "ghost", "do it"])
    assert result.exit_code != 0 and "No agent 'ghost'" in result.stderr


def test_every_command_has_help() -> None:
    for command in ("list", "show", "run"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.stdout
