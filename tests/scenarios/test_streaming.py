"""Answers shown as the model produces them: `HRM.turn(on_text=…)`, `hrm turn`, `hrm chat`."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli.app import app
from hrm.errors import HRMError
from hrm.home import HRMHome
from hrm.llm import LLMCallConfig, LLMResponse, Message, StreamChunk
from hrm.pipeline import HRM
from hrm.storage.ledger import Ledger


class BreakingStream:
    """A provider whose answers stop with a server error after their first words."""

    provider = "breaking"
    model = "breaking-1"

    def chat(self, messages: list[Message], system: str, config: LLMCallConfig | None = None) -> LLMResponse:
        raise AssertionError("a turn with a listener streams its answer")

    def stream(self, messages: list[Message], system: str, config: LLMCallConfig | None = None) -> Iterator[StreamChunk]:
        yield StreamChunk(delta="Rename it with ", accumulated="Rename it with ", done=False)
        raise HRMError.provider_error(503, "upstream went away", provider=self.provider)

    def count_tokens(self, text: str) -> int:
        return len(text) // 4


def _work_orders(home: HRMHome) -> list[dict[str, object]]:
    with Ledger(home.execution_ledger("ADMIN")) as ledger:
        return [r.data for r in ledger.records() if r.kind == "work_order"]


def test_the_pieces_are_the_models_answer_and_the_turn_adds_its_notes_after(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Let's plan the v2 launch of our billing service")
        pieces: list[str] = []
        result = h.turn("I prefer concise answers with code examples. How do I read a CSV?",
                        on_text=pieces.append)
    streamed = "".join(pieces)
    assert len(pieces) > 1 and streamed.startswith("(offline model)")
    assert result.response.startswith(streamed.rstrip())
    assert result.response.rstrip().endswith("“I prefer concise answers with code examples”.")
    assert result.decision.execution["success"] is True
    orders = _work_orders(home)
    assert orders[-1]["streamed"] is True and orders[-1]["outcome"] == "ok"
    assert "streamed" not in orders[0]  # no listener: one plain call


def test_a_listener_that_fails_is_dropped_and_the_turn_completes(
    home: HRMHome, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []

    def broken(piece: str) -> None:
        calls.append(piece)
        raise BrokenPipeError("the terminal went away")

    with HRM.open(home, "ADMIN", "offline") as h, caplog.at_level(logging.WARNING):
        result = h.turn("What is a WAL in SQLite?", on_text=broken)
        plain = h.turn("What is a WAL in SQLite?")
    assert len(calls) == 1  # dropped after its first failure
    assert result.decision.execution["success"] is True
    assert result.response.startswith("(offline model)") and len(result.response) > 40
    assert plain.response.startswith("(offline model)")
    assert "text listener failed" in caplog.text
    assert _work_orders(home)[0]["outcome"] == "ok"


def test_a_stream_that_breaks_part_way_is_a_recorded_failure(home: HRMHome) -> None:
    pieces: list[str] = []
    with HRM.open(home, "ADMIN", BreakingStream()) as h:
        result = h.turn("How do I rename a git branch?", on_text=pieces.append)
        assert result.action != "degraded"
        assert result.decision.execution["success"] is False
        assert h.turn("and a tag?").decision.turn == 2  # nothing half-written blocks the next
    assert pieces == ["Rename it with "]
    assert not result.response.startswith("Rename it with ")
    failed = _work_orders(home)[0]
    assert failed["outcome"] == "error" and failed["error_code"] == "provider_error"
    assert failed["streamed"] is True


def test_answers_without_a_model_call_are_not_streamed(home: HRMHome) -> None:
    pieces: list[str] = []
    with HRM.open(home, "ADMIN", "offline") as h:
        waited = h.turn("   ", on_text=pieces.append)
    assert waited.action == "wait" and pieces == []


def test_hrm_turn_and_chat_show_the_whole_answer_with_its_notes(tmp_path: Path) -> None:
    runner = CliRunner()
    where = ["--home", str(tmp_path / "home"), "--provider", "offline"]
    first = runner.invoke(app, ["turn", "Let's plan the v2 launch of our billing service", *where])
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith("(offline model) I found nothing")
    chat = runner.invoke(
        app, ["chat", *where],
        input="I prefer concise answers with code examples. How do I read a CSV?\n"
        "Dark mode seems better for late-night work, I think. Which editors have it?\n/quit\n",
    )
    assert chat.exit_code == 0, chat.output
    lines = chat.stdout.splitlines()
    answers = [line for line in lines if line.startswith("you › hrm › (offline model)")]
    assert len(answers) == 2
    assert "• Noted as canon: “I prefer concise answers with code examples”." in lines
    assert any(line.startswith("• Should I remember “Dark mode seems better") for line in lines)
    assert chat.stdout.count("• Noted as canon") == 1  # notes once, after the streamed answer


# ── Ctrl-C: a stopped answer is a recorded turn, and the conversation goes on ──


class InterruptedCall(BreakingStream):
    """A provider call the person stops with Ctrl-C while it runs."""

    def chat(self, messages: list[Message], system: str, config: LLMCallConfig | None = None) -> LLMResponse:
        raise KeyboardInterrupt


def _decisions(home: HRMHome) -> list[tuple[str, object]]:
    with Ledger(home.decision_ledger("ADMIN")) as ledger:
        return [(r.kind, r.data.get("action")) for r in ledger.records()]


def test_ctrl_c_during_the_model_call_records_an_interrupted_turn(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", InterruptedCall()) as h:
        with pytest.raises(KeyboardInterrupt):
            h.turn("Write a long essay about version control")
        assert h.turn_number == 1
        kept = h._state.to_dict()
    assert ("turn_interrupted", None) in _decisions(home)
    assert _decisions(home)[-1] == ("turn", "interrupted")
    assert _work_orders(home)[-1]["outcome"] == "cancelled"
    with HRM.open(home, "ADMIN", "offline") as again:
        assert again._state.to_dict() == kept
        assert again.turn("How do I rename a git branch?").decision.turn == 2


def test_ctrl_c_while_an_answer_streams_cancels_its_work_order(home: HRMHome) -> None:
    def stop(piece: str) -> None:
        raise KeyboardInterrupt

    with HRM.open(home, "ADMIN", "offline") as h, pytest.raises(KeyboardInterrupt):
        h.turn("What is a WAL in SQLite?", on_text=stop)
    order = _work_orders(home)[-1]
    assert order["outcome"] == "cancelled" and order["streamed"] is True
    assert _decisions(home)[-1] == ("turn", "interrupted")


def test_a_turn_stopped_while_recording_leaves_the_state_the_ledger_holds(
    home: HRMHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Dark mode seems better for late-night work")  # holds a preference
        held = h._state.to_dict()

        def stopped(*args: object) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr(h._runner, "_append", stopped)
        with pytest.raises(KeyboardInterrupt):
            h.turn("yes")
        assert h._state.to_dict() == held  # not the half-run turn's: nothing of it was kept
        monkeypatch.undo()
        assert h.turn("yes").decision.preference["resolution"] == "confirmed"


def test_chat_goes_on_after_ctrl_c_stops_an_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_turn = HRM.turn

    def turn(self: HRM, text: str, *args: object, **kwargs: object) -> object:
        if text == "stop me":
            raise KeyboardInterrupt
        return real_turn(self, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(HRM, "turn", turn)
    chat = CliRunner().invoke(
        app, ["chat", "--home", str(tmp_path / "home"), "--provider", "offline"],
        input="stop me\nHow do I rename a git branch?\n/quit\n",
    )
    assert chat.exit_code == 0, chat.output
    assert "(interrupted — recorded as such" in chat.stdout
    assert chat.stdout.count("hrm › (offline model)") == 1


# ── answers that did not end by themselves: a loop stopped, the output limit reached ──

LOOP_LINE = "- **Create a new database with the migration script**\n"


class LoopingModel(BreakingStream):
    """A small model stuck in a loop, as the local adapter reports it once recognised: the
    deltas carried three copies of a line; the final chunk's answer keeps one."""

    provider = "looping"

    def stream(self, messages: list[Message], system: str, config: LLMCallConfig | None = None) -> Iterator[StreamChunk]:
        text = "Here is a plan:\n"
        yield StreamChunk(delta=text, accumulated=text, done=False)
        for _ in range(3):
            text += LOOP_LINE
            yield StreamChunk(delta=LOOP_LINE, accumulated=text, done=False)
        kept = "Here is a plan:\n" + LOOP_LINE.rstrip()
        yield StreamChunk(delta="", accumulated=kept, done=True, finish_reason="repetition")


def test_an_answer_stopped_in_a_loop_is_kept_once_and_the_person_is_told(home: HRMHome) -> None:
    pieces: list[str] = []
    with HRM.open(home, "ADMIN", LoopingModel()) as h:
        result = h.turn("Let's plan the database migration for billing", on_text=pieces.append)
    assert "".join(pieces).count(LOOP_LINE) == 3
    answer, _, notes = result.response.partition("\n\n• ")
    assert answer == "Here is a plan:\n" + LOOP_LINE.rstrip()
    assert "began repeating itself" in notes
    assert result.decision.execution["success"] is True
    assert _work_orders(home)[-1]["finish_reason"] == "repetition"


def test_an_answer_cut_at_the_output_limit_says_so(home: HRMHome) -> None:
    from hrm.testing import ScriptedAdapter, ScriptedReply

    model = ScriptedAdapter([ScriptedReply(content="First, back up the", finish_reason="length")])
    with HRM.open(home, "ADMIN", model) as h:
        result = h.turn("How do I migrate the billing database?")
    assert result.response.startswith("First, back up the\n\n• ")
    assert "output limit (llm.max_tokens)" in result.response
    model.assert_done()


def test_hrm_turn_shows_a_stopped_loop_once_then_the_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hrm.llm import LLMAdapterFactory

    LLMAdapterFactory.register("looping", lambda config: LoopingModel())
    try:
        out = CliRunner().invoke(
            app, ["turn", "Plan the migration", "--home", str(tmp_path / "home"),
                  "--provider", "looping"],
        )
    finally:
        LLMAdapterFactory.unregister("looping")
    assert out.exit_code == 0, out.output
    assert out.stdout.count("Here is a plan:") == 1  # not the answer again after the stream
    assert out.stdout.count(LOOP_LINE.strip()) == 3  # what was streamed stays on the screen
    assert out.stdout.rstrip().endswith("one copy of what it repeated.")
