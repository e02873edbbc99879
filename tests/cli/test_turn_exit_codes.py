"""Exit codes that tell the truth (issue 32, D223): a turn answered without its model or
without governance exits with the README's code and a one-line reason, after its answer.

The model is a real HTTP server on loopback (or a loopback port nothing listens on).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.loopback import ANSWER, LoopbackModel, closed_port_url
from typer.testing import CliRunner, Result

from hrm.cli._common import EXIT_OK, EXIT_PROVIDER, EXIT_STORAGE
from hrm.cli.app import app
from hrm.errors import ErrorCode, HRMError
from hrm.pipeline import HRM

pytest.importorskip("openai")


@pytest.fixture
def openai_at(monkeypatch: pytest.MonkeyPatch) -> object:
    """Point the openai provider at a base URL, without retry delays."""

    def point(url: str, *, retries: int = 0, timeout_ms: int = 60_000) -> None:
        monkeypatch.delenv("HRM_PROVIDER", raising=False)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-exit-codes")
        monkeypatch.setenv("HRM_LLM__PROVIDER", "openai")
        monkeypatch.setenv("HRM_LLM__BASE_URL", url)
        monkeypatch.setenv("HRM_LLM__MAX_RETRIES", str(retries))
        monkeypatch.setenv("HRM_LLM__RETRY_DELAY_MS", "0")
        monkeypatch.setenv("HRM_LLM__TIMEOUT_MS", str(timeout_ms))

    return point


def run(home: Path, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, [*args, "--home", str(home)], input=stdin)


def error_lines(result: Result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error: ")]


def test_a_refused_connection_exits_5_after_the_answer(tmp_path: Path, openai_at: object) -> None:
    openai_at(closed_port_url(), retries=1)  # type: ignore[operator]
    result = run(tmp_path / "home", "turn", "What is a monad?")
    assert result.exit_code == EXIT_PROVIDER
    assert "The model call failed (provider_error)" in result.stdout
    (line,) = error_lines(result)
    assert line.startswith("error: the model could not be reached: [provider_error] openai:")


def test_a_server_error_after_every_retry_exits_5(tmp_path: Path, openai_at: object) -> None:
    with LoopbackModel("error500") as server:
        openai_at(server.url, retries=2)  # type: ignore[operator]
        result = run(tmp_path / "home", "turn", "--json", "What is a monad?")
        assert len(server.requests) == 3  # the first call and two retries
    assert result.exit_code == EXIT_PROVIDER
    record = json.loads(result.stdout)  # the record is still printed whole
    assert record["decision"]["execution"]["error"]["code"] == "provider_error"
    assert len(error_lines(result)) == 1


def test_a_server_that_never_answers_exits_5(tmp_path: Path, openai_at: object) -> None:
    with LoopbackModel("hang") as server:
        openai_at(server.url, timeout_ms=200)  # type: ignore[operator]
        result = run(tmp_path / "home", "turn", "What is a monad?")
    assert result.exit_code == EXIT_PROVIDER
    (line,) = error_lines(result)
    assert line.startswith("error: the model could not be reached: [timeout]")


def test_a_turn_the_model_answered_exits_0(tmp_path: Path, openai_at: object) -> None:
    with LoopbackModel() as server:
        openai_at(server.url)  # type: ignore[operator]
        result = run(tmp_path / "home", "turn", "What is a monad?")
        assert server.carrying("sk-test-exit-codes")
    assert result.exit_code == EXIT_OK, result.stderr
    assert ANSWER in result.stdout and error_lines(result) == []


def test_a_turn_without_governance_exits_with_its_causes_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(self: HRM, *args: object, **kwargs: object) -> object:
        raise HRMError(ErrorCode.DISK_FULL, "database or disk is full", recoverable=False)

    monkeypatch.setattr(HRM, "_run", full_disk)  # the supervisor fails; the turn degrades
    result = run(tmp_path / "home", "turn", "--provider", "offline", "What is a monad?")
    assert result.exit_code == EXIT_STORAGE
    assert result.stdout.strip()  # the direct model call's answer is still shown
    (line,) = error_lines(result)
    assert line == (
        "error: the turn ran without governance: its supervisor failed ([disk_full] database "
        "or disk is full); the answer, if any, is a direct model call (`hrm why` shows the turn)"
    )


def test_chat_goes_on_and_exits_with_the_last_failure(tmp_path: Path, openai_at: object) -> None:
    openai_at(closed_port_url())  # type: ignore[operator]
    result = run(tmp_path / "home", "chat", "--json", stdin="first\nsecond\n")
    assert result.exit_code == EXIT_PROVIDER
    assert len(result.stdout.strip().splitlines()) == 2  # both turns' records
    assert len(error_lines(result)) == 2
