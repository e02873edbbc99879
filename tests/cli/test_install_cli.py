"""`hrm install claude-code`: the command around `install_claude_code`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli._common import EXIT_INPUT
from hrm.cli.install import app
from hrm.continuity.install import HOOK_REGISTRATIONS, is_hrm_hook_command

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["claude-code", *args])
    return result.exit_code, result.stdout, result.stderr


def test_project_install_json_reports_changes(tmp_path: Path) -> None:
    code, out, _ = invoke("--project-dir", str(tmp_path), "--json")
    assert code == 0
    report = json.loads(out)
    path = tmp_path / ".claude" / "settings.json"
    assert report["settings_path"] == str(path)
    assert report["action"] == "installed"
    assert report["added"] == [r.event for r in HOOK_REGISTRATIONS]
    settings = json.loads(path.read_text())
    assert all(
        is_hrm_hook_command(g["hooks"][0]["command"]) for groups in settings["hooks"].values() for g in groups
    )


def test_second_install_says_nothing_changed(tmp_path: Path) -> None:
    invoke("--project-dir", str(tmp_path))
    code, out, _ = invoke("--project-dir", str(tmp_path), "--json")
    assert code == 0
    assert json.loads(out)["changed"] is False
    code, out, _ = invoke("--project-dir", str(tmp_path))
    assert "nothing changed" in out


def test_uninstall(tmp_path: Path) -> None:
    invoke("--project-dir", str(tmp_path))
    code, out, _ = invoke("--project-dir", str(tmp_path), "--uninstall", "--json")
    assert code == 0
    assert json.loads(out)["action"] == "uninstalled"
    assert json.loads((tmp_path / ".claude" / "settings.json").read_text()) == {}


def test_global_uses_the_user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out, _ = invoke("--global", "--json")
    assert code == 0
    assert json.loads(out)["settings_path"] == str(tmp_path / ".claude" / "settings.json")


def test_project_and_global_together_are_refused(tmp_path: Path) -> None:
    code, _, err = invoke("--project", "--global", "--project-dir", str(tmp_path))
    assert code != 0
    assert "--project" in err
    assert not (tmp_path / ".claude").exists()


def test_malformed_settings_fail_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "hooks": oops\n}', encoding="utf-8")
    code, out, err = invoke("--project-dir", str(tmp_path))
    assert code != 0
    assert f"{path}:2".replace(" ", "") in "".join(err.split())  # rich wraps long lines
    assert out == ""
    assert path.read_text() == '{\n  "hooks": oops\n}'


def test_a_project_dir_that_does_not_exist_is_refused_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-project"
    result = runner.invoke(app, ["claude-code", "--project", "--project-dir", str(missing)])
    assert result.exit_code == EXIT_INPUT, result.output
    assert "not an existing directory" in result.stderr
    assert not missing.exists()
