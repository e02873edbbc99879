"""hrm.testing.ScriptedAdapter: queued replies, controlled blocking, strict about leftovers."""

from __future__ import annotations

import threading

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.llm import ILLMAdapter, Message
from hrm.testing import ScriptedAdapter, ScriptedReply

HI = [Message(role="user", content="hi")]


def test_replies_come_back_in_order_and_calls_are_kept() -> None:
    adapter = ScriptedAdapter(["one", ScriptedReply(respond=lambda m, s, c: s.upper())])
    assert isinstance(adapter, ILLMAdapter)
    assert adapter.chat(HI, "sys").content == "one"
    assert adapter.chat(HI, "sys").content == "SYS"
    assert [c.system for c in adapter.calls] == ["sys", "sys"]
    adapter.assert_done()


def test_an_unexpected_call_fails_and_is_reported() -> None:
    adapter = ScriptedAdapter()
    with pytest.raises(HRMError):
        adapter.chat(HI, "sys")
    with pytest.raises(AssertionError, match="unexpected"):
        adapter.assert_done()


def test_a_leftover_reply_fails_assert_done() -> None:
    adapter = ScriptedAdapter(["unused"])
    with pytest.raises(AssertionError, match="never used"):
        adapter.assert_done()


def test_scripted_errors_are_raised() -> None:
    adapter = ScriptedAdapter([HRMError.rate_limit(5)])
    with pytest.raises(HRMError) as info:
        adapter.chat(HI, "sys")
    assert info.value.code == ErrorCode.RATE_LIMIT


def test_a_reply_waits_for_its_event() -> None:
    gate = threading.Event()
    adapter = ScriptedAdapter([ScriptedReply(content="late", wait_for=gate)])
    answers: list[str] = []
    worker = threading.Thread(target=lambda: answers.append(adapter.chat(HI, "s").content))
    worker.start()
    assert adapter.wait_for_calls(1)
    assert answers == []
    gate.set()
    worker.join(10)
    assert answers == ["late"]


def test_repeat_answers_every_call_with_the_last_reply() -> None:
    adapter = ScriptedAdapter(["same"], repeat=True)
    assert [adapter.chat(HI, "s").content for _ in range(3)] == ["same"] * 3
