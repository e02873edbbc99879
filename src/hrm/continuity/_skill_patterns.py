"""The intent and negative patterns of skill rules: their compiled form and the checks made at load.

A rule's regular expressions are the one part of skill activation that could run unbounded on a
large prompt, and Python's ``re`` cannot be interrupted. What keeps them bounded is pure string
analysis of each pattern, done once when a rules file loads: rejecting groups that repeat an
unbounded quantifier (``(a+)+``), and finding the literals every match must contain, so a pattern
is compiled and run only when those literals occur in the prompt. It lives here, apart from the
loader and matcher in `hrm.continuity.skills`, so it can be read and property-tested on its own.

`hrm hook` imports this module on every prompt: it imports only `re`.
"""

from __future__ import annotations

import re


class _Pattern:
    """One intent or negative pattern: compiled on first use, when its literals are present."""

    __slots__ = ("_regex", "pattern", "required")

    def __init__(self, pattern: str, required: tuple[frozenset[str], ...] | None) -> None:
        self.pattern = pattern
        self.required = required
        """Literals a match must contain (see `_required_literals`); None means always run."""
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern, re.IGNORECASE)
        return self._regex


class _Compiled:
    __slots__ = ("intents", "keywords", "negatives")

    def __init__(
        self,
        keywords: tuple[tuple[str, tuple[str, ...]], ...],
        intents: tuple[_Pattern, ...],
        negatives: tuple[_Pattern, ...],
    ) -> None:
        self.keywords = keywords
        self.intents = intents
        self.negatives = negatives


_NOTHING_COMPILED = _Compiled((), (), ())


def _has_nested_quantifier(pattern: str) -> bool:
    """Whether a group containing an unbounded quantifier is itself repeated (``(a+)+``)."""
    stack: list[bool] = []
    index, closed_with_quantifier = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            closed_with_quantifier = False
            continue
        if char == "[":
            end = index + 1
            if end < len(pattern) and pattern[end] == "^":
                end += 1
            end += 1  # a ']' right after '[' is literal
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            index = end + 1
            closed_with_quantifier = False
            continue
        repeats = char in "*+" or (char == "{" and re.match(r"\{\d*,\d*\}", pattern[index:]))
        if repeats and closed_with_quantifier:
            return True
        if char == "(":
            stack.append(False)
        elif char == ")" and stack:
            inner = stack.pop()
            closed_with_quantifier = inner
            if stack:
                stack[-1] = stack[-1] or inner
            index += 1
            continue
        elif repeats and stack:
            stack[-1] = True
        closed_with_quantifier = False
        index += 1
    return False


_LITERAL_CHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _'-/:,")
_GROUP_ALTERNATIVES = r"\((?:\?:)?([A-Za-z0-9 _'\-/:,|]+)\)"


def _required_literals(pattern: str) -> tuple[frozenset[str], ...] | None:
    """Literals a match must contain: each set needs one member present. None: no filter.

    Understands the shape nearly all real intent patterns have — top-level literal runs and
    groups of literal alternatives, joined by anything (``(create|make).*?handoff``). Runs or
    groups followed by an optional quantifier are not required; a top-level ``|`` disables it.
    """
    required: list[frozenset[str]] = []
    run: list[str] = []
    index, depth = 0, 0
    for char in pattern:
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            return None

    def optional_at(position: int) -> bool:
        return position < len(pattern) and (
            pattern[position] in "?*" or pattern.startswith("{0", position)
        )

    def flush(drop_last: bool) -> None:
        text = "".join(run[:-1] if drop_last else run).strip().lower()
        if text and text.isascii():
            required.append(frozenset({text}))
        run.clear()

    while index < len(pattern):
        char = pattern[index]
        group = re.compile(_GROUP_ALTERNATIVES).match(pattern, index) if char == "(" else None
        if group:
            flush(drop_last=False)
            end = group.end()
            options = {o.strip().lower() for o in group.group(1).split("|")}
            if not optional_at(end) and all(o and o.isascii() for o in options):
                required.append(frozenset(options))
            index = end
        elif char in _LITERAL_CHAR:
            run.append(char)
            index += 1
            if optional_at(index):
                flush(drop_last=True)
        elif char == "\\" and index + 1 < len(pattern) and not pattern[index + 1].isalnum():
            run.append(pattern[index + 1])
            index += 2
            if optional_at(index):
                flush(drop_last=True)
        else:
            flush(drop_last=False)
            index = _skip_construct(pattern, index)
    flush(drop_last=False)
    return tuple(required) or None


def _skip_construct(pattern: str, index: int) -> int:
    """The index after the escape, character class or (non-literal) group at `index`."""
    char = pattern[index]
    if char == "\\":
        return index + 2
    if char == "{":
        close = pattern.find("}", index)
        return index + 1 if close < 0 else close + 1
    if char not in "([":
        return index + 1
    depth, position = 0, index
    while position < len(pattern):
        current = pattern[position]
        if current == "\\":
            position += 2
            continue
        if current == "[":
            position = _class_end(pattern, position)
            if char == "[":
                return position
            continue
        depth += (current == "(") - (current == ")")
        position += 1
        if depth == 0:
            return position
    return position


def _class_end(pattern: str, index: int) -> int:
    end = index + 1
    if end < len(pattern) and pattern[end] == "^":
        end += 1
    end += 1  # a ']' right after '[' is literal
    while end < len(pattern) and pattern[end] != "]":
        end += 2 if pattern[end] == "\\" else 1
    return end + 1
