"""The thread bridge in-process: stacks closed past the cap reopen from their ledgers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from hrm._turn_slot import TURN_SLOT
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.server.bridge import StackPool
from hrm.storage.ledger import verify_ledger
from hrm.testing import ScriptedAdapter, ScriptedReply


def test_past_the_cap_the_least_recently_used_stack_is_closed_and_reopens(tmp_path: Path) -> None:
    home = HRMHome(tmp_path / "home")

    async def scenario() -> list[int]:
        pool = StackPool(home, llm="offline", stack_wait_s=30, threads=2, max_open=2)
        turns = []
        try:
            for name in ("a", "b", "c", "a", "c", "b"):
                result = await pool.run(
                    f"RESIDENT:{name}", lambda hrm, n=name: hrm.turn(f"Explain idea of {n}")
                )
                turns.append(result.decision.turn)
                assert len(pool.opened()) <= 2
        finally:
            await pool.aclose()
        return turns

    turns = asyncio.run(scenario())
    # Each stack's turns number on from its ledger, whether it stayed open or was reopened.
    assert turns == [1, 1, 1, 2, 2, 2]
    for name in ("a", "b", "c"):
        assert verify_ledger(home.decision_ledger(f"RESIDENT:{name}")).ok


def test_work_on_one_stack_runs_one_at_a_time_in_order(tmp_path: Path) -> None:
    home = HRMHome(tmp_path / "home")

    async def scenario() -> list[int]:
        pool = StackPool(home, llm="offline", stack_wait_s=30, threads=4)
        try:
            results = await asyncio.gather(*(
                pool.run("RESIDENT:a", lambda hrm, n=n: hrm.turn(f"Explain idea {n}"))
                for n in range(5)
            ))
        finally:
            await pool.aclose()
        return [r.decision.turn for r in results]

    assert sorted(asyncio.run(scenario())) == [1, 2, 3, 4, 5]


def test_no_more_turns_run_at_once_than_the_pool_has_threads(tmp_path: Path) -> None:
    # `hrm serve --turn-threads 1`: a second stack's work waits for the one thread.
    home = HRMHome(tmp_path / "home")
    b_started = threading.Event()
    seen: list[bool] = []

    def first(hrm: object) -> None:
        # A wait, as for a model's answer: the turn slot is let go, so with a second thread
        # b starts meanwhile; with one thread it cannot.
        with TURN_SLOT.released():
            seen.append(b_started.wait(0.5))

    async def scenario(threads: int) -> None:
        pool = StackPool(home, llm="offline", stack_wait_s=30, threads=threads)
        try:
            await asyncio.gather(pool.run("RESIDENT:a", first),
                                 pool.run("RESIDENT:b", lambda hrm: b_started.set()))
        finally:
            await pool.aclose()

    asyncio.run(scenario(1))
    b_started.clear()
    asyncio.run(scenario(2))
    assert seen == [False, True]


def test_turns_of_two_stacks_compute_one_after_the_other(tmp_path: Path) -> None:
    # Two threads, two stacks: while a's work computes (holds the turn slot), b's waits for it.
    home = HRMHome(tmp_path / "home")
    order: list[str] = []

    def computing(name: str) -> object:
        def work(hrm: object) -> None:
            order.append(f"{name} starts")
            threading.Event().wait(0.05)  # not a wait the slot knows of: b must not start
            order.append(f"{name} ends")
        return work

    async def scenario() -> None:
        pool = StackPool(home, llm="offline", stack_wait_s=30, threads=2)
        try:
            await asyncio.gather(pool.run("RESIDENT:a", computing("a")),
                                 pool.run("RESIDENT:b", computing("b")))
        finally:
            await pool.aclose()

    asyncio.run(scenario())
    assert order in (["a starts", "a ends", "b starts", "b ends"],
                     ["b starts", "b ends", "a starts", "a ends"])


def test_a_turn_waiting_for_its_model_lets_another_stacks_turn_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first model call blocks until the test lets it answer; another stack's whole turn
    # runs meanwhile, so the waiting turn let the turn slot go. (With the slot kept, b would
    # wait for it: the patience is raised so that this shows as a timeout, not as b running
    # beside a after a second.)
    monkeypatch.setattr(TURN_SLOT, "patience_s", 60.0)
    home = HRMHome(tmp_path / "home")
    answer = threading.Event()
    model = ScriptedAdapter(
        [ScriptedReply(content="a's answer", wait_for=answer), "b's answer"], repeat=True
    )
    order: list[str] = []

    def turn(name: str) -> Callable[[HRM], object]:
        def work(hrm: HRM) -> object:
            result = hrm.turn(f"Explain idea {name}")
            order.append(name)
            return result
        return work

    async def scenario() -> None:
        pool = StackPool(home, llm=model, stack_wait_s=30, threads=2)
        try:
            first = asyncio.ensure_future(pool.run("RESIDENT:a", turn("a")))
            assert await asyncio.to_thread(model.wait_for_calls, 1)  # a waits on its model
            await asyncio.wait_for(pool.run("RESIDENT:b", turn("b")), timeout=30)
            answer.set()
            await first
        finally:
            answer.set()
            await pool.aclose()

    asyncio.run(scenario())
    assert order == ["b", "a"]


def test_the_offline_models_call_keeps_the_turn_slot(tmp_path: Path) -> None:
    """The offline model computes in Python: letting the slot go around its call would only
    hand the interpreter lock to another turn and back. A model whose call is a wait (the
    scripted one above, any network provider) lets it go."""
    from hrm.llm.offline import OfflineAdapter

    held: list[bool] = []

    class Watched(OfflineAdapter):
        def chat(self, *args: object, **kwargs: object) -> object:
            held.append(bool(getattr(TURN_SLOT._local, "owns", False)))
            return super().chat(*args, **kwargs)  # type: ignore[arg-type]

    home = HRMHome(tmp_path / "home")

    async def scenario() -> None:
        pool = StackPool(home, llm=Watched(), stack_wait_s=30, threads=1)
        try:
            await pool.run("RESIDENT:a", lambda hrm: hrm.turn("Explain how binary search works"))
        finally:
            await pool.aclose()

    asyncio.run(scenario())
    assert held and all(held)
