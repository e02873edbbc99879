"""Per-turn cost of the governed turn loop on the offline model, with full persistence.

Measures, in one run:
- whole turns through `HRM.turn` (p50/p95 over N turns, default 2000; --quick 300);
- the baseline the issue names: the same offline-adapter calls made bare (the messages and
  system prompt each turn sent, recorded during the run) plus the same ledger records (read
  back from the run's own ledgers) appended directly with the same durability policy, in the
  same batches (records one `append_many` wrote share a timestamp);
- the kernel's own cost = turn − baseline, and the ratio turn / baseline;
- the SQLite statements a turn runs, done directly: a second, untimed run of the same turns
  records every statement with its parameters (BEGIN, SAVEPOINT and COMMIT included), then
  they are replayed turn by turn on a copy of that database taken before its first measured
  turn, on a plain connection with the same pragmas. Added to the baseline, this gives the
  kernel's cost on top of all its I/O (adapter, ledgers and SQLite), the issue's "(the
  kernel's own cost on top of its I/O)" read literally;
- cold start of `hrm turn` as a process, as a ratio to `python -c pass`.

Writes bench/out/turn.json.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"

INPUTS = (
    "How do I rename a git branch?",
    "What should we check first for the billing launch?",
    "Write the migration step for the invoices table",
    "I prefer short answers with examples",
    "Why does the test suite fail on CI but not locally?",
    "Summarise what we decided about the cache layer",
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


Batch = tuple[str, list[tuple[str, dict]]]
"""One `append_many` call to replay: the ledger's name and its (kind, data) records."""


def _open_warm(home: Path) -> Any:
    from dataclasses import replace

    from hrm.config import load_config
    from hrm.home import HRMHome
    from hrm.pipeline import HRM

    # One session of n turns spends ~600 tokens a turn: raise the session's token ceiling so
    # every measured turn is a real model call, not a refusal by the budget.
    config = replace(load_config(HRMHome.resolve(home)).config, stack_token_budget=10**9)
    hrm = HRM.open(home, "ADMIN", "offline", config=config)
    for text in INPUTS * 3:  # warm caches, create the problem and patterns
        hrm.turn(text)
    return hrm


Call = tuple[list[Any], str]
"""One adapter call to replay: the messages and the system prompt the turn sent."""


def run_turns(home: Path, n: int) -> tuple[list[float], list[list[Batch]], list[Call]]:
    hrm = _open_warm(home)
    start_seq = {name: (ledger.last().seq if ledger.last() else 0)
                 for name, ledger in _ledgers(hrm).items()}
    calls: list[Call] = []
    adapter = hrm.stack.gateway.adapter
    real_chat = adapter.chat

    def recording_chat(messages: list[Any], system: str, config: Any = None) -> Any:
        calls.append((list(messages), system))
        return real_chat(messages, system, config)

    adapter.chat = recording_chat  # one list append a call: within the noise of a turn
    times: list[float] = []
    failed = 0
    for i in range(n):
        t0 = time.perf_counter()
        result = hrm.turn(INPUTS[i % len(INPUTS)])
        times.append((time.perf_counter() - t0) * 1000)
        failed += result.decision.evaluation.get("success") is not True
    if failed:
        raise SystemExit(f"{failed} of {n} measured turns failed: the figures would not be "
                         "those of real turns")
    if len(calls) != n:
        raise SystemExit(f"{len(calls)} adapter calls in {n} turns: the baseline would not "
                         "replay the same calls")
    hrm.close()
    # The records the turns wrote, per ledger, to replay in the baseline.
    from hrm.storage.ledger import Ledger

    per_turn: list[list[Batch]] = [[] for _ in range(n)]
    paths = {"decision": home / "HO2/ledger/ADMIN/workorder.jsonl",
             "execution": home / "HO1/ledger/ADMIN/worker.jsonl",
             "episodic": home / "HO2/ledger/ADMIN/episodic.jsonl"}
    for name, path in paths.items():
        with Ledger(path) as ledger:
            records = [r for r in ledger.records(start_seq=start_seq[name] + 1)]
        bucket = max(1, len(records) // n)
        last_ts = None
        for i, rec in enumerate(records):
            turn = per_turn[min(n - 1, i // bucket)]
            if rec.ts == last_ts and turn and turn[-1][0] == name:
                turn[-1][1].append((rec.kind, rec.data))  # same append_many call
            else:
                turn.append((name, [(rec.kind, rec.data)]))
            last_ts = rec.ts
    return times, per_turn, calls


Statement = tuple[bool, str, Any]
"""One SQLite call to replay: (executemany?, sql, parameters)."""


class _RecordingConnection:
    """Stands in for the stack's sqlite3 connection and notes every statement it is given."""

    def __init__(self, conn: sqlite3.Connection, sink: list[Statement]) -> None:
        self._conn = conn
        self.sink = sink

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        self.sink.append((False, sql, params))
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        rows = list(rows)
        self.sink.append((True, sql, rows))
        return self._conn.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def capture_sql(home: Path, n: int, snapshot: Path) -> list[list[Statement]]:
    """Run the same n turns untimed in `home`; return each turn's SQLite statements.

    `snapshot` receives a copy of the database as it was before the first of them.
    """
    hrm = _open_warm(home)
    db = hrm.db
    with sqlite3.connect(db.path) as source, sqlite3.connect(snapshot) as target:
        source.backup(target)
    per_turn: list[list[Statement]] = []
    real = db._conn
    recorder = _RecordingConnection(real, [])
    db._conn = recorder
    try:
        for i in range(n):
            recorder.sink = []
            per_turn.append(recorder.sink)
            hrm.turn(INPUTS[i % len(INPUTS)])
    finally:
        db._conn = real
        hrm.close()
    return per_turn


def run_sql_baseline(per_turn: list[list[Statement]], snapshot: Path) -> list[float]:
    """Each turn's statements replayed directly, in the same transactions, on `snapshot`.

    The stack checkpoints its WAL off the turn (D25); so does this replay, between turns.
    """
    conn = sqlite3.connect(snapshot, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    for pragma in ("busy_timeout = 5000", "journal_mode = WAL", "synchronous = NORMAL",
                   "foreign_keys = ON", "wal_autocheckpoint = 0"):
        conn.execute(f"PRAGMA {pragma}")
    times: list[float] = []
    try:
        for i, statements in enumerate(per_turn):
            t0 = time.perf_counter()
            for many, sql, params in statements:
                if many:
                    conn.executemany(sql, params)
                else:
                    conn.execute(sql, params).fetchall()
            times.append((time.perf_counter() - t0) * 1000)
            if i % 16 == 15:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    finally:
        conn.close()
    return times


def _ledgers(hrm: object) -> dict[str, object]:
    stack = hrm.stack  # type: ignore[attr-defined]
    return {"decision": stack.decision_ledger, "execution": stack.execution_ledger,
            "episodic": stack.bus.episodic._ledger if hasattr(stack.bus.episodic, "_ledger")
            else stack.decision_ledger}


def run_baseline(per_turn: list[list[Batch]], calls: list[Call]) -> list[float]:
    from hrm.config import LLMConfig
    from hrm.llm import OfflineAdapter
    from hrm.storage.ledger import Ledger

    adapter = OfflineAdapter(LLMConfig(provider="offline"))
    with tempfile.TemporaryDirectory() as tmp:
        ledgers = {name: Ledger(Path(tmp) / f"{name}.jsonl", durability="group")
                   for name in ("decision", "execution", "episodic")}
        times: list[float] = []
        for (messages, system), records in zip(calls, per_turn, strict=True):
            t0 = time.perf_counter()
            adapter.chat(messages, system)
            for name, batch in records:
                ledgers[name].append_many(batch)
            times.append((time.perf_counter() - t0) * 1000)
        for ledger in ledgers.values():
            ledger.close()
    return times


def cold_start(runs: int) -> dict[str, float]:
    hrm_bin = str(Path(sys.executable).with_name("hrm"))
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HRM_HOME": tmp, "HRM_PROVIDER": "offline", "PATH": "/usr/bin:/bin"}
        subprocess.run([hrm_bin, "turn", "warm up", "--provider", "offline"], env=env,
                       capture_output=True, check=True)
        turn_times, pass_times = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([hrm_bin, "turn", "hello", "--provider", "offline"], env=env,
                           capture_output=True, check=True)
            turn_times.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=True)
            pass_times.append((time.perf_counter() - t0) * 1000)
    return {"hrm_turn_ms": statistics.median(turn_times),
            "python_pass_ms": statistics.median(pass_times),
            "ratio": statistics.median(turn_times) / statistics.median(pass_times)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 300 if args.quick else 2000
    with tempfile.TemporaryDirectory() as tmp:
        turns, per_turn, calls = run_turns(Path(tmp) / "home", n)
    base = run_baseline(per_turn, calls)
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = Path(tmp) / "snapshot.db"
        statements = capture_sql(Path(tmp) / "home", n, snapshot)
        sql = run_sql_baseline(statements, snapshot)
    all_io = [b + q for b, q in zip(base, sql, strict=True)]
    t50, t95, b50, b95 = pct(turns, 0.5), pct(turns, 0.95), pct(base, 0.5), pct(base, 0.95)
    s50, a50 = pct(sql, 0.5), pct(all_io, 0.5)
    per_turn_sql = sum(len(t) for t in statements) / n
    commits = sum(1 for t in statements for _, q, _ in t if q == "COMMIT") / n
    cold = cold_start(3 if args.quick else 7)
    result = {
        "turns": n,
        "turn_p50_ms": round(t50, 3), "turn_p95_ms": round(t95, 3),
        "baseline_p50_ms": round(b50, 3), "baseline_p95_ms": round(b95, 3),
        "kernel_overhead_p50_ms": round(t50 - b50, 3),
        "ratio_p50": round(t50 / b50, 2),
        "records_per_turn": round(sum(len(b) for r in per_turn for _, b in r) / n, 1),
        "appends_per_turn": round(sum(len(r) for r in per_turn) / n, 1),
        "sql_statements_per_turn": round(per_turn_sql, 1),
        "sql_commits_per_turn": round(commits, 2),
        "sql_direct_p50_ms": round(s50, 3),
        "all_io_baseline_p50_ms": round(a50, 3),
        "kernel_overhead_over_all_io_p50_ms": round(t50 - a50, 3),
        "cold_start": {k: round(v, 1) for k, v in cold.items()},
        "goals": {"kernel_overhead_p50_ms": 1.0, "turn_p50_ms": 3.0},
    }
    print(f"turns: {n}; records written per turn: {result['records_per_turn']} "
          f"in {result['appends_per_turn']} ledger appends; {per_turn_sql:.1f} SQLite "
          f"statements in {commits:.2f} transactions")
    print(f"whole turn        p50 {t50:7.2f} ms  p95 {t95:7.2f} ms   (goal p50 ≤ 3 ms)")
    print(f"baseline (I/O)    p50 {b50:7.2f} ms  p95 {b95:7.2f} ms   "
          "(the same adapter calls + ledger appends, done directly)")
    print(f"kernel overhead   p50 {t50 - b50:7.2f} ms   ratio turn/baseline {t50 / b50:.2f}× "
          "(goal overhead ≤ 1 ms)")
    print(f"SQLite, directly  p50 {s50:7.2f} ms   (the same statements on a plain connection)")
    print(f"overhead on top of all I/O (adapter + ledgers + SQLite) p50 {t50 - a50:7.2f} ms   "
          f"ratio {t50 / a50:.2f}×")
    print(f"cold start `hrm turn`: {cold['hrm_turn_ms']:.0f} ms = {cold['ratio']:.1f}× "
          f"`python -c pass` ({cold['python_pass_ms']:.0f} ms)")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "turn.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
