"""Cost that does not grow with history (issue 35, items 1 and 2): homes of 1k, 10k and 50k turns.

A daily assistant accumulates turns; what one turn costs, and what opening a stack for a new
session costs, should not grow with them. The homes (`history_homes.py`) are built once through
the real facade and cached under ``bench/out/history/``; building 50,000 turns takes a while
and resumes where it stopped. Each is measured on a copy, so the cache stays as built.

* **Per turn**: the homes' copies are opened side by side (the session continues: the clock is
  20 seconds past each home's last turn) and run the same new messages in blocks that alternate
  between them, so a drifting machine slows every size alike: CPU (``process_time``), bytes
  handed to ``write`` and bytes the home grew, per turn. Instructions per turn come from a
  worker process per size under callgrind, counting only the measured turns.
* **Session open**: ``HRM.open`` after more than 30 idle minutes (the clock is injected), so
  a new session starts and reads what came before; CPU and wall time in a fresh process per
  open, the sizes alternating, twice: with the pipeline's modules imported first and the rest
  of what the open imports inside the figure ("open CPU ms"), and with every module a turn
  imports done first, as a child of the resident process has them (D403) — the open's own
  work ("open, imported"); instructions of the first under callgrind where the open is short
  enough to run there.

* **Pages** (``--pages``): which SQLite pages a turn dirties, by table or index — the WAL
  frames each commit appends, read from their headers while the stack's checkpoints are held
  off, named through SQLite's ``dbstat`` (D332, D333).

Every figure is printed as a ratio to the smallest size. Goals (issue 35): opening at 50k turns
≤ 1.2× opening at 1k, and ≤ 100 ms CPU (checked on the open's own work; the figure with its
imports is printed beside it); a turn at 50k ≤ 1.1× a turn at 1k.

    .venv/bin/python bench/bench_history.py [--quick] [--sizes 1000,10000,50000] [--build-only]
                                            [--pages]

``--quick`` measures homes of 1k, 2.5k and 5k turns (built in a few minutes). Writes
bench/out/history.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from conversation import conversation
from costs import (
    ROOT,
    bench_config,
    callgrind_between_marks,
    io_now,
    mark,
    median_ratio,
    tree_bytes,
)
from history_homes import Schedule, cache_key, home_for

OUT = ROOT / "bench" / "out" / "history.json"
SIZES = (1000, 10000, 50000)
QUICK_SIZES = (1000, 2500, 5000)
GOAL_OPEN_RATIO = 1.2
GOAL_OPEN_CPU_MS = 100.0
GOAL_TURN_RATIO = 1.1
CALLGRIND_SLOWDOWN = 80
"""How much slower a process runs under callgrind here, to judge what is worth running there."""


def _open(home: Path, at: datetime) -> Any:
    from hrm.pipeline import HRM

    return HRM.open(home, "ADMIN", "offline", config=bench_config(home), clock=lambda: at)


class _Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at


@dataclass
class Opened:
    """One home's copy, open, with its own clock moving 20 seconds a turn."""

    size: int
    home: Path
    clock: _Clock
    hrm: Any
    open_cpu: float
    cpu: list[float] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    wchar: list[int] = field(default_factory=list)
    grown: list[int] = field(default_factory=list)

    def turn(self, text: str) -> None:
        self.clock.at += timedelta(seconds=20)
        result = self.hrm.turn(text)
        if not (result.action == "remember" or result.decision.evaluation.get("success")):
            raise SystemExit(f"a turn failed at {self.size} turns of history: {text!r}")


def _last_moment(size: int) -> datetime:
    return Schedule.moment(size - 1)


def open_copy(size: int, source: Path, target: Path) -> Opened:
    from hrm.pipeline import HRM

    shutil.copytree(source, target)
    clock = _Clock(_last_moment(size) + timedelta(seconds=20))
    cpu = time.process_time()
    hrm = HRM.open(target, "ADMIN", "offline", config=bench_config(target), clock=clock.now)
    return Opened(size, target, clock, hrm, time.process_time() - cpu)


def per_turn(homes: dict[int, Path], tmp: Path, blocks: int, size: int) -> dict[int, Opened]:
    """Every size's copy, open side by side, running the same messages in alternating blocks."""
    import hrm.pipeline  # noqa: F401  (imports before the first open is timed)

    opened = {n: open_copy(n, home, tmp / f"turns-{n}") for n, home in homes.items()}
    texts = conversation(36, 20 + blocks * size)
    try:
        for one in opened.values():
            for text in texts[:20]:
                one.turn(text)
        for b in range(blocks):
            chunk = texts[20 + b * size:20 + (b + 1) * size]
            order = list(opened.values())
            order = order[b % len(order):] + order[:b % len(order)]
            for one in order:
                grown, io = tree_bytes(one.home), io_now()
                cpu = time.process_time()
                for text in chunk:
                    one.turn(text)
                one.cpu.append(time.process_time() - cpu)
                one.wchar.append((io_now() - io).wchar)
                one.grown.append(tree_bytes(one.home) - grown)
                one.turns.append(len(chunk))
    finally:
        for one in opened.values():
            one.hrm.close()
    return opened


def open_worker(home: Path, at: str, imported: bool) -> int:
    """Open `home` at `at` (a new session): print the open's CPU and wall seconds as JSON.

    With `imported`, every module a turn imports is imported first (as the resident process
    has them, D403), so the figure is the open's own work; without, the modules the open
    imports on its way (~2/3 of it) are in it.
    """
    import hrm.pipeline
    import hrm.stacks.factory
    import hrm.stacks.lifecycle  # noqa: F401  (what a new session's open imports, done first)

    if imported:
        from hrm.resident.server import preload

        preload()

    moment = datetime.fromisoformat(at)
    mark()
    wall, cpu = time.perf_counter(), time.process_time()
    opened = _open(home, moment)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    mark()
    session = opened.session_id
    opened.close()
    print(json.dumps({"cpu": cpu, "wall": wall, "session": session}))
    return 0


def turn_worker(home: Path, size: int, warm: int, turns: int) -> int:
    """Continue `home`'s session for `warm` turns, then `turns` turns between two marks."""
    from hrm.pipeline import HRM

    clock = _Clock(_last_moment(size) + timedelta(seconds=20))
    hrm = HRM.open(home, "ADMIN", "offline", config=bench_config(home), clock=clock.now)
    texts = conversation(37, warm + turns)
    for i, text in enumerate(texts):
        if i == warm:
            mark()
        clock.at += timedelta(seconds=20)
        hrm.turn(text)
    mark()
    hrm.close()
    return 0


def _open_in_child(home: Path, at: datetime, env: dict[str, str], size: int,
                   imported: bool = False) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--open-worker", str(home), "--at", at.isoformat()]
        + (["--imported"] if imported else []),
        capture_output=True, text=True, check=False, env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"opening the home of {size} turns failed: {proc.stderr[-2000:]}")
    found: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def session_opens(homes: dict[int, Path], tmp: Path,
                  repeats: int) -> dict[int, list[dict[str, Any]]]:
    """Each size's open in a fresh process, `repeats` times, the sizes alternating."""
    copies = {}
    for n, home in homes.items():
        copies[n] = tmp / f"open-{n}"
        shutil.copytree(home, copies[n])
    # A user's installed hrm has its bytecode compiled. With PYTHONDONTWRITEBYTECODE set (as
    # in some development shells), a module edited since its .pyc was written is compiled
    # again in every fresh process, which once added ~80 ms to this figure; so the workers
    # may write bytecode, and an untimed open on a spare copy writes it first.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    smallest = min(homes)
    spare = tmp / "open-warm"
    shutil.copytree(homes[smallest], spare)
    _open_in_child(spare, _last_moment(smallest) + timedelta(hours=1), env, smallest)
    shutil.rmtree(spare)
    found: dict[int, list[dict[str, float]]] = {n: [] for n in homes}
    sizes = list(homes)
    for r in range(repeats):
        for n in sizes[r % len(sizes):] + sizes[:r % len(sizes)]:
            for second, imported in enumerate((r % 2 == 1, r % 2 == 0)):
                hours = 2 * r + 1 + second  # idle > 30 min: each open a new session
                at = _last_moment(n) + timedelta(hours=hours)
                found[n].append({**_open_in_child(copies[n], at, env, n, imported),
                                 "imported": imported})
    for n, runs in found.items():
        if len({run["session"] for run in runs}) != len(runs):
            raise SystemExit(f"an open of the home of {n} turns continued a session: the "
                             "figure would not be a new session's")
    return found


def instructions(homes: dict[int, Path], tmp: Path, opened: dict[int, Opened],
                 opens: dict[int, list[dict[str, float]]], *, turns: int,
                 budget_s: float) -> dict[int, dict[str, Any]]:
    """Per size, instructions per turn and per session open under callgrind, where they fit
    in `budget_s` seconds of callgrind each (estimated from the CPU measured above)."""
    found: dict[int, dict[str, Any]] = {}
    for n, home in homes.items():
        one = opened[n]
        turn_cpu = sum(one.cpu) / sum(one.turns)
        row: dict[str, Any] = {}
        cost = (one.open_cpu + (5 + turns) * turn_cpu + 1.0) * CALLGRIND_SLOWDOWN
        if cost <= budget_s:
            copy = tmp / f"callgrind-turns-{n}"
            shutil.copytree(home, copy)
            count = callgrind_between_marks(
                [sys.executable, __file__, "--turn-worker", str(copy), "--size", str(n),
                 "--warm", "5", "--turns", str(turns)])
            row["turn"] = None if count is None else count / turns
            shutil.rmtree(copy, ignore_errors=True)
        else:
            row["turn"] = f"skipped: ~{cost / 60:.0f} min under callgrind"
        open_cpu = statistics.median(o["cpu"] for o in opens[n] if not o["imported"])
        cost = (open_cpu + 1.0) * CALLGRIND_SLOWDOWN
        if cost <= budget_s:
            copy = tmp / f"callgrind-open-{n}"
            shutil.copytree(home, copy)
            at = _last_moment(n) + timedelta(hours=1)
            row["open"] = callgrind_between_marks(
                [sys.executable, __file__, "--open-worker", str(copy), "--at", at.isoformat()])
            shutil.rmtree(copy, ignore_errors=True)
        else:
            row["open"] = f"skipped: ~{cost / 60:.0f} min under callgrind"
        found[n] = row
    return found


_WAL_HEADER, _FRAME_HEADER = 32, 24


def wal_pages(size: int, source: Path, target: Path, turns: int) -> dict[str, Any]:
    """WAL frames a turn appends to memory.db's log, by the table or index each page is in.

    A copy of the home continues its session for 10 turns, then `turns` more are counted:
    after each, the frames appended since the last are read from the log (page number and
    salt in each frame's header). The stack's own checkpoints are held off meanwhile, so the
    log only grows; should another connection restart it, its new salt says so.
    """
    from hrm.home import HRMHome
    from hrm.pipeline import HRM
    from hrm.storage import sqlite as sqlite_module

    shutil.copytree(source, target)
    clock = _Clock(_last_moment(size) + timedelta(seconds=20))
    hrm = HRM.open(target, "ADMIN", "offline", config=bench_config(target), clock=clock.now)
    database = HRMHome.resolve(target).stack_memory_db("ADMIN")  # the stack's own (D320)
    wal = database.with_name(database.name + "-wal")
    frames: dict[int, int] = {}
    held = sqlite_module.Database.checkpoint
    try:
        texts = conversation(38, 10 + turns)
        for text in texts[:10]:
            clock.at += timedelta(seconds=20)
            hrm.turn(text)
        sqlite_module.Database.checkpoint = lambda self, **_: False
        log = wal.read_bytes() if wal.exists() else b""
        seen = (_frames_end(log), log[16:24])
        for text in texts[10:]:
            clock.at += timedelta(seconds=20)
            hrm.turn(text)
            seen = _count_frames(wal.read_bytes(), seen, frames)
    finally:
        sqlite_module.Database.checkpoint = held
        hrm.close()
    import sqlite3

    with sqlite3.connect(database) as conn:
        names = dict(conn.execute("SELECT pageno, name FROM dbstat"))
    by_name: dict[str, float] = {}
    for page, count in frames.items():
        name = names.get(page, "(page 1)" if page == 1 else "(new page)")
        by_name[name] = by_name.get(name, 0) + count / turns
    ordered = dict(sorted(by_name.items(), key=lambda item: -item[1]))
    return {"per_turn": sum(frames.values()) / turns, "by_table": ordered}


def _frames_end(log: bytes) -> int:
    """Where the valid frames of a WAL file end (after its header and every current frame)."""
    end, _ = _count_frames(log, (_WAL_HEADER, log[16:24]), {})
    return end


def _count_frames(log: bytes, seen: tuple[int, bytes], frames: dict[int, int]) -> tuple[int, bytes]:
    """Add the frames `log` holds past `seen` (where they ended, and the log's salt then) to
    `frames` (page → count); return where they end now, and the salt."""
    if len(log) < _WAL_HEADER:
        return _WAL_HEADER, b""
    page_size, salt = int.from_bytes(log[8:12], "big"), log[16:24]
    position = seen[0] if salt == seen[1] else _WAL_HEADER  # a new salt: restarted from the top
    while position + _FRAME_HEADER + page_size <= len(log):
        if log[position + 8:position + 16] != salt:  # a frame left from before a restart
            break
        page = int.from_bytes(log[position:position + 4], "big")
        frames[page] = frames.get(page, 0) + 1
        position += _FRAME_HEADER + page_size
    return position, salt


def summarise(homes: dict[int, Path], opened: dict[int, Opened],
              opens: dict[int, list[dict[str, float]]],
              counts: dict[int, dict[str, Any]]) -> dict[str, Any]:
    rows: dict[int, dict[str, Any]] = {}
    for n, one in opened.items():
        total = sum(one.turns)
        rows[n] = {
            "home_bytes": tree_bytes(homes[n]),
            "open_cpu_ms": 1000 * statistics.median(
                o["cpu"] for o in opens[n] if not o["imported"]),
            "open_wall_ms": 1000 * statistics.median(
                o["wall"] for o in opens[n] if not o["imported"]),
            "open_imported_cpu_ms": 1000 * statistics.median(
                o["cpu"] for o in opens[n] if o["imported"]),
            "open_instructions": counts[n]["open"],
            "continue_open_cpu_ms": 1000 * one.open_cpu,
            "turn_cpu_ms": 1000 * sum(one.cpu) / total,
            "turn_instructions": counts[n]["turn"],
            "turn_wchar_bytes": sum(one.wchar) / total,
            "turn_grown_bytes": sum(one.grown) / total,
        }
    base = min(rows)
    for n, row in rows.items():
        ratios = {}
        for key in ("open_cpu_ms", "open_wall_ms", "open_imported_cpu_ms", "open_instructions",
                    "turn_cpu_ms",
                    "turn_instructions", "turn_wchar_bytes", "turn_grown_bytes", "home_bytes"):
            a, b = row[key], rows[base][key]
            ok = isinstance(a, int | float) and isinstance(b, int | float) and b
            ratios[key] = a / b if ok else None
        one, first = opened[n], opened[base]
        ratios["turn_cpu_ms_median_of_blocks"] = median_ratio(
            [c / t for c, t in zip(one.cpu, one.turns, strict=True)],
            [c / t for c, t in zip(first.cpu, first.turns, strict=True)])
        row["ratios_to_smallest"] = ratios
    largest = rows[max(rows)]
    goals = {
        "open_ratio": GOAL_OPEN_RATIO, "open_cpu_ms": GOAL_OPEN_CPU_MS,
        "turn_ratio": GOAL_TURN_RATIO,
        "open_met": largest["ratios_to_smallest"]["open_cpu_ms"] <= GOAL_OPEN_RATIO
        and largest["open_imported_cpu_ms"] <= GOAL_OPEN_CPU_MS,
        "open_with_imports_met": largest["open_cpu_ms"] <= GOAL_OPEN_CPU_MS,
        "turn_met": largest["ratios_to_smallest"]["turn_cpu_ms_median_of_blocks"]
        <= GOAL_TURN_RATIO,
    }
    return {"sizes": {str(n): row for n, row in rows.items()}, "goals": goals}


def _cell(value: Any, scale: float = 1.0, digits: int = 1) -> str:
    if isinstance(value, int | float):
        return f"{value * scale:.{digits}f}"
    return "n/a" if value is None else "skipped"


COLUMNS = (
    ("home MB", "home_bytes", 1e-6, 1), ("open CPU ms", "open_cpu_ms", 1.0, 1),
    ("open, imported", "open_imported_cpu_ms", 1.0, 1),
    ("open M instr", "open_instructions", 1e-6, 1), ("turn CPU ms", "turn_cpu_ms", 1.0, 2),
    ("turn M instr", "turn_instructions", 1e-6, 2), ("KB written", "turn_wchar_bytes", 1e-3, 1),
    ("KB grown", "turn_grown_bytes", 1e-3, 1),
)
"""Each printed column: its title, its key, its scale and its digits (each with its ratio)."""


def report(result: dict[str, Any]) -> None:
    print(f"{'turns':>7} " + " ".join(f"{title:>12} {'×':>5}" for title, *_ in COLUMNS))
    for n, row in result["sizes"].items():
        ratios = row["ratios_to_smallest"]
        ratios = {**ratios, "turn_cpu_ms": ratios["turn_cpu_ms_median_of_blocks"]}
        cells = [f"{_cell(row[key], scale, digits):>12} {_cell(ratios[key], digits=2):>5}"
                 for _, key, scale, digits in COLUMNS]
        print(f"{n:>7} " + " ".join(cells))
    goals = result["goals"]
    print(f"goal: open at the largest ≤ {goals['open_ratio']}× the smallest and its own work "
          f"≤ {goals['open_cpu_ms']:.0f} ms CPU: {'met' if goals['open_met'] else 'NOT met'} "
          f"(with the imports it does: "
          f"{'met' if goals['open_with_imports_met'] else 'NOT met'}); "
          f"a turn ≤ {goals['turn_ratio']}×: {'met' if goals['turn_met'] else 'NOT met'} "
          "(turn × is the median over blocks, measured side by side)")


def report_pages(pages: dict[int, dict[str, Any]]) -> None:
    """SQLite pages a turn writes, per size, and the tables and indexes they are in."""
    for n, found in pages.items():
        top = ", ".join(f"{name} {count:.2f}" for name, count in
                        list(found["by_table"].items())[:8])
        print(f"{n:>7} turns: {found['per_turn']:.2f} WAL pages a turn ({top}, …)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="homes of 1k, 2.5k and 5k turns")
    parser.add_argument("--sizes", help="comma-separated sizes (of history_homes.SNAPSHOTS)")
    parser.add_argument("--build-only", action="store_true", help="build the homes, measure none")
    parser.add_argument("--no-callgrind", action="store_true", help="skip instruction counts")
    parser.add_argument("--pages", action="store_true",
                        help="count the SQLite pages a turn writes, by table or index")
    parser.add_argument("--open-worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--turn-worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--at", help=argparse.SUPPRESS)
    parser.add_argument("--imported", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--warm", type=int, default=5, help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=20, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.open_worker is not None:
        return open_worker(args.open_worker, args.at, args.imported)
    if args.turn_worker is not None:
        return turn_worker(args.turn_worker, args.size, args.warm, args.turns)
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else (
        QUICK_SIZES if args.quick else SIZES)
    key = cache_key()
    homes = {n: home_for(n, key) for n in sorted(sizes)}
    if args.build_only:
        return 0
    blocks, size = (3, 30) if args.quick else (8, 60)
    repeats = 3 if args.quick else 5
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp_name:
        tmp = Path(tmp_name)
        opened = per_turn(homes, tmp, blocks, size)
        opens = session_opens(homes, tmp, repeats)
        counts = {n: {"turn": None, "open": None} for n in homes} if args.no_callgrind \
            else instructions(homes, tmp, opened, opens, turns=10 if args.quick else 30,
                              budget_s=600 if args.quick else 2400)
        # 128 turns: two of the episodic index's batches of 64 (D27) fall in each count.
        pages = {n: wal_pages(n, home, tmp / f"pages-{n}", 128) for n, home in homes.items()} \
            if args.pages else {}
    result = summarise(homes, opened, opens, counts)
    if pages:
        result["wal_pages"] = {str(n): found for n, found in pages.items()}
        report_pages(pages)
    result.update({"quick": args.quick, "key": key, "blocks": blocks, "block_turns": size,
                   "opens_per_size": repeats})
    report(result)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
