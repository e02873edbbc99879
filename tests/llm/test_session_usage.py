"""Session-wide accounting (issue 33 §4, D280, D281): the budget, the cost alert and the rate
limits count what every process spent in the session, read from the execution ledger.

Each `_Process` below is what one `hrm turn` process holds: its own handle on the stack's
execution ledger and its own gateway, whose in-memory counters start at zero.
"""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.llm.conftest import FakeClock, ScriptedAdapter

from hrm.errors import ErrorCode, HRMError
from hrm.llm import LLMGateway, Message
from hrm.llm._ratelimit import window_wait_ms
from hrm.llm.session_usage import LedgerUsage
from hrm.storage.ledger import Ledger

MESSAGES = [Message(role="user", content="hello there")]
PRICING = {"input_per_1k": 100.0, "output_per_1k": 100.0}  # 1.5 a call of 10 + 5 tokens


class _Wall:
    """The wall clock the ledger stamps records with; moves only when told."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 27, 5, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


class _Process:
    """One process serving the session: a ledger handle, a usage source and a gateway."""

    def __init__(self, path: Path, wall: _Wall, session: list[str], **options: Any) -> None:
        self.ledger = Ledger(path, clock=wall)
        self.clock = FakeClock()
        self.session = session
        self.usage = LedgerUsage(self.ledger, lambda: session[0], now=wall)
        self.gateway = LLMGateway(
            ScriptedAdapter(),
            record=self.record,
            usage=self.usage,
            agent_class="ADMIN",
            sleep=self.clock.sleep,
            clock=self.clock,
            rng=random.Random(1),
            **options,
        )

    def record(self, kind: str, data: dict[str, Any]) -> None:
        self.ledger.append(kind, {"session_id": self.session[0], **data})

    def call(self) -> str:
        return self.gateway.chat(MESSAGES, "s").content

    def kinds(self, kind: str) -> list[dict[str, Any]]:
        return [r.data for r in self.ledger.records() if r.kind == kind]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "ho1m.jsonl"


def test_the_budget_counts_what_another_process_spent_and_says_the_figures(path: Path) -> None:
    wall, session = _Wall(), ["s-1"]
    first = _Process(path, wall, session, budget_tokens=30)
    first.call()
    first.call()  # 30 tokens: the whole budget
    second = _Process(path, wall, session, budget_tokens=30)
    assert second.gateway.tokens_used == 0  # its own counter would never fire
    assert second.gateway.budget_remaining == 0
    with pytest.raises(HRMError) as caught:
        second.call()
    error = caught.value
    assert error.code is ErrorCode.BUDGET_EXHAUSTED
    assert error.context["used"] == 30 and error.context["limit"] == 30
    assert error.context["needed"] > 0
    assert "30 of 30 tokens used in this session" in error.message
    assert "0 of 0" not in error.message
    refused = second.kinds("work_order")[-1]
    assert refused["error_code"] == "budget_exhausted"


def test_a_gateway_without_the_ledger_would_not_have_refused(path: Path) -> None:
    wall, session = _Wall(), ["s-1"]
    first = _Process(path, wall, session, budget_tokens=30)
    first.call()
    first.call()
    alone = LLMGateway(ScriptedAdapter(), budget_tokens=30)  # a per-process counter
    assert alone.chat(MESSAGES, "s").content == "ok"


def test_a_new_session_starts_with_its_whole_budget(path: Path) -> None:
    wall, session = _Wall(), ["s-1"]
    first = _Process(path, wall, session, budget_tokens=30)
    first.call()
    first.call()
    session[0] = "s-2"
    second = _Process(path, wall, session, budget_tokens=30)
    assert second.call() == "ok"
    assert second.gateway.usage()["session_tokens"] == 15


def test_the_cost_alert_fires_once_when_the_session_crosses_it_across_processes(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wall, session = _Wall(), ["s-1"]
    options = {"pricing": PRICING, "cost_alert_threshold": 4.0}
    first = _Process(path, wall, session, **options)
    first.call()
    first.call()  # 3.0: below the threshold
    assert first.kinds("cost_alert") == []
    second = _Process(path, wall, session, **options)
    with caplog.at_level(logging.WARNING, logger="hrm.llm.gateway"):
        second.call()  # 4.5 for the session, 1.5 for this process
    [alert] = second.kinds("cost_alert")
    assert alert["session_cost"] == pytest.approx(4.5)
    assert alert["calls"] == 3
    assert alert["threshold"] == 4.0
    assert alert["session_id"] == "s-1"
    assert "cost 4.5000 over 3 calls" in alert["message"]
    assert "4.5000 over 3 calls crossed the alert threshold 4.0000" in caplog.text
    first.call()
    third = _Process(path, wall, session, **options)
    third.call()
    assert len(third.kinds("cost_alert")) == 1  # once per session, whichever process
    session[0] = "s-2"
    for _ in range(3):
        third.call()
    assert [a["session_id"] for a in third.kinds("cost_alert")] == ["s-1", "s-2"]


def test_the_request_rate_counts_the_other_process_calls(path: Path) -> None:
    wall, session = _Wall(), ["s-1"]
    first = _Process(path, wall, session, requests_per_minute=2)
    first.call()
    wall.now += timedelta(seconds=10)
    first.call()
    second = _Process(path, wall, session, requests_per_minute=2, max_wait_ms=120_000)
    second.call()
    # the oldest of the two calls leaves the minute 50 s later: the second process waits
    assert second.clock.sleeps == [pytest.approx(50.0)]


def test_a_rate_wait_longer_than_allowed_fails_with_rate_limit(path: Path) -> None:
    wall, session = _Wall(), ["s-1"]
    first = _Process(path, wall, session, tokens_per_minute=30)
    first.call()
    first.call()
    second = _Process(path, wall, session, tokens_per_minute=30, max_wait_ms=1_000)
    with pytest.raises(HRMError) as caught:
        second.call()
    assert caught.value.code is ErrorCode.RATE_LIMIT
    assert second.clock.sleeps == []


def test_calls_older_than_a_minute_do_not_count_against_the_rate(path: Path) -> None:
    wall, session = _Wall(), ["s-1"]
    first = _Process(path, wall, session, requests_per_minute=1)
    first.call()
    wall.now += timedelta(seconds=61)
    second = _Process(path, wall, session, requests_per_minute=1, max_wait_ms=0)
    assert second.call() == "ok"


def test_records_before_and_after_the_source_opened_are_counted_once(path: Path) -> None:
    wall = _Wall()
    with Ledger(path, clock=wall) as writer:
        writer.append("work_order", {"session_id": "a", "input_tokens": 7, "output_tokens": 3})
        writer.append("work_order", {"session_id": "b", "input_tokens": 100, "output_tokens": 0})
        writer.append("turn", {"session_id": "a", "input_tokens": 999})
        reader = Ledger(path, clock=wall)
        session = ["a"]
        usage = LedgerUsage(reader, lambda: session[0], now=wall)
        assert (usage.read().tokens, usage.read().calls) == (10, 1)
        writer.append(
            "work_order", {"session_id": "a", "input_tokens": 2, "output_tokens": 2, "cost": 0.25}
        )
        writer.append("work_order", {"session_id": "b", "input_tokens": 1, "output_tokens": 1})
        read = usage.read()
        assert (read.tokens, read.calls, read.cost) == (14, 2, 0.25)
        session[0] = "b"  # asked about later: its earlier records are searched, later ones kept
        assert usage.read().tokens == 102
        assert len(usage.read().window) == 4  # every call of the minute, any session
        lean = usage.read(window=False)  # a budget check: the totals without the minute's calls
        assert (lean.tokens, lean.window) == (102, ())
        assert len(usage.read().window) == 4
        reader.close()


def test_an_empty_ledger_then_records_from_another_process(path: Path) -> None:
    wall = _Wall()
    reader = Ledger(path, clock=wall)
    usage = LedgerUsage(reader, lambda: "a", now=wall)
    assert usage.read().tokens == 0
    with Ledger(path, clock=wall) as writer:
        writer.append("work_order", {"session_id": "a", "input_tokens": 4, "output_tokens": 1})
        writer.append("cost_alert", {"session_id": "a", "session_cost": 1.0})
    read = usage.read()
    assert (read.tokens, read.calls, read.alerted) == (5, 1, True)
    reader.close()


# ── the window arithmetic ────────────────────────────────────────────────────

_windows = st.lists(st.tuples(st.integers(0, 59), st.integers(0, 50)), max_size=12).map(
    lambda items: sorted((1000.0 - age, float(units)) for age, units in items)
)


@given(window=_windows, per_minute=st.integers(1, 120), amount=st.integers(0, 200))
def test_the_window_wait_is_the_shortest_that_fits(
    window: list[tuple[float, float]], per_minute: int, amount: int
) -> None:
    now = 1000.0
    wait = window_wait_ms(window, now, per_minute=per_minute, amount=amount)
    needed = min(amount, per_minute)

    def fits(at: float) -> bool:
        return sum(u for t, u in window if t > at - 60.0) + needed <= per_minute

    assert (wait == 0) == fits(now)
    assert fits(now + wait / 1000)
    if wait > 0:
        assert not fits(now + (wait - 1) / 1000)


class _Replaced:
    """A real ledger whose first catch-up finds its anchor record gone (a quarantine)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ledger, name)

    def records_after(self, record: Any) -> Any:
        if not self.failed:
            self.failed = True
            raise HRMError.ledger_corrupt(self.ledger.path, 1, 1, "record 1 is no longer there")
        return self.ledger.records_after(record)


def test_a_ledger_changed_under_the_reader_is_counted_again(path: Path) -> None:
    wall = _Wall()
    with Ledger(path, clock=wall) as writer:
        writer.append("work_order", {"session_id": "a", "input_tokens": 3, "output_tokens": 0})
        reader = Ledger(path, clock=wall)
        usage = LedgerUsage(_Replaced(reader), lambda: "a", now=wall)
        assert usage.read().tokens == 3
        writer.append("work_order", {"session_id": "a", "input_tokens": 4, "output_tokens": 0})
        assert usage.read().tokens == 7  # counted afresh, not failed and not twice
        reader.close()


@given(steps=st.lists(st.sampled_from(["first", "second", "tick", "session"]), max_size=14))
def test_a_process_counts_its_own_calls_as_a_fresh_reader_of_the_file_does(
    steps: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """D380: a process's own work orders are tallied from its ledger handle's memory, not
    re-read; whatever the interleaving with another process, the figures are the file's."""
    path = tmp_path_factory.mktemp("usage") / "ho1m.jsonl"
    wall, session = _Wall(), ["s-1"]
    first = _Process(path, wall, session)
    second = _Process(path, wall, session)
    for step in steps:
        if step == "tick":
            wall.now += timedelta(seconds=25)
        elif step == "session":
            session[0] = session[0] + "x"
        else:
            (first if step == "first" else second).call()
        with Ledger(path, clock=wall) as reader:
            fresh = LedgerUsage(reader, lambda: session[0], now=wall).read()
        for process in (first, second):
            assert process.usage.read() == fresh
