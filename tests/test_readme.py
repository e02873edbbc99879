"""The README's examples work as written (STYLE §11: examples in docs are run by tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_starts_with_the_two_commands() -> None:
    head = README.read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert "make demo" in head and "make test" in head


@pytest.mark.parametrize("block", python_blocks())
def test_python_examples_run(block: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = block.replace('home="~/.hrm"', f'home="{tmp_path / "home"}"')
    exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "preference.i-prefer-short-answers" in out
    assert "'approved': True" in out and "shared_reference" in out


def test_every_command_in_the_tour_has_help() -> None:
    from typer.testing import CliRunner

    from hrm.cli.app import app

    runner = CliRunner()
    for group in ("init", "config", "turn", "chat", "demo", "ledger", "memory", "handoff",
                  "skills", "migrate", "install", "models", "agents", "plan", "stack", "meta"):
        result = runner.invoke(app, [group, "--help"])
        assert result.exit_code == 0, (group, result.output)
