"""What the person typed is printed as typed: square brackets are text, not rich markup."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from hrm.cli.app import app

TITLE = "Fix the [urgent] login bug before [/release]"


def test_titles_commands_and_help_keep_their_brackets(tmp_path: Path) -> None:
    runner = CliRunner()
    where = ["--home", str(tmp_path / "home"), "--provider", "offline"]
    first = runner.invoke(app, ["turn", TITLE, *where])
    assert first.exit_code == 0, first.output

    listed = runner.invoke(app, ["problems", "list", "--home", str(tmp_path / "home")])
    assert listed.exit_code == 0, listed.output
    assert "[urgent]" in listed.stdout and "[/release]" in listed.stdout

    chat = runner.invoke(app, ["chat", *where], input="/nope [/y]\n/resolve\n/quit\n")
    assert chat.exit_code == 0, chat.output  # "[/y]" once made rich raise a MarkupError
    assert "/resolve [id]" in chat.stdout  # the help line
    assert "Unknown command '/nope [/y]'" in chat.stdout
    assert "Resolved prob_" in chat.stdout and TITLE in chat.stdout.replace("\n", " ")
