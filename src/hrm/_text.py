"""Shortening text for a person to read: whole words, and a mark where something was cut."""

from __future__ import annotations

__all__ = ["shorten"]

_MARK = "…"


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters, cut after a whole word and marked.

    A title or a table cell cut mid-word ("for the bill") reads as a different word, and one cut
    without a mark reads as the whole text. A single word longer than half the room is cut
    inside it rather than dropped.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    if limit <= len(_MARK):
        return flat[:limit]
    room = limit - len(_MARK)
    head = flat[:room]
    space = head.rfind(" ")
    if flat[room] != " " and space > room // 2:
        head = head[:space]
    return head.rstrip(" ,;:—-") + _MARK
