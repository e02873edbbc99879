"""`hrm chat` outlives a failed turn or command: it reports it and the conversation goes on."""

from __future__ import annotations

import json
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


def test_a_new_topic_is_said_once_with_the_words_that_switch_to_it(tmp_path: Path) -> None:
    code, out, err = _chat(
        tmp_path / "home",
        "How do I read a CSV file with pandas?\n"
        "Our nightly backup job to S3 failed last night with an access denied error\n"
        "Which IAM permission does the backup job need?\n"  # joins the queued topic: no aside
        "switch to nightly backup job\n/quit\n",
    )
    assert code == 0, err
    assert out.count("(a new topic:") == 1
    assert "“switch” moves to it now, “switch to nightly backup job” later)" in " ".join(
        out.split()
    )
    last_status = " ".join(out.split("altitude ")[-1].split())  # the terminal wraps it
    assert "problem Our nightly backup job to S3 failed…" in last_status


def test_switch_alone_moves_to_the_topic_just_queued(tmp_path: Path) -> None:
    code, out, err = _chat(
        tmp_path / "home",
        "How do I read a CSV file with pandas?\n"
        "Our nightly backup job to S3 failed last night with an access denied error\n"
        "switch\n/problems\n/quit\n",
    )
    assert code == 0, err
    flat = " ".join(out.split())
    assert "Switched to ‘Our nightly backup job to S3 failed last night" in flat
    assert "│ switch " not in out  # not a problem of its own



def test_canon_lists_what_is_kept_and_not_what_was_forgotten(tmp_path: Path) -> None:
    code, out, err = _chat(
        tmp_path / "home",
        "/canon\n"
        "I prefer short paragraphs.\n"
        "Remember that the grant deadline is March 3.\n"
        "Forget what I said about paragraphs\n"
        "/canon\n/quit\n",
    )
    assert code == 0, err
    flat = " ".join(out.split())
    assert "Nothing kept yet" in flat
    assert "Forgotten: “I prefer short paragraphs”." in flat
    table = out.rsplit("kind\twhat I keep\n", 1)[-1]  # the last /canon's rows, tab-separated
    assert table.startswith("fact\tthe grant deadline is March 3\n")
    assert "short paragraphs" not in table


def _chat_json(home: Path, lines: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        app, ["chat", "--json", "--home", str(home), "--provider", "offline"], input=lines
    )
    return result.exit_code, result.stdout, result.stderr


def test_chat_json_writes_one_json_line_per_turn(tmp_path: Path) -> None:
    code, out, err = _chat_json(
        tmp_path / "home", "I prefer short answers\n\nHow do I rename a git branch?\n"
    )
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["decision"]["turn"] for r in records] == [1, 2]
    assert all(r["response"] and r["decision"]["trace_id"].startswith("hrm_") for r in records)
    assert "hrm ›" not in out and "altitude" not in err  # no banner, no status line


def test_chat_json_keeps_going_after_a_failure_and_says_so(
    tmp_path: Path, failing_turns: list[str]
) -> None:
    code, out, err = _chat_json(tmp_path / "home", "first\nboom\n/why\nthird\n/quit\nnever\n")
    assert failing_turns == ["first", "boom", "third"]
    assert len(out.splitlines()) == 2
    assert "is locked by another process" in err and "/why is for the interactive chat" in err
    assert code == EXIT_STORAGE
