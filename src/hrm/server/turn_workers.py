"""Turns in worker processes, each stack always in the same one (``hrm serve --workers N``).

One Python process computes on one core: a server whose turns all ran in its own interpreter
answered eight clients on distinct stacks no faster than one client (330–348 against 356–386
requests a second on two cores), with the other core left to the clients. Uvicorn's own worker
processes each opened every stack, so two requests of one key landed in two processes that took
turns through the stack's file lock and re-read each other's commits. Here the server process
keeps HTTP (keys, parsing, the stack's queue and its 409, streaming) and hands each turn to the
worker its stack was given on its first turn — the one with the fewest stacks then: a stack
opens in one worker only and its turns never cross processes (D401).

The pipe to a worker carries pickled tuples: ``(job, agent_class, ChatRequest, streamed)``
down; ``("ready", 0)`` once the worker serves, ``("text", job, piece)`` for each streamed piece
and ``("done", job, TurnOutcome)`` or ``("error", job, HRMError)`` up. A worker runs its turns
in threads under its own turn slot (`hrm._turn_slot`), as the server process does without
workers; a stack's turns reach it one at a time because the server process holds the stack's
queue until the turn's answer is back.

Faults: a worker that dies fails the turns it had with 503 ``worker_died`` — whether each was
recorded shows in the stack's ledger, which is append-only — and is started again at once, so
the next turn does not wait for a worker to import hrm. One that dies before it said it was
ready (a broken install, no memory) is left for the next turn to start instead: restarting it
at once would restart it in a loop. On shutdown the server waits for every turn in flight, then
tells each worker to close its stacks and waits for it to exit. A worker whose server is gone
(SIGKILL) sees its pipe close, finishes the turns it had, closes its stacks and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import signal
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from hrm.errors import ErrorCode, HRMError
from hrm.server.api_errors import APIError
from hrm.server.chat import ReplyCache, TurnOutcome, reply_dir
from hrm.server.chat_request import ChatRequest

__all__ = ["TurnWorkers", "WorkerSpec"]

logger = logging.getLogger(__name__)

_CLOSE = ("close",)
"""What the server sends a worker to make it finish, close its stacks and exit."""
_READY = ("ready", 0)
"""What a worker sends once it serves turns (hrm imported, its threads up)."""
_REAP_WAIT_S = 5.0
"""How long a restart waits for the dead worker to be reaped: its pipe closes a moment before
the process is gone, and `multiprocessing` counts a process not yet reaped as alive."""


@dataclass(frozen=True, kw_only=True)
class WorkerSpec:
    """What a worker process needs to open stacks as the server would (all picklable)."""

    home: Path
    llm: Any
    """A provider name, an `LLMConfig` or None (the home's configuration); never an adapter
    object, which lives in the server process only."""
    stack_wait_s: float
    threads: int
    max_open: int
    regenerate_window_s: float


@dataclass
class _Job:
    future: asyncio.Future[TurnOutcome]
    on_text: Callable[[str], None] | None


@dataclass
class _Worker:
    """The server's side of one worker process."""

    index: int
    process: Any
    conn: Connection
    jobs: dict[int, _Job] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Guards `jobs` between the event loop (adds) and the reader thread (takes)."""
    ready: bool = False
    """The worker said it serves turns: if it dies now, it is started again at once."""


class TurnWorkers:
    """`count` worker processes, started on first use, and the turns in flight in each.

    Args:
        spec: How a worker opens stacks.
        count: Worker processes (2 or more; with one, turns run in the server process).
    """

    def __init__(self, spec: WorkerSpec, count: int) -> None:
        self.spec = spec
        self.count = count
        self._workers: list[_Worker | None] = [None] * count
        self._placed: dict[str, int] = {}
        """The worker each stack seen so far runs in, for the server's life."""
        self._load = [0] * count
        self._ids = itertools.count(1)
        self._context = multiprocessing.get_context("spawn")
        self._closed = False

    def index_of(self, agent_class: str) -> int:
        """The worker a stack's turns always run in: on its first turn, the one with the
        fewest stacks: a hash of the name can put most of a handful of keys in one worker."""
        index = self._placed.get(agent_class)
        if index is None:
            index = min(range(self.count), key=self._load.__getitem__)
            self._placed[agent_class] = index
            self._load[index] += 1
        return index

    def start(self) -> None:
        """Start every worker now (each imports hrm: a few hundred ms, all at once). Call it
        on the event loop the turns will be awaited on."""
        for index in range(self.count):
            self._worker(index)

    async def turn(
        self, agent_class: str, chat: ChatRequest, on_text: Callable[[str], None] | None
    ) -> TurnOutcome:
        """Run `chat` as a turn of `agent_class`'s stack in its worker; its outcome.

        The caller holds the stack's queue slot. `on_text` is called on another thread, once
        per streamed piece.

        Raises:
            HRMError: What the turn raised.
            APIError: 503 ``worker_died`` when the worker died with the turn in it.
        """
        if self._closed:
            raise HRMError(ErrorCode.DB_UNAVAILABLE, "The server is shutting down; try again")
        worker = self._worker(self.index_of(agent_class))
        job = next(self._ids)
        future: asyncio.Future[TurnOutcome] = asyncio.get_running_loop().create_future()
        with worker.lock:
            worker.jobs[job] = _Job(future, on_text)
        try:
            worker.conn.send((job, agent_class, chat, on_text is not None))
        except (OSError, ValueError) as exc:
            with worker.lock:
                worker.jobs.pop(job, None)
            raise _worker_gone(worker, f"the request could not be sent ({exc})") from exc
        return await future

    async def aclose(self) -> None:
        """Tell every worker to finish and close its stacks; wait for each to exit."""
        self._closed = True
        await asyncio.to_thread(self._close_all)

    def _close_all(self) -> None:
        for worker in self._workers:
            if worker is None:
                continue
            with contextlib.suppress(OSError, ValueError):  # already gone: nothing to tell
                worker.conn.send(_CLOSE)
        for worker in self._workers:
            if worker is not None:
                worker.process.join()

    def _worker(self, index: int) -> _Worker:
        worker = self._workers[index]
        if worker is not None and worker.process.is_alive():
            return worker
        ours, theirs = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=_serve_turns, args=(theirs, self.spec), name=f"hrm-turns-{index}",
            daemon=False,
        )
        process.start()
        theirs.close()
        worker = _Worker(index, process, ours)
        self._workers[index] = worker
        loop = asyncio.get_running_loop()
        threading.Thread(
            target=_read_answers, args=(worker, loop, self._exited),
            name=f"hrm-turns-{index}-reader", daemon=True,
        ).start()
        return worker

    def _exited(self, dead: _Worker) -> None:
        """On the loop, when a worker's pipe closed: start it again unless the server is
        stopping or a turn already did."""
        if self._closed or self._workers[dead.index] is not dead:
            return
        if not dead.ready:
            logger.warning(
                "turn worker %d (pid %s) exited before it was ready (exit code %s); the next "
                "turn for it starts it again", dead.index, dead.process.pid, dead.process.exitcode,
            )
            return
        restart = asyncio.ensure_future(self._restart(dead))
        restart.add_done_callback(_log_failure)

    async def _restart(self, dead: _Worker) -> None:
        await asyncio.to_thread(dead.process.join, _REAP_WAIT_S)
        if self._closed or self._workers[dead.index] is not dead:
            return
        worker = self._worker(dead.index)
        logger.warning(
            "turn worker %d (pid %s) died (exit code %s); started it again as pid %s",
            dead.index, dead.process.pid, dead.process.exitcode, worker.process.pid,
        )


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.error("restarting a turn worker failed", exc_info=future.exception())


def _read_answers(
    worker: _Worker, loop: asyncio.AbstractEventLoop, on_exit: Callable[[_Worker], None]
) -> None:
    """The server's reader of one worker's pipe: pieces to their callbacks, outcomes to their
    futures; when the pipe closes, every turn still waiting fails and `on_exit` is called on
    the loop."""
    while True:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            break
        except Exception:  # an answer that does not unpickle: no turn of it can be trusted
            logger.exception("turn worker %d sent what cannot be read; restarting it",
                             worker.index)
            worker.process.kill()
            break
        kind, job_id = message[0], message[1]
        if kind == _READY[0]:
            worker.ready = True
            continue
        if kind == "text":
            with worker.lock:
                job = worker.jobs.get(job_id)
            if job is not None and job.on_text is not None:
                job.on_text(message[2])
            continue
        with worker.lock:
            job = worker.jobs.pop(job_id, None)
        if job is not None:
            loop.call_soon_threadsafe(_settle, job.future, kind, message[2])
    worker.conn.close()
    with worker.lock:
        orphans, worker.jobs = list(worker.jobs.values()), {}
    with contextlib.suppress(RuntimeError):  # the loop is closed: the server is gone
        for job in orphans:
            error = _worker_gone(worker, "it exited while the turn ran")
            loop.call_soon_threadsafe(_settle, job.future, "error", error)
        loop.call_soon_threadsafe(on_exit, worker)


def _settle(future: asyncio.Future[TurnOutcome], kind: str, value: Any) -> None:
    if future.done():
        return
    if kind == "done":
        future.set_result(value)
    else:
        future.set_exception(value)


def _worker_gone(worker: _Worker, why: str) -> APIError:
    """503 ``worker_died``: the server's own process failed, not storage or the provider."""
    code = worker.process.exitcode
    return APIError(
        503,
        f"Turn worker {worker.index} (pid {worker.process.pid}) died: {why}"
        f"{f', exit code {code}' if code is not None else ''}. Whether the turn was recorded "
        "shows in the stack's ledger (`/v1/hrm/turns`); retry: the worker is started again",
        type="server_error", code="worker_died",
    )


# ── the worker process ─────────────────────────────────────────────────────────────────────


def _serve_turns(conn: Connection, spec: WorkerSpec) -> None:
    """A worker's life: read turns from `conn` until told to close or the server is gone."""
    from hrm.server.runner import configure_logging

    # Ctrl-C in a terminal reaches the whole process group: the server decides when a worker
    # stops (after its turns), and a worker interrupted mid-turn would answer nothing.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    configure_logging()
    stacks = _WorkerStacks(spec)
    send_lock = threading.Lock()

    def send(message: tuple[Any, ...]) -> None:
        with send_lock:
            try:
                conn.send(message)
            except OSError:
                return  # the server is gone; the turn is recorded all the same
            except Exception as exc:  # the answer would not pickle: say so, never stay silent
                failed = HRMError.internal(f"the turn's answer could not be sent back: {exc}")
                with contextlib.suppress(OSError):
                    conn.send(("error", message[1], failed))

    with ThreadPoolExecutor(spec.threads, thread_name_prefix="hrm-turn") as executor:
        send(_READY)
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message == _CLOSE:
                break
            job, agent_class, chat, streamed = message
            executor.submit(stacks.run, job, agent_class, chat, streamed, send)
    stacks.close()
    conn.close()


class _WorkerStacks:
    """The stacks one worker has open, least recently used first, and their reply caches."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        # On the home, as the server process's: a resend after this worker died (or after a
        # restart) is still recognised (D205).
        self.replies = ReplyCache(spec.regenerate_window_s, directory=reply_dir(spec.home))
        self._open: OrderedDict[str, Any] = OrderedDict()
        self._running: set[str] = set()
        self._lock = threading.Lock()

    def run(
        self, job: int, agent_class: str, chat: ChatRequest, streamed: bool,
        send: Callable[[tuple[Any, ...]], None],
    ) -> None:
        """One turn, its outcome (or error) sent back; never raises."""
        from hrm._turn_slot import TURN_SLOT
        from hrm.server.chat import governed_turn

        def on_text(piece: str) -> None:
            send(("text", job, piece))

        try:
            try:
                hrm = self._stack(agent_class)
                with TURN_SLOT.held():
                    outcome = governed_turn(
                        hrm, chat, replies=self.replies, on_text=on_text if streamed else None
                    )
            finally:
                with self._lock:
                    self._running.discard(agent_class)
            send(("done", job, outcome))
        except HRMError as exc:
            send(("error", job, exc))
        except Exception as exc:  # a bug must answer 500, not leave the request waiting
            logger.exception("turn %s of %s failed", job, agent_class)
            send(("error", job, HRMError.internal(f"the turn failed: {type(exc).__name__}: "
                                                  f"{exc}")))

    def _stack(self, agent_class: str) -> Any:
        from hrm.pipeline import HRM

        with self._lock:
            self._running.add(agent_class)
            hrm = self._open.get(agent_class)
            if hrm is not None:
                self._open.move_to_end(agent_class)
                return hrm
        # Only this thread can be opening this stack: the server holds the stack's queue.
        hrm = HRM.open(self.spec.home, agent_class, self.spec.llm,
                       turn_wait_s=self.spec.stack_wait_s)
        with self._lock:
            self._open[agent_class] = hrm
            idle = [a for a in self._open if a not in self._running]
            evicted = [self._open.pop(a) for a in idle[: max(0, len(self._open) -
                                                               self.spec.max_open)]]
        for stale in evicted:
            _close(stale)
        return hrm

    def close(self) -> None:
        with self._lock:
            stacks, self._open = list(self._open.values()), OrderedDict()
        for hrm in stacks:
            _close(hrm)
        self.replies.close()


def _close(hrm: Any) -> None:
    try:
        hrm.close()
    except Exception:  # one stack failing to close must not keep the others open
        logger.exception("closing stack %s failed", getattr(hrm, "agent_class", "?"))
