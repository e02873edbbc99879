"""The scripted demo conversation: every governed behaviour of a turn, shown on a real stack.

`run_demo` drives one stack through a fixed conversation and reports, from the decision records
alone, where each behaviour happened: stance moving through gates, a commitment created, ticking
and expiring, an explicit preference canonised and an inferred one held for confirmation, a
switch between problems decided by arbitration including an ask, an escalation, and a pattern
learned after repeated success and then used. The decisions are deterministic, so they are the
same on the local model and on the offline one; only the wording of answers differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hrm.turn.records import TurnResult

__all__ = ["DEMO_PAUSES", "DEMO_SCRIPT", "DemoClock", "DemoReport", "run_demo"]

DEMO_SCRIPT: tuple[str, ...] = (
    "Let's plan the v2 launch of our billing service",
    "I prefer concise answers with code examples",
    "What should we check first for the billing launch?",
    "Let's focus on the billing migration script for the next 3 turns",
    "Write the migration step for the billing invoices table",
    "Dark mode seems better for late-night work",
    "yes",
    "The invoice totals look wrong in the finance dashboard",
    "Production is down! The payment gateway returns 500 errors",
    "First refactor the parser module, then update the tests, and finally write the docs. "
    "Also clean up the CLI and the config loader.",
    "How do I rename a git branch?",
    "How do I rename a git branch?",
    "How do I rename a git branch?",
    "How do I rename a git branch?",
)

DEMO_MINUTES_PER_TURN = 2
"""Minutes between two of the demo's turns, as in a chat."""

DEMO_PAUSES: dict[int, int] = {8: 25}
"""Longer breaks, in minutes, before the numbered turn (1-based). The person comes back to the
billing problem 25 minutes after its last progress with a new concern: stale enough that
arbitration weighs a switch and asks (and short of the 30 idle minutes that end a session)."""

BEHAVIOURS = (
    ("stance_gate", "stance moved through a gate"),
    ("commitment_created", "commitment created"),
    ("commitment_tick", "commitment ticked"),
    ("commitment_expired", "commitment expired"),
    ("preference_canon", "explicit preference canonised"),
    ("preference_pending", "inferred preference held for confirmation"),
    ("preference_confirmed", "held preference confirmed by the person"),
    ("arbitration_ask", "arbitration asked the person (and changed nothing)"),
    ("arbitration_switch", "arbitration switched problems"),
    ("escalation", "strategy escalated"),
    ("pattern_created", "pattern learned from repeated success"),
    ("pattern_used", "learned pattern chose the strategy"),
)


@dataclass
class DemoReport:
    """Where each behaviour was seen (turn numbers), read from the decision records."""

    provider: str
    turns: list[TurnResult] = field(default_factory=list)
    seen: dict[str, list[int]] = field(default_factory=dict)
    home: Path | None = None

    def missing(self) -> list[str]:
        return [key for key, _ in BEHAVIOURS if not self.seen.get(key)]

    def note(self, key: str, turn: int) -> None:
        self.seen.setdefault(key, []).append(turn)


def _observe(report: DemoReport, result: TurnResult, events: list[dict[str, Any]]) -> None:
    d = result.decision
    n = d.turn
    if d.stance_before and d.stance_after and d.stance_before != d.stance_after:
        report.note("stance_gate", n)
    for ev in events:
        kind = ev.get("kind")
        if kind == "commitment_created":
            report.note("commitment_created", n)
        elif kind == "commitment_tick":
            report.note("commitment_tick", n)
        elif kind == "commitment_expired":
            report.note("commitment_expired", n)
        elif kind == "preference_confirmed":
            report.note("preference_confirmed", n)
        elif kind == "preference_pending":
            report.note("preference_pending", n)
    for write in d.writes:
        if (
            write.get("approved")
            and str(write.get("target")).endswith("shared_reference")
            and (not write.get("inferred"))
        ):
            report.note("preference_canon", n)
    disposition = d.arbitration.get("disposition")
    if disposition == "ask":
        report.note("arbitration_ask", n)
    elif disposition == "switch" and d.arbitration.get("candidate_problem_id"):
        report.note("arbitration_switch", n)
    if d.escalation is not None and d.escalation.escalated:
        report.note("escalation", n)
    for learned in d.learning:
        if learned.get("event_type") == "pattern_created":
            report.note("pattern_created", n)
    if d.strategy.get("pattern_id") and report.seen.get("pattern_created"):
        report.note("pattern_used", n)


class DemoClock:
    """The demo's clock: time stands still within a turn and moves on between turns.

    A scripted conversation runs in a second; a real chat leaves minutes between turns, and
    staleness and TTLs depend on them. The clock moves only when `next_turn` is called, so the
    demo decides the same way on every run however many times a turn reads the time.
    """

    def __init__(
        self,
        start: datetime = datetime(2026, 11, 23, 9, 0, tzinfo=UTC),
        step: timedelta = timedelta(minutes=DEMO_MINUTES_PER_TURN),
    ) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> datetime:
        return self.now

    def next_turn(self, minutes: int | None = None) -> None:
        """Let the time between two turns pass: `minutes`, or the clock's step."""
        self.now += self.step if minutes is None else timedelta(minutes=minutes)


def run_demo(
    home: Path,
    *,
    llm: Any = None,
    on_turn: Callable[[int, str, TurnResult, list[dict[str, Any]]], None] | None = None,
    max_tokens: int = 96,
) -> DemoReport:
    """Run `DEMO_SCRIPT` on a fresh stack in `home`; returns where each behaviour was seen.

    Args:
        home: A home directory (use an empty one: the demo tells its own story).
        llm: Provider name or adapter; default: ``local`` when installed, else ``offline``.
        on_turn: Called after each turn with (number, input, result, events of the turn).
        max_tokens: Answer length for real models (keeps the demo quick on 2 cores).
    """
    from dataclasses import replace

    from hrm.config import load_config
    from hrm.llm import LLMAdapterFactory
    from hrm.pipeline import HRM

    cfg = load_config(home).config
    provider = llm if isinstance(llm, str) else None
    if provider is None and llm is None:
        provider = "local" if LLMAdapterFactory.is_installed("local") else "offline"
    if provider is not None:
        cfg = replace(cfg, llm=replace(cfg.llm, provider=provider, max_tokens=max_tokens))
    clock = DemoClock()
    hrm = HRM.open(
        home,
        "ADMIN",
        None if isinstance(llm, str) else llm,
        config=cfg,
        clock=clock,
        new_session=True,
    )
    report = DemoReport(provider=hrm.llm.provider, home=home)
    try:
        for number, text in enumerate(DEMO_SCRIPT, start=1):
            seq_before = hrm.decisions.last().seq if hrm.decisions.last() else 0  # type: ignore[union-attr]
            clock.next_turn(DEMO_PAUSES.get(number))
            result = hrm.turn(text)
            events = [
                {"kind": r.kind, **r.data}
                for r in hrm.decisions.records(start_seq=seq_before + 1)
                if r.kind != "turn"
            ]
            report.turns.append(result)
            _observe(report, result, events)
            if on_turn is not None:
                on_turn(result.decision.turn, text, result, events)
    finally:
        hrm.close()
    return report
