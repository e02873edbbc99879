"""`hrm serve` under bounded load on loopback: the governed endpoint against a pass-through.

One server, started in bench mode (``HRM_SERVE_BENCH=1``) over a fresh home with the offline
model, serves both ``POST /v1/chat/completions`` (a governed turn: arbitration, gates, memory,
ledgers) and ``POST /v1/bench/passthrough`` (the same key check and request parsing, then the
same model called directly: no governance). Clients are threads of this process, each with its
own keep-alive connection, sending requests one after another:

- governed, distinct stacks: client i uses user i's key (stack ``RESIDENT:user-i``);
- governed, one stack: every client uses one key (turns of one stack run one at a time);
- pass-through: client i uses user i's key.

At 1, 8 and 32 concurrent clients, each cell is measured in rounds that alternate the three
kinds, so a machine whose speed drifts slows all of them alike. Reported per cell: requests/s
and latency p50/p95. Goals (issue 30): governance adds ≤ 3 ms p50 per request over the
pass-through (1 client), and governed throughput with 8 clients on distinct stacks is ≥ 0.5×
the pass-through's. Also the time from starting ``hrm serve`` to its first answer.

Each ``--workers`` value (default 1 and 2) gets a server and a fresh home of its own, one after
the other: turns in the server process, and turns in worker processes (D401).

Every request goes to 127.0.0.1 only; every loop is bounded by a request count.
Writes bench/out/serve.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT / "src"))

from hrm.home import HRMHome, initialize  # noqa: E402
from hrm.server.keys import KeyStore  # noqa: E402

CONCURRENCY = (1, 8, 32)
KINDS = ("governed_distinct", "governed_one_stack", "passthrough")
_ANNOUNCE = re.compile(r"http://127\.0\.0\.1:(\d+)/")
TOPICS = ("binary search", "hash maps", "B-trees", "garbage collection", "TCP slow start",
          "bloom filters", "raft elections", "vector clocks", "quicksort pivots", "heap order")


def start_server(
    home: Path, sentence_model: str = "auto", extra: Sequence[str] = ()
) -> tuple[subprocess.Popen[str], str, float]:
    """Start the server; return it, its base URL and the seconds to its first answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HRM_", "OPENAI_"))}
    env.update({"HRM_HOME": str(home), "HRM_PROVIDER": "offline", "HRM_SERVE_BENCH": "1",
                "HRM_READING__SENTENCE_MODEL": sentence_model,
                # the one-stack cells send ~2,400 turns to one session: past its 500k tokens
                "HRM_STACK_TOKEN_BUDGET": "100000000"})
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "hrm.cli", "serve", "--port", "0", "--regenerate-window", "0",
         "--stack-wait", "600", *extra],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    found = _ANNOUNCE.search(line)
    if found is None:
        process.kill()
        raise SystemExit(f"hrm serve did not start: {line}{process.stderr.read()}")
    threading.Thread(target=process.stderr.read, daemon=True).start()
    base = f"http://127.0.0.1:{found.group(1)}"
    with httpx.Client(base_url=base) as http:
        http.get("/v1/models")  # 401 without a key: the app answers
    return process, base, time.perf_counter() - started


READY_S = 120.0
"""How long a cell's clients wait for each other to connect (a bound, never reached when well)."""


def client_run(base: str, key: str, path: str, texts: list[str],
               ready: threading.Barrier) -> tuple[list[float], float]:
    """Send `texts` one after another on one kept-alive connection; the latencies and the
    moment the last answer arrived.

    The client is built and connected before `ready` lets every client of the cell start:
    building an httpx client (its TLS context, even for plain HTTP) and connecting took
    ~20 ms a client, which at eight clients of ten requests each was most of a pass-through
    cell's time and none of a request's (D402)."""
    latencies = []
    # Without TCP_NODELAY httpx writes the headers and the body apart and waits ~40 ms for the
    # server's delayed ACK in between: the client, not either endpoint, would be measured.
    transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"},
                      timeout=600, transport=transport) as http:
        try:
            http.get("/v1/models")  # connects: the requests below reuse the connection
        except BaseException:
            ready.abort()  # the other clients and the cell stop waiting for this one
            raise
        ready.wait(timeout=READY_S)
        for text in texts:
            begun = time.perf_counter()
            response = http.post(path, json={
                "model": "hrm", "messages": [{"role": "user", "content": text}]})
            latencies.append(time.perf_counter() - begun)
            if response.status_code != 200:
                raise SystemExit(f"{path}: {response.status_code} {response.text[:300]}")
        return latencies, time.perf_counter()


def run_cell(base: str, keys: list[str], kind: str, clients: int, per_client: int,
             counter: list[int]) -> tuple[list[float], float]:
    """One cell: `clients` clients sending `per_client` requests each; every latency, and the
    seconds from the moment all clients were connected to the last answer."""
    path = "/v1/bench/passthrough" if kind == "passthrough" else "/v1/chat/completions"
    chosen = [keys[0]] * clients if kind == "governed_one_stack" else keys[:clients]
    jobs = []
    for index, key in enumerate(chosen):
        texts = []
        for _ in range(per_client):
            counter[0] += 1
            topic = TOPICS[(counter[0] + index) % len(TOPICS)]
            texts.append(f"Explain {topic}, question {counter[0]}")
        jobs.append((key, texts))
    begun: list[float] = []
    ready = threading.Barrier(clients + 1, action=lambda: begun.append(time.perf_counter()))
    with ThreadPoolExecutor(max_workers=clients) as pool:
        running = [pool.submit(client_run, base, key, path, texts, ready)
                   for key, texts in jobs]
        # a client that failed to connect broke the barrier: its result below says why
        with contextlib.suppress(threading.BrokenBarrierError):
            ready.wait(timeout=READY_S)
        results = [r.result() for r in running]
    elapsed = max(end for _, end in results) - begun[0]
    return [x for r, _ in results for x in r], elapsed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(home: Path, keys: list[str], extra: Sequence[str], *, sentence_model: str,
            total: int, rounds: int) -> dict[str, object]:
    """Start one server with `extra` options over `home`, run every cell, stop it."""
    process, base, startup_s = start_server(home, sentence_model, extra)
    try:
        counter = [0]
        for kind in KINDS:  # warm every path and the first stacks
            run_cell(base, keys, kind, 8, 4, counter)
        # Open every stack the cells use: a stack's first turn opens it (tens of ms), and
        # left to the 32-client cells that one-off cost filled their 95th percentile.
        run_cell(base, keys, "governed_distinct", max(CONCURRENCY), 1, counter)
        figures = {}
        for clients in CONCURRENCY:
            per_client = max(1, total // clients // rounds)
            cells: dict[str, tuple[list[float], float]] = {k: ([], 0.0) for k in KINDS}
            for _ in range(rounds):
                for kind in KINDS:
                    latencies, elapsed = run_cell(base, keys, kind, clients, per_client,
                                                  counter)
                    old = cells[kind]
                    cells[kind] = (old[0] + latencies, old[1] + elapsed)
            for kind, (latencies, elapsed) in cells.items():
                figures[f"{kind}@{clients}"] = {
                    "requests": len(latencies),
                    "rps": round(len(latencies) / elapsed, 1),
                    "p50_ms": round(statistics.median(latencies) * 1000, 2),
                    "p95_ms": round(percentile(latencies, 0.95) * 1000, 2),
                }
    finally:
        process.terminate()
        process.wait(timeout=600)
    added = figures["governed_distinct@1"]["p50_ms"] - figures["passthrough@1"]["p50_ms"]
    ratio = figures["governed_distinct@8"]["rps"] / figures["passthrough@8"]["rps"]
    return {
        "startup_s": round(startup_s, 2),
        "cells": figures,
        "governance_added_p50_ms": round(added, 2),
        "throughput_ratio_8_distinct": round(ratio, 2),
    }


def report(workers: int, result: dict[str, Any]) -> None:
    print(f"--workers {workers}: start to first answer {result['startup_s']:.2f} s (goal < 2 s)")
    print(f"{'cell':28} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8}")
    for name, cell in result["cells"].items():
        print(f"{name:28} {cell['requests']:>8} {cell['rps']:>8} {cell['p50_ms']:>8} "
              f"{cell['p95_ms']:>8}")
    added, ratio = result["governance_added_p50_ms"], result["throughput_ratio_8_distinct"]
    print(f"governance adds {added:.2f} ms p50 over the pass-through at 1 client (goal ≤ 3 ms): "
          f"{'met' if added <= 3 else 'NOT met'}")
    print(f"governed / pass-through throughput, 8 clients on distinct stacks: {ratio:.2f}× "
          f"(goal ≥ 0.5×): {'met' if ratio >= 0.5 else 'NOT met'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer requests per cell")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--sentence-model", choices=("auto", "off"), default="auto",
        help="reading's exemplar tier (off: rules only), to see what it adds to a turn",
    )
    parser.add_argument("--workers", default="1,2",
                        help="hrm serve --workers values to measure, one server each (1,2)")
    parser.add_argument("--turn-threads", type=int, default=8, help="hrm serve --turn-threads")
    args = parser.parse_args()
    total = 192 if args.quick else 768  # requests per kind and concurrency, over all rounds
    OUT.mkdir(parents=True, exist_ok=True)
    runs: dict[str, Any] = {}
    for workers in (int(w) for w in args.workers.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
            home = Path(tmp) / "home"
            initialize(HRMHome(home))
            store = KeyStore(HRMHome(home))
            keys = [store.create(f"user-{n}").token for n in range(max(CONCURRENCY))]
            extra = ["--workers", str(workers), "--turn-threads", str(args.turn_threads)]
            runs[str(workers)] = measure(home, keys, extra, sentence_model=args.sentence_model,
                                         total=total, rounds=args.rounds)
        report(workers, runs[str(workers)])
    summary = {"workers": runs, "goal_added_p50_ms": 3.0, "goal_throughput_ratio": 0.5,
               "load_average": os.getloadavg()}
    (OUT / "serve.json").write_text(json.dumps(summary, indent=2))
    print(f"load average during the run: {summary['load_average']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
