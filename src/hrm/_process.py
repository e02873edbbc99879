"""What a process knows about itself, cheaply and correctly across `fork`: its pid, and ids.

A turn used to ask the kernel for both several times: `os.getpid` is a system call on every
call (glibc stopped caching it), and `uuid.uuid4` reads 16 bytes of kernel randomness and
builds a `UUID` object for each id it names (episodes, work orders, plans, traces). On the VMs
hrm runs on a system call costs microseconds. Here the pid is read once and again in a forked
child, and ids are drawn from one pseudo-random generator per process, seeded from the
kernel's randomness and reseeded in a forked child so parent and child never draw the same
sequence.

Ids must not repeat; nothing relies on them being unguessable (they name records a user can
read anyway), so a seeded Mersenne Twister is enough. A 16-hex id is the time and a step of
this process's sequence (`new_id`): no repeat within a process; two processes repeat an id
only if their sequences, each started at one of 2^40 random places, overlap within the same
64 seconds. Shorter ids are random (48 bits for a 12-hex problem id).
"""

from __future__ import annotations

import itertools
import os
import time

TYPE_CHECKING = False  # `hrm hook` imports this: no `typing` at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

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
    """``<prefix>_<chars hex digits>``, e.g. ``ep_0c1a3f9c0a1b2d4e``.

    An id of 16 digits or more starts with the time (six digits counting 64-second steps
    since 2020) and goes on with this process's sequence, which starts at a random place.
    Episodes, outcomes and evidence are keyed by such ids, and a random key lands each
    insert on a different page of a large index: a turn at 10k turns of history wrote pages
    a turn at 1k did not (D333). Ids that rise with time append where the last one went.
    Unique within a process by the sequence, across processes by its random start.
    """
    if chars < 16:
        draw = _bits or _seed()
        return f"{prefix}_{draw(chars * 4):0{chars}x}"
    sequence = _sequence or _start_sequence()
    rest = chars - _TIME_DIGITS
    step = (int(time.time()) - _ORDERED_FROM) // _STEP_S
    return f"{prefix}_{step:0{_TIME_DIGITS}x}{next(sequence) % (1 << rest * 4):0{rest}x}"


def time_ordered_uuid() -> str:
    """A version 7 UUID (RFC 9562): the Unix time in milliseconds, then 74 random bits.

    Like `new_id`'s ids, it sorts by when it was made, so rows keyed by it append to their
    indexes instead of landing each in the middle of a large one (D404).
    """
    draw = _bits or _seed()
    random_bits = draw(74)
    value = (
        (time.time_ns() // 1_000_000 & (1 << 48) - 1) << 80
        | 0x7 << 76
        | (random_bits >> 62) << 64
        | 0b10 << 62
        | random_bits & (1 << 62) - 1
    )
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


_ORDERED_FROM = 1_577_836_800
"""2020-01-01T00:00:00Z: time-ordered ids count from here (six digits of 64 s: until 2054)."""
_STEP_S = 64
_TIME_DIGITS = 6
_sequence: Iterator[int] | None = None
"""This process's id sequence (`itertools.count`: `next` is atomic across threads)."""


def _start_sequence() -> Iterator[int]:
    global _sequence
    draw = _bits or _seed()
    sequence = _sequence = itertools.count(draw(40))
    return sequence


def _seed() -> Callable[[int], int]:
    global _bits
    import random

    draw = _bits = random.Random(os.urandom(32)).getrandbits
    return draw


def _after_fork_in_child() -> None:
    global _pid, _bits, _sequence
    _pid = os.getpid()
    _bits = None
    _sequence = None


os.register_at_fork(after_in_child=_after_fork_in_child)
