"""Every command and group has help, answers -h and --help, and takes --json where it prints data."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from hrm.cli.app import app

# Commands whose output is not data: the hook answers Claude Code in its own protocol.
WITHOUT_JSON = {("hook",), ("mcp",)}


def _walk(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    if hasattr(command, "list_commands"):
        for name in command.list_commands(None):
            found += _walk(command.get_command(None, name), (*path, name))
    return found


TREE = _walk(typer.main.get_command(app))
COMMANDS = [pytest.param(path, command, id=" ".join(path) or "hrm") for path, command in TREE]
LEAVES = [
    pytest.param(path, command, id=" ".join(path))
    for path, command in TREE
    if not hasattr(command, "list_commands")
]


def test_the_tree_has_every_group_and_the_new_commands() -> None:
    names = {" ".join(path) for path, _ in TREE}
    assert {"why", "version", "hook", "memory reembed", "ledger verify", "chat"} <= names
    assert len(LEAVES) > 60


@pytest.mark.parametrize(("path", "command"), COMMANDS)
def test_every_command_has_help(path: tuple[str, ...], command: Any) -> None:
    assert (command.help or "").strip(), f"`hrm {' '.join(path)}` has no help text"
    assert command.get_short_help_str(80).strip()


@pytest.mark.parametrize("flag", ["-h", "--help"])
@pytest.mark.parametrize(("path", "command"), COMMANDS)
def test_help_works_everywhere(path: tuple[str, ...], command: Any, flag: str) -> None:
    result = CliRunner().invoke(app, [*path, flag], terminal_width=120)
    assert result.exit_code == 0, result.output
    assert "Usage" in result.stdout
    assert (command.help or "").split()[0] in result.stdout


@pytest.mark.parametrize(("path", "command"), LEAVES)
def test_every_command_that_prints_data_takes_json(path: tuple[str, ...], command: Any) -> None:
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert ("--json" in options) != (path in WITHOUT_JSON), path
