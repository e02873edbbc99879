"""`hrm handoff`: create, list, show, resume, migrate, validate, with and without --json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from hrm.cli._common import EXIT_INPUT
from hrm.cli.handoff import app

DATA = Path(__file__).resolve().parents[1] / "fixtures"
runner = CliRunner()


def test_create_list_show_resume(tmp_path: Path) -> None:
    home = ["--home", str(tmp_path / "home")]
    created = runner.invoke(
        app,
        ["create", "--task", "Ship FTS", "--next-step", "write the query script",
         "--project", str(tmp_path), "--session", "fts", *home, "--json"],
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    path = json.loads(created.output)["path"]
    assert Path(path).is_file() and "/handoffs/fts/" in path

    listed = runner.invoke(app, ["list", *home, "--json"])
    rows = json.loads(listed.output)
    assert [r["description"] for r in rows] == ["Ship FTS"]

    shown = runner.invoke(app, ["show", path, *home, "--json"])
    assert json.loads(shown.output)["task"]["status"] == "paused"

    resumed = runner.invoke(app, ["resume", *home])
    assert resumed.exit_code == 0
    assert "Resuming: Ship FTS" in resumed.output and "write the query script" in resumed.output


def test_resume_without_handoffs_fails_cleanly(tmp_path: Path) -> None:
    result = runner.invoke(app, ["resume", "--home", str(tmp_path / "h")])
    assert result.exit_code == EXIT_INPUT


def test_create_rejects_unknown_status(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["create", "--task", "x", "--status", "meh", "--home", str(tmp_path / "h")]
    )
    assert result.exit_code == EXIT_INPUT


def test_validate_lists_each_error_with_its_field_path(tmp_path: Path) -> None:
    bad = tmp_path / "h.yaml"
    bad.write_text(
        "schema: hrm-handoff-v1\nsession: {id: ''}\ntask: {description: x, status: odd}\n"
    )
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == EXIT_INPUT
    for field in ("session.id", "session.started_at", "task.status", "context.project_path"):
        assert f"{field}:" in result.output
    as_json = json.loads(runner.invoke(app, ["validate", str(bad), "--json"]).output)
    assert as_json["valid"] is False and len(as_json["errors"]) == 4


def test_migrate_keeps_original_and_validates(tmp_path: Path) -> None:
    source = tmp_path / "2025-12-29_19-01-30_batch.md"
    shutil.copy(
        DATA / "ring/handoffs/skill-testing/2025-12-29_19-01-30_pressure-test-batch-2.md", source
    )
    result = runner.invoke(app, ["migrate", str(source), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["preserved_original"] is True and out["format_from"] == "markdown"
    assert source.is_file()
    assert runner.invoke(app, ["validate", out["destination"]]).exit_code == 0


def test_a_binary_file_is_named_as_not_a_handoff(tmp_path: Path) -> None:
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\x00\x01\xff\xfe")
    home = ["--home", str(tmp_path / "home")]
    for args in (["validate", str(binary)], ["show", str(binary), *home]):
        result = runner.invoke(app, args)
        assert result.exit_code == EXIT_INPUT, result.output
        assert "not UTF-8" in result.stderr and str(binary) in result.stderr
        assert "Traceback" not in result.output


def test_an_unknown_status_lists_the_valid_ones(tmp_path: Path) -> None:
    result = runner.invoke(app, ["create", "--task", "x", "--status", "weird",
                                 "--home", str(tmp_path / "home")])
    assert result.exit_code == EXIT_INPUT
    assert "completed, paused, blocked, failed" in result.stderr
