"""Ledger benchmarks: append throughput per durability policy, and verify throughput.

Run: ``.venv/bin/python bench/bench_ledger.py [--quick]``; writes ``bench/out/bench_ledger.json``.

Append figures are ratios to a plain, unlocked append of *the same bytes* (the lines the ledger
wrote, replayed) in the same run, so machine speed cancels out:

* group commit: `Ledger.append` per record with `Ledger.commit` every ``--group`` records (one
  turn), against a plain ``write(2)`` per record with ``fsync`` at the same boundaries. Goal:
  >= 0.5x. Also shown against a plain append that never syncs (pure CPU overhead of locking,
  scrubbing, serialising and chaining).
* fsync per record: `Durability.FSYNC` against a plain write + fsync per record.

Verify: `Ledger.verify` over a ledger of 100k (``--quick``) or 1M records, in records/s. Goal:
>= 300k records/s. The ledger is written with `append_many` (payload strings drawn from a pool),
which produces exactly the bytes `append` would.

Each figure is the best of ``--rounds`` interleaved rounds (the machine is shared). Verify is
also reported per CPU-second of this process, which other load on the machine does not dilute;
the 1-minute load average is recorded in the JSON summary.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hrm.storage.ledger import Durability, Ledger

OUT = Path(__file__).resolve().parent / "out" / "bench_ledger.json"
SENTENCE = (
    "the user asked about refactoring the parser so that errors name the line and column "
    "while the assistant proposed a plan with three steps and a rollback"
)
WORDS = SENTENCE.split(" ")


def payload(i: int) -> dict[str, Any]:
    """A realistic decision record: ids, an event name, a varying sentence, numbers."""
    start = i % len(WORDS)
    text = " ".join(WORDS[start:] + WORDS[:start])[: 60 + i % 140]
    return {
        "session_id": f"SES-{i // 50:08d}",
        "event": "turn_completed",
        "text": f"{text} #{i}",
        "tokens": {"input": 300 + i % 97, "output": 40 + i % 13},
        "ok": i % 7 != 0,
    }


def best(rounds: int, run: Callable[[], float]) -> float:
    """Best (highest) throughput of several runs."""
    return max(run() for _ in range(rounds))


def plain_append(lines: list[bytes], path: Path, *, group: int | None) -> float:
    """Records/s of an unlocked O_APPEND write per line, fsync every `group` lines (None: never)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
    try:
        start = time.perf_counter()
        for i, line in enumerate(lines, 1):
            os.write(fd, line)
            if group is not None and i % group == 0:
                os.fdatasync(fd)
        if group is not None:
            os.fdatasync(fd)
        elapsed = time.perf_counter() - start
    finally:
        os.close(fd)
    return len(lines) / elapsed


def ledger_append(
    items: list[dict[str, Any]], path: Path, *, durability: Durability, group: int
) -> float:
    """Records/s of `Ledger.append`, committing every `group` records."""
    for leftover in (path, path.with_name(path.name + ".anchor")):
        leftover.unlink(missing_ok=True)
    with Ledger(path, durability=durability) as ledger:
        start = time.perf_counter()
        for i, data in enumerate(items, 1):
            ledger.append("turn", data)
            if i % group == 0:
                ledger.commit()
        if group <= len(items):
            ledger.commit()
        elapsed = time.perf_counter() - start  # a never-committing run syncs at close, untimed
    return len(items) / elapsed


def ledger_append_many(items: list[dict[str, Any]], path: Path, *, group: int) -> float:
    """Records/s of one `append_many` + `commit` per group (a turn written at once)."""
    for leftover in (path, path.with_name(path.name + ".anchor")):
        leftover.unlink(missing_ok=True)
    with Ledger(path) as ledger:
        start = time.perf_counter()
        for first in range(0, len(items), group):
            ledger.append_many([("turn", data) for data in items[first : first + group]])
            ledger.commit()
        elapsed = time.perf_counter() - start
    return len(items) / elapsed


def bench_append(
    tmp: Path, *, records: int, fsync_records: int, group: int, rounds: int
) -> dict[str, Any]:
    items = [payload(i) for i in range(records)]
    ledger_path, plain_path = tmp / "append.jsonl", tmp / "plain.jsonl"
    ledger_append(items[:500], ledger_path, durability=Durability.GROUP, group=group)  # warm up
    keys = ("group", "many", "plain_group", "plain_raw", "nosync")
    results: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(rounds):
        # Never reaching a commit boundary: the ledger's CPU cost alone (lock, scrub, chain).
        results["nosync"].append(
            ledger_append(items, ledger_path, durability=Durability.GROUP, group=records + 1)
        )
        results["group"].append(
            ledger_append(items, ledger_path, durability=Durability.GROUP, group=group)
        )
        lines = ledger_path.read_bytes().splitlines(keepends=True)
        results["plain_group"].append(plain_append(lines, plain_path, group=group))
        results["plain_raw"].append(plain_append(lines, plain_path, group=None))
        results["many"].append(ledger_append_many(items, ledger_path, group=group))
    fsync_items = items[:fsync_records]
    fsync_rate = best(
        rounds,
        lambda: ledger_append(fsync_items, ledger_path, durability=Durability.FSYNC, group=1),
    )
    fsync_lines = ledger_path.read_bytes().splitlines(keepends=True)
    plain_fsync = best(rounds, lambda: plain_append(fsync_lines, plain_path, group=1))
    top = {k: max(v) for k, v in results.items()}
    return {
        "records": records,
        "fsync_records": fsync_records,
        "group_size": group,
        "bytes_per_record": round(sum(len(x) for x in lines) / len(lines), 1),
        "group_commit_records_per_s": round(top["group"]),
        "plain_append_fsync_per_group_records_per_s": round(top["plain_group"]),
        "plain_append_no_fsync_records_per_s": round(top["plain_raw"]),
        "group_commit_ratio": round(top["group"] / top["plain_group"], 3),
        "group_commit_ratio_vs_unsynced_plain": round(top["group"] / top["plain_raw"], 3),
        "append_without_commit_records_per_s": round(top["nosync"]),
        "append_without_commit_ratio_vs_unsynced_plain": round(top["nosync"] / top["plain_raw"], 3),
        "append_many_per_group_records_per_s": round(top["many"]),
        "append_many_ratio": round(top["many"] / top["plain_group"], 3),
        "fsync_per_record_records_per_s": round(fsync_rate),
        "plain_append_fsync_per_record_records_per_s": round(plain_fsync),
        "fsync_per_record_ratio": round(fsync_rate / plain_fsync, 3),
    }


def bench_verify(tmp: Path, *, records: int, rounds: int) -> dict[str, Any]:
    path = tmp / "verify.jsonl"
    pool = [payload(i) for i in range(2000)]
    start = time.perf_counter()
    with Ledger(path) as ledger:
        chunk = 5000
        for first in range(0, records, chunk):
            count = min(chunk, records - first)
            ledger.append_many([("turn", pool[(first + j) % len(pool)]) for j in range(count)])
    build_s = time.perf_counter() - start

    cpu_rates: list[float] = []

    def verify() -> float:
        with Ledger(path) as ledger:
            began, began_cpu = time.perf_counter(), time.process_time()
            report = ledger.verify()
            elapsed, cpu = time.perf_counter() - began, time.process_time() - began_cpu
        if not report.ok or report.records != records:
            raise SystemExit(f"verify failed: {report.describe()}")
        cpu_rates.append(records / cpu)
        return records / elapsed

    def read_lines() -> float:
        began = time.perf_counter()
        with path.open("rb") as fh:
            count = sum(1 for _ in fh)
        return count / (time.perf_counter() - began)

    def hash_lines() -> float:
        """The floor of any verifier in Python: one SHA-256 per line, nothing else."""
        began = time.perf_counter()
        with path.open("rb") as fh:
            for raw in fh:
                hashlib.sha256(raw).digest()
        return records / (time.perf_counter() - began)

    verify_rate = best(rounds, verify)
    read_rate = best(rounds, read_lines)
    hash_rate = best(rounds, hash_lines)
    with Ledger(path) as ledger:
        began = time.perf_counter()
        parsed = sum(1 for _ in ledger.records())
        records_rate = parsed / (time.perf_counter() - began)
    return {
        "records": records,
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "build_s": round(build_s, 2),
        "verify_records_per_s": round(verify_rate),
        "verify_records_per_cpu_s": round(max(cpu_rates)),
        "plain_line_read_records_per_s": round(read_rate),
        "verify_ratio_to_plain_read": round(verify_rate / read_rate, 3),
        "sha256_per_line_records_per_s": round(hash_rate),
        "verify_ratio_to_sha256_per_line": round(verify_rate / hash_rate, 3),
        "records_iter_parsed_records_per_s": round(records_rate),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, under 30 s")
    parser.add_argument("--group", type=int, default=10, help="records per commit (a turn)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per figure (best kept)")
    args = parser.parse_args(argv)
    sizes = (
        {"records": 2000, "fsync_records": 100, "verify": 100_000}
        if args.quick
        else {"records": 50_000, "fsync_records": 2000, "verify": 1_000_000}
    )
    tmp = Path(tempfile.mkdtemp(prefix="hrm-bench-ledger-"))
    try:
        append = bench_append(
            tmp, records=sizes["records"], fsync_records=sizes["fsync_records"],
            group=args.group, rounds=args.rounds,
        )
        verify = bench_verify(tmp, records=sizes["verify"], rounds=args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = {
        "benchmark": "ledger",
        "quick": args.quick,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "append": append,
        "verify": verify,
        "goals": {
            "group_commit_ratio>=0.5": append["group_commit_ratio"] >= 0.5,
            "verify_records_per_s>=300000": verify["verify_records_per_s"] >= 300_000,
        },
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n")
    a, v = append, verify
    print(f"ledger append ({a['records']} records, {a['bytes_per_record']} B, commit every "
          f"{a['group_size']}):")
    print(f"  group commit        {a['group_commit_records_per_s']:>9}/s  "
          f"{a['group_commit_ratio']:.2f}x plain append+fsync per group (goal >= 0.5x)")
    print(f"                                   {a['group_commit_ratio_vs_unsynced_plain']:.3f}x "
          f"plain append without fsync ({a['plain_append_no_fsync_records_per_s']}/s)")
    print(f"  append, no commit   {a['append_without_commit_records_per_s']:>9}/s  "
          f"{a['append_without_commit_ratio_vs_unsynced_plain']:.3f}x plain append without fsync")
    print(f"  append_many/turn    {a['append_many_per_group_records_per_s']:>9}/s  "
          f"{a['append_many_ratio']:.2f}x plain append+fsync per group")
    print(f"  fsync per record    {a['fsync_per_record_records_per_s']:>9}/s  "
          f"{a['fsync_per_record_ratio']:.2f}x plain append+fsync per record")
    print(f"ledger verify ({v['records']} records, {v['file_mb']} MB):")
    print(f"  verify (CPU time)   {v['verify_records_per_cpu_s']:>9}/s  per CPU-second, "
          "independent of other load on the machine")
    print(f"  verify              {v['verify_records_per_s']:>9}/s  (goal >= 300000/s; "
          f"{v['verify_ratio_to_sha256_per_line']:.2f}x hashing each line alone, "
          f"{v['sha256_per_line_records_per_s']}/s)")
    print(f"  records() parsed    {v['records_iter_parsed_records_per_s']:>9}/s")
    print(f"summary: {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
