"""The real clock, in a module of its own so the hook's path can have it without `hrm.types`.

`hrm.types` re-exports it (with the `Clock` alias); importing it from there costs the hook
`dataclasses` and `typing` for one function.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["system_clock"]


def system_clock() -> datetime:
    """The real clock: now, in UTC, timezone-aware."""
    return datetime.now(UTC)
