"""Spotting a model that has fallen into a loop, so its decoding can stop there.

Small models (the bundled SmolLM2-135M above all) fall into loops: the same line, or the same
two lines, again and again until ``max_tokens`` — on two cores, ten seconds of decoding that
nobody reads, while the next call waits for the model. `loop_start` says where such a loop
began, so the local adapter can stop decoding and keep one copy of what repeated.

The checks are narrow on purpose: an answer that is cut when it was not looping is worse than
a loop that runs on. A repeated span must hold at least two words (rules, table separators and
runs of punctuation repeat legitimately), short spans must repeat four times in a row, and a
cycle of lines must fill the last six lines of the answer with at most two distinct lines
(numbering and list markers ignored, so ``1. Do X`` / ``2. Do X`` counts as one line).
"""

from __future__ import annotations

import re

__all__ = ["loop_start"]

_MIN_UNIT = 12
"""Shortest repeated span, in characters, the periodic check considers."""
_MAX_UNIT = 400
"""Longest repeated span the periodic check considers."""
_SHORT_UNIT = 40
"""Spans shorter than this must repeat `_SHORT_COPIES` times; longer ones `_LONG_COPIES`."""
_SHORT_COPIES = 4
_LONG_COPIES = 3
_WINDOW = 6
"""The last this many non-blank lines are what the line-cycle check reads."""
_MAX_DISTINCT = 2
_TAIL = _LONG_COPIES * _MAX_UNIT + _MAX_UNIT
"""Only this much of the end of the text is read: a loop is always at the end."""

_WORDS = re.compile(r"[^\W\d_]{2,}\W+[^\W\d_]{2,}")
_MARKER = re.compile(r"^\s*(?:[-*+•>]|#+|\d+[.)]|[a-z][.)])?\s*", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_ENDS = frozenset(".!?:")
_BOUNDARY = re.compile(r"[.!?](?=\s)|\n")


def loop_start(text: str) -> int | None:
    """Where `text` began to loop, or ``None`` when it does not end in a loop.

    ``text[:index]`` keeps the answer up to and including one copy of what repeats. Reads only
    the last 1,600 characters (about 0.1 ms), so a caller may check after every token.
    """
    cut = _periodic_tail(text)
    line_cut = _line_cycle(text)
    if cut is None:
        return line_cut
    return cut if line_cut is None else min(cut, line_cut)


def _periodic_tail(text: str) -> int | None:
    """The start of the earliest exact loop: the text's end is one span repeated."""
    offset = max(0, len(text) - _TAIL)
    tail = text[offset:]
    n = len(tail)
    end = tail[-1:]
    for unit in range(_MIN_UNIT, min(_MAX_UNIT, n // _LONG_COPIES) + 1):
        if tail[n - 1 - unit] != end or tail[n - 1 - 2 * unit] != end:
            continue  # one character says most spans do not repeat, before any slicing
        last = tail[n - unit :]
        if tail[n - 2 * unit : n - unit] != last or tail[n - 3 * unit : n - 2 * unit] != last:
            continue
        if not _WORDS.search(last):
            continue
        start = n - unit  # walk back while the text stays periodic with this unit
        while start > 0 and tail[start - 1] == tail[start - 1 + unit]:
            start -= 1
        copies = (n - start) // unit
        if copies < (_SHORT_COPIES if unit < _SHORT_UNIT else _LONG_COPIES):
            continue
        cut = start + unit
        # The copy kept ends where the loop was found, often mid-sentence: finish its sentence
        # or line from the next copy, which begins the same way.
        if tail[cut - 1] == "\n" or tail[:cut].rstrip()[-1:] in _ENDS:
            return offset + cut
        boundary = _BOUNDARY.search(tail, cut, min(n, cut + unit))
        return offset + (boundary.end() if boundary else cut)
    return None


def _line_cycle(text: str) -> int | None:
    """The start of the first repeat in a cycle of at most two lines filling the end."""
    offset = max(0, len(text) - _TAIL)
    tail = text[offset:]
    complete = tail.rfind("\n")
    if complete < 0:
        return None
    lines: list[tuple[int, str]] = []  # (start in tail, normalised) of complete non-blank lines
    start = 0
    for raw in tail[: complete + 1].splitlines(keepends=True):
        key = _normalise(raw)
        if key:
            lines.append((start, key))
        start += len(raw)
    if offset:  # the first line may be cut by the tail's start
        lines = lines[1:]
    window = lines[-_WINDOW:]
    if len(window) < _WINDOW:
        return None
    distinct = {key for _, key in window}
    if len(distinct) > _MAX_DISTINCT or not all(_WORDS.search(key) for key in distinct):
        return None
    first = len(lines) - _WINDOW  # extend back over the lines the cycle is made of
    while first > 0 and lines[first - 1][1] in distinct:
        first -= 1
    seen: set[str] = set()
    for position, key in lines[first:]:
        if key in seen:
            return offset + position
        seen.add(key)
    return None  # pragma: no cover - six lines of at most two kinds always repeat one


def _normalise(line: str) -> str:
    return _SPACE.sub(" ", _MARKER.sub("", line)).strip().casefold()
