"""Times read from legacy handoffs, ledgers and file names: always aware, naive meaning UTC.

Used on the hook path (reading hrm's own handoffs and the continuity ledger at SessionStart), so
it imports only the standard library.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["as_datetime", "timestamp_from_name"]

_NAME_STAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[_T](\d{2})-(\d{2})(?:-(\d{2}))?(?:[.-](\d{1,6}))?"
)


def as_datetime(raw: Any) -> datetime | None:
    """An aware datetime from YAML's datetime/date or an ISO-8601 string; naive means UTC."""
    if isinstance(raw, datetime):
        return raw if raw.tzinfo is not None else raw.replace(tzinfo=UTC)
    if isinstance(raw, date):
        return datetime(raw.year, raw.month, raw.day, tzinfo=UTC)
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return None


def timestamp_from_name(name: str) -> datetime | None:
    """The UTC time in a legacy file name (``2026-01-14_21-24-35_slug.md``), if any."""
    match = _NAME_STAMP.search(name)
    if not match:
        return None
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        return datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
            int((fraction or "0").ljust(6, "0")), tzinfo=UTC,
        )  # fmt: skip
    except ValueError:
        return None
