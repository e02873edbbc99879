"""Which of many marker patterns can match a text, from one pass over its words.

The deterministic layers (classification, signals) match a turn's text against a few dozen
marker lists, most of them regular expressions of the form ``\\b(?:word|word|...)``. Python's
regular expressions try every alternative at every position, so each list costs microseconds
even when, as usual, none of its words occur. But a match of such a pattern begins at the start
of a word of the text, and that word begins with one of the pattern's *heads*: the literal
letters, digits and underscores each alternative starts with. `HeadIndex` records the heads of
every list; `candidates` splits the text into words once and returns the lists one of whose
heads occurs. Only those need their regular expression run, so results are exactly the
regular expressions' own: the index only rules lists out.

A head is *exact* when the matched word must end right after it (``drop (?:table)``, ``rm -rf``,
``code\\b``) and a *prefix* otherwise (``compile\\w*``, ``tests?``, ``stack ?trace``). Heads are
read from the pattern's parse tree (`re._parser`, the parser `re.compile` itself uses; if a
future Python drops it, every list is simply always a candidate). A pattern that can begin
with anything but a literal word character (``!!!``, ``[\\d+]``, ``^\\s*``) is always a
candidate, and so is every list for a text that is not ASCII: case-insensitive matching of
non-ASCII letters (``ſ``, ``K``) does not follow `str.lower`, and the words are found in the
lower-cased text. The property test in ``tests/test_wordlists.py`` checks the promise against
the regular expressions themselves.
"""

from __future__ import annotations

import functools
import importlib
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

__all__ = ["HeadIndex", "heads_of", "required_literals"]

_WORD = re.compile(r"\w+")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")

_parser: Any
_c: Any
try:  # private to `re` (hence no type stubs); its shape has been stable since Python 3.11
    _parser = importlib.import_module("re._parser")
    _c = importlib.import_module("re._constants")
except ImportError:  # pragma: no cover - a Python without the parser: no index, same results
    _parser = None


def heads_of(pattern: str | re.Pattern[str]) -> frozenset[tuple[str, bool]] | None:
    """The ``(head, exact)`` pairs a match of `pattern` can begin its first word with.

    None when some match may begin otherwise (inside a word, with a non-word character or a
    character class), or when the pattern cannot be analysed: such a pattern is always run.
    """
    source, flags = (pattern.pattern, pattern.flags) if isinstance(pattern, re.Pattern) else (
        pattern, 0
    )
    if _parser is None:
        return None
    try:
        parsed = list(_parser.parse(source, flags))
    except (re.error, RecursionError):
        return None
    try:
        return _heads(parsed, "")
    except RecursionError:  # pragma: no cover - absurdly nested patterns are always run
        return None


def _heads(
    items: list[Any], prefix: str, anchored: bool = False
) -> frozenset[tuple[str, bool]] | None:
    """Heads of a parsed pattern whose match has already consumed `prefix` of its first word.

    `anchored`: a ``\\b`` or ``^`` was passed, so the match begins where a word begins (without
    one, ``cord`` matches inside "according", and no head describes that).
    """
    for index, (op, av) in enumerate(items):
        if op is _c.AT:
            if not prefix and av in (_c.AT_BOUNDARY, _c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
                anchored = True  # \b or ^ before the first word: the word starts here
                continue
            if prefix and av is _c.AT_BOUNDARY:
                return frozenset({(prefix, True)})
            break
        if op is _c.LITERAL:
            char = chr(av).lower()
            if char in _WORD_CHARS and (prefix or anchored):
                prefix += char
                continue
            return frozenset({(prefix, True)}) if prefix else None  # a non-word char ends it
        rest = items[index + 1:]
        if op is _c.SUBPATTERN and av[1] == 0 and av[2] == 0:  # a group without inline flags
            return _heads(list(av[3]) + rest, prefix, anchored)
        if op is _c.BRANCH:
            found: set[tuple[str, bool]] = set()
            for branch in av[1]:
                heads = _heads(list(branch) + rest, prefix, anchored)
                if heads is None:
                    return None
                found |= heads
            return frozenset(found)
        break  # a class, a repeat, any other construct: the word may go on, or be anything
    else:
        return frozenset({(prefix, True)}) if prefix else None
    return frozenset({(prefix, False)}) if prefix else None


def required_literals(pattern: str | re.Pattern[str]) -> tuple[str, ...]:
    """Runs of literal characters every match of `pattern` contains (lower-cased).

    Read from the pattern's top level and from what must occur there: a group, and a repeat
    of at least once (a branch, or a repeat that may occur no time, may be absent). Sound,
    not complete: ``https?://\\S+`` needs ``"http"`` and ``"://"``, ``(?:[\\w.-]+/)+x``
    needs ``"/"`` and ``"x"``; a pattern that is one big alternation needs nothing.
    """
    source, flags = (pattern.pattern, pattern.flags) if isinstance(pattern, re.Pattern) else (
        pattern, 0
    )
    if _parser is None:
        return ()
    try:
        items = list(_parser.parse(source, flags))
    except (re.error, RecursionError):
        return ()
    runs: list[str] = []
    _required_runs(items, runs)
    return tuple(runs)


_REPEATS = frozenset(
    getattr(_c, name)
    for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    if _parser is not None and hasattr(_c, name)
)
"""The parser's repeat operators (``POSSESSIVE_REPEAT`` is new in Python 3.11)."""


def _required_runs(items: Iterable[Any], runs: list[str]) -> None:
    """Append to `runs` the literal runs every match of the parsed `items` contains."""
    run = ""
    for op, av in items:
        if op is _c.LITERAL:
            run += chr(av).lower()
            continue
        if run:
            runs.append(run)
        run = ""
        if op is _c.SUBPATTERN:
            _required_runs(av[-1], runs)  # a group: its content occurs wherever it does
        elif op in _REPEATS and av[0] >= 1:
            _required_runs(av[2], runs)  # at least once: its content occurs
    if run:
        runs.append(run)


_WORDS_REMEMBERED = 8192
"""How many words a `HeadIndex` remembers the lists of before it starts afresh."""


@functools.lru_cache(maxsize=8)
def _words(lower: str) -> frozenset[str]:
    """The distinct words of a lower-cased text (several indexes read the same turn's text)."""
    return frozenset(_WORD.findall(lower))


class HeadIndex:
    """The heads of named lists of patterns, for `candidates`.

    A pattern whose matches need not start a word (``!!!``, ``https?://\\S+``) has no heads;
    its list is then a candidate whenever the text holds every literal the pattern requires
    (`required_literals`), and always when it requires none.

    Args:
        lists: Name → the patterns (compiled, or their sources) that make up the list.
    """

    def __init__(self, lists: Mapping[str, Iterable[str | re.Pattern[str]]]) -> None:
        exact: dict[str, set[str]] = {}
        prefixes: dict[str, list[tuple[str, str]]] = {}
        self._all = frozenset(lists)
        gated: list[tuple[str, tuple[str, ...]]] = []
        for name, patterns in lists.items():
            for pattern in patterns:
                heads = heads_of(pattern)
                if heads is None or any(len(h) < 2 and not whole for h, whole in heads):
                    # no head, or a one-letter prefix: no cheap test but its literals
                    gated.append((name, required_literals(pattern)))
                    continue
                for head, whole in heads:
                    if whole:
                        exact.setdefault(head, set()).add(name)
                    else:
                        prefixes.setdefault(head[:2], []).append((head, name))
        self._exact = {head: frozenset(names) for head, names in exact.items()}
        """Heads a word must equal → the lists they belong to (one lookup a word)."""
        self._prefixes = prefixes
        """Heads a word must start with, by their first two letters."""
        self._by_word: dict[str, frozenset[str]] = {}
        """Each word seen → `_names_of` it (texts are new each turn, their words seldom are)."""
        self._headed = bool(exact or prefixes)
        """Some list has word heads (else `candidates` need not split the text into words)."""
        self._always = frozenset(name for name, literals in gated if not literals)
        self._gated = tuple(
            (name, literals[0], literals[1:]) for name, literals in gated if literals
        )

    def candidates(self, text: str) -> set[str]:
        """The names of the lists that may match `text` (a superset of those that do).

        Pass the text the patterns are matched against; case is ignored (the text is
        lower-cased here when it is not lower-case already).
        """
        if not text.isascii():
            return set(self._all)
        lower = text if text.islower() else text.lower()
        found = set(self._always)
        for name, first, rest in self._gated:
            if first in lower and (not rest or all(literal in lower for literal in rest)):
                found.add(name)
        if not self._headed:  # every list is gated by literals: no word to look up
            return found
        memo = self._by_word
        for word in _words(lower):
            names = memo.get(word)
            if names is None:
                names = self._names_of(word)
                if len(memo) >= _WORDS_REMEMBERED:
                    memo.clear()
                memo[word] = names
            if names:
                found |= names
        return found

    def _names_of(self, word: str) -> frozenset[str]:
        """The lists one of whose heads `word` equals or starts with."""
        names = set(self._exact.get(word, ()))
        for head, name in self._prefixes.get(word[:2], ()):
            if word.startswith(head):
                names.add(name)
        return frozenset(names)
