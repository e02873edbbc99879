"""The processes the SIGKILL faults kill: each writes in a loop and acknowledges every write.

A write is acknowledged by one line on stdout, flushed, printed only after the call that made
it returned — what a caller of hrm could rely on. The fault script kills the process at a
random moment and then checks that every acknowledged write is still there.

    python faults/children.py MODE HOME TAG

MODE: ``ledger`` (Ledger.append), ``learnings`` (store_learning), ``canon`` (a Shared
Reference set through the memory bus's store), ``turn`` (HRM.turn through the facade).
"""

from __future__ import annotations

import sys
from pathlib import Path


def ack(*parts: object) -> None:
    sys.stdout.write("ACK " + " ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def ledger(home: Path, tag: str) -> None:
    from hrm.storage import Ledger

    with Ledger(home / "HO2" / "ledger" / "ADMIN" / "faults.jsonl") as target:
        ack("ready")
        n = 0
        while True:
            record = target.append("fault", {"tag": tag, "n": n, "pad": "x" * (n % 300)})
            ack(record.seq, record.hash)
            n += 1


def learnings(home: Path, tag: str) -> None:
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import LearningInput
    from hrm.home import HRMHome

    words = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
    with LearningsRepository.open(HRMHome(home), embeddings="off") as repo:
        ack("ready")
        n = 0
        while True:
            text = f"Fault {tag} {n}: " + " ".join(words[(n + i) % 8] for i in range(n % 5 + 3))
            stored = repo.store_learning(LearningInput(content=text, type="WORKING_SOLUTION"))
            ack(stored.id)
            n += 1


def canon(home: Path, tag: str) -> None:
    from hrm.home import HRMHome
    from hrm.memory.shared_reference import SharedReferenceStore
    from hrm.storage import Database

    with Database(HRMHome(home).memory_db) as db:
        store = SharedReferenceStore(db, "ADMIN")
        ack("ready")
        n = 0
        while True:
            key = f"fault.{tag}.{n % 7}"
            version = store.set(key, f"value {tag} {n}", "faults")
            ack(key, version, n)
            n += 1


def turn(home: Path, tag: str) -> None:
    from hrm import HRM

    topics = ("the billing job", "a flaky test", "the release notes", "the cache layer")
    with HRM.open(home, llm="offline") as hrm:
        ack("ready")
        n = 0
        while True:
            result = hrm.turn(f"[{tag}-{n}] What should we check next about {topics[n % 4]}?")
            ack(hrm.turn_number, result.action)
            n += 1


MODES = {"ledger": ledger, "learnings": learnings, "canon": canon, "turn": turn}

if __name__ == "__main__":
    MODES[sys.argv[1]](Path(sys.argv[2]), sys.argv[3])
