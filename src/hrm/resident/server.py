"""The resident process: import once, then fork a child per `hrm turn` that runs it as-is.

``python -m hrm.resident.server`` (started by `hrm.resident.client.start`) takes the lock
beside its socket (a second one started at the same moment exits), imports what a turn
imports, listens, and for each request from this user forks: the child takes the client's
standard streams, working directory, umask and environment, runs the command line with the
client's arguments, and reports its exit status. The resident process itself never opens a
stack, never starts a thread, and holds nothing a turn wrote, so every child starts as a
one-shot would, only without the imports. It exits after `paths.idle_seconds()` without a
request, on SIGTERM, on ``hrm resident stop``, or when a source file of hrm it imported has
changed (that request is declined and runs in-process; the next turn starts a new one).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import importlib
import io
import os
import resource
import signal
import socket
import struct
import sys
import time
import traceback
from collections.abc import Iterator
from typing import Any, NoReturn

from hrm.resident import _wire, paths

PRELOAD = (
    "hrm.cli.app", "hrm.cli.turns", "hrm.pipeline", "hrm._paths", "hrm._secret_families",
    "hrm._yaml", "hrm.focus", "hrm.cli._chat_input", "hrm.continuity.embeddings",
    "hrm.continuity._int8_graph",
    "hrm.continuity.learnings", "hrm.learning.consolidation", "hrm.llm.capability",
    "hrm.llm.session_usage", "hrm.memory.bus", "hrm.reading.exemplar_files",
    "hrm.reading.calibration", "hrm.reading.model_reader", "hrm.reading.sentence",
    "hrm.reasoning.assist", "hrm.stacks._group_commit", "hrm.stacks.flows", "hrm.stacks.meta",
    "hrm.storage.journal", "hrm.storage.ledger_quarantine", "hrm.storage.manifest",
    "encodings.ascii", "encodings.utf_8_sig", "importlib.readers", "rich._emoji_codes",
    "typer._adapters", "typer._click.decorators", "pydantic.plugin._loader",
)
"""What a turn imports, directly or lazily, apart from the sentence model's native libraries
(numpy, onnxruntime, tokenizers: they start threads or thread pools, which a process that forks
must not hold). `tests/resident` checks that a turn imports no hrm module this leaves out."""

COMMANDS = frozenset({"turn"})
"""The commands a resident child runs: one-shots whose cost is their start."""

_PEER = struct.Struct("3i")
_FORWARDABLE = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})
_REQUEST_SECONDS = 5.0
_LOG_LIMIT = 1 << 20


class _Stop(Exception):
    """SIGTERM, or ``hrm resident stop``: leave the accept loop and remove the socket."""


PREPARE = ("hrm.runtime.injection", "hrm.scrubbing")
"""Modules whose ``prepare()`` builds from package data what their first call would build."""


def preload() -> None:
    """Import what a turn imports and build what it builds first, with the cyclic collector
    off (it would walk it all)."""
    gc.disable()
    try:
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError:
                # A library's private module that its version lays out otherwise (typer 0.26
                # has no `typer._adapters`): a turn imports what it needs itself.
                if name.startswith("hrm."):
                    raise
        for name in PREPARE:
            importlib.import_module(name).prepare()
    finally:
        gc.freeze()  # what the imports built is never garbage: no child's collector walks it
        gc.enable()


def sources() -> dict[str, tuple[int, int]]:
    """Each imported hrm source file's modification time and size."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found: dict[str, tuple[int, int]] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.startswith(package):
            with contextlib.suppress(OSError):
                info = os.stat(path)
                found[path] = (info.st_mtime_ns, info.st_size)
    return found


def changed(known: dict[str, tuple[int, int]]) -> bool:
    """Whether any of `known` was edited, replaced or removed since it was imported."""
    for path, seen in known.items():
        try:
            info = os.stat(path)
        except OSError:
            return True
        if (info.st_mtime_ns, info.st_size) != seen:
            return True
    return False


class Resident:
    """The accept loop: one listening socket, one fork per accepted command."""

    def __init__(self, place: paths.Place, listener: socket.socket, lock: int,
                 idle: float) -> None:
        self.place = place
        self.listener = listener
        self.lock = lock
        self.idle = idle
        self.known = sources()
        self.started = time.time()
        self.served = 0
        self.last = time.monotonic()

    def run(self) -> None:
        while True:
            remaining = self.idle - (time.monotonic() - self.last)
            if remaining <= 0:
                return
            self.listener.settimeout(remaining)
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            with conn:
                self._one(conn)

    def _one(self, conn: socket.socket) -> None:
        if _peer_uid(conn) != os.getuid():
            return  # the directory is private; this is belt and braces
        conn.settimeout(_REQUEST_SECONDS)
        try:
            request, fds = _wire.receive_with_fds(conn)
        except (OSError, _wire.WireError) as exc:
            _log(f"a request could not be read: {exc}")
            return
        try:
            self._answer(conn, request, fds)
        except OSError as exc:  # the client left before its answer: the next one is served
            _log(f"a request could not be answered: {exc}")
        finally:
            for fd in fds:
                os.close(fd)

    def _answer(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
        control = request.get("control")
        if control == "status":
            _wire.send(conn, self.status())
            return
        if control == "stop":
            _wire.send(conn, {"stopped": os.getpid()})
            raise _Stop
        refusal = _refusal(request, fds)
        if refusal is None and changed(self.known):
            _wire.send(conn, {"refused": "hrm's source changed since this process started",
                              "restart": True})
            raise _Stop
        if refusal is not None:
            _wire.send(conn, {"refused": refusal})
            return
        self.last = time.monotonic()  # a turn, not a status or a refusal, keeps it alive
        try:
            pid = os.fork()
        except OSError as exc:  # out of memory or processes: the client runs it itself
            _wire.send(conn, {"refused": f"could not fork: {exc}"})
            return
        if pid == 0:
            self.listener.close()
            os.close(self.lock)  # a long turn must not keep a successor from starting
            _child(conn, request, fds)
        self.served += 1

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "installation": paths.installation(),
            "socket": self.place.socket,
            "started": self.started,
            "served": self.served,
            "idle_seconds": self.idle,
            "idle_for": time.monotonic() - self.last,
        }


def _peer_uid(conn: socket.socket) -> int:
    try:
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER.size)
    except OSError:
        return -1
    return int(_PEER.unpack(raw)[1])


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _refusal(request: dict[str, Any], fds: list[int]) -> str | None:
    """Why this process will not run `request`, or ``None``."""
    if request.get("protocol") != _wire.PROTOCOL:
        return f"protocol {request.get('protocol')!r} is not {_wire.PROTOCOL}"
    if request.get("installation") != paths.installation():
        return "another Python or another hrm installation"
    argv, env, streams = request.get("argv"), request.get("env"), request.get("streams")
    if not _strings(argv) or not argv or argv[0] not in COMMANDS:
        return f"not a command this process runs: {argv!r}"
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        return "the environment is not a mapping of strings"
    if not isinstance(request.get("cwd"), str) or not isinstance(request.get("umask"), int):
        return "the working directory or umask is missing"
    if not isinstance(request.get("argv0"), str):
        return "the program name is missing"
    if not (isinstance(streams, list) and len(streams) == _wire.STDIO_FDS
            and all(_strings(s) and len(s) == 2 for s in streams)):
        return "the standard streams' encodings are missing"
    ignored = request.get("ignored")
    if not (isinstance(ignored, list) and all(
            isinstance(s, int) and s in _FORWARDABLE for s in ignored)):
        return "the ignored signals are not a list of signal numbers"
    if len(fds) != _wire.STDIO_FDS:
        return f"{len(fds)} descriptors came with the request, not {_wire.STDIO_FDS}"
    return None


def _child(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> NoReturn:
    """Run the client's command as the client would have; never returns into the loop."""
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in request["ignored"]:  # what the client ignores, as it would have
            signal.signal(signum, signal.SIG_IGN)
        _adopt(request, fds)
        _wire.send(conn, {"pid": os.getpid()})
        go = _wire.receive(conn)  # the client has not given up on us: it will not run it too
        if go is None or go.get("go") is not True:
            os._exit(1)
    except BaseException:  # nothing has run: the client runs the command itself
        with contextlib.suppress(BaseException):
            _log(f"a child could not take its request:\n{traceback.format_exc()}")
        os._exit(1)
    code = 1
    try:
        code = _run_command(request["argv0"], request["argv"])
    except BaseException:  # a child must report and exit, whatever happened
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        # What the interpreter's own exit would do (a local model's threads are joined here),
        # then the status, after everything the command wrote has been written.
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        used = resource.getrusage(resource.RUSAGE_SELF)
        with contextlib.suppress(OSError):
            _wire.send(conn, {"exit": code, "cpu": used.ru_utime + used.ru_stime})
        os._exit(code)


def _adopt(request: dict[str, Any], fds: list[int]) -> None:
    """Become the client: its directory, umask, environment, zone and streams on 0–2."""
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    (in_enc, in_err), (out_enc, out_err), (err_enc, err_err) = request["streams"]
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    fds.clear()
    sys.stdin = io.TextIOWrapper(
        open(0, "rb", closefd=False), encoding=in_enc, errors=in_err)  # noqa: SIM115
    sys.stdout = io.TextIOWrapper(
        open(1, "wb", closefd=False), encoding=out_enc, errors=out_err,  # noqa: SIM115
        line_buffering=os.isatty(1))
    sys.stderr = io.TextIOWrapper(
        open(2, "wb", closefd=False), encoding=err_enc, errors=err_err,  # noqa: SIM115
        line_buffering=True)
    from hrm.cli._common import reset_consoles

    reset_consoles()


def _run_command(argv0: str, argv: list[str]) -> int:
    from hrm.cli.app import run

    sys.argv = [argv0, *argv]
    try:
        run()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    return 0


def _log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    print(f"{stamp} pid {os.getpid()}: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _listening(place: paths.Place) -> Iterator[socket.socket]:
    """Bind the socket (replacing a dead one's), readable by this user only; remove it after."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(place.socket)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(place.socket)
    finally:
        os.umask(old)
    listener.listen(64)
    bound = os.stat(place.socket).st_ino
    try:
        yield listener
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            if os.stat(place.socket).st_ino == bound:  # not a successor's
                os.unlink(place.socket)


def _on_term(_signum: int, _frame: object) -> None:
    raise _Stop


def serve() -> int:
    """Run the resident process until it is idle, stopped or stale."""
    place = paths.place(create=True)
    if place is None:
        return 1
    with open(place.lock, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another one is starting or running
        _trim_log(place)
        signal.signal(signal.SIGTERM, _on_term)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        preload()
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1:  # a fork would copy the memory, not the threads: children could hang
            _log(f"not serving: the imports started {threads - 1} thread(s)")
            return 1
        with _listening(place) as listener:
            with contextlib.suppress(OSError):
                os.unlink(place.starting)  # started: the next start need not wait
            _log(f"listening on {place.socket}")
            with contextlib.suppress(_Stop):
                Resident(place, listener, lock.fileno(), paths.idle_seconds()).run()
            _log("stopped")
    return 0


def _trim_log(place: paths.Place) -> None:
    with contextlib.suppress(OSError):
        if os.path.getsize(place.log) > _LOG_LIMIT:
            os.truncate(place.log, 0)


def main() -> NoReturn:
    os.chdir("/")
    raise SystemExit(serve())


if __name__ == "__main__":
    main()
