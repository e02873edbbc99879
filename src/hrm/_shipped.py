"""The files hrm ships into every home (``hrm/data/home``), compared without being parsed.

`hrm init` copies them into a home unchanged, and most homes never edit them. A file that is
still byte for byte what hrm ships is valid by construction (tests validate every shipped file),
so opening a stack can skip the parsers and validators those files would need — jsonschema for
attention templates, PyYAML for agent definitions — about a fifth of `hrm turn`'s start-up.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["SHIPPED_HOME", "shipped_bytes", "unchanged"]

SHIPPED_HOME = Path(__file__).resolve().parent / "data" / "home"
"""The tree `hrm init` copies into a home."""


@functools.cache
def shipped_bytes(relative: Path) -> bytes | None:
    """The bytes of the shipped file at `relative` (a home-relative path), None if none."""
    try:
        return (SHIPPED_HOME / relative).read_bytes()
    except OSError:
        return None


def unchanged(path: Path, relative: Path) -> bool:
    """Whether `path` holds exactly the shipped file at `relative` (False if unreadable)."""
    shipped = shipped_bytes(relative)
    if shipped is None:
        return False
    try:
        return path.read_bytes() == shipped
    except OSError:
        return False
