"""Where a person's message splits into sentences, as offsets: what every reader reads.

Readers classify sentences (a preference, a request to forget, a question), and arbitration
weighs what is left outside the sentences that were commands, so the split must keep offsets
into the text it was given. It splits after ``.``, ``!``, ``?`` and ``;`` followed by white
space, and at line breaks; it does not split inside numbers ("3.5"), common abbreviations
("e.g.", "i.e.", "vs.") or an ellipsis run. Linear in the text's length; never raises.
"""

from __future__ import annotations

import re

from hrm.reading.types import Span

__all__ = ["IN_PHRASE", "IN_SENTENCE", "MAX_READ_CHARS", "sentence_spans"]

MAX_READ_CHARS = 20_000
"""Characters of a message that readers look at: a 1 MB paste is read by its head, in bounded
time, and the model still sees the whole message."""

IN_SENTENCE = r"(?:[^.!?;\n]|\.(?=\w))"
"""One character of a sentence's words, as a pattern for the readers' slots: anything but where
a sentence ends, and a dot between word characters ("fly.io", "next.js", "3.12") stays inside
(D425). Its two alternatives exclude each other, so a repetition of it stays linear."""
IN_PHRASE = r"(?:[^.!?;,:\n]|\.(?=\w))"
"""`IN_SENTENCE` that also stops at a comma or a colon: one phrase of a sentence."""

_BREAK = re.compile(r"(?:[.!?;]+(?=\s)|\n)")
_ABBREVIATIONS = ("e.g", "i.e", "vs", "etc", "approx", "mr", "mrs", "ms", "dr", "st", "no")


def sentence_spans(text: str, limit: int = MAX_READ_CHARS) -> tuple[Span, ...]:
    """The sentences of `text[:limit]` as (start, end) offsets, trimmed of surrounding white
    space; empty sentences are skipped. Terminal punctuation stays inside its sentence."""
    head = text[:limit]
    spans: list[Span] = []
    start = 0
    for match in _BREAK.finditer(head):
        end = match.end()
        if match.group() != "\n" and _abbreviation_before(head, match.start()):
            continue
        _add(head, start, end, spans)
        start = end
    _add(head, start, len(head), spans)
    return tuple(spans)


def _abbreviation_before(text: str, dot: int) -> bool:
    if text[dot] != ".":
        return False
    word_start = dot
    while word_start > 0 and (text[word_start - 1].isalpha() or text[word_start - 1] == "."):
        word_start -= 1
    return text[word_start:dot].lower() in _ABBREVIATIONS


def _add(text: str, start: int, end: int, spans: list[Span]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))
