"""The turn slot: one holder at a time, let go around waits, never waited for past patience."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm._turn_slot import FairLock, TurnSlot


def _in_thread(slot: TurnSlot, body: list[str], name: str, started: threading.Event) -> None:
    with slot.held():
        started.set()
        body.append(f"{name} in")


def _other(slot: TurnSlot, seen: list[str]) -> tuple[threading.Thread, threading.Event]:
    """A second thread "b" that enters the slot and notes it in `seen`, started."""
    started = threading.Event()
    other = threading.Thread(target=_in_thread, args=(slot, seen, "b", started))
    other.start()
    return other, started


def test_a_second_thread_waits_while_the_first_holds_the_slot() -> None:
    slot = TurnSlot(patience_s=30)
    seen: list[str] = []
    with slot.held():
        other, started = _other(slot, seen)
        assert not started.wait(0.1)  # b queues on the slot
        seen.append("a out")
    other.join(10)
    assert seen == ["a out", "b in"]


def test_released_lets_another_thread_in_and_takes_the_slot_back() -> None:
    slot = TurnSlot(patience_s=30)
    seen: list[str] = []
    with slot.held():
        other, started = _other(slot, seen)
        with slot.released():  # a model call: b runs meanwhile
            assert started.wait(10)
            other.join(10)
        seen.append("a back")
    assert seen == ["b in", "a back"]


def test_nested_blocks_hold_once_and_release_fully() -> None:
    slot = TurnSlot(patience_s=30)
    seen: list[str] = []
    with slot.held(), slot.held():
        with slot.released():  # even from inside a nested block, the slot is free
            other, _ = _other(slot, seen)
            other.join(10)
        assert seen == ["b in"]
    with slot.held():  # and free again after the outer block
        pass


def test_released_outside_the_slot_does_nothing() -> None:
    slot = TurnSlot(patience_s=30)
    with slot.released():  # a thread that never took part (the CLI, a worker thread)
        pass
    with slot.held():  # the slot was not released by it
        pass


def test_a_holder_that_never_lets_go_delays_others_only_by_the_patience() -> None:
    slot = TurnSlot(patience_s=0.05)
    stuck = threading.Event()
    done = threading.Event()

    def hold_forever() -> None:
        with slot.held():
            stuck.set()
            done.wait(10)

    holder = threading.Thread(target=hold_forever)
    holder.start()
    assert stuck.wait(10)
    ran: list[str] = []
    with slot.held():  # waits 0.05 s, then runs beside the holder
        ran.append("ran")
        with slot.released():  # not its slot to let go
            pass
    done.set()
    holder.join(10)
    assert ran == ["ran"]
    with slot.held():  # the stuck holder's release left the slot free
        pass


def _queued(lock: FairLock, count: int) -> None:
    """Wait (without sleeping blindly) until `count` threads are queued on `lock`."""
    deadline = time.monotonic() + 10
    while len(lock._waiters) < count:
        assert time.monotonic() < deadline, "the waiters did not queue"
        time.sleep(0.001)


def test_the_slot_goes_to_its_waiters_in_the_order_they_came() -> None:
    lock = FairLock()
    order: list[int] = []
    assert lock.acquire()
    threads = []
    for n in range(6):
        def take(n: int = n) -> None:
            assert lock.acquire(timeout=10)
            order.append(n)
            lock.release()

        thread = threading.Thread(target=take)
        thread.start()
        threads.append(thread)
        _queued(lock, n + 1)  # each queues before the next starts
    lock.release()
    for thread in threads:
        thread.join(10)
    assert order == list(range(6))
    assert lock.acquire(timeout=0)  # free again once every waiter has been through
    lock.release()


def test_a_waiter_that_runs_out_of_patience_leaves_the_queue() -> None:
    lock = FairLock()
    assert lock.acquire()
    assert not lock.acquire(timeout=0.01)
    assert len(lock._waiters) == 0
    lock.release()
    assert lock.acquire(timeout=0)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["take", "give", "try"]), max_size=30))
def test_one_thread_at_a_time_whatever_the_sequence(steps: list[str]) -> None:
    """A model of the lock in one thread: held or not, and a zero-wait try fails while held."""
    lock = FairLock()
    held = False
    for step in steps:
        if step == "take" and not held:
            assert lock.acquire()
            held = True
        elif step == "give" and held:
            lock.release()
            held = False
        elif step == "try":
            got = lock.acquire(timeout=0)
            assert got is not held
            if got:
                lock.release()
