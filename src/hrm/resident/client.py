"""`hrm turn`'s side of the resident process: hand the command over, wait, pass signals on.

`attempt` either runs the command in the resident process and returns its exit status, or
returns why it did not — and then nothing of the command has run, so the caller runs it
in-process. The child that takes the command names itself and waits for the client's "go":
until the client sends it, the client may fall back; after, the command is running and the
client's job is to wait for it and pass its signals on.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time

from hrm.resident import _wire, paths

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs `hrm turn` ~2 ms
if TYPE_CHECKING:
    from typing import Any

ABSENT = "absent"
"""No resident process listens: start one after this command (`start`)."""

DECLINED = "declined"
"""One listens but would not take this command (off, another installation, its code changed)."""

_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_CONNECT_SECONDS = 1.0
_TAKE_SECONDS = 30.0
"""How long a busy machine may take to fork the child before the command runs in-process."""
_EXIT_BY_SIGNAL = 128
_RETRY_SECONDS = 60.0
_ANSWER_SECONDS = 5.0


def _request(argv: list[str]) -> dict[str, Any]:
    mask = os.umask(0)
    os.umask(mask)
    streams = [
        [getattr(stream, "encoding", None) or "utf-8", getattr(stream, "errors", None) or "strict"]
        for stream in (sys.stdin, sys.stdout, sys.stderr)
    ]
    return {
        "protocol": _wire.PROTOCOL,
        "installation": paths.installation(),
        "argv0": sys.argv[0] if sys.argv else "hrm",
        "argv": argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": mask,
        "streams": streams,
        "ignored": _ignored(),
    }


def _ignored() -> list[int]:
    """The signals this process ignores (a background job's SIGINT, `nohup`'s SIGHUP): the
    child ignores them too, as this process would have run the command."""
    return [int(s) for s in _FORWARDED if signal.getsignal(s) is signal.SIG_IGN]


def _connect(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(_CONNECT_SECONDS)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def attempt(argv: list[str]) -> int | str:
    """Run `hrm <argv>` in the resident process: its exit status, or `ABSENT` / `DECLINED`."""
    if not paths.enabled():
        return DECLINED
    place = paths.place()
    if place is None:  # not made yet (the starter makes it), or not private: never used
        return DECLINED if os.path.lexists(paths.runtime_directory()) else ABSENT
    sock = _connect(place.socket)
    if sock is None:
        return ABSENT
    with sock:
        try:
            request = _request(argv)
        except OSError:  # the working directory was removed under us: in-process says so
            return DECLINED
        try:
            _wire.send_with_fds(sock, request, [0, 1, 2])
            sock.settimeout(_TAKE_SECONDS)
            first = _wire.receive(sock)
            if first is None or not isinstance(first.get("pid"), int):
                # Refused (`first["refused"]` says why) or gone: nothing ran. One whose code
                # changed has exited, and a new one is started after this command.
                return ABSENT if first is not None and first.get("restart") else DECLINED
            child: int = first["pid"]
            received = _forward_signals(child)
            # The child runs nothing until told to: had this process given up waiting for
            # it, the command would otherwise run twice.
            _wire.send(sock, {"go": True})
        except (OSError, _wire.WireError):
            return DECLINED
        sock.settimeout(None)
        return _wait(sock, child, received)


def _forward_signals(child: int) -> list[int]:
    """From now on the signals meant for the command go to `child`; returns those sent."""
    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        try:
            os.kill(child, signum)
        except OSError:
            return  # it has just finished: its status is on its way

    for signum in _FORWARDED:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, forward)
    return received


def _wait(sock: socket.socket, child: int, received: list[int]) -> int:
    """Wait for `child` to finish the command; its exit status, as a one-shot would end."""
    try:
        last = _wire.receive(sock)
    except (OSError, _wire.WireError):
        last = None
    if last is not None and isinstance(last.get("exit"), int):
        if os.environ.get(paths.ENV_TRACE, "") not in ("", "0"):
            sys.stderr.write(f"hrm resident: child {child} exit {last['exit']} "
                             f"cpu_s {last.get('cpu')}\n")
        return int(last["exit"])
    if received:  # it died of the signal it was sent: so does its client, as a one-shot would
        fatal = received[-1]
        signal.signal(fatal, signal.SIG_DFL)
        os.kill(os.getpid(), fatal)
        return _EXIT_BY_SIGNAL + fatal
    sys.stderr.write(
        "hrm: the resident process's child ended without an exit status (killed?); the turn "
        "may or may not have been recorded — `hrm why` shows the last one\n"
    )
    return 1


def start() -> None:
    """Start this installation's resident process in the background (never fails the caller).

    It runs in a session of its own, so the terminal's Ctrl-C and hang-up do not reach it; its
    errors go to its log beside the socket.
    """
    if not paths.enabled():
        return
    place = paths.place(create=True)
    if place is None:
        return
    if _failed_lately(place):
        return
    import subprocess

    try:
        os.close(os.open(place.starting, os.O_WRONLY | os.O_CREAT, 0o600))
        os.utime(place.starting)  # the stamp says when this start was tried
        with open(place.log, "ab") as log:
            subprocess.Popen(
                [sys.executable, "-P", "-m", "hrm.resident.server"],  # -P: no cwd on sys.path
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                cwd="/", start_new_session=True, close_fds=True,
            )
    except OSError:
        return


def _failed_lately(place: paths.Place) -> bool:
    """Whether a start was tried in the last minute and never listened (its log says why)."""
    try:
        return time.time() - os.stat(place.starting).st_mtime < _RETRY_SECONDS
    except OSError:  # none was started, or the last one listened and removed the stamp
        return False


def ask(control: str) -> dict[str, Any] | None:
    """Send `control` (``status`` or ``stop``) to this installation's resident process: its
    answer, or ``None`` when none listens."""
    place = paths.place()
    sock = None if place is None else _connect(place.socket)
    if sock is None:
        return None
    with sock:
        try:
            sock.settimeout(_ANSWER_SECONDS)
            _wire.send(sock, {"protocol": _wire.PROTOCOL, "control": control})
            return _wire.receive(sock)
        except (OSError, _wire.WireError):
            return None
