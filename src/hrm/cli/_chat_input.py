"""What `hrm chat` does with keys pressed while an answer streams, and how it wraps the answer.

A terminal echoes what is typed as it is typed, so a line typed while hrm answered appeared in
the middle of the answer, and was then sent glued to whatever came next (issue 33 §6). While an
answer streams, `TypeAhead` turns the terminal's echo and line buffering off and collects the
keys itself; when the answer ends, each finished line becomes the next message, in order, shown
as typed during the answer, and an unfinished one is put back on the prompt to go on editing
(D285). Ctrl-C still interrupts: signals stay on.

`WordWrap` breaks the streamed answer at spaces, not in the middle of a word as the terminal
does at its edge.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChatInput", "TypeAhead", "Typed", "WordWrap", "parse_typed"]

_ERASE = {"\x7f", "\x08"}
_KILL_LINE = "\x15"  # Ctrl-U
_ESCAPE = "\x1b"


@dataclass(frozen=True, slots=True)
class Typed:
    """What was typed: the finished lines, and the line still being written."""

    lines: tuple[str, ...] = ()
    partial: str = ""


def parse_typed(data: bytes) -> Typed:
    """The lines typed in `data`, applying what a terminal's line editing would have applied:
    Backspace erases a character, Ctrl-U the line; escape sequences (arrow keys) are dropped;
    Return or Enter ends a line. Blank lines are not messages and are dropped."""
    text = data.decode("utf-8", errors="replace")
    lines: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if char in ("\r", "\n"):
            line = "".join(current).strip()
            if line:
                lines.append(line)
            current = []
            if char == "\r" and text[index : index + 1] == "\n":
                index += 1
        elif char in _ERASE:
            if current:
                current.pop()
        elif char == _KILL_LINE:
            current = []
        elif char == _ESCAPE:
            index = _after_escape(text, index)
        elif char == "\t" or char >= " ":
            current.append(char)
    return Typed(tuple(lines), "".join(current))


def _after_escape(text: str, index: int) -> int:
    """The index after an escape sequence starting before `index` (CSI ``ESC [ … final``)."""
    if text[index : index + 1] in ("[", "O"):
        index += 1
        while index < len(text) and not ("@" <= text[index] <= "~"):
            index += 1
        return index + 1
    return index + 1 if index < len(text) else index


class TypeAhead:
    """Collects the keys typed on terminal `fd` while the block runs (module docstring).

    Off a terminal (a pipe, a test harness), it changes nothing and collects nothing: piped
    lines are read after the turn as they always were.
    """

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.typed = Typed()

    @contextlib.contextmanager
    def quiet(self) -> Iterator[TypeAhead]:
        """No echo and no line buffering while the block runs; `typed` holds what came."""
        self.typed = Typed()
        saved = self._attributes()
        if saved is None:
            yield self
            return
        import termios

        assert self.fd is not None
        lflag, control = saved[3], list(saved[6])
        assert isinstance(lflag, int)
        control[termios.VMIN] = 0  # a read returns what is there, at once
        control[termios.VTIME] = 0
        quiet: list[Any] = [*saved[:3], lflag & ~(termios.ECHO | termios.ICANON), *saved[4:6],
                            control]  # signals (Ctrl-C) stay on
        termios.tcsetattr(self.fd, termios.TCSANOW, quiet)
        try:
            yield self
        finally:
            try:
                self.typed = parse_typed(self._drain())
            finally:
                termios.tcsetattr(self.fd, termios.TCSANOW, saved)

    def _attributes(self) -> list[Any] | None:
        if self.fd is None or not os.isatty(self.fd):
            return None
        try:
            import termios

            attributes: list[Any] = termios.tcgetattr(self.fd)
        except (ImportError, OSError):  # no termios (Windows) or not a real terminal
            return None
        return attributes

    def _drain(self) -> bytes:
        assert self.fd is not None
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(self.fd, 4096)
            except (BlockingIOError, InterruptedError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


@dataclass
class ChatInput:
    """The messages of `hrm chat`: the lines typed during an answer first, then the prompt."""

    type_ahead: TypeAhead
    queue: deque[str] = field(default_factory=deque)
    """Lines typed while hrm answered, not yet sent."""
    partial: str = ""
    """An unfinished line typed during the answer, put back on the next prompt."""

    @contextlib.contextmanager
    def answering(self) -> Iterator[TypeAhead]:
        """Wrap a streamed answer: what is typed meanwhile is queued, not echoed into it."""
        try:
            with self.type_ahead.quiet() as ahead:
                yield ahead
        finally:
            typed = self.type_ahead.typed
            self.queue.extend(typed.lines)
            self.partial += typed.partial

    def take_queued(self) -> str | None:
        """The next line typed during an answer, or None."""
        return self.queue.popleft() if self.queue else None

    def take_partial(self) -> str:
        """The unfinished line to put back on the prompt (once)."""
        partial, self.partial = self.partial, ""
        return partial


class WordWrap:
    """Breaks streamed text at spaces so no word is split at the terminal's edge.

    A word is held until the space after it arrives (a word's delay); a word longer than the
    whole width is broken where it must be.
    """

    def __init__(self, width: int, *, column: int = 0) -> None:
        self.width = max(8, width)
        self.column = column
        self._space = ""
        self._word = ""

    def feed(self, text: str) -> str:
        """What to write for `text`, with line breaks where words would not fit."""
        out: list[str] = []
        for char in text:
            if char == "\n":
                out.append(self._flush_word())
                out.append("\n")
                self.column, self._space = 0, ""
            elif char in (" ", "\t"):
                out.append(self._flush_word())
                self._space += char
            else:
                self._word += char
                if len(self._word) >= self.width:
                    out.append(self._flush_word())
        return "".join(out)

    def flush(self) -> str:
        """The word still held (at the end of the answer)."""
        return self._flush_word()

    def _flush_word(self) -> str:
        if not self._word:
            return ""
        word, space = self._word, self._space
        self._word = self._space = ""
        if self.column > 0 and self.column + len(space) + len(word) > self.width:
            self.column = len(word)
            return "\n" + word
        self.column += len(space) + len(word)
        return space + word
