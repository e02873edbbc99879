"""What scrubbing costs a turn: the scrubber at this checkout against one at another revision.

A turn writes a handful of ledger records (the decision record, its events, work orders,
episodes) and the ledger scrubs every string in them (`hrm.storage._ledger_format._prepare`).
This benchmark runs `--turns` offline turns in a throwaway home, reads back every record the
turns wrote, and scrubs each turn's records with both scrubbers, alternately, the memo of short
texts emptied before each turn (a turn's words are new to the process; its keys and kinds come
back and are memoised within the turn, as in the ledger), and again with the memo kept across
turns, as a long-running process keeps it. It reports the time per turn, and, with
``--callgrind``, the instructions per turn (empty memo) under valgrind (machine-independent).

The other scrubber is read from git (``--against``, default the commit before the secret
families table): its `scrubbing.py` is loaded as a module of its own beside today's.

Writes bench/out/scrub.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from conversation import conversation

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
RECORDS = OUT / "scrub_records.json"
"""The captured records, for the callgrind runs (each scrubs the same ones)."""
DEFAULT_AGAINST = "0c14ac3"
"""The last commit before the families table (issue 32's scrubber)."""


def turn_records(turns: int) -> list[list[Any]]:
    """Run `turns` offline turns; return, per turn, the `data` of every record it appended."""
    from hrm.home import HRMHome
    from hrm.pipeline import HRM

    home = Path(tempfile.mkdtemp(prefix="hrm-bench-scrub-"))
    try:
        hrm = HRM.open(home, "ADMIN", "offline")
        sizes: list[int] = []
        for text in conversation(3, turns):
            hrm.turn(text)
            sizes.append(sum(1 for _ in _records(HRMHome(home))))
        hrm.close()
        records = list(_records(HRMHome(home)))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    per_turn: list[list[Any]] = []
    start = 0
    for end in sizes:
        per_turn.append(records[start:end])
        start = end
    return per_turn


def _records(home: Any) -> Any:
    for path in home.all_ledgers():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield json.loads(line).get("data")


def load_scrubber(revision: str) -> ModuleType:
    """`hrm.scrubbing` as it was at `revision`, as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{revision}:src/hrm/scrubbing.py"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    directory = Path(tempfile.mkdtemp(prefix="hrm-old-scrub-"))
    path = directory / "old_scrubbing.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_scrubbing", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scrub_turns(module: ModuleType, per_turn: list[list[Any]]) -> list[float]:
    """Seconds per turn to scrub its records, the memo emptied before each turn."""
    times: list[float] = []
    for records in per_turn:
        module.SCRUBBED.clear()
        started = time.perf_counter()
        for record in records:
            module.scrub(record)
        times.append(time.perf_counter() - started)
    return times


def scrub_steady(module: ModuleType, per_turn: list[list[Any]]) -> float:
    """Seconds per turn with the memo kept across turns, as a long-running process keeps it."""
    module.SCRUBBED.clear()
    started = time.perf_counter()
    for records in per_turn:
        for record in records:
            module.scrub(record)
    return (time.perf_counter() - started) / max(1, len(per_turn))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", default=DEFAULT_AGAINST)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--callgrind", action="store_true",
                        help="count instructions per turn under valgrind (slow)")
    parser.add_argument("--only", choices=("new", "old", "none"),
                        help=argparse.SUPPRESS)  # one side, for the callgrind runs
    args = parser.parse_args()
    turns = 60 if args.quick else args.turns
    if args.only:
        _one_side(args.only, args.against)
        return
    import hrm.scrubbing as new

    old = load_scrubber(args.against)
    per_turn = turn_records(turns)
    OUT.mkdir(parents=True, exist_ok=True)
    RECORDS.write_text(json.dumps(per_turn), encoding="utf-8")
    records = sum(len(r) for r in per_turn)
    rows: dict[str, list[float]] = {"new": [], "old": [], "new_steady": [], "old_steady": []}
    for _ in range(args.rounds):  # alternate, so both see the same machine
        rows["old"].append(statistics.median(scrub_turns(old, per_turn)))
        rows["new"].append(statistics.median(scrub_turns(new, per_turn)))
        rows["old_steady"].append(scrub_steady(old, per_turn))
        rows["new_steady"].append(scrub_steady(new, per_turn))
    result: dict[str, Any] = {
        "turns": turns,
        "records_per_turn": records / max(1, turns),
        "old_revision": args.against,
        "old_us_per_turn_p50": statistics.median(rows["old"]) * 1e6,
        "new_us_per_turn_p50": statistics.median(rows["new"]) * 1e6,
        "old_us_per_turn_memo_kept": statistics.median(rows["old_steady"]) * 1e6,
        "new_us_per_turn_memo_kept": statistics.median(rows["new_steady"]) * 1e6,
    }
    if args.callgrind:
        result.update(_callgrind(turns, args.against))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "scrub.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for key, value in result.items():
        print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")


def _one_side(side: str, against: str) -> None:
    """Load the captured records and the scrubber of one side; scrub them unless ``none``."""
    per_turn = json.loads(RECORDS.read_text(encoding="utf-8"))
    module = load_scrubber(against) if side == "old" else __import__("hrm.scrubbing").scrubbing
    if side != "none":
        scrub_turns(module, per_turn)


def _callgrind(turns: int, against: str) -> dict[str, float]:
    """Instructions per turn for each scrubber: (run with it − run without) / turns.

    Each side is its own process under valgrind that loads the captured records and both
    scrubber modules, so the difference is the scrubbing alone.
    """
    counts: dict[str, int] = {}
    for side in ("none", "old", "new"):
        out = Path(tempfile.mkdtemp()) / "cg.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, __file__, "--only", side, "--against", against],
            cwd=ROOT / "bench", check=True, capture_output=True,
        )
        summary = next(
            line for line in out.read_text().splitlines() if line.startswith("summary:")
        )
        counts[side] = int(summary.split()[1])
    return {
        "old_instructions_per_turn": (counts["old"] - counts["none"]) / turns,
        "new_instructions_per_turn": (counts["new"] - counts["none"]) / turns,
    }


if __name__ == "__main__":
    main()
