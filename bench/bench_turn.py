"""Per-turn cost of the governed turn loop on the offline model, with full persistence.

Measures, in one run:
- whole turns through `HRM.turn` (p50/p95 over N turns, default 2000; --quick 300);
- the baseline the issue names: the same offline-adapter calls made bare (the messages and
  system prompt each turn sent) plus the same ledger records appended directly, in the same
  `append_many` batches, with the same durability policy;
- the kernel's own cost = turn − baseline, and the ratio turn / baseline; also paired block by
  block (the median over blocks of each block's turn p50 minus its own replays' p50);
- the SQLite statements a turn runs, done directly on a copy of the database (with their
  parameters, BEGIN, SAVEPOINT and COMMIT included, and the same pragmas). Added to the
  baseline, this gives the kernel's cost on top of all its I/O (adapter, ledgers and SQLite),
  the issue's "(the kernel's own cost on top of its I/O)" read literally. Replayed back to
  back, the statements run with SQLite's code and pages warm in the CPU's caches, in under half
  the time they take inside turns, whose own work evicts them; so the time inside sqlite3's
  calls as the capture run's turns made them is reported too ("SQLite in turns");
- cold start of `hrm turn` as a process, as a ratio to `python -c pass`.

The messages: a conversation of six kinds of message whose subjects are drawn anew each
time (`conversation.py`), so that almost every message is new to the process, as a person's
are. (Until the ninth session six fixed messages were said in a loop, and every cache keyed by
text hit on every turn: those figures flattered the kernel by about 0.4 ms a turn.)

How: a first, untimed run of N turns records, per turn, every adapter call, every ledger
`append_many` call and every SQLite statement. A second home then runs N turns of the same
kinds (their words drawn with another seed, so the capture run warmed no cache for them)
while the three replays are timed **interleaved** with them, block by block (`--block`, 50
turns): turns 1–50, their baseline, their SQLite; turns 51–100, … The process's text caches
are emptied before the second run, so the replayed messages are as new to the adapter and the
ledgers as the turns' own are. This machine is a VM whose speed drifts by tens of percent
over a minute; timing the turns and their baseline minutes apart made the difference between
them partly a difference between two moments. Interleaved, each block's turns and replays see
the same machine.

Writes bench/out/turn.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conversation import WARM_UP, conversation

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
CAPTURE_SEED, MEASURE_SEED = 1, 2

PRAGMAS = ("busy_timeout = 5000", "journal_mode = WAL", "synchronous = NORMAL",
           "foreign_keys = ON", "wal_autocheckpoint = 0")
"""What the stack's connection sets (its checkpoints run off the turn, D25: so do the replay's)."""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


Batch = tuple[str, list[tuple[str, dict]]]
"""One `append_many` call to replay: the ledger's name and its (kind, data) records."""
Call = tuple[list[Any], str]
"""One adapter call to replay: the messages and the system prompt the turn sent."""
Statement = tuple[bool, str, Any]
"""One SQLite call to replay: (executemany?, sql, parameters)."""


@dataclass
class Capture:
    """What each of the N turns did, recorded during the untimed run."""

    calls: list[list[Call]] = field(default_factory=list)
    batches: list[list[Batch]] = field(default_factory=list)
    statements: list[list[Statement]] = field(default_factory=list)
    sql_in_turn_ms: list[float] = field(default_factory=list)
    """Per turn, the time spent inside sqlite3's calls as the turn made them (its caches
    as cold as the turn left them; the replay runs statements back to back, warm)."""


AGENT_CLASS = "ADMIN"
"""The stack the turns run on (``--agent-class``): ADMIN by default, as ``hrm turn`` opens;
``RESIDENT:<name>`` is what `hrm serve` opens for each key, whose attention differs."""


def _open_warm(home: Path) -> Any:
    from dataclasses import replace

    from hrm.config import load_config
    from hrm.home import HRMHome
    from hrm.pipeline import HRM

    # One session of n turns spends ~600 tokens a turn: raise the session's token ceiling so
    # every measured turn is a real model call, not a refusal by the budget.
    config = replace(load_config(HRMHome.resolve(home)).config, stack_token_budget=10**9)
    hrm = HRM.open(home, AGENT_CLASS, "offline", config=config)
    for text in WARM_UP * 3:  # create the problem and the patterns
        hrm.turn(text)
    return hrm


def _forget_texts() -> None:
    """Empty the process's caches keyed by text (scrubbed strings, stems, estimates, keywords).

    The replays say the capture run's messages again; without this, every cache the capture
    run filled would serve them, and the baseline would be cheaper than the I/O the turns do.
    """
    import hrm.llm.types
    import hrm.scrubbing

    hrm.scrubbing.SCRUBBED.clear()
    hrm.llm.types._line_counts_memo.clear()
    for name, module in list(sys.modules.items()):
        if name == "hrm" or name.startswith("hrm."):
            for value in list(vars(module).values()):
                if hasattr(value, "cache_info") and hasattr(value, "cache_clear"):
                    value.cache_clear()


def _ledgers(hrm: Any) -> dict[str, Any]:
    stack = hrm.stack
    found = {"decision": stack.decision_ledger, "execution": stack.execution_ledger,
             "episodic": stack.bus.episodic.ledger}
    journal = getattr(hrm.db, "journal", None)
    if journal is not None:  # the memory journal's appends are ledger I/O like the others
        found["memory"] = journal._open_ledger()
    return found


class _Rows:
    """A cursor whose rows were fetched inside the timed call (`Database` reads them after)."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def fetchall(self) -> list[Any]:
        return self._rows

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def __iter__(self) -> Any:
        return iter(self._rows)


class _RecordingConnection:
    """Stands in for the stack's sqlite3 connection and notes every statement it is given."""

    def __init__(self, conn: sqlite3.Connection, sink: list[Statement]) -> None:
        self._conn = conn
        self.sink = sink
        self.elapsed = 0.0
        """Seconds inside sqlite3 since last reset (statement and its rows, not this wrapper)."""

    def execute(self, sql: str, params: Any = ()) -> _Rows:
        self.sink.append((False, sql, params))
        t0 = time.perf_counter()
        cursor = self._conn.execute(sql, params)
        rows = cursor.fetchall()
        self.elapsed += time.perf_counter() - t0
        return _Rows(rows, cursor.rowcount)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        rows = list(rows)
        self.sink.append((True, sql, rows))
        t0 = time.perf_counter()
        cursor = self._conn.executemany(sql, rows)
        self.elapsed += time.perf_counter() - t0
        return cursor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def capture(home: Path, n: int, snapshot: Path) -> Capture:
    """Run the n turns untimed in `home` and record what each one did.

    `snapshot` receives a copy of the database as it was before the first of them. Ledger
    records are kept as stored (a JSON round trip of what the turn handed to `append_many`).
    """
    hrm = _open_warm(home)
    with sqlite3.connect(hrm.db.path) as source, sqlite3.connect(snapshot) as target:
        source.backup(target)
    captured = Capture()
    adapter = hrm.stack.gateway.adapter
    real_chat = adapter.chat

    def recording_chat(messages: list[Any], system: str, config: Any = None) -> Any:
        captured.calls[-1].append((list(messages), system))
        return real_chat(messages, system, config)

    adapter.chat = recording_chat
    for name, ledger in _ledgers(hrm).items():
        ledger.append_many = _recording_append(ledger.append_many, name, captured)
    real_conn = hrm.db._conn
    recorder = _RecordingConnection(real_conn, [])
    hrm.db._conn = recorder
    failed = 0
    try:
        for text in conversation(CAPTURE_SEED, n):
            captured.calls.append([])
            captured.batches.append([])
            recorder.sink = []
            recorder.elapsed = 0.0
            captured.statements.append(recorder.sink)
            result = hrm.turn(text)
            captured.sql_in_turn_ms.append(recorder.elapsed * 1000)
            failed += not _succeeded(result)
    finally:
        hrm.db._conn = real_conn
        hrm.close()
    if failed:
        raise SystemExit(f"{failed} of {n} turns failed: the figures would not be those of "
                         "real turns")
    return captured


def _succeeded(result: Any) -> bool:
    """A routed turn succeeded; a preference-only message is answered by hrm itself (D58)."""
    return result.action == "remember" or result.decision.evaluation.get("success") is True


def _recording_append(append_many: Any, name: str, captured: Capture) -> Any:
    def recording(items: Any, **options: Any) -> Any:
        # options: the memory journal's ``scrubbed=True`` (it scrubbed its rows itself)
        if captured.batches:
            stored = json.loads(json.dumps([list(item) for item in items]))
            captured.batches[-1].append((name, [(kind, data) for kind, data in stored]))
        return append_many(items, **options)

    return recording


class _Replays:
    """The three baselines, each replaying the captured turns on its own target."""

    def __init__(self, tmp: Path, snapshot: Path, captured: Capture) -> None:
        from hrm.config import LLMConfig
        from hrm.llm import OfflineAdapter
        from hrm.storage.ledger import Ledger

        self.captured = captured
        self.adapter = OfflineAdapter(LLMConfig(provider="offline"))
        self.ledgers = {name: Ledger(tmp / f"{name}.jsonl", durability="group")
                        for name in ("decision", "execution", "episodic", "memory")}
        copy = tmp / "replay.db"
        shutil.copy(snapshot, copy)
        self.conn = sqlite3.connect(copy, isolation_level=None, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        for name in ("hrm_journal", "hrm_journal_set", "hrm_journal_gone"):
            # The memory journal's triggers run in the replay as in the turn; what the
            # journal then does with the rows is the kernel's (its append is replayed above).
            self.conn.create_function(name, -1, lambda *_: None)
        for pragma in PRAGMAS:
            self.conn.execute(f"PRAGMA {pragma}")

    def io(self, i: int) -> float:
        """Turn i's adapter calls and ledger appends, done directly; milliseconds."""
        t0 = time.perf_counter()
        for messages, system in self.captured.calls[i]:
            self.adapter.chat(messages, system)
        for name, batch in self.captured.batches[i]:
            # The journal's records were scrubbed before their append: replayed alike.
            self.ledgers[name].append_many(batch, scrubbed=name == "memory")
        return (time.perf_counter() - t0) * 1000

    def sql(self, i: int) -> float:
        """Turn i's SQLite statements, in the same transactions, on the copy; milliseconds."""
        conn = self.conn
        t0 = time.perf_counter()
        for many, sql, params in self.captured.statements[i]:
            if many:
                conn.executemany(sql, params)
            else:
                conn.execute(sql, params).fetchall()
        elapsed = (time.perf_counter() - t0) * 1000
        if i % 16 == 15:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        return elapsed

    def close(self) -> None:
        for ledger in self.ledgers.values():
            ledger.close()
        self.conn.close()


def measure(home: Path, tmp: Path, snapshot: Path, captured: Capture,
            block: int) -> tuple[list[float], list[float], list[float], list[bool]]:
    """Time the same turns in a second home, interleaved block by block with the replays.

    Also says, per turn, whether it was routed (not a preference-only message hrm answered
    itself, D58): the routed turns are the like-for-like figure with sessions before D58.
    """
    n = len(captured.calls)
    texts = conversation(MEASURE_SEED, n)
    _forget_texts()
    hrm = _open_warm(home)
    replays = _Replays(tmp, snapshot, captured)
    turns: list[float] = []
    io: list[float] = []
    sql: list[float] = []
    routed: list[bool] = []
    failed = 0
    try:
        for start in range(0, n, block):
            stop = min(n, start + block)
            for i in range(start, stop):
                t0 = time.perf_counter()
                result = hrm.turn(texts[i])
                turns.append((time.perf_counter() - t0) * 1000)
                failed += not _succeeded(result)
                routed.append(result.action != "remember")
            io += [replays.io(i) for i in range(start, stop)]
            sql += [replays.sql(i) for i in range(start, stop)]
    finally:
        replays.close()
        hrm.close()
    if failed:
        raise SystemExit(f"{failed} of {n} measured turns failed")
    return turns, io, sql, routed


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
    parser.add_argument("--turns", type=int, help="how many turns (default 2000; --quick 300)")
    parser.add_argument("--block", type=int, default=50,
                        help="turns per block of the interleaved measurement")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-start figure")
    parser.add_argument("--agent-class", default="ADMIN",
                        help="the stack to run the turns on (RESIDENT:<name>: a served stack)")
    args = parser.parse_args()
    global AGENT_CLASS
    AGENT_CLASS = args.agent_class
    n = args.turns or (300 if args.quick else 2000)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        snapshot = tmp / "snapshot.db"
        captured = capture(tmp / "capture", n, snapshot)
        turns, base, sql, routed = measure(tmp / "home", tmp, snapshot, captured,
                                           max(1, args.block))
    all_io = [b + q for b, q in zip(base, sql, strict=True)]
    t50, t95, b50, b95 = pct(turns, 0.5), pct(turns, 0.95), pct(base, 0.5), pct(base, 0.95)
    # Each block's turns against its own replays, then the median over blocks: what is left
    # when the machine's drift between blocks is taken out entirely.
    size = max(1, args.block)
    blocks = [(pct(turns[i:i + size], 0.5), pct(base[i:i + size], 0.5))
              for i in range(0, n, size)]
    paired = statistics.median(t - b for t, b in blocks)
    paired_ratio = statistics.median(t / b for t, b in blocks)
    s50, a50 = pct(sql, 0.5), pct(all_io, 0.5)
    situ50 = pct(captured.sql_in_turn_ms, 0.5)
    records = sum(len(b) for turn in captured.batches for _, b in turn) / n
    appends = sum(len(turn) for turn in captured.batches) / n
    per_turn_sql = sum(len(t) for t in captured.statements) / n
    commits = sum(1 for t in captured.statements for _, q, _ in t if q == "COMMIT") / n
    # Routed turns only (the turns the capture run also routed): like for like with the
    # sessions before D58, whose preference-only turns were routed too.
    kept = [i for i in range(n) if routed[i] and captured.calls[i]]
    r50 = pct([turns[i] for i in kept], 0.5) if kept else float("nan")
    rb50 = pct([base[i] for i in kept], 0.5) if kept else float("nan")
    cold = None if args.no_cold else cold_start(3 if args.quick else 7)
    result = {
        "turns": n,
        "agent_class": AGENT_CLASS,
        "interleaved_block": args.block,
        "turn_p50_ms": round(t50, 3), "turn_p95_ms": round(t95, 3),
        "baseline_p50_ms": round(b50, 3), "baseline_p95_ms": round(b95, 3),
        "kernel_overhead_p50_ms": round(t50 - b50, 3),
        "ratio_p50": round(t50 / b50, 2),
        "kernel_overhead_p50_ms_paired_by_block": round(paired, 3),
        "ratio_p50_paired_by_block": round(paired_ratio, 2),
        "records_per_turn": round(records, 1),
        "appends_per_turn": round(appends, 1),
        "sql_statements_per_turn": round(per_turn_sql, 1),
        "sql_commits_per_turn": round(commits, 2),
        "sql_direct_p50_ms": round(s50, 3),
        "sql_inside_turns_p50_ms": round(situ50, 3),
        "all_io_baseline_p50_ms": round(a50, 3),
        "kernel_overhead_over_all_io_p50_ms": round(t50 - a50, 3),
        "kernel_overhead_over_all_io_in_turns_p50_ms": round(t50 - b50 - situ50, 3),
        "routed_turns": len(kept),
        "routed_turn_p50_ms": round(r50, 3), "routed_baseline_p50_ms": round(rb50, 3),
        "routed_kernel_overhead_p50_ms": round(r50 - rb50, 3),
        "cold_start": None if cold is None else {k: round(v, 1) for k, v in cold.items()},
        "goals": {"kernel_overhead_p50_ms": 1.0, "turn_p50_ms": 3.0},
    }
    print(f"turns: {n}, timed in blocks of {args.block} interleaved with their replays; "
          f"records written per turn: {records:.1f} in {appends:.1f} ledger appends; "
          f"{per_turn_sql:.1f} SQLite statements in {commits:.2f} transactions")
    print(f"whole turn        p50 {t50:7.2f} ms  p95 {t95:7.2f} ms   (goal p50 ≤ 3 ms)")
    print(f"baseline (I/O)    p50 {b50:7.2f} ms  p95 {b95:7.2f} ms   "
          "(the same adapter calls + ledger appends, done directly)")
    print(f"kernel overhead   p50 {t50 - b50:7.2f} ms   ratio turn/baseline {t50 / b50:.2f}× "
          "(goal overhead ≤ 1 ms)")
    print(f"  paired by block   {paired:7.2f} ms   ratio {paired_ratio:.2f}× (median over blocks "
          "of each block's turns against its own replays)")
    print(f"SQLite, directly  p50 {s50:7.2f} ms   (the same statements on a plain connection, "
          "replayed back to back)")
    print(f"SQLite in turns   p50 {situ50:7.2f} ms   (inside sqlite3's calls as the untimed "
          "capture run's turns made them)")
    print(f"overhead on top of all I/O (adapter + ledgers + SQLite) p50 {t50 - a50:7.2f} ms   "
          f"ratio {t50 / a50:.2f}× (SQLite replayed); {t50 - b50 - situ50:.2f} ms (SQLite as in "
          "turns)")
    print(f"routed turns only ({len(kept)} of {n}; preference-only messages are answered by "
          f"hrm, D58): turn p50 {r50:.2f} ms, baseline {rb50:.2f} ms, kernel overhead "
          f"{r50 - rb50:.2f} ms")
    if cold is not None:
        print(f"cold start `hrm turn`: {cold['hrm_turn_ms']:.0f} ms = {cold['ratio']:.1f}× "
              f"`python -c pass` ({cold['python_pass_ms']:.0f} ms)")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "turn.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
