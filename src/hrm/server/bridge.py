"""The bridge from the event loop to the synchronous `HRM` facade.

A turn reads and writes SQLite, appends to ledgers under file locks and calls a model: all
blocking, so it never runs on the event loop. Each turn runs in a thread of one pool; the
stack's `HRM` object is opened in that thread on first use and kept for the server's life.

One stack, one turn at a time: a request on a busy stack waits in an asyncio queue for at most
the stack wait, then is refused as busy (409) — it never occupies a thread while it waits, so
requests on other stacks keep running in parallel. Once a turn has started it runs to its end
even if the client goes away: its thread is shielded from the request's cancellation, and the
stack stays busy until the turn is recorded (D203).

With ``--workers N`` (N ≥ 2) turns run in N worker processes instead, each stack's always in
the same one (`hrm.server.turn_workers`, D401); the queue and the 409 stay here. Other work on a
stack (the decisions API's resolve and rollback) still runs in this process: the stack's turn
lock orders it with the worker's turns, as it orders any two processes sharing a home.

Turns of different stacks run in parallel where they wait (a model's answer, a lock another
process holds) and one after another where they compute: the thread holds the process's turn
slot (`hrm._turn_slot`), since eight turns computing at once on one interpreter lock finished
later than the same turns in a row (D390).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from hrm._turn_slot import TURN_SLOT
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.server.chat import ReplyCache, TurnOutcome, governed_turn
from hrm.server.chat_request import ChatRequest
from hrm.server.turn_workers import TurnWorkers

__all__ = ["DEFAULT_MAX_OPEN", "StackPool"]

DEFAULT_MAX_OPEN = 64
"""Stacks one server process keeps open at once (each holds a few file descriptors)."""

logger = logging.getLogger(__name__)

T = TypeVar("T")


class StackPool:
    """The open stacks of one server process and the threads their work runs in.

    Args:
        home: The home every stack lives in.
        llm: What `HRM.open` takes as its model: a provider name, an `LLMConfig`, an
            adapter, or None for the home's configuration.
        stack_wait_s: How long work on a busy stack waits before it is refused.
        threads: Threads that run turns (stacks beyond this many wait for a free one).
        max_open: Stacks kept open at once. Each holds a database connection and a handful
            of file descriptors; past this many, the least recently used idle one is closed
            (it reopens from its ledgers on its next request, D203).
        workers: Worker processes that run turns (None: turns run in this process's threads).
    """

    def __init__(
        self,
        home: HRMHome,
        *,
        llm: Any = None,
        stack_wait_s: float,
        threads: int,
        max_open: int = DEFAULT_MAX_OPEN,
        workers: TurnWorkers | None = None,
    ) -> None:
        self.home = home
        self.workers = workers
        self.llm = llm
        self.stack_wait_s = stack_wait_s
        self.max_open = max_open
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hrm-turn")
        self._stacks: dict[str, HRM] = {}
        self._used: OrderedDict[str, None] = OrderedDict()
        """Stacks opened (or being opened) in this process, least recently used first."""
        self._slots: dict[str, asyncio.Lock] = {}
        self._closed = False

    async def turn(
        self,
        agent_class: str,
        chat: ChatRequest,
        *,
        replies: ReplyCache,
        on_text: Callable[[str], None] | None = None,
    ) -> TurnOutcome:
        """Run `chat` as a governed turn of the stack, after the stack's last work.

        `on_text` gets each streamed piece, on another thread.

        Raises:
            HRMError: ``DB_LOCKED`` when the stack stayed busy past the wait (409), and
                whatever the turn raises.
        """
        if self.workers is None:
            return await self.run(
                agent_class,
                lambda hrm: governed_turn(hrm, chat, replies=replies, on_text=on_text),
            )
        slot = await self._queue(agent_class)
        try:
            future = asyncio.ensure_future(self.workers.turn(agent_class, chat, on_text))
        except BaseException:
            slot.release()
            raise
        future.add_done_callback(functools.partial(_finish, slot=slot))
        return await asyncio.shield(future)

    async def run(self, agent_class: str, work: Callable[[HRM], T]) -> T:
        """Run ``work(hrm)`` on the stack's `HRM` in a turn thread, after the stack's last work.

        Raises:
            HRMError: ``DB_LOCKED`` when the stack stayed busy past the wait (409), and
                whatever `work` raises.
        """
        slot = await self._queue(agent_class)
        self._used[agent_class] = None
        self._used.move_to_end(agent_class)
        if len(self._used) > self.max_open:
            await self._evict(keep=agent_class)
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        try:
            future = loop.run_in_executor(
                self._executor, context.run, self._call, agent_class, work
            )
        except BaseException:
            slot.release()
            raise
        # The slot is freed when the work ends, not when the request does: a client that
        # disconnects must not let the next turn in while its own is still running.
        future.add_done_callback(functools.partial(_finish, slot=slot))
        return await asyncio.shield(future)

    async def _queue(self, agent_class: str) -> asyncio.Lock:
        """The stack's slot, held: after its last work, or `DB_LOCKED` past the wait."""
        if self._closed:
            raise HRMError(ErrorCode.DB_UNAVAILABLE, "The server is shutting down; try again")
        slot = self._slots.setdefault(agent_class, asyncio.Lock())
        try:
            async with asyncio.timeout(self.stack_wait_s):
                await slot.acquire()
        except TimeoutError:
            raise HRMError(
                ErrorCode.DB_LOCKED,
                f"Stack {agent_class} is busy: another turn has held it for over "
                f"{self.stack_wait_s:g} s; try again when it ends",
                recoverable=True, context={"agent_class": agent_class},
            ) from None
        return slot

    def _call(self, agent_class: str, work: Callable[[HRM], T]) -> T:
        hrm = self._stacks.get(agent_class)
        if hrm is None:
            # Only this thread can be opening this stack: the stack's slot is held.
            hrm = HRM.open(self.home, agent_class, self.llm, turn_wait_s=self.stack_wait_s)
            self._stacks[agent_class] = hrm
        with TURN_SLOT.held():
            return work(hrm)

    async def _evict(self, *, keep: str) -> None:
        """Close the least recently used idle stack (its slot free) in a turn thread."""
        for candidate in list(self._used):
            slot = self._slots[candidate]
            if candidate == keep or slot.locked():
                continue
            # A free lock with no waiters is taken without yielding to the loop, so nothing
            # can start work on the stack between the check above and this.
            await slot.acquire()
            del self._used[candidate]
            hrm = self._stacks.pop(candidate, None)
            if hrm is None:
                slot.release()
                return
            # The slot is held until the stack is closed: a request for it meanwhile waits,
            # then opens it again from its ledgers.
            loop = asyncio.get_running_loop()
            closing = loop.run_in_executor(self._executor, _close, candidate, hrm)
            closing.add_done_callback(functools.partial(_finish, slot=slot))
            return

    def opened(self) -> list[str]:
        """The stacks this process has opened."""
        return sorted(self._stacks)

    async def aclose(self) -> None:
        """Let every running turn finish, then close every stack (durable, locks released)."""
        self._closed = True
        await asyncio.to_thread(self._executor.shutdown, wait=True)
        if self.workers is not None:
            # every turn already sent finishes in its worker before the worker exits
            await self.workers.aclose()
        for agent_class, hrm in list(self._stacks.items()):
            _close(agent_class, hrm)  # one failing to close must not keep the others open
        self._stacks.clear()


def _close(agent_class: str, hrm: HRM) -> None:
    try:
        hrm.close()
    except Exception:  # a stack that fails to close must not fail the request that evicted it
        logger.exception("closing stack %s failed", agent_class)


def _finish(future: asyncio.Future[Any], slot: asyncio.Lock) -> None:
    """Free the stack's slot, and read the outcome so an abandoned one logs nothing."""
    slot.release()
    if not future.cancelled():
        future.exception()
