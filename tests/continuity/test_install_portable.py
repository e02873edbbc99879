"""What `hrm install claude-code` writes into shared files runs on every machine (issue 31 #8)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli.install import app
from hrm.continuity._install_plugin import install_mcp_json, portable_command
from hrm.continuity.install import HOOK_REGISTRATIONS
from hrm.errors import HRMError

runner = CliRunner()


def install(*args: str) -> dict[str, object]:
    result = runner.invoke(app, ["claude-code", *args, "--json"])
    assert result.exit_code == 0, result.stderr
    return dict(json.loads(result.stdout))


def commands(settings: Path) -> list[str]:
    data = json.loads(settings.read_text())
    return [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]


def test_a_project_install_writes_no_machine_specific_path(tmp_path: Path) -> None:
    install("--project-dir", str(tmp_path))
    settings = (tmp_path / ".claude" / "settings.json").read_text()
    mcp = json.loads((tmp_path / ".mcp.json").read_text())
    for text in (settings, json.dumps(mcp)):
        assert sys.prefix not in text and str(Path(sys.executable).parent) not in text
    assert sorted(commands(tmp_path / ".claude" / "settings.json")) == sorted(
        f"hrm hook {r.argument}" for r in HOOK_REGISTRATIONS
    )
    assert mcp == {"mcpServers": {"hrm": {"command": "hrm", "args": ["mcp"]}}}


def test_the_projects_own_venv_is_named_relative_to_the_project(tmp_path: Path) -> None:
    executable = tmp_path / ".venv" / "bin" / "hrm"
    executable.parent.mkdir(parents=True)
    executable.write_text("#!/bin/sh\n")
    command = portable_command(tmp_path, executable=executable)
    assert command.shell == '"$CLAUDE_PROJECT_DIR"/.venv/bin/hrm'
    assert command.mcp == "${CLAUDE_PROJECT_DIR:-.}/.venv/bin/hrm"
    assert command.note == ""


def test_a_chosen_command_is_written_as_given(tmp_path: Path) -> None:
    report = install("--project-dir", str(tmp_path), "--command", "uvx hrm")
    assert report["note"] == ""
    assert all(c.startswith("uvx hrm hook ") for c in commands(tmp_path / ".claude/settings.json"))
    mcp = json.loads((tmp_path / ".mcp.json").read_text())
    assert mcp["mcpServers"]["hrm"] == {"command": "uvx hrm", "args": ["mcp"]}


def test_hrm_missing_from_path_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    report = install("--project-dir", str(tmp_path))
    assert "not on this machine's PATH" in str(report["note"])


def test_other_mcp_servers_stay_and_uninstall_removes_only_hrm(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    other = {"command": "npx", "args": ["-y", "@acme/server"], "env": {"X": "1"}}
    path.write_text(json.dumps({"mcpServers": {"acme": other}, "note": "kept"}))
    install("--project-dir", str(tmp_path))
    assert json.loads(path.read_text())["mcpServers"]["acme"] == other
    again = install("--project-dir", str(tmp_path))
    assert again["mcp_server"] == "unchanged"
    install("--project-dir", str(tmp_path), "--uninstall")
    assert json.loads(path.read_text()) == {"mcpServers": {"acme": other}, "note": "kept"}


@pytest.mark.parametrize("content", ['{"mcpServers": [1]}', "[]", "{ nope"])
def test_a_malformed_mcp_json_is_an_error_and_left_alone(tmp_path: Path, content: str) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(content)
    with pytest.raises(HRMError) as caught:
        install_mcp_json(path, portable_command(tmp_path, chosen="hrm"))
    assert str(path) in caught.value.message
    assert path.read_text() == content


def test_the_plugin_layout_holds_the_hooks_and_the_mcp_server(tmp_path: Path) -> None:
    folder = tmp_path / "hrm-plugin"
    result = runner.invoke(app, ["claude-code", "--plugin", str(folder), "--command", "hrm",
                                 "--json"])
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text())
    hooks = json.loads((folder / "hooks" / "hooks.json").read_text())
    assert manifest["name"] == "hrm" and manifest["version"]
    assert manifest["mcpServers"] == {"hrm": {"command": "hrm", "args": ["mcp"]}}
    assert set(hooks["hooks"]) == {r.event for r in HOOK_REGISTRATIONS}
    [post] = hooks["hooks"]["PostToolUse"]
    assert post["matcher"] == "Write|Edit|MultiEdit"
    assert post["hooks"][0]["command"] == "hrm hook post-tool-use"
    assert not (tmp_path / ".claude").exists()


def test_the_global_install_keeps_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    report = install("--global")
    assert report["mcp_server"] == "skipped"
    assert all(Path(c.split()[0].strip('"')).is_absolute()
               for c in commands(tmp_path / ".claude" / "settings.json"))
