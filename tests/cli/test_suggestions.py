"""A mistyped command is answered with the nearest names, lazily loaded groups included."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from hrm.cli._common import EXIT_USAGE
from hrm.cli._root import suggestions
from hrm.cli.app import app


@dataclass(frozen=True)
class Case:
    typed: list[str]
    meant: str | None
    """The first name suggested; None: nothing is close enough to suggest."""
    help_path: str = "hrm"


CASES = [
    pytest.param(Case(["memroy"], "memory"), id="lazy-group-memory"),
    pytest.param(Case(["ledgr"], "ledger"), id="lazy-group-ledger"),
    pytest.param(Case(["handof"], "handoff"), id="lazy-group-handoff"),
    pytest.param(Case(["stak"], "stack"), id="lazy-group-stack"),
    pytest.param(Case(["problms"], "problems"), id="lazy-group-problems"),
    pytest.param(Case(["agnets"], "agents"), id="transposed-letters"),
    pytest.param(Case(["migrat"], "migrate"), id="lazy-group-migrate"),
    pytest.param(Case(["tunr"], "turn"), id="eager-command-turn"),
    pytest.param(Case(["confg"], "config"), id="eager-group-config"),
    pytest.param(Case(["verison"], "version"), id="version"),
    pytest.param(Case(["hok"], "hook"), id="hook"),
    pytest.param(Case(["whyy"], "why"), id="why"),
    pytest.param(Case(["ledger", "verfy"], "verify", "hrm ledger"), id="inside-a-lazy-group"),
    pytest.param(Case(["memory", "shraed"], "shared", "hrm memory"), id="nested-group"),
    pytest.param(Case(["xyzzy"], None), id="nothing-close"),
]


@pytest.mark.parametrize("case", CASES)
def test_a_mistyped_command_names_the_nearest(case: Case) -> None:
    result = CliRunner().invoke(app, case.typed)
    assert result.exit_code == EXIT_USAGE
    first, hint = result.stderr.splitlines()
    assert first.startswith(f"error: No such command '{case.typed[-1]}'.")
    if case.meant is None:
        assert "Did you mean" not in first
    else:
        assert f"Did you mean '{case.meant}'" in first
    assert hint == f"Try '{case.help_path} -h' for help."
    assert result.stdout == ""


def test_suggestions_are_ranked_and_at_most_three() -> None:
    names = ["memory", "demo", "meta", "models", "migrate"]
    assert suggestions("memroy", names)[0] == "memory"
    assert len(suggestions("me", ["mea", "meb", "mec", "med"])) <= 3
    assert suggestions("", names) == []


def test_suggesting_loads_no_command_group() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from hrm.cli.app import app\n"
        "result = CliRunner().invoke(app, ['memroy'])\n"
        "assert \"'memory'\" in result.stderr, result.stderr\n"
        "loaded = [m for m in sys.modules if m in ('hrm.cli.memory', 'hrm.cli.ledger',"
        " 'hrm.cli.handoff', 'hrm.cli.agents', 'hrm.cli.plan', 'hrm.cli.stack')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
