"""Agent runtime: map-phase scheduling and timeout precision.

Scheduling: 200 agents, each a model call that takes 20 ms (a scripted adapter that sleeps),
mapped in parallel at concurrency 3, 8 and 32 through the whole runtime (prompt building, reply
parsing, the firewall, the merge reducer, records). Each figure is the wall time as a ratio to
the ideal ``ceil(n/k) × 20 ms`` (goal ≤ 1.05), and beside it the same work on a bare
``ThreadPoolExecutor(k)`` running ``sleep(0.02)`` — the baseline measured in the same run, so
machine load affects both alike.

Timeout precision: a bundle whose agents never answer, with a bundle deadline of 100 ms (and,
separately, a per-agent timeout of 100 ms); the figure is how late the bundle returns after its
deadline (goal ≤ 20 ms), median and worst of the repeats.

    .venv/bin/python bench/bench_runtime.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from hrm.reasoning.types import AgentBundleProposal, InputClassification  # noqa: E402
from hrm.runtime import (  # noqa: E402
    AgentDefinition,
    AgentExecutionContext,
    AgentRegistry,
    AgentRuntime,
)
from hrm.testing import ScriptedAdapter, ScriptedReply  # noqa: E402
from hrm.types import Complexity, ConflictLevel, ReducerType, Stakes  # noqa: E402

OUT = ROOT / "bench" / "out" / "bench_runtime.json"
AGENTS = 200
WORK_S = 0.020
CONCURRENCY = (3, 8, 32)
GOAL_RATIO = 1.05
GOAL_LATE_MS = 20.0
DEADLINE_MS = 100


def _proposal(agents: list[str]) -> AgentBundleProposal:
    classification = InputClassification(
        complexity=Complexity.SIMPLE, uncertainty=0.5, conflict=ConflictLevel.NONE,
        stakes=Stakes.LOW, horizon="immediate", domain=[], confidence=0.5,
    )
    return AgentBundleProposal(
        strategy="bench", classification=classification, agents=agents,
        reducer=ReducerType.MERGE, parallel=True, reducer_config={"strategy": "concatenate"},
    )


def _registry(count: int) -> tuple[AgentRegistry, list[str]]:
    ids = [f"agent{i:03d}" for i in range(count)]
    definitions = [AgentDefinition(id=i, role="bench", system_prompt="Answer.") for i in ids]
    return AgentRegistry(definitions), ids


def runtime_wall(k: int) -> float:
    """Seconds for the runtime to map AGENTS agents of WORK_S each at concurrency k."""
    registry, ids = _registry(AGENTS)
    adapter = ScriptedAdapter([ScriptedReply(content="ok", delay_s=WORK_S)], repeat=True)
    runtime = AgentRuntime(registry, lambda d: adapter, max_concurrent=k,
                           agent_timeout_ms=60_000)
    started = time.perf_counter()
    result = runtime.execute_bundle(_proposal(ids), AgentExecutionContext(problem_id="bench"))
    wall = time.perf_counter() - started
    if not result.success or len(result.outputs) != AGENTS:
        raise SystemExit(f"bench bundle failed: {result.error} ({len(result.outputs)} outputs)")
    return wall


def pool_wall(k: int) -> float:
    """Seconds for a bare ThreadPoolExecutor(k) to run AGENTS sleeps of WORK_S."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=k) as pool:
        list(pool.map(lambda _: time.sleep(WORK_S), range(AGENTS)))
    return time.perf_counter() - started


def lateness_ms(*, per_agent: bool) -> float:
    """How many ms after a 100 ms deadline a bundle of never-answering agents returns."""
    registry, ids = _registry(4)
    gate = threading.Event()
    adapter = ScriptedAdapter([ScriptedReply(content="never", wait_for=gate)], repeat=True)
    runtime = AgentRuntime(
        registry, lambda d: adapter, max_concurrent=4,
        agent_timeout_ms=DEADLINE_MS if per_agent else 60_000,
    )
    context = AgentExecutionContext(
        problem_id="bench", timeout_ms=None if per_agent else DEADLINE_MS
    )
    started = time.perf_counter()
    result = runtime.execute_bundle(_proposal(ids), context)
    elapsed_ms = (time.perf_counter() - started) * 1000
    gate.set()
    if len(result.timed_out) != len(ids):
        raise SystemExit(f"expected every agent to time out, got {result.timed_out}")
    return elapsed_ms - DEADLINE_MS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (< 30 s)")
    args = parser.parse_args()
    repeats = 1 if args.quick else 5
    late_repeats = 5 if args.quick else 20

    scheduling = []
    print(f"map phase: {AGENTS} agents × {WORK_S * 1000:.0f} ms, median of {repeats}")
    print(f"{'k':>4} {'ideal ms':>9} {'runtime ms':>11} {'ratio':>7} {'pool ms':>8} "
          f"{'pool ratio':>10} {'vs pool':>8}")
    for k in CONCURRENCY:
        ideal = math.ceil(AGENTS / k) * WORK_S
        ours = statistics.median(runtime_wall(k) for _ in range(repeats))
        base = statistics.median(pool_wall(k) for _ in range(repeats))
        row = {
            "concurrency": k, "ideal_ms": round(ideal * 1000, 1),
            "runtime_ms": round(ours * 1000, 1), "ratio_to_ideal": round(ours / ideal, 3),
            "pool_ms": round(base * 1000, 1), "pool_ratio_to_ideal": round(base / ideal, 3),
            "ratio_to_pool": round(ours / base, 3),
            "meets_goal": ours / ideal <= GOAL_RATIO,
        }
        scheduling.append(row)
        print(f"{k:>4} {row['ideal_ms']:>9} {row['runtime_ms']:>11} {row['ratio_to_ideal']:>7} "
              f"{row['pool_ms']:>8} {row['pool_ratio_to_ideal']:>10} {row['ratio_to_pool']:>8}")

    precision = {}
    for name, per_agent in (("bundle_timeout", False), ("agent_timeout", True)):
        samples = [lateness_ms(per_agent=per_agent) for _ in range(late_repeats)]
        precision[name] = {
            "deadline_ms": DEADLINE_MS, "repeats": late_repeats,
            "late_median_ms": round(statistics.median(samples), 2),
            "late_max_ms": round(max(samples), 2),
            "meets_goal": max(samples) <= GOAL_LATE_MS,
        }
        print(f"{name}: returns {precision[name]['late_median_ms']} ms late (median), "
              f"{precision[name]['late_max_ms']} ms worst of {late_repeats} "
              f"(goal ≤ {GOAL_LATE_MS:.0f} ms)")

    OUT.parent.mkdir(parents=True, exist_ok=True)
    summary = {
        "benchmark": "bench_runtime",
        "quick": args.quick,
        "agents": AGENTS,
        "work_ms": WORK_S * 1000,
        "goal_ratio_to_ideal": GOAL_RATIO,
        "goal_late_ms": GOAL_LATE_MS,
        "scheduling": scheduling,
        "timeout_precision": precision,
        "machine": {"cpus": os.cpu_count(), "load_avg_1m": os.getloadavg()[0]},
    }
    OUT.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
