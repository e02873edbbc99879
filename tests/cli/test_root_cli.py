"""The root `hrm` command: every command group is listed, and only the one that runs is loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli._common import EXIT_INPUT
from hrm.cli.app import _GROUPS, app


def test_root_help_lists_every_group_with_its_help() -> None:
    result = CliRunner().invoke(app, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for _module, _attr, name, help_text in _GROUPS:
        assert name in result.output
        assert help_text in result.output


def test_a_group_runs_with_its_own_options_and_help() -> None:
    result = CliRunner().invoke(app, ["install", "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "claude-code" in result.output
    assert "--install-completion" not in result.output  # a group, not a second root


def test_an_unknown_command_is_named() -> None:
    result = CliRunner().invoke(app, ["nosuch"])
    assert result.exit_code == 2
    assert "No such command 'nosuch'" in result.output


def test_only_the_invoked_group_is_imported() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from hrm.cli.app import app\n"
        "groups = [m for m in ('hrm.cli.ledger', 'hrm.cli.memory', 'hrm.cli.handoff',"
        " 'hrm.cli.agents', 'hrm.cli.plan')]\n"
        "assert CliRunner().invoke(app, ['version']).exit_code == 0\n"
        "assert not [m for m in groups if m in sys.modules], sys.modules.keys()\n"
        "assert CliRunner().invoke(app, ['ledger', '--help']).exit_code == 0\n"
        "assert [m for m in groups if m in sys.modules] == ['hrm.cli.ledger']\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["memory", "show", "lrn-nope"], id="unknown-id"),
        pytest.param(["memory", "learn", "x", "--type", "NOPE"], id="bad-type"),
        pytest.param(["memory", "learn", "x", "--type", "ERROR_FIX", "--expires",
                      "99999999999d"], id="expiry-past-9999"),
        pytest.param(["turn", "hi", "--provider", "bogus"], id="unknown-provider"),
    ],
)
def test_bad_input_exits_3_with_one_line(args: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [*args, "--home", str(tmp_path / "home")])
    assert result.exit_code == EXIT_INPUT, result.output
    assert result.stderr.startswith("error: ") and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_library_warnings_reach_the_terminal_as_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    from hrm.cli.app import _OneLine

    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("hrm.pipeline", logging.ERROR, __file__, 1,
                                   "supervisor failed", None, sys.exc_info())
    monkeypatch.delenv("HRM_DEBUG", raising=False)
    assert _OneLine().format(record) == "error: supervisor failed (ValueError: boom)"
    monkeypatch.setenv("HRM_DEBUG", "1")
    assert "Traceback" in _OneLine().format(record)


def test_the_collector_runs_again_once_the_command_line_is_imported() -> None:
    # Collection is paused only while the command line imports (D375): a long `hrm chat` or
    # `hrm serve` must still collect the cycles its work makes.
    probe = (
        "import gc, sys\n"
        "from unittest import mock\n"
        "import hrm.cli.app\n"
        "seen = []\n"
        "with mock.patch.object(hrm.cli.app, 'run', lambda: seen.append(gc.isenabled())):\n"
        "    sys.argv = ['hrm', '--version']\n"
        "    from hrm.cli.__main__ import main\n"
        "    main()\n"
        "print(seen, gc.get_freeze_count() > 0)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[True]", "True"]
