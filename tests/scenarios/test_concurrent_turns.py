"""Several processes running turns of one stack: one at a time, numbered without gaps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.stacks.turn_lock import TurnLock
from hrm.storage import verify_ledger

_WORKER = textwrap.dedent("""
    import sys
    from hrm.pipeline import HRM
    with HRM.open(sys.argv[1], "ADMIN", "offline") as stack:
        for i in range(int(sys.argv[3])):
            stack.turn(f"worker {sys.argv[2]} asks about the parser, message {i}")
""")


def turn_records(home: HRMHome) -> list[dict[str, object]]:
    lines = home.decision_ledger("ADMIN").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def lock_of(home: HRMHome, wait_s: float = 0.0) -> TurnLock:
    return TurnLock(home.ho2_dir("ADMIN") / "turn.lock", agent_class="ADMIN", wait_s=wait_s)


def test_turns_from_several_processes_get_distinct_consecutive_numbers(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as stack:
        stack.turn("We are fixing the parser")
    env = {**os.environ, "HRM_PROVIDER": "offline"}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(home.root), str(n), "4"],
            env=env, stderr=subprocess.PIPE, text=True,
        )
        for n in range(3)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=180)
        assert worker.returncode == 0, err
    records = turn_records(home)
    numbers = [r["data"]["turn"] for r in records if r["kind"] == "turn"]  # type: ignore[index]
    assert numbers == list(range(1, 14))
    assert [r["kind"] for r in records].count("session_started") == 1
    assert verify_ledger(home.decision_ledger("ADMIN")).ok


def test_a_turn_waits_for_the_other_process_then_gives_up_cleanly(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline", turn_wait_s=0.2) as stack:
        stack.turn("first")
        before = home.decision_ledger("ADMIN").read_bytes()
        other = lock_of(home)
        with other, pytest.raises(HRMError) as busy:  # another process is in a turn
            stack.turn("second")
        other.close()
        assert busy.value.code is ErrorCode.DB_LOCKED and busy.value.recoverable
        assert "Stack ADMIN is busy" in busy.value.message
        assert f"pid {os.getpid()}" in busy.value.message
        assert home.decision_ledger("ADMIN").read_bytes() == before  # nothing half-written
        assert stack.turn("second").decision.turn == 2


def test_opening_a_busy_stack_waits_too(home: HRMHome) -> None:
    HRM.open(home, "ADMIN", "offline").close()
    other = lock_of(home)
    with other, pytest.raises(HRMError) as busy:
        HRM.open(home, "ADMIN", "offline", turn_wait_s=0.1)
    other.close()
    assert busy.value.code is ErrorCode.DB_LOCKED


def test_a_killed_holder_never_leaves_the_stack_locked(home: HRMHome) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, time
            from hrm.stacks.turn_lock import TurnLock
            lock = TurnLock(sys.argv[1], agent_class="ADMIN")
            lock.acquire()
            print("held", flush=True)
            time.sleep(60)
        """), str(home.ho2_dir("ADMIN") / "turn.lock")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(HRMError):
            lock_of(home, wait_s=0.05).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        if holder.stdout is not None:
            holder.stdout.close()
    with HRM.open(home, "ADMIN", "offline", turn_wait_s=30) as stack:  # DB_LOCKED if still held
        assert stack.turn("after the holder died").decision.turn == 1
