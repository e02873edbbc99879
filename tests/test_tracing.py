"""Tracing (001 §7): ids, nesting across threads, errors, file output, and the free disabled path."""

from __future__ import annotations

import contextvars
import json
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dirty_equals import IsInt, IsStr

from hrm.config import HRMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.tracing import (
    TraceEvent,
    Tracer,
    capture_traces,
    current_span_id,
    get_tracer,
    set_tracer,
)

T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
SECRET = "sk-ant-" + "z" * 40


def clock() -> datetime:
    return T0


@pytest.fixture
def tracer() -> Tracer:
    return Tracer(enabled=True, clock=clock)


def test_ids_are_hrm_timestamp_random(tracer: Tracer) -> None:
    trace_id = tracer.generate_id("altitude")
    assert trace_id == IsStr(regex=r"altitude_20260102T030405123Z_[0-9a-f]{8}")
    assert len({tracer.generate_id("focus") for _ in range(200)}) == 200


def test_a_span_emits_started_then_completed(tracer: Tracer) -> None:
    with tracer.capture() as events, tracer.span(
        "reasoning", "route", "StrategyRouter", input_data="what should I do?"
    ) as span:
        span.set_output("respond")
        span.add_metadata("strategy", "direct")
    started, completed = events
    assert started.to_dict() == {
        "trace_id": IsStr(regex=r"reasoning_\d{8}T\d{9}Z_[0-9a-f]{8}"),
        "parent_id": None,
        "hrm": "reasoning",
        "operation": "route",
        "component": "StrategyRouter",
        "status": "started",
        "timestamp": "2026-01-02T03:04:05.123456+00:00",
        "duration_ms": None,
        "input_summary": "what should I do?",
        "output_summary": None,
        "metadata": {},
    }
    assert completed.trace_id == started.trace_id == span.id
    assert (completed.status, completed.output_summary) == ("completed", "respond")
    assert completed.duration_ms == IsInt(ge=0)
    assert completed.metadata == {"strategy": "direct"}


def test_nested_spans_and_events_carry_their_parent(tracer: Tracer) -> None:
    with tracer.capture() as events:
        with tracer.span("altitude", "classify", "AltitudeGovernor") as outer:
            with tracer.span("focus", "gate", "GateKeeper") as inner:
                tracer.event("focus", "gate_checked", data={"allowed": True})
                assert current_span_id() == inner.id
            assert current_span_id() == outer.id
        assert current_span_id() is None
    by_status = [(e.operation, e.status, e.parent_id) for e in events]
    assert by_status == [
        ("classify", "started", None),
        ("gate", "started", outer.id),
        ("gate_checked", "info", inner.id),
        ("gate", "completed", outer.id),
        ("classify", "completed", None),
    ]
    assert events[2].component == "GateKeeper"


def test_the_parent_survives_into_threads_given_the_context(tracer: Tracer) -> None:
    seen: dict[str, str | None] = {}

    def work(name: str) -> None:
        with tracer.span("runtime", name, "Orchestrator") as span:
            seen[name] = span.id

    with tracer.capture() as events, tracer.span("runtime", "bundle", "Orchestrator") as parent:
        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(work, f"agent{i}"))
            for i in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    children = [e for e in events if e.operation.startswith("agent") and e.status == "started"]
    assert len(children) == 3
    assert {e.parent_id for e in children} == {parent.id}


def test_a_thread_started_without_the_context_starts_a_new_trace(tracer: Tracer) -> None:
    parents: list[str | None] = []

    def work() -> None:
        with tracer.span("runtime", "detached", "Worker"):
            parents.append(current_span_id())

    with tracer.capture() as events, tracer.span("runtime", "outer", "Orchestrator"):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    detached = next(e for e in events if e.operation == "detached")
    assert detached.parent_id is None
    assert parents == [detached.trace_id]


def test_an_error_inside_a_span_is_recorded_and_re_raised(tracer: Tracer) -> None:
    with tracer.capture() as events, pytest.raises(HRMError), tracer.span(
        "focus", "gate", "GateKeeper"
    ):
        raise HRMError.gate_denied("commitment", "locked on another problem")
    closing = events[-1]
    assert closing.status == "error"
    assert closing.metadata == {
        "error_type": "HRMError",
        "error": "[gate_denied] locked on another problem",
        "error_code": ErrorCode.GATE_DENIED.value,
    }
    assert current_span_id() is None


def test_a_disabled_tracer_does_no_work() -> None:
    def exploding_clock() -> datetime:
        raise AssertionError("a disabled tracer must not read the clock")

    tracer = Tracer(enabled=False, clock=exploding_clock)
    first = tracer.span("altitude", "classify", "AltitudeGovernor", input_data="x")
    second = tracer.span("focus", "gate", "GateKeeper")
    assert first is second
    with first as span:
        span.set_output("ignored")
        span.add_metadata("k", "v")
        assert span.id is None and current_span_id() is None
        tracer.event("altitude", "noted", status="not-even-a-status")
    assert not tracer.active


def test_the_trace_file_holds_scrubbed_summarised_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "trace.jsonl"
    tracer = Tracer(enabled=True, path=path, clock=clock, summary_chars=50)
    with tracer.span("learning", "record", "FeedbackLoop", input_data=f"key {SECRET} " + "x" * 500):
        tracer.event("learning", "pattern_matched", data={"token": SECRET, "n": 3, "p": path})
    tracer.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    assert SECRET not in path.read_text()
    started, event, _ = (json.loads(line) for line in lines)
    assert started["input_summary"] == IsStr(regex=r"key \[REDACTED:anthropic_key\] x+…")
    assert len(started["input_summary"]) == 50
    assert event["metadata"] == {
        "token": "[REDACTED:anthropic_key]", "n": 3, "p": str(path),
    }


@pytest.mark.parametrize("start", [0, 30, 45, 49])
def test_a_secret_the_summary_cuts_through_is_redacted_not_kept_in_part(start: int) -> None:
    # A doppler token is recognised only whole: cut first, then scrubbed, its first part stayed.
    token = "dp.st.prBGumXxY9B4bZWOz648JJnUfd7UACNWabcdefgh"
    tracer = Tracer(enabled=True, clock=clock, summary_chars=50)
    summary = tracer.summarize("x" * start + f" DOPPLER_TOKEN={token} and more " + "y" * 40_000)
    assert summary is not None and len(summary) == 50
    assert "dp.st" not in summary and "prBG" not in summary


def test_an_unwritable_trace_file_never_breaks_the_traced_work(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tracer = Tracer(enabled=True, path=tmp_path, clock=clock)  # a directory: cannot be opened
    with caplog.at_level(logging.WARNING, logger="hrm.tracing"), tracer.span(
        "altitude", "classify", "AltitudeGovernor"
    ):
        tracer.event("altitude", "noted")
    assert caplog.text.count("trace file") == 1


def test_unknown_statuses_are_rejected(tracer: Tracer) -> None:
    with pytest.raises(HRMError) as info:
        tracer.event("focus", "x", status="done")
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_capture_traces_switches_the_global_tracer_on_for_its_block() -> None:
    tracer = get_tracer()
    assert not tracer.active
    with capture_traces() as events:
        with get_tracer().span("altitude", "classify", "AltitudeGovernor"):
            pass
        assert tracer.active
    assert not tracer.active
    assert [e.status for e in events] == ["started", "completed"]
    assert all(isinstance(e, TraceEvent) for e in events)


def test_set_tracer_installs_and_returns_the_previous_one(tracer: Tracer) -> None:
    previous = set_tracer(tracer)
    try:
        assert get_tracer() is tracer
    finally:
        assert set_tracer(previous) is tracer


def test_from_config_puts_a_relative_trace_file_in_the_home_logs(home: HRMHome) -> None:
    config = HRMConfig(trace_enabled=True, trace_file="trace.jsonl")
    tracer = Tracer.from_config(config, home)
    assert tracer.enabled and tracer.path == home.logs_dir / "trace.jsonl"
    absolute = Tracer.from_config(HRMConfig(trace_file=str(home.root / "t.jsonl")), home)
    assert not absolute.enabled and absolute.path == home.root / "t.jsonl"
