"""Several processes on one ledger, and writers killed mid-append."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import pytest

from hrm.storage import ledger as ledger_module
from hrm.storage.ledger import Ledger, verify_ledger

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and flock")

CTX = multiprocessing.get_context("fork")
WRITERS = 4
PER_WRITER = 150


def _writer(path: str, writer: int, start: Event) -> None:
    start.wait()
    with Ledger(path) as ledger:
        for i in range(PER_WRITER):
            if i % 10 == 0:
                ledger.append_many([("turn", {"writer": writer, "i": i}),
                                    ("turn", {"writer": writer, "i": i + 1})])
            elif i % 10 != 1:
                ledger.append("turn", {"writer": writer, "i": i})
            if i % 25 == 0:
                ledger.commit()
    os._exit(0)


def test_processes_appending_at_once_keep_every_record_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    start = CTX.Event()
    procs = [CTX.Process(target=_writer, args=(str(path), w, start)) for w in range(WRITERS)]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join()
    assert [proc.exitcode for proc in procs] == [0] * WRITERS
    report = verify_ledger(path)
    assert report.ok, report.describe()
    assert report.records == WRITERS * PER_WRITER
    with Ledger(path) as ledger:
        seen = [(r.data["writer"], r.data["i"]) for r in ledger.records()]
    assert sorted(seen) == [(w, i) for w in range(WRITERS) for i in range(PER_WRITER)]


def _torn_writer(path: str, acks: Connection, torn: Event) -> None:
    """Append and acknowledge 5 records, then die halfway through writing the sixth."""
    real_write = os.write
    ledger = Ledger(path)
    for i in range(5):
        record = ledger.append("turn", {"i": i})
        acks.send((record.seq, record.hash))

    def half_then_hang(fd: int, data: Any) -> int:
        real_write(fd, bytes(data)[: len(data) // 2])
        torn.set()
        CTX.Event().wait()  # hold the lock until the parent kills us
        return 0

    ledger_module.os.write = half_then_hang  # type: ignore[assignment]
    ledger.append("turn", {"i": 5, "text": "this record is never finished " * 4})


def test_a_writer_killed_mid_append_leaves_acknowledged_records_intact(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    receive, send = CTX.Pipe(duplex=False)
    torn = CTX.Event()
    proc = CTX.Process(target=_torn_writer, args=(str(path), send, torn))
    proc.start()
    assert torn.wait(60), "the writer never reached its half-written record"
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    acked = [receive.recv() for _ in range(5)]

    ledger = Ledger(path)  # blocks forever if the dead writer's lock had leaked
    assert ledger.repaired is not None
    assert ledger.repaired.line == 6 and ledger.repaired.cut
    assert [(r.seq, r.hash) for r in ledger.records()] == acked
    assert ledger.append("turn", {"after": "crash"}).seq == 6
    ledger.close()
    assert verify_ledger(path).ok


def _streaming_writer(path: str, acks: Connection) -> None:
    with Ledger(path) as ledger:
        i = 0
        while True:
            record = ledger.append("turn", {"i": i, "pad": "x" * (i % 700)})
            acks.send((record.seq, record.hash))
            i += 1


def test_a_writer_killed_at_any_moment_loses_no_acknowledged_record(tmp_path: Path) -> None:
    path = tmp_path / "stream.jsonl"
    receive, send = CTX.Pipe(duplex=False)
    proc = CTX.Process(target=_streaming_writer, args=(str(path), send))
    proc.start()
    acked = [receive.recv() for _ in range(200)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    while receive.poll():
        acked.append(receive.recv())

    with Ledger(path) as ledger:
        stored = {r.seq: r.hash for r in ledger.records()}
        report = ledger.verify()
    assert report.ok, report.describe()
    assert all(stored.get(seq) == digest for seq, digest in acked)
    assert report.records >= len(acked)


def _child_appends(ledger: Ledger, done: Connection) -> None:
    ledger.append("turn", {"by": "child"})
    done.send(True)
    os._exit(0)


def test_a_ledger_inherited_through_fork_reopens_its_file(tmp_path: Path) -> None:
    path = tmp_path / "fork.jsonl"
    ledger = Ledger(path)
    ledger.append("turn", {"by": "parent"})
    receive, send = CTX.Pipe(duplex=False)
    proc = CTX.Process(target=_child_appends, args=(ledger, send))
    proc.start()
    assert receive.recv() is True
    proc.join()
    ledger.append("turn", {"by": "parent"})
    ledger.close()
    with Ledger(path) as check:
        assert [r.data["by"] for r in check.records()] == ["parent", "child", "parent"]
