"""`hrm plan run` shows the deliverable with the verdict beside it, and refuses a model too
small for plans before it calls it (issue 33 §5, D283, D284)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from hrm.cli._common import EXIT_DENIED
from hrm.cli.plan import app
from hrm.home import HRMHome

runner = CliRunner()


def test_a_small_local_model_is_refused_before_any_call(home: HRMHome) -> None:
    result = runner.invoke(app, ["run", "Write a migration plan; then the scripts",
                                 "--provider", "local", "--home", str(home.root)])
    assert result.exit_code == EXIT_DENIED
    line = result.stderr.strip()
    assert "\n" not in line and "cannot run a multi-step plan" in line
    assert "too small for structured work" in line and "hrm models" in line
    assert "--anyway" in line
    assert not home.execution_ledger("ADMIN").exists()  # nothing was spent


def test_the_json_carries_the_deliverable_and_an_unverified_verdict(home: HRMHome) -> None:
    result = runner.invoke(app, ["run", "Read the config; then fix the parser", "--json",
                                 "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["report"]
    deliverable, verdict = report["deliverable"], report["verdict"]
    assert deliverable["step_ids"] == ["step_2", "step_3"]  # the two parts, not the check
    assert "Do: fix the parser" in deliverable["content"]
    assert verdict["status"] == "unverified" and verdict["checks"] == ["step_4"]
    assert "same model that produced it" in verdict["reason"]


def test_the_text_shows_the_deliverable_then_the_verdict(home: HRMHome) -> None:
    result = runner.invoke(app, ["run", "Read it; then fix it", "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("Deliverable (step_2, step_3)") < out.index("Verification: unverified")
    shown = runner.invoke(app, ["show", "--home", str(home.root)])
    assert "Verification: unverified" in shown.stdout
