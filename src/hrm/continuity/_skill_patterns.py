"""The intent and negative patterns of skill rules: which engine runs each, and the load checks.

A rule's regular expressions are the one part of skill activation that could run unbounded on a
prompt, and Python's ``re`` backtracks: ``(a|aa)*c`` took 11 s on a 39-character prompt, and
any pattern repeating ``.*?`` twice costs a cube of the line length on the wrong text. So each
pattern is parsed once, when its rules file loads, and runs on one of two engines (D243):

* Python's ``re`` when it repeats nothing more than once (``(create|make) handoff``,
  ``resume\b``): without a repetition, backtracking at a position is bounded by the pattern
  alone, so a search is linear in the prompt;
* RE2 (``google-re2``), whose automaton matches in linear time, for every pattern that repeats
  (``.*?``, ``+``, ``{2,}``). RE2 is loaded only when such a pattern has to run on a prompt —
  its required literals are present — which costs ~8 M instructions (~2 ms, 3–5 ms of a hook's
  wall time) once per process;
* except that a pattern with one repetition, of one character (``(create|make).*?handoff``,
  ``fix\\w+``), runs on ``re`` when the text is at most `SHORT_TEXT` characters (D411): each
  start then tries at most one length per character of the text, so a search is at most
  quadratic in a short text (≤ ~10 ms at 1,000 characters on the worst text measured) — most
  typed prompts — and loading RE2 for them cost more than the search.

A pattern RE2 cannot run (a backreference or a lookaround) that also repeats is rejected at load
with a message naming it; so is a pattern neither engine compiles. Every pattern also records
the literals every match must contain, so it is compiled and run only when those occur in the
prompt. It lives here, apart from the loader and matcher in `hrm.continuity.skills`, so it can
be read and property-tested on its own.

`hrm hook` imports this module on every prompt: it imports only `re` (and `importlib`, which
the interpreter has already loaded).
"""

from __future__ import annotations

import importlib
import re

TYPE_CHECKING = False  # `hrm hook` imports this module: no typing at run time
if TYPE_CHECKING:
    from typing import Any, Protocol

    class _Searcher(Protocol):
        def search(self, text: str) -> object: ...

ENGINE_RE = "re"
ENGINE_RE2 = "re2"
ENGINE_SHORT_RE = "re-short"
"""``re`` on a text of at most `SHORT_TEXT` characters, RE2 on a longer one."""
SHORT_TEXT = 1_000
_RE2_MAX_MEM = 8 << 20
"""Memory RE2 may use for one pattern's automaton (its default is 8 MB too)."""


class _Pattern:
    """One intent or negative pattern: compiled on first use, when its literals are present."""

    __slots__ = ("_regex", "_short", "engine", "pattern", "required")

    def __init__(
        self, pattern: str, required: tuple[frozenset[str], ...] | None, engine: str = ENGINE_RE
    ) -> None:
        self.pattern = pattern
        self.required = required
        """Literals a match must contain (see `_required_literals`); None means always run."""
        self.engine = engine
        """``re``, ``re2`` or ``re-short`` (see the module docstring)."""
        self._regex: _Searcher | None = None
        self._short: _Searcher | None = None

    def search(self, text: str) -> object:
        """The first match in `text`, on the engine its length and the pattern call for."""
        if self.engine == ENGINE_SHORT_RE and len(text) <= SHORT_TEXT:
            if self._short is None:
                self._short = _compiled_or_never(self.pattern, ENGINE_RE)
            return self._short.search(text)
        return self.regex.search(text)

    @property
    def regex(self) -> _Searcher:
        """The pattern compiled for a text of any length."""
        if self._regex is None:
            self._regex = _compiled_or_never(self.pattern, self.engine)
        return self._regex


def _compiled_or_never(pattern: str, engine: str) -> _Searcher:
    try:
        return _compile(pattern, engine)
    except ValueError:
        # Checked when its file loaded; RE2 has since gone missing. Never a hang or a crash on
        # the prompt path: the pattern matches nothing.
        return _NEVER


class _NeverMatches:
    def search(self, text: str) -> None:
        return None


_NEVER = _NeverMatches()


def checked_pattern(pattern: str) -> _Pattern:
    """The pattern with its engine chosen and compiled once to prove it valid.

    Raises:
        ValueError: A message naming the pattern and what is wrong with it.
    """
    parser: Any = importlib.import_module("re._parser")  # `re` has loaded it already
    try:
        parsed = parser.parse(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None
    except RecursionError:
        raise ValueError(f"invalid regex {pattern!r}: nested too deeply") from None
    engine = _engine_for(parsed)
    entry = _Pattern(pattern, _required_literals(pattern), engine)
    entry._regex = _compile(pattern, engine)
    if engine == ENGINE_SHORT_RE:
        entry._short = _compile(pattern, ENGINE_RE)
    return entry


def _engine_for(parsed: Any) -> str:
    """``re`` for a pattern that repeats nothing, ``re-short`` for one whose only repetition is
    of one character, else ``re2``."""
    constants: Any = importlib.import_module("re._constants")
    repeats = _repetitions(parsed, constants)
    if not repeats:  # without a repetition of more than one (`?` is fine)
        return ENGINE_RE
    if len(repeats) == 1 and _one_character(repeats[0], constants):
        return ENGINE_SHORT_RE
    return ENGINE_RE2


def _repetitions(items: Any, constants: Any) -> list[Any]:
    """The bodies of every repetition of more than one in a parsed pattern."""
    repeats = {constants.MAX_REPEAT, constants.MIN_REPEAT}
    repeats.add(getattr(constants, "POSSESSIVE_REPEAT", constants.MAX_REPEAT))
    found: list[Any] = []
    stack = [items]
    while stack:
        for op, value in stack.pop():
            if op in repeats:
                if value[1] > 1:
                    found.append(value[2])
                stack.append(value[2])
            elif op is constants.BRANCH:
                stack.extend(value[1])
            elif op is constants.SUBPATTERN:
                stack.append(value[-1])
            elif op in (constants.ASSERT, constants.ASSERT_NOT):
                stack.append(value[1])
            elif op is constants.GROUPREF_EXISTS:
                stack.extend(branch for branch in value[1:] if branch is not None)
            elif op is getattr(constants, "ATOMIC_GROUP", None):
                stack.append(value)
    return found


def _one_character(body: Any, constants: Any) -> bool:
    """Does a repetition's body match exactly one character (``.``, ``\\w``, ``[a-z]``, ``x``,
    or a group of one of them)?"""
    while len(body) == 1 and body[0][0] is constants.SUBPATTERN:
        body = body[0][1][-1]
    single = (constants.ANY, constants.IN, constants.LITERAL, constants.NOT_LITERAL)
    return len(body) == 1 and body[0][0] in single


def _compile(pattern: str, engine: str) -> _Searcher:
    """`pattern` compiled for `engine` (``re-short`` compiles for RE2: the long texts' engine)."""
    if engine == ENGINE_RE:
        try:
            return re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"invalid regex {pattern!r}: {exc}") from None
    try:
        import re2
    except ImportError:
        raise ValueError(
            f"pattern {pattern!r} repeats, and repetition runs only on the linear-time engine "
            "RE2, which is not installed (pip install google-re2)"
        ) from None
    options = re2.Options()
    options.case_sensitive = False
    options.max_mem = _RE2_MAX_MEM
    options.log_errors = False  # stderr is not ours to write on (the hook protocol)
    try:
        compiled: _Searcher = re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(
            f"pattern {pattern!r} repeats, and could take exponential time in Python's engine;"
            f" the linear-time engine RE2 cannot run it ({reason}): rewrite it without"
            " lookarounds or backreferences"
        ) from None
    return compiled


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
