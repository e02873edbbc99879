"""Plan engine overhead per step: `PlanEngine.run` versus the bare `StepExecutor` call per step.

Both sides run the same steps with the same prompts on the offline model (pure Python, no I/O:
the cheapest step there is), so the ratio is the engine's own cost per step — profiling,
validation, snapshots, evaluation, convergence, history — in the worst case. Plan shapes: a
chain (one step per pass: the most passes per step) and a wide plan (every step in one batch),
once on four threads and once serially (with the CPU-bound offline model the threads only add
hand-off cost, which the serial run separates out). A real model step takes hundreds of
milliseconds, beside which the absolute overhead printed here is small.

    .venv/bin/python bench/bench_plans.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from hrm.altitude.types import Plan, PlanStep, PlanStepStatus
from hrm.llm import OfflineAdapter
from hrm.plans import PlanEngine, StepExecutor
from hrm.plans.types import copy_plan
from hrm.reasoning.types import InputClassification
from hrm.types import Complexity, ConflictLevel, Stakes

OUT = Path(__file__).parent / "out" / "bench_plans.json"
GOAL = "Find why the nightly import is slow, fix the slowest query and check the timings"
STEPS = 8
CLASSIFICATION = InputClassification(
    complexity=Complexity.COMPLEX, uncertainty=0.3, conflict=ConflictLevel.NONE,
    stakes=Stakes.MEDIUM, horizon="near", domain=["data"], confidence=0.8,
)
"""Depth 3: a TTL of 14, enough for the eight steps."""


def chain_plan() -> Plan:
    """Eight steps, each depending on the one before."""
    steps = [
        PlanStep(order=n, action_type="execute", description=f"Part {n} of the import fix",
                 dependencies=[n - 1] if n > 1 else [])
        for n in range(1, STEPS + 1)
    ]
    return Plan(id="bench_chain", steps=steps, estimated_turns=STEPS, requires_agents=False,
                agent_suggestion=None)


def wide_plan() -> Plan:
    """Eight independent research steps."""
    steps = [
        PlanStep(order=n, action_type="research", description=f"Angle {n} on the slow import")
        for n in range(1, STEPS + 1)
    ]
    return Plan(id="bench_wide", steps=steps, estimated_turns=1, requires_agents=False,
                agent_suggestion=None)


def median_seconds(function: Any, rounds: int) -> float:
    """Median wall time of ``rounds`` calls."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(name: str, plan: Plan, rounds: int, *, max_parallel: int = 4) -> dict[str, Any]:
    adapter = OfflineAdapter()
    with PlanEngine(adapter, global_ttl=2 * STEPS, max_parallel=max_parallel) as engine:
        result = engine.run(GOAL, plan=plan, classification=CLASSIFICATION)
        if result.status != "converged":
            raise SystemExit(f"{name}: the plan did not converge ({result.status})")
        prepared = copy_plan(result.plan)  # steps with their incoming context filled
        for step in prepared.steps:
            step.status = PlanStepStatus.PENDING
        with StepExecutor(adapter, max_parallel=1) as bare:
            def bare_run() -> None:
                for step in prepared.steps:
                    bare.execute(step, goal=GOAL, plan_id=prepared.id)

            baseline = median_seconds(bare_run, rounds) / STEPS
        governed = median_seconds(
            lambda: engine.run(GOAL, plan=plan, classification=CLASSIFICATION), rounds
        ) / STEPS
    return {
        "plan": name,
        "max_parallel": max_parallel,
        "steps": STEPS,
        "passes": len(result.history.passes) - 1,
        "bare_step_us": round(baseline * 1e6, 1),
        "engine_step_us": round(governed * 1e6, 1),
        "ratio": round(governed / baseline, 2),
        "overhead_us_per_step": round((governed - baseline) * 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (< 30 s)")
    args = parser.parse_args()
    rounds = 15 if args.quick else 101
    rows = [
        measure("chain", chain_plan(), rounds),
        measure("wide", wide_plan(), rounds),
        measure("wide-serial", wide_plan(), rounds, max_parallel=1),
    ]
    for row in rows:
        print(
            f"{row['plan']:<11} bare executor {row['bare_step_us']:>8} us/step (baseline 1.00x)  "
            f"engine {row['engine_step_us']:>8} us/step  {row['ratio']:.2f}x  "
            f"(+{row['overhead_us_per_step']} us/step, {row['passes']} passes)"
        )
    summary = {"rounds": rounds, "model": "offline", "results": rows}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
