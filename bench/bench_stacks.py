"""Cognitive stacks: creation time and turn overhead with several templates bound, and recovery
of a stack from large ledgers.

Figures are ratios to baselines measured in the same run:

* creation with 10 extra templates bound / creation with the shipped templates;
* a governed turn (shipped templates and 10 extra, in alternate blocks) / one direct offline
  model call through the same gateway;
* `recover` over N HO2m + N HO1m records / reading and JSON-parsing the same two files.

Run: ``.venv/bin/python bench/bench_stacks.py [--quick]`` (quick: 10k records, fewer rounds).
Writes bench/out/bench_stacks.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from conversation import conversation
from hrm.config import load_config
from hrm.home import HRMHome, initialize
from hrm.llm import LLMCallConfig, Message
from hrm.pipeline import HRM
from hrm.stacks.factory import create_stack
from hrm.stacks.lifecycle import recover
from hrm.storage.ledger import Ledger

OUT = Path(__file__).resolve().parent / "out" / "bench_stacks.json"
EXTRA_TEMPLATES = 10
CONVERSATION_SEED = 3


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def _extra_templates(home: HRMHome, count: int) -> None:
    stages = ["canon", "working_set", "recent_turns", "patterns", "memory_search"]
    for i in range(count):
        template = {
            "template_id": f"ATT-BENCH-{i:03d}",
            "applies_to": {"agent_class": ["ADMIN", "RESIDENT"], "tier": ["ho2"]},
            "pipeline": [{"stage": f"s{i}", "type": stages[i % len(stages)],
                          "config": {"limit": 3 + i}}],
        }
        path = home.hot_config_dir / "attention" / f"ATT-BENCH-{i:03d}.json"
        path.write_text(json.dumps(template))


def bench_creation(root: Path, rounds: int) -> dict[str, Any]:
    results: dict[str, float] = {}
    for label, extra in (("shipped", 0), ("extra", EXTRA_TEMPLATES)):
        home = HRMHome(root / f"create-{label}")
        initialize(home)
        _extra_templates(home, extra)
        config = load_config(home).config
        config = replace(config, llm=replace(config.llm, provider="offline"))
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            stack = create_stack("ADMIN", config, home)
            samples.append(time.perf_counter() - start)
            bound = len(stack.active_template_ids())
            stack.teardown()
        results[label] = _median_ms(samples)
        results[f"{label}_bound"] = bound
    return {
        "create_shipped_ms": results["shipped"],
        "create_extra_ms": results["extra"],
        "templates_bound": [results["shipped_bound"], results["extra_bound"]],
        "ratio_extra_to_shipped": round(results["extra"] / results["shipped"], 3),
    }


def bench_turns(root: Path, turns: int, block: int = 25) -> dict[str, Any]:
    """Turns with the shipped templates and with 10 extra, timed alternately block by block.

    The turn benchmark's conversation (D34): messages new to the process, as a person's are.
    Each template set says its own messages (the same six shapes, other words): said twice,
    the second set's turns would find the first's text-keyed caches warm. The two sets run in
    alternate blocks, so a drift in the machine's speed falls on both alike (until the
    twenty-first session they ran one after the other, 20 turns each, on the same messages,
    and the extra templates came out faster than the shipped ones).
    """
    out: dict[str, Any] = {}
    labels = (("shipped", 0), ("extra", EXTRA_TEMPLATES))
    stacks: dict[str, HRM] = {}
    texts: dict[str, list[str]] = {}
    for offset, (label, extra) in enumerate(labels):
        home = HRMHome(root / f"turn-{label}")
        initialize(home)
        _extra_templates(home, extra)
        stacks[label] = HRM.open(home, "RESIDENT:Bench", "offline")
        texts[label] = conversation(CONVERSATION_SEED + offset, turns)
        stacks[label].turn("warm up")
    governed: dict[str, list[float]] = {label: [] for label, _ in labels}
    direct: list[float] = []
    try:
        gateway = stacks["shipped"].stack.gateway
        for begin in range(0, turns, block):
            for label, _ in labels:
                hrm = stacks[label]
                for text in texts[label][begin:begin + block]:
                    start = time.perf_counter()
                    hrm.turn(text)
                    governed[label].append(time.perf_counter() - start)
            for text in texts["shipped"][begin:begin + block]:
                start = time.perf_counter()
                gateway.chat([Message(role="user", content=text)],
                             "You are a helpful assistant.", LLMCallConfig(purpose="bench"))
                direct.append(time.perf_counter() - start)
    finally:
        for hrm in stacks.values():
            hrm.close()
    out["direct_call_ms"] = _median_ms(direct)
    for label, _ in labels:
        out[f"turn_{label}_ms"] = _median_ms(governed[label])
        out[f"ratio_turn_{label}_to_direct_call"] = round(
            statistics.median(governed[label]) / statistics.median(direct), 1)
    out["ratio_turn_extra_to_shipped"] = round(
        statistics.median(governed["extra"]) / statistics.median(governed["shipped"]), 3)
    return out


def _fill(home: HRMHome, agent_class: str, records: int) -> None:
    batch = 1000
    with Ledger(home.decision_ledger(agent_class)) as ho2m, \
            Ledger(home.execution_ledger(agent_class)) as ho1m:
        for start in range(0, records, batch):
            n = min(batch, records - start)
            ho2m.append_many([
                ("turn", {"session_id": f"SES-{(start + i) // 50}", "agent_class": agent_class,
                          "turn": start + i + 1, "input": f"message number {start + i}",
                          "response": "an answer " * 8, "action": "respond",
                          "state": {"turn_number": start + i + 1}})
                for i in range(n)])
            ho1m.append_many([
                ("work_order", {"session_id": f"SES-{(start + i) // 50}", "type": "llm_call",
                                "wo_id": f"wo_{start + i:016x}", "outcome": "ok",
                                "input_tokens": 120, "output_tokens": 80})
                for i in range(n)])


def bench_recovery(root: Path, records: int) -> dict[str, Any]:
    home = HRMHome(root / "recovery")
    agent_class = "RESIDENT:Bench"
    initialize(home, agent_class=agent_class)
    _fill(home, agent_class, records)
    start = time.perf_counter()
    for path in (home.decision_ledger(agent_class), home.execution_ledger(agent_class)):
        with path.open("rb") as fh:
            for line in fh:
                json.loads(line)
    raw = time.perf_counter() - start
    config = load_config(home).config
    config = replace(config, llm=replace(config.llm, provider="offline"),
                     stack_token_budget=10**12)
    start = time.perf_counter()
    stack = create_stack(agent_class, config, home)
    created = time.perf_counter() - start
    start = time.perf_counter()
    report = recover(stack)
    recovered = time.perf_counter() - start
    stack.teardown()
    return {
        "records_per_ledger": records,
        "raw_parse_ms": round(raw * 1000, 1),
        "create_stack_ms": round(created * 1000, 1),
        "recover_ms": round(recovered * 1000, 1),
        "turns_recovered": report.turns,
        "ratio_recover_to_raw_parse": round(recovered / raw, 2),
        "ratio_create_to_raw_parse": round(created / raw, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10k records, fewer rounds")
    args = parser.parse_args()
    records = 10_000 if args.quick else 100_000
    rounds, turns = (3, 50) if args.quick else (10, 400)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        summary = {
            "quick": args.quick,
            "creation": bench_creation(root, rounds),
            "turns": bench_turns(root, turns),
            "recovery": bench_recovery(root, records),
        }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n")
    c, t, r = summary["creation"], summary["turns"], summary["recovery"]
    print(f"stack creation: {c['create_shipped_ms']} ms with {c['templates_bound'][0]} templates,"
          f" {c['create_extra_ms']} ms with {c['templates_bound'][1]} "
          f"(x{c['ratio_extra_to_shipped']})")
    print(f"turn: {t['turn_shipped_ms']} ms = x{t['ratio_turn_shipped_to_direct_call']} a direct "
          f"offline call; with {EXTRA_TEMPLATES} extra templates {t['turn_extra_ms']} ms "
          f"(x{t['ratio_turn_extra_to_shipped']})")
    print(f"recovery from {r['records_per_ledger']:,} HO2m + HO1m records: recover "
          f"{r['recover_ms']} ms (x{r['ratio_recover_to_raw_parse']} of raw JSON parsing), "
          f"create_stack {r['create_stack_ms']} ms (x{r['ratio_create_to_raw_parse']})")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
