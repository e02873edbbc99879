"""The turn slot: one holder at a time, let go around waits, never waited for past patience."""

from __future__ import annotations

import threading

from hrm._turn_slot import TurnSlot


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
