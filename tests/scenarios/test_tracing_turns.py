"""A turn emits one span per layer, nested under the turn, and writes them when enabled."""

from __future__ import annotations

import json
from dataclasses import replace

from hrm.config import load_config
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.tracing import capture_traces, get_tracer, set_tracer


def test_turn_spans_cover_every_layer(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as hrm, capture_traces() as events:
        hrm.turn("How do I rename a git branch?")
    started = [e for e in events if e.status == "started"]
    layers = {e.hrm for e in started}
    assert {"pipeline", "governance", "focus", "altitude", "reasoning", "attention",
            "execution", "learning"} <= layers
    turn = next(e for e in started if e.operation == "turn")
    assert all(e.parent_id is not None for e in started if e is not turn)


def test_trace_enabled_writes_json_lines_to_the_home(home: HRMHome) -> None:
    cfg = replace(load_config(home).config, trace_enabled=True, trace_file="trace.jsonl")
    previous = get_tracer()
    try:
        with HRM.open(home, "ADMIN", "offline", config=cfg) as hrm:
            hrm.turn("What is a WAL?")
        get_tracer().close()
        lines = (home.logs_dir / "trace.jsonl").read_text().splitlines()
    finally:
        set_tracer(previous)
    records = [json.loads(line) for line in lines]
    assert any(r["hrm"] == "reasoning" and r["operation"] == "reason" for r in records)
    assert all(str(r["trace_id"]).count("_") >= 2 for r in records)
