"""Where the resident process listens, and whether it may be used at all.

The socket lives in a directory only this user can enter: ``$XDG_RUNTIME_DIR/hrm`` when the
session has one, else ``/tmp/hrm-<uid>`` (as tmux keeps its sockets). A directory that is not
ours, is a link, or lets anyone else in is refused, and `hrm turn` runs in-process — a socket
someone else could have made is never connected to. One resident process serves one Python
interpreter and one hrm installation; its name is a checksum of both, and the request carries
them in full so that a checksum collision is refused, not served with the wrong code.
"""

from __future__ import annotations

import os
import stat
import sys
import zlib

# Plain strings and os.path, not pathlib or dataclasses: this module runs at the start of
# every `hrm turn`, where those two imports alone cost more than the rest of the client (~12 ms
# of ~20, measured with -X importtime).

ENV_RESIDENT = "HRM_RESIDENT"
"""``0`` (or off/no/false) turns the resident process off: every `hrm turn` runs in-process."""

ENV_IDLE = "HRM_RESIDENT_IDLE"
"""Seconds without a request after which the resident process exits (default 1800)."""

ENV_TRACE = "HRM_RESIDENT_TRACE"
"""Set (not ``0``): `hrm turn` writes which child ran it and the child's CPU seconds to stderr
(``hrm resident: child <pid> exit <status> cpu_s <seconds>``), for benchmarks and debugging."""

DEFAULT_IDLE_SECONDS = 1800.0
_OFF = frozenset({"0", "off", "no", "false"})


def enabled() -> bool:
    """Whether `hrm turn` may use or start a resident process on this system."""
    if os.environ.get(ENV_RESIDENT, "").strip().lower() in _OFF:
        return False
    return sys.platform.startswith("linux")


def installation() -> str:
    """This interpreter and this hrm package: what a resident process must share to serve."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    return f"{os.path.realpath(sys.executable)}\n{package}"


def idle_seconds() -> float:
    raw = os.environ.get(ENV_IDLE, "")
    try:
        value = float(raw) if raw else DEFAULT_IDLE_SECONDS
    except ValueError:
        return DEFAULT_IDLE_SECONDS
    return value if value > 0 else DEFAULT_IDLE_SECONDS


class Place:
    """The files of one resident process: its socket, its lock and its log."""

    __slots__ = ("directory", "lock", "log", "name", "socket", "starting")

    def __init__(self, directory: str, name: str) -> None:
        self.directory = directory
        self.name = name
        self.socket = os.path.join(directory, f"{name}.sock")
        self.lock = os.path.join(directory, f"{name}.lock")
        self.log = os.path.join(directory, f"{name}.log")
        self.starting = os.path.join(directory, f"{name}.starting")
        """Made when one is started, removed once it listens: left behind, it failed."""


def runtime_directory() -> str:
    """The directory the sockets live in (it may not exist yet)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "hrm")
    return f"/tmp/hrm-{os.getuid()}"


def _private(directory: str) -> bool:
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


def place(*, create: bool = False) -> Place | None:
    """Where this installation's resident process listens, or ``None`` if nowhere safe.

    With `create`, the directory is made (mode 0700) when missing; an existing one is used
    only when it is private to this user.
    """
    directory = runtime_directory()
    if create:
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass  # made before, by us or by someone else: checked below either way
        except OSError:
            return None
    if not _private(directory):
        return None
    name = f"turn-{zlib.crc32(installation().encode()):08x}"
    return Place(directory, name)
