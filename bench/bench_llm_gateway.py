"""Gateway overhead: one chat through `LLMGateway` versus the bare offline adapter.

The offline adapter is the cheapest real adapter (pure Python, no I/O), so the ratio shows the
gateway's own cost per call — budget check, token estimate, bucket bookkeeping, cost, and one
scrubbed work-order record — in the worst case. A remote model call takes hundreds of
milliseconds, beside which the absolute overhead printed here is negligible.

    .venv/bin/python bench/bench_llm_gateway.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from hrm.llm import LLMCallConfig, LLMGateway, Message, OfflineAdapter

OUT = Path(__file__).parent / "out" / "bench_llm_gateway.json"
SYSTEM = "\n".join(
    [
        "Relevant context:",
        "- Learnings are stored in SQLite with an FTS5 index.",
        "- Deploys happen on Fridays after the review.",
        "- Canon: the user prefers short answers.",
    ]
)
MESSAGES = [Message(role="user", content="Where are learnings stored, and when do we deploy?")]
CALL = LLMCallConfig(max_tokens=200, purpose="bench")


def time_calls(function: Any, calls: int) -> float:
    """Seconds per call, the median of five rounds."""
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            function()
        rounds.append((time.perf_counter() - started) / calls)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (< 30 s)")
    args = parser.parse_args()
    calls = 300 if args.quick else 3000

    adapter = OfflineAdapter()
    records: list[tuple[str, dict[str, Any]]] = []
    gateway = LLMGateway(
        adapter,
        requests_per_minute=10**9,
        tokens_per_minute=10**12,
        budget_tokens=10**12,
        pricing={"input_per_1k": 0.003, "output_per_1k": 0.015},
        record=lambda kind, data: records.append((kind, data)),
        agent_class="ADMIN",
    )

    bare = time_calls(lambda: adapter.chat(MESSAGES, SYSTEM, CALL), calls)
    governed = time_calls(lambda: gateway.chat(MESSAGES, SYSTEM, CALL), calls)
    bare_stream = time_calls(lambda: list(adapter.stream(MESSAGES, SYSTEM, CALL)), calls // 3)
    governed_stream = time_calls(lambda: list(gateway.stream(MESSAGES, SYSTEM, CALL)), calls // 3)

    summary = {
        "calls_per_round": calls,
        "bare_chat_us": round(bare * 1e6, 1),
        "gateway_chat_us": round(governed * 1e6, 1),
        "chat_ratio": round(governed / bare, 2),
        "chat_overhead_us": round((governed - bare) * 1e6, 1),
        "bare_stream_us": round(bare_stream * 1e6, 1),
        "gateway_stream_us": round(governed_stream * 1e6, 1),
        "stream_ratio": round(governed_stream / bare_stream, 2),
        "records_written": len(records),
    }
    print(f"bare offline chat      {summary['bare_chat_us']:>9} us/call  (baseline 1.00x)")
    print(
        f"gateway offline chat   {summary['gateway_chat_us']:>9} us/call  "
        f"{summary['chat_ratio']:.2f}x  (+{summary['chat_overhead_us']} us)"
    )
    print(f"bare offline stream    {summary['bare_stream_us']:>9} us/call  (baseline 1.00x)")
    print(
        f"gateway offline stream {summary['gateway_stream_us']:>9} us/call  "
        f"{summary['stream_ratio']:.2f}x"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
