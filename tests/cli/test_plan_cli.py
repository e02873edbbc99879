"""`hrm plan run` and `hrm plan show` on the offline model."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hrm.cli._common import EXIT_INPUT
from hrm.cli.plan import EXIT_TTL_EXPIRED, LAST_PLAN_FILE, app
from hrm.home import HRMHome
from hrm.storage.ledger import Ledger

runner = CliRunner()


def test_run_json_converges_and_saves_the_history(home: HRMHome) -> None:
    result = runner.invoke(app, ["run", "Read the config; then fix the parser", "--json",
                                 "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "converged" and data["goal"] == "Read the config; then fix the parser"
    assert [s["status"] for s in data["steps"]] == ["COMPLETE"] * len(data["steps"])
    assert len(data["steps"]) == 4 and data["statistics"]["steps_executed"] == 4
    saved = json.loads((home.logs_dir / LAST_PLAN_FILE).read_text())
    assert saved["history"]["execution_id"] == data["execution_id"]
    records = list(Ledger(home.execution_ledger("ADMIN")).records())
    units = [r.data.get("unit") for r in records if r.kind == "work_order"]
    assert units.count("plan_step") == 4


def test_run_shows_live_steps_and_a_summary(home: HRMHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRM_FORCE_TTY", "1")
    result = runner.invoke(app, ["run", "Say hello", "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    assert "COMPLETE" in result.stdout and "converged" in result.stdout
    assert "hrm plan show" in result.stdout


def test_run_in_a_pipe_draws_no_live_table(home: HRMHome) -> None:
    result = runner.invoke(app, ["run", "Say hello", "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    assert "converged" in result.stdout and "hrm plan show" in result.stdout
    assert "COMPLETE" not in result.stdout and "━" not in result.stdout


def test_an_expired_budget_exits_with_its_code_and_partial_results(home: HRMHome) -> None:
    result = runner.invoke(app, ["run", "Read it; then fix it; then test it", "--ttl", "2",
                                 "--json", "--home", str(home.root)])
    assert result.exit_code == EXIT_TTL_EXPIRED
    data = json.loads(result.stdout)
    assert data["status"] == "ttl_expired" and data["expiration"]["phase"] == "D"
    assert len(data["outputs"]) == 2


def test_show_renders_the_last_run(home: HRMHome) -> None:
    runner.invoke(app, ["run", "Read it; then fix it", "--json", "--home", str(home.root)])
    shown = runner.invoke(app, ["show", "--home", str(home.root)])
    assert shown.exit_code == 0, shown.output
    assert "Read it; then fix it" in shown.stdout and "step_1:COMPLETE" in shown.stdout
    as_json = runner.invoke(app, ["show", "--json", "--home", str(home.root)])
    assert json.loads(as_json.stdout)["status"] == "converged"


def test_show_before_any_run_says_how_to_start(home: HRMHome) -> None:
    result = runner.invoke(app, ["show", "--home", str(home.root)])
    assert result.exit_code == EXIT_INPUT
    assert "no plan has run yet" in result.stderr


def test_a_damaged_history_is_a_parse_error(home: HRMHome) -> None:
    home.logs_dir.mkdir(parents=True, exist_ok=True)
    (home.logs_dir / LAST_PLAN_FILE).write_text("{not json")
    result = runner.invoke(app, ["show", "--home", str(home.root)])
    assert result.exit_code == 3 and "Cannot read the last plan run" in result.stderr


def test_every_command_has_help() -> None:
    for command in ("run", "show"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and result.stdout.strip()


def test_provider_option_chooses_the_model_as_hrm_turn_does(
    home: HRMHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `hrm plan run` had no --provider/--model: it always ran on the configured model.
    monkeypatch.setenv("HRM_PROVIDER", "anthropic")  # no key here: it would fail
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = runner.invoke(app, ["run", "Say hello", "--provider", "offline", "--json",
                                 "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    saved = json.loads((home.logs_dir / LAST_PLAN_FILE).read_text())
    assert saved["history"]["configuration"]["provider"] == "offline"
