"""SIGKILL at random moments: nothing a process acknowledged may be lost.

Each trial starts a writer (`children.py`, or ``hrm turn`` for the command line), lets it
acknowledge a random number of writes, kills it a random moment later — usually inside its
next write: between a ledger append and SQLite's commit, inside a group commit, in the middle
of a line — and then checks, as the next process would see the home:

- every acknowledged write is there (in its ledger, and in memory.db once it catches up);
- the home verifies (a torn tail the kill left is cut by the next writer, not damage);
- memory.db rebuilt from the ledgers equals memory.db (checked after the last trial).
"""

from __future__ import annotations

import random
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass
class PathResult:
    """The trials of one write path."""

    path: str
    trials: int = 0
    acknowledged: int = 0
    lost: int = 0
    failures: list[str] = field(default_factory=list)
    """Trials whose home did not verify, or whose next open failed."""
    rebuild_equal: bool | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path, "trials": self.trials, "acknowledged": self.acknowledged,
            "lost": self.lost, "failures": len(self.failures),
            "failure_examples": self.failures[:3], "rebuild_equal": self.rebuild_equal,
        }


def _child(mode: str, home: Path, tag: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(HERE / "children.py"), mode, str(home), tag],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )


def _acks(proc: subprocess.Popen[bytes], count: int, pause: float) -> list[list[str]]:
    """Read acknowledgements until `count` writes, wait `pause`, kill, read what remains."""
    assert proc.stdout is not None
    acks: list[list[str]] = []
    ready = False
    while len(acks) < count or not ready:
        line = proc.stdout.readline()
        if not line:
            break
        parts = line.decode().split()
        if parts[:2] == ["ACK", "ready"]:
            ready = True
        elif parts[:1] == ["ACK"]:
            acks.append(parts[1:])
    time.sleep(pause)
    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate()
    for line in rest.decode().splitlines():
        parts = line.split()
        if parts[:1] == ["ACK"] and parts[1:2] != ["ready"]:
            acks.append(parts[1:])
    return acks


def trial(mode: str, home: Path, number: int, rng: random.Random, result: PathResult) -> None:
    """One kill of a `mode` writer; counts what it acknowledged and what is missing."""
    tag = f"t{number}"
    if mode == "cli":
        acked = _cli_trial(home, tag, rng)
    else:
        acked = _acks(_child(mode, home, tag), rng.randint(0, 6), rng.uniform(0, 0.03))
    result.trials += 1
    result.acknowledged += len(acked)
    try:
        result.lost += _missing(mode, home, tag, acked)
        _check_home(home)
    except Exception as exc:
        result.failures.append(f"trial {number}: {type(exc).__name__}: {exc}")


_CLI_SECONDS: list[float] = []
"""How long unkilled ``hrm turn`` runs took here: the warm-up and every run that finished."""


def _cli_trial(home: Path, tag: str, rng: random.Random) -> list[list[str]]:
    # The offline model: what is tried is durability, and a local model's seconds of
    # generation would put every kill inside the model call, before anything is written.
    text = f"[{tag}] How do we roll back the {rng.choice(['api', 'worker', 'cron'])} deploy?"
    command = [sys.executable, "-m", "hrm", "turn", text, "--home", str(home),
               "--provider", "offline"]
    if not _CLI_SECONDS:
        started = time.monotonic()
        subprocess.run([*command[:4], "[warm-up] How do we roll back the deploy?",
                        *command[5:]], capture_output=True, check=True)
        _CLI_SECONDS.append(time.monotonic() - started)
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Anywhere in the process's life: starting, reading the state, writing, committing. The
    # scale is the median of the runs that finished, so a machine whose load changes during
    # the trials still kills some runs early, some late and lets some finish.
    deadline = started + rng.uniform(0.2, 1.3) * statistics.median(_CLI_SECONDS)
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.returncode != 0:
        return []
    _CLI_SECONDS.append(time.monotonic() - started)
    return [[tag]]


def _missing(mode: str, home: Path, tag: str, acked: list[list[str]]) -> int:
    """How many acknowledged writes the home no longer has (as the next process reads it)."""
    from hrm.home import HRMHome
    from hrm.storage import Database, Ledger

    h = HRMHome(home)
    with Database(h.memory_db) as db, db.transaction():
        pass  # a write transaction applies what a killed writer left in the ledger
    if mode == "ledger":
        with Ledger(home / "HO2" / "ledger" / "ADMIN" / "faults.jsonl") as ledger:
            held = {(str(r.seq), r.hash) for r in ledger.records()}
        return sum((seq, digest) not in held for seq, digest in acked)
    if mode == "learnings":
        with Database(h.memory_db) as db:
            ids = {str(r["id"]) for r in db.execute("SELECT id FROM learnings")}
        journaled = _journaled_values(h, "learnings", "id")
        return sum(a[0] not in ids or a[0] not in journaled for a in acked)
    if mode == "canon":
        with Database(h.memory_db) as db:
            rows = {
                (str(r["key"]), str(r["version"])): str(r["value_json"])
                for r in db.execute("SELECT key, version, value_json FROM shared_references")
            }
        return sum(
            rows.get((key, version)) != f'"value {tag} {n}"' for key, version, n in acked
        )
    with Ledger(h.decision_ledger("ADMIN"), read_only=True) as ledger:
        turns = [r.data for r in ledger.records() if r.kind == "turn"]
    if mode == "cli":
        return sum(not any(f"[{a[0]}]" in str(t.get("input")) for t in turns) for a in acked)
    numbers = {int(t["turn"]) for t in turns if f"[{tag}-" in str(t.get("input"))}
    return sum(int(a[0]) not in numbers for a in acked)


def _journaled_values(home: object, table: str, column: str) -> set[str]:
    from hrm.storage import Ledger
    from hrm.storage.journal import memory_ledger_path

    found: set[str] = set()
    with Ledger(memory_ledger_path(home.memory_db), read_only=True) as ledger:  # type: ignore[attr-defined]
        for record in ledger.records():
            for op in record.data.get("ops", ()):
                if op.get("t") == table and "row" in op:
                    found.add(str(op["row"].get(column)))
    return found


def _check_home(home: Path) -> None:
    from hrm.home import HRMHome
    from hrm.storage.home_verify import verify_home

    report = verify_home(HRMHome(home))
    if not report.ok:
        bad = [r.describe() for r in report.ledgers if not r.ok]
        bad += [p.describe() for p in report.problems if not p.warning]
        raise AssertionError("; ".join(bad))


def rebuild_equal(home: Path) -> bool:
    """Whether memory.db rebuilt from the ledgers equals memory.db, table by table."""
    from hrm.home import HRMHome
    from hrm.storage import Database
    from hrm.storage.rebuild import rebuild, table_dump

    h = HRMHome(home)
    for path in h.memory_databases():  # the home's and each stack's own (D320)
        with Database(path) as db, db.transaction():
            pass
    before = {path: table_dump(path) for path in h.memory_databases()}
    rebuild(h)
    return {path: table_dump(path) for path in h.memory_databases()} == before


def run(mode: str, trials: int, seed: int, root: Path) -> PathResult:
    """`trials` kills of one path, in one home."""
    from hrm.home import HRMHome, initialize

    home = root / f"sigkill-{mode}"
    initialize(HRMHome(home))
    rng = random.Random(f"{seed}-{mode}")
    result = PathResult(path={
        "cli": "CLI turn (hrm turn)", "turn": "API turn (HRM.turn)",
        "learnings": "learnings write", "ledger": "ledger append", "canon": "canon write",
    }[mode])
    for number in range(trials):
        trial(mode, home, number, rng, result)
    result.rebuild_equal = rebuild_equal(home)
    return result
