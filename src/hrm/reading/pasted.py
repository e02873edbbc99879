"""What a message pastes (code, tracebacks, logs, data) apart from what the person says.

People using a coding assistant paste: a traceback under "I'm getting this error", a function
under "here's the function", a log line before "the database is down". The deterministic
readers of a message — preference patterns, emergency, urgency and deadline markers, focus
requests, the follow-up and new-topic cues, a new problem's title — are about what the person
says. Read over the paste, they took the comment ``# I prefer explicit checks over asserts``
for a preference and canonized it, read ``ValueError: urgent: …`` as urgency, and titled a
problem by a line of JSON (D71).

`spoken` keeps the person's own lines. A line is pasted when it sits in a fenced block, is
indented (a list item is not), belongs to a traceback, is a log line, an exception or a
compiler's diagnostic, a line of JSON, or has the shape of code (``def f(x):``, ``x = 1``,
``});``, ``SELECT … FROM``). A comment line, or a bare ``key:``, is pasted only next to another
pasted line: alone, ``# Plan`` is a heading and "Steps:" is speech. The rules lean to keeping a
line: prose taken for code loses a marker the person can say again, while code taken for prose
is the failure this module exists to stop. The model still sees the whole message.

Pure and deterministic (D12).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["error_line", "spoken"]

_SCAN_LIMIT = 100_000
"""Characters read; what lies past them is kept as said (a 1 MB input stays cheap)."""

_FENCE = re.compile(r"^\s*(?:```|~~~)")
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_FRAME = re.compile(r'^\s*(?:File "[^"]*", line \d+|at [\w$.<>/]+\(.*\)\s*$)')
_EXCEPTION = re.compile(
    r"^\s*(?:[a-z_][\w]*\.)*(?:[A-Z][a-z0-9]+)+(?:Error|Exception|Warning|Exit|Interrupt)\b"
    r"(?::|\s*$)"
)
"""``ValueError: …``, ``requests.exceptions.ConnectionError: …``, ``KeyboardInterrupt``: one
capitalised word at least before the suffix, so a person's "Error: I can't log in" is speech."""
_DIAGNOSTIC = re.compile(
    r"^\s*(?:[\w.\\/-]+\.\w+:\d+(?::\d+:|:\s*(?:fatal |error|warning|note)\b)"
    r"|error\[E\d+\]:|npm ERR!|panic:\s|E\s{2,}\S|(?:FAILED|ERROR|PASSED)\s+\S+::\S)"
)
"""A compiler's or test runner's line: ``src/main.c:10:5: error: …``, ``error[E0382]: …``,
``npm ERR! …``, ``panic: …``, pytest's ``E   assert 3 == 2`` and ``FAILED tests/…::test_x``."""
_LOG = re.compile(
    r"^\s*\[?(?:\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\d{1,2}:\d{2}:\d{2}[.,]\d+"
    r"|(?:DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|SEVERE|TRACE)(?:\]|:|\s+-|\s+\[))"
)
_JSON_LINE = re.compile(
    r'^\s*(?:(?:\{\s*["}]|\[\s*(?:[\[{"\]\d-]|true|false|null)).*[\]}],?|"[^"\n]+"\s*:\s*.*)\s*$'
)
"""A line of JSON: an object or array that opens as JSON does (``[shares a photo]`` is
speech), or a ``"key": value`` member."""
_BRACKETS = re.compile(r"^\s*[\[\]{}()<>/;,]+\s*$")
_CODE_START = re.compile(
    r"^\s*(?:"
    r"(?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:{]|from\s+[\w.]+\s+import\s"
    r"|import\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+)*\s*;?\s*$"
    r"|return(?:\s+[^\s]+)?\s*;?\s*$|raise\s+\w+(?:\(|\s*$)"
    r"|(?:else|try|finally)\s*:\s*$"
    r"|except\b[^:\n]*:\s*$|@[\w.]+(?:\(.*\))?\s*$"
    r"|(?:const|let|var)\s+\w+\s*[=:;]|function\s*\w*\s*\(|(?:pub\s+)?fn\s+\w+\s*[(<]"
    r"|func\s+\w+\s*\(|(?:public|private|protected|static)\s+[\w<>\[\],]+\s+\w+\s*[({=;]"
    r"|#include\b|package\s+[\w.]+;?\s*$|SELECT\b.*\bFROM\b|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b"
    r"|DELETE\s+FROM\b|CREATE\s+(?:TABLE|INDEX|VIEW)\b|\$\s+\S|>>>\s|PS>\s"
    r"|(?:FROM|RUN|COPY|ADD|CMD|ENTRYPOINT|ENV|WORKDIR|EXPOSE|ARG|LABEL|USER|VOLUME)\s+\S"
    r"|[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[-+*/%|&]|//|\*\*)?=(?!=)\s*\S"
    r")"
)
"""Line shapes that are code in any message; keywords are case-sensitive (code's case), and
each asks for code's punctuation so that "import the data first" or "let me know" is speech."""
_BLOCK_OPENER = re.compile(r"^\s*(?:if|elif|while|for|with)\b.*:\s*$")
"""``if x > 0:``, ``for row in rows:``; code only with code's punctuation in it (`_is_pasted`):
"If it fails, what should I check:" is speech. Two steps, not one expression: a pattern that
looks for the punctuation and the colon at once backtracks for seconds on a long line."""
_CODE_PUNCTUATION = frozenset("=()<>[].")
_CODE_END = re.compile(r"(?:[{;]|^\s*[)\]}].*|\)\s*:|=>)\s*$")
_COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*/|--\s)")
_BARE_KEY = re.compile(r"^[\w.-]+:\s*$")
"""``llm:`` over an indented YAML block; alone ("Steps:") it is speech, like a comment."""
_INDENTED = re.compile(r"^(?: {2,}|\t)\S")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+\S")


def spoken(text: str) -> str:
    """`text` without what it pastes: the person's own lines, in order.

    Returns `text` itself when nothing in it is pasted (most messages), so callers may compare
    by identity. A message that is only a paste says nothing: ``""``.
    """
    if len(text) > _SCAN_LIMIT:
        head = _said(text[:_SCAN_LIMIT])
        return text if head is None else head + text[_SCAN_LIMIT:]
    said = _said(text)
    return text if said is None else said


@lru_cache(maxsize=64)
def _said(text: str) -> str | None:
    """What `text` says when it pastes something, None when it pastes nothing; kept for the
    few texts a turn reads (several readers ask about one message). None rather than the text
    itself: the cache would hand back an equal text, not the caller's, and `spoken` promises
    the caller's own."""
    if "\n" not in text:  # one line is a paste only as a whole: JSON, an exception, a log
        return "" if _pasted_alone(text) else None
    lines = text.split("\n")
    pasted = _pasted_lines(lines)
    if not any(pasted):
        return None
    return "\n".join(line for line, gone in zip(lines, pasted, strict=True) if not gone).strip()


def error_line(text: str) -> str | None:
    """The last exception or error line the message pastes (``AssertionError: assert …``), if
    any: what a problem opened by a paste is about when the person's words say little."""
    lines = text[:_SCAN_LIMIT].split("\n")
    pasted = _pasted_lines(lines)
    found = [
        line.strip()
        for line, gone in zip(lines, pasted, strict=True)
        if gone
        and (
            _EXCEPTION.match(line)
            or _LOG_ERROR.match(line)
            or (_DIAGNOSTIC.match(line) and "error" in line.lower())
        )
    ]
    return found[-1] if found else None


_LOG_ERROR = re.compile(r"^\s*\[?(?:ERROR|CRITICAL|FATAL|SEVERE)\b")


_ALONE_MARKS = (":", "[", "{", "ERR!")


def _pasted_alone(line: str) -> bool:
    """A one-line message that is a paste: JSON, an exception, a diagnostic or a log line."""
    if not any(mark in line for mark in _ALONE_MARKS) and not line.lstrip().startswith("E "):
        return False  # each shape has one of these; most messages have none
    return bool(
        _JSON_LINE.match(line)
        or _EXCEPTION.match(line)
        or _DIAGNOSTIC.match(line)
        or _LOG.match(line)
    )


def _pasted_lines(lines: list[str]) -> list[bool]:
    """Per line, whether it is pasted (module docstring)."""
    pasted = [False] * len(lines)
    beside: list[int] = []  # comments and bare keys: pasted only beside a pasted line
    in_fence = in_traceback = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            pasted[i] = True
            in_fence = not in_fence
            continue
        if in_fence:
            pasted[i] = True
            continue
        if not line.strip():
            continue
        if _TRACEBACK.match(line):
            pasted[i] = in_traceback = True
            continue
        if in_traceback:
            pasted[i] = True
            # The exception line ends a traceback; frames and their source lines go before it.
            in_traceback = not (_EXCEPTION.match(line) and not _INDENTED.match(line))
            continue
        if (_COMMENT.match(line) or _BARE_KEY.match(line)) and not _INDENTED.match(line):
            beside.append(i)
            continue
        pasted[i] = _is_pasted(line)
    changed = True
    while changed:  # a run of such lines beside code is pasted, line by line
        changed = False
        for i in beside:
            if not pasted[i] and _beside_paste(pasted, lines, i):
                pasted[i] = changed = True
    return pasted


def _is_pasted(line: str) -> bool:
    if _INDENTED.match(line):
        return not _LIST_ITEM.match(line)
    return bool(
        _FRAME.match(line)
        or _EXCEPTION.match(line)
        or _DIAGNOSTIC.match(line)
        or _LOG.match(line)
        or _JSON_LINE.match(line)
        or _BRACKETS.match(line)
        or _CODE_START.match(line)
        or _CODE_END.search(line)
        or (_BLOCK_OPENER.match(line) is not None and not _CODE_PUNCTUATION.isdisjoint(line))
    )


def _beside_paste(pasted: list[bool], lines: list[str], i: int) -> bool:
    """Is the nearest non-blank line before or after line `i` pasted (or a pasted comment)?"""
    for step in (-1, 1):
        j = i + step
        while 0 <= j < len(lines) and not lines[j].strip():
            j += step
        if 0 <= j < len(lines) and pasted[j]:
            return True
    return False
