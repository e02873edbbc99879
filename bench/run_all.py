"""Run every benchmark in bench/ and print one summary: `make bench` (or `make bench-quick`).

Each benchmark is a script `bench/bench_*.py` that measures its own baseline in the same run,
prints its figures as ratios to it, and writes a JSON summary to `bench/out/<name>.json`. This
runner only orchestrates and collects; it adds the machine and date so results can be recorded
in bench/RESULTS.md. `bench_anchor` (hrm against LangGraph, whose table RESULTS.md shows first)
runs first. `bench_history` builds its long homes once and keeps them in `bench/out/history/`
(the first full run builds 50,000 turns: tens of minutes); `bench_prompt_cache` needs the local
model and says it skipped without it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
OUT_DIR = BENCH_DIR / "out"


def machine() -> dict[str, object]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="smaller sizes: seconds to a few minutes per benchmark")
    parser.add_argument("only", nargs="*", help="run only these benchmarks (e.g. ledger hook)")
    args = parser.parse_args()
    OUT_DIR.mkdir(exist_ok=True)
    scripts = sorted(BENCH_DIR.glob("bench_*.py"), key=lambda s: (s.stem != "bench_anchor", s))
    if args.only:
        scripts = [s for s in scripts if any(s.stem == f"bench_{o}" for o in args.only)]
    failures = 0
    summary: dict[str, object] = {"machine": machine(), "quick": args.quick, "results": {}}
    for script in scripts:
        name = script.stem.removeprefix("bench_")
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        rc = subprocess.call(cmd, cwd=BENCH_DIR.parent)
        elapsed = time.perf_counter() - started
        result_file = next(
            (f for f in (OUT_DIR / f"{name}.json", OUT_DIR / f"{script.stem}.json") if f.exists()),
            OUT_DIR / f"{name}.json",
        )
        entry: dict[str, object] = {"exit_code": rc, "seconds": round(elapsed, 1)}
        if result_file.exists():
            entry["figures"] = json.loads(result_file.read_text())
        if rc != 0:
            failures += 1
        summary["results"][name] = entry  # type: ignore[index]
    (OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"\nmachine: {json.dumps(summary['machine'])}")
    print(f"summary written to {OUT_DIR / 'summary.json'}; {failures} benchmark(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
