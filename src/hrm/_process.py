"""What a process knows about itself, cheaply and correctly across `fork`: its pid, and ids.

A turn used to ask the kernel for both several times: `os.getpid` is a system call on every
call (glibc stopped caching it), and `uuid.uuid4` reads 16 bytes of kernel randomness and
builds a `UUID` object for each id it names (episodes, work orders, plans, traces). On the VMs
hrm runs on a system call costs microseconds. Here the pid is read once and again in a forked
child, and ids are drawn from one pseudo-random generator per process, seeded from the
kernel's randomness and reseeded in a forked child so parent and child never draw the same
sequence.

Ids must not repeat; nothing relies on them being unguessable (they name records a user can
read anyway), so a seeded Mersenne Twister is enough: 64 random bits per 16-hex id make a
collision among a billion ids about one in 40,000.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # `hrm hook` imports this: no `typing` at run time
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["new_id", "pid", "random_hex"]

_pid = os.getpid()
_bits: Callable[[int], int] | None = None
"""`random.Random(...).getrandbits`, made on first use: `random` costs ~3 ms to import."""


def pid() -> int:
    """This process's id (`os.getpid`, without a system call per call)."""
    return _pid


def random_hex(chars: int) -> str:
    """`chars` random lower-case hex digits."""
    draw = _bits or _seed()
    return f"{draw(chars * 4):0{chars}x}"


def new_id(prefix: str, chars: int = 16) -> str:
    """``<prefix>_<chars hex digits>``, e.g. ``ep_3f9c0a1b2d4e5f60``."""
    draw = _bits or _seed()
    return f"{prefix}_{draw(chars * 4):0{chars}x}"


def _seed() -> Callable[[int], int]:
    global _bits
    import random

    draw = _bits = random.Random(os.urandom(32)).getrandbits
    return draw


def _after_fork_in_child() -> None:
    global _pid, _bits
    _pid = os.getpid()
    _bits = None


os.register_at_fork(after_in_child=_after_fork_in_child)
