"""`hrm chat` outlives a failed turn or command: it reports it and the conversation goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli._common import EXIT_STORAGE
from hrm.cli.app import app
from hrm.errors import HRMError
from hrm.pipeline import HRM


@pytest.fixture
def failing_turns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Turns whose text starts with "boom" fail as if another process held the stack."""
    seen: list[str] = []
    real_turn = HRM.turn

    def turn(self: HRM, text: str, *args: object, **kwargs: object) -> object:
        seen.append(text)
        if text.startswith("boom"):
            raise HRMError.db_locked("turn.lock")
        return real_turn(self, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(HRM, "turn", turn)
    return seen


def _chat(home: Path, lines: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        app, ["chat", "--home", str(home), "--provider", "offline"], input=lines
    )
    return result.exit_code, result.stdout, result.stderr


def test_a_failed_turn_is_reported_and_the_next_one_runs(
    tmp_path: Path, failing_turns: list[str]
) -> None:
    code, out, err = _chat(tmp_path / "home", "first\nboom\nthird\n/history\n/quit\n")
    assert failing_turns == ["first", "boom", "third"]
    assert "is locked by another process" in err
    assert out.count("hrm ›") == 2  # first and third were answered
    assert code == EXIT_STORAGE  # like sqlite3's shell: the exit code says a turn failed


def test_a_chat_without_failures_exits_zero(tmp_path: Path, failing_turns: list[str]) -> None:
    code, out, err = _chat(tmp_path / "home", "hello\n/quit\n")
    assert "hrm ›" in out
    assert code == 0, err
    assert failing_turns == ["hello"]
    assert "error:" not in err


def test_a_failed_command_is_reported_and_the_conversation_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: HRM, limit: int = 20) -> list[dict[str, object]]:
        raise HRMError.ledger_corrupt("workorder.jsonl", 3, 3, "hash mismatch")

    monkeypatch.setattr(HRM, "history", broken)
    code, out, err = _chat(tmp_path / "home", "/history\nhello\n/quit\n")
    assert "hash mismatch" in err and "hrm ledger quarantine" in err  # the hint comes too
    assert "hrm ›" in out  # the turn after the failed command was answered
    assert code != 0
