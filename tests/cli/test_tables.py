"""Tables: drawn on a terminal; in a pipe, tab-separated lines under a header with nothing cut."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from hrm.cli._table import tsv_cell
from hrm.cli.app import app
from hrm.home import HRMHome
from hrm.storage.ledger import Ledger

_BOX = set("│─┃━┏┓┗┛╭╮╰╯┌┐└┘")


def _unescape(cell: str) -> str:
    out, chars = [], iter(cell)
    for char in chars:
        if char == "\\":
            out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}[next(chars)])
        else:
            out.append(char)
    return "".join(out)


@given(st.text())
def test_a_cell_is_one_line_and_reads_back(text: str) -> None:
    cell = tsv_cell(text)
    assert not {"\t", "\n", "\r"} & set(cell)
    assert _unescape(cell) == text


def test_tail_in_a_pipe_keeps_the_whole_record(home: HRMHome) -> None:
    long_text = "x" * 300
    with Ledger(home.root / "notes.jsonl") as ledger:
        ledger.append("note", {"text": long_text})
    result = CliRunner().invoke(app, ["ledger", "tail", "notes.jsonl", "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    header, row = result.stdout.splitlines()
    assert header == "seq\tts\tkind\tdata"
    seq, _ts, kind, data = row.split("\t")
    assert (seq, kind, json.loads(data)) == ("1", "note", {"text": long_text})


def test_tail_on_a_terminal_is_cut_to_fit(home: HRMHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRM_FORCE_TTY", "1")
    with Ledger(home.root / "notes.jsonl") as ledger:
        ledger.append("note", {"text": "x" * 300})
    result = CliRunner().invoke(app, ["ledger", "tail", "notes.jsonl", "--home", str(home.root)])
    assert "x" * 300 not in result.stdout and "…" in result.stdout


@pytest.mark.parametrize(
    ("args", "header"),
    [
        pytest.param(["config", "show"], ["key", "value", "source", "origin"], id="config"),
        pytest.param(["stack", "list"], ["stack", "HO2m records", "HO1m records", "last event"],
                     id="stack-list"),
        pytest.param(["problems", "list"], ["id", "title", "status", "priority", "last progress"],
                     id="problems-empty"),
        pytest.param(["memory", "shared", "list"], ["key", "version", "updated", "source", "value"],
                     id="shared-empty"),
        pytest.param(["agents", "list"], ["id", "role", "origin", "capabilities"], id="agents"),
    ],
)
def test_piped_tables_start_with_their_header_and_draw_no_box(
    args: list[str], header: list[str], home: HRMHome
) -> None:
    result = CliRunner().invoke(app, [*args, "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split("\t") == header
    assert all(len(line.split("\t")) == len(header) for line in lines)
    assert not _BOX & set(result.stdout)


def test_a_terminal_gets_the_drawn_table(home: HRMHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRM_FORCE_TTY", "1")
    result = CliRunner().invoke(app, ["config", "show", "--home", str(home.root)])
    assert result.exit_code == 0
    assert _BOX & set(result.stdout) and "\t" not in result.stdout
