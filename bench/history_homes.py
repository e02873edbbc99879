"""Homes with long histories for `bench_history.py`: built once through the real facade, cached.

A home of n turns is what ``HRM.open(home, "ADMIN", "offline").turn(text)`` leaves after n
messages of the benchmark conversation (`conversation.py`: six kinds of message, their
subjects drawn anew), on a clock that advances 20 seconds a turn and idles two hours every
`SESSION_TURNS` turns, so a new session starts (and reads what came before) as a person's day
ends. One home grows turn by turn and is copied aside as it passes each of `SNAPSHOTS`; the
largest snapshot is the growing home itself, renamed.

The cache lives in ``bench/out/history/<key>/`` and its key hashes what decides what a home
holds: the modules that write records (`RECORD_CODE`), the conversation, the schedule below,
and a fingerprint of the records a short run writes now (each ledger's record kinds and the
shape of their data, and the SQLite schema) — so code anywhere that changes what is written
builds the homes anew, and a changed report does not. Homes under other keys are removed.

Building is resumable: interrupted at any point, the next run reopens the growing home and
carries on from the turn number the home itself reports.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from conversation import conversation
from costs import ROOT, bench_config, code_key

__all__ = ["SNAPSHOTS", "Schedule", "cache_dir", "home_for", "turn_texts"]

SNAPSHOTS = (1000, 2500, 5000, 10000, 50000)
"""The sizes a home is copied aside at, smallest first; only these can be measured."""
SESSION_TURNS = 800
"""Turns per session while building: then two idle hours, and a new session."""
TURN_SECONDS = 20
SEED = 35
BUILD_VERSION = 1
"""Raise when the way homes are built changes in a way the key would not see."""
RECORD_CODE = (
    "storage/**/*.py", "memory/**/*.py", "turn/**/*.py", "pipeline.py", "records.py",
    "stacks/factory.py", "stacks/lifecycle.py", "stacks/_group_commit.py", "learning/**/*.py",
    "scrubbing.py", "_secret_*.py", "_process.py",
)
"""Modules under src/hrm that write a stack's records (the fingerprint covers the rest); the
ids `_process.py` makes decide where rows land in SQLite's indexes (D333)."""
_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
_HISTORY = ROOT / "bench" / "out" / "history"


class Schedule:
    """The building clock: turn i (from 0) happens at `moment(i)`; `now` is what HRM reads."""

    def __init__(self) -> None:
        self.at = _START

    @staticmethod
    def moment(i: int) -> datetime:
        return _START + timedelta(seconds=TURN_SECONDS * i, hours=2 * (i // SESSION_TURNS))

    def now(self) -> datetime:
        return self.at


def turn_texts(n: int) -> list[str]:
    """The first n messages of the building conversation (the same for every n)."""
    return conversation(SEED, n)


def _shape(value: Any, depth: int = 0) -> Any:
    if isinstance(value, dict):
        if depth >= 2:
            return "object"
        return {k: _shape(v, depth + 1) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return ["list", _shape(value[0], depth + 1) if value else None]
    return type(value).__name__


def fingerprint(turns: int = 60) -> str:
    """A hash of what `turns` turns write now: per ledger, each kind's data shape; the schema."""
    from hrm.pipeline import HRM

    with tempfile.TemporaryDirectory(prefix="bench-history-fp-") as tmp:
        home = Path(tmp)
        schedule = Schedule()
        hrm = HRM.open(home, "ADMIN", "offline", config=bench_config(home), clock=schedule.now)
        for i, text in enumerate(turn_texts(turns)):
            # two sessions, so the records a new session writes are in the print too
            schedule.at = _START + timedelta(seconds=TURN_SECONDS * i, hours=2 * (2 * i > turns))
            hrm.turn(text)
        hrm.close()
        shapes: dict[str, set[str]] = {}
        for ledger in sorted(home.rglob("*.jsonl")):
            seen = shapes.setdefault(str(ledger.relative_to(home)), set())
            for line in ledger.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                seen.add(json.dumps(_shape(record), sort_keys=True))
        with sqlite3.connect(home / "memory.db") as conn:
            schema = sorted(row[0] or "" for row in conn.execute("SELECT sql FROM sqlite_master"))
    data = {"ledgers": {k: sorted(v) for k, v in shapes.items()}, "schema": schema}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def cache_key() -> str:
    salt = f"{BUILD_VERSION}:{SESSION_TURNS}:{TURN_SECONDS}:{SEED}:{fingerprint()}"
    return code_key(RECORD_CODE, extra=[ROOT / "bench" / "conversation.py"], salt=salt)


def cache_dir(key: str) -> Path:
    return _HISTORY / key


def _remove_other_keys(key: str) -> None:
    if not _HISTORY.is_dir():
        return
    for other in _HISTORY.iterdir():
        if other.is_dir() and other.name != key:
            shutil.rmtree(other, ignore_errors=True)


def _copy_aside(source: Path, target: Path) -> None:
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source, partial)
    partial.rename(target)


def home_for(size: int, key: str, *, log: Callable[[str], None] = print) -> Path:
    """The cached home of `size` turns under `key`, built (or its building resumed) if missing."""
    if size not in SNAPSHOTS:
        raise SystemExit(f"no home of {size} turns is built; sizes: {SNAPSHOTS}")
    base = cache_dir(key)
    snapshot = base / f"turns-{size}"
    if snapshot.is_dir():
        return snapshot
    _remove_other_keys(key)
    base.mkdir(parents=True, exist_ok=True)
    growing = base / "building"
    if not growing.is_dir():
        done = [s for s in SNAPSHOTS if (base / f"turns-{s}").is_dir()]
        if done:  # a larger size than any built: carry on from the largest
            _copy_aside(base / f"turns-{max(done)}", growing)
    _build(growing, size, base, log)
    return snapshot


def _build(growing: Path, target: int, base: Path, log: Callable[[str], None]) -> None:
    from hrm.pipeline import HRM

    texts = turn_texts(max(SNAPSHOTS))
    schedule = Schedule()
    growing.mkdir(parents=True, exist_ok=True)
    progress = growing / "bench-progress.json"
    start = json.loads(progress.read_text())["turns"] if progress.exists() else 0
    schedule.at = Schedule.moment(max(0, start - 1))
    hrm = HRM.open(growing, "ADMIN", "offline", config=bench_config(growing),
                   clock=schedule.now)
    done = hrm.turn_number  # the home's own count: an interrupted chunk's turns are kept
    started = time.monotonic()
    log(f"building a home of {target} turns in {growing} from turn {done}")
    try:
        while done < target:
            schedule.at = Schedule.moment(done)
            hrm.turn(texts[done])
            done += 1
            if done % 250 == 0 or done in SNAPSHOTS:
                progress.write_text(json.dumps({"turns": done}))
            if done % 2500 == 0:
                rate = (time.monotonic() - started) / max(1, done - start)
                log(f"  {done} turns ({rate * 1000:.1f} ms a turn)")
            if done in SNAPSHOTS:
                hrm.close()
                if done == max(SNAPSHOTS):
                    progress.unlink()
                    growing.rename(base / f"turns-{done}")
                    return
                _copy_aside(growing, base / f"turns-{done}")
                hrm = HRM.open(growing, "ADMIN", "offline", config=bench_config(growing),
                               clock=schedule.now)
    finally:
        if growing.is_dir():
            hrm.close()
