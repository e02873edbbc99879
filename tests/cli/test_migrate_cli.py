"""`hrm migrate ring|continuous-claude PATH`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from hrm.cli.migrate import app

DATA = Path(__file__).resolve().parents[1] / "fixtures"
runner = CliRunner()


def test_migrate_continuous_claude_json_and_rerun(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(
        DATA / "continuous-claude" / "handoffs", project / "thoughts" / "shared" / "handoffs"
    )
    args = ["continuous-claude", str(project), "--home", str(tmp_path / "home"), "--json"]
    first = json.loads(runner.invoke(app, args).output)
    assert first["items_migrated"] == 6
    assert [r["data_type"] for r in first["results"]] == ["handoffs", "ledgers", "state"]
    second = json.loads(runner.invoke(app, args).output)
    assert second["items_migrated"] == 0


def test_migrate_ring_human_output_and_only(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(DATA / "ring" / "handoffs", project / "docs" / "handoffs")
    result = runner.invoke(
        app, ["ring", str(project), "--only", "handoffs", "--home", str(tmp_path / "home")]
    )
    assert result.exit_code == 0, result.output
    assert "handoffs  6 migrated, 0 skipped" in result.output


def test_missing_source(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ring", str(tmp_path / "nope"), "--home", str(tmp_path / "h")])
    assert result.exit_code == 3
