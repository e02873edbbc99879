"""`hrm why [TURN]`: a turn's decision record, read as sentences, from the stack's ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli._common import EXIT_INPUT
from hrm.cli.app import app
from hrm.cli.why import explain, read_turn
from hrm.pipeline import HRM

runner = CliRunner()


@pytest.fixture
def two_turns(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    with HRM.open(home, "ADMIN", "offline") as hrm:
        hrm.turn("I prefer short answers")
        hrm.turn("How do I rename a git branch?")
    return home


def _why(home: Path, *args: str) -> object:
    return runner.invoke(app, ["why", *args, "--home", str(home)])


def test_the_last_turn_by_default(two_turns: Path) -> None:
    result = _why(two_turns, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["agent_class"], data["turn"]) == ("ADMIN", 2)
    assert data["decision"]["turn"] == 2
    layers = [row["layer"] for row in data["explanation"]]
    assert "arbitration" in layers and "strategy" in layers
    assert any(e["kind"] == "stance_change" for e in data["events"])


def test_a_turn_by_number_reads_as_chat_s_why(two_turns: Path) -> None:
    found = read_turn(Path(two_turns) / "HO2" / "ledger" / "ADMIN" / "workorder.jsonl", "ADMIN", 1)
    assert found.turn == 1
    result = _why(two_turns, "1")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "layer\twhy"  # a pipe gets the rows under their header
    rows = [tuple(line.split("\t", 1)) for line in lines[1:]]
    assert rows == [(a, b.replace("\t", "\\t")) for a, b in explain(found.decision, found.events)]
    assert ("preference", "pref_explicit (matched 'I prefer')") in rows


def test_a_terminal_gets_a_title_and_the_layers(two_turns: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRM_FORCE_TTY", "1")
    result = _why(two_turns, "2")
    assert result.exit_code == 0
    assert result.stdout.startswith("turn 2 of ADMIN (") and "arbitration" in result.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(["7"], "No turn '7'; the last turn of stack ADMIN is 2", id="past-the-last"),
        pytest.param(["--as", "RESIDENT:nobody"], "No turn 'last'; stack RESIDENT:nobody has none yet",
                     id="a-stack-without-turns"),
    ],
)
def test_a_missing_turn_is_one_line_and_exit_3(two_turns: Path, args: list[str], said: str) -> None:
    result = _why(two_turns, *args)
    assert result.exit_code == EXIT_INPUT
    assert len(result.stderr.splitlines()) == 1 and said in result.stderr
    assert result.stdout == ""


def test_a_bad_stack_name_and_turn_zero_are_refused(two_turns: Path) -> None:
    assert _why(two_turns, "--as", "nobody").exit_code == EXIT_INPUT
    assert _why(two_turns, "0").exit_code == 2  # click: TURN is at least 1


def test_reading_a_turn_starts_no_session(two_turns: Path) -> None:
    ledger = Path(two_turns) / "HO2" / "ledger" / "ADMIN" / "workorder.jsonl"
    before = ledger.read_bytes()
    assert _why(two_turns).exit_code == 0
    assert ledger.read_bytes() == before
