"""The injection phrasings (``hrm/data/injection/*.txt``), loaded and matched over tokens.

Matching is done on tokens, not with one regular expression per phrasing: a hundred patterns
tried at every character cost ~0.4 ms for a 200-character text, where looking each word up in
a dictionary costs a few microseconds, which is what a turn (0.8 ms of kernel) can afford.

**Terms.** A concept line holds terms separated by ``|``; a term is a sequence of words, where
``(a|b c)`` offers alternatives, ``(…)?`` is optional and a word ending in ``*`` is a stem
(``ignor*`` matches ignore, ignored, ignoriere). Words are tokenised as text is, so ``don't``,
``api_key`` and ``忽略`` need no special care: Chinese and Japanese characters are one token
each, so their terms are character sequences.

**Patterns.** Shapes that are not words — a pipe to a shell, a role token, a URL with a
placeholder — are regular expressions under ``[patterns]``, written
``family weight {gate gate …}: regex``. A pattern runs only when one of its gates (plain
substrings) occurs in the text, so a text without ``curl`` never pays for the curl patterns.

**Rules** (``rules.txt``) name concepts that must co-occur within a window of tokens, in one
clause, in any order: ``override 1.0 ignore+prior+instructions 12 neg``.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from pathlib import Path

from hrm._values import Value
from hrm.runtime.normalise import fold

TYPE_CHECKING = False  # hook processes import this module: no typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["Hit", "Phrasings", "check", "load", "tokens"]

DATA = Path(__file__).resolve().parent.parent / "data" / "injection"
FILES = ("en", "es", "fr", "de", "pt", "it", "ru", "zh", "ja", "commands", "markup")
"""The phrasing files, one per language or family (each ``<name>.txt`` in `DATA`)."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(
    rf"[{_CJK}]|\.?[^\W_{_CJK}]+|[!?:;@\n。！？；]|\.(?=\s|$)"
)
"""Words (a leading dot kept: ``.env``), single CJK characters, clause ends, ``:`` and ``@``."""
_HAS_CJK = re.compile(f"[{_CJK}]")
_CJK_SCALE = 2
"""Rule windows count tokens; a Chinese or Japanese token is a character, about half a word."""
_CLAUSE_END = frozenset({".", "!", "?", ";", "\n", "。", "！", "？", "；"})
_NEGATION_REACH = 3
"""A negation this many tokens or fewer before a rule's anchor cancels it."""
_MAX_HITS = 2000


def tokens(text: str) -> list[str]:
    """The tokens of folded ``text`` (see `_TOKEN`)."""
    return _TOKEN.findall(text)


class Hit(Value):
    """A rule or pattern that fired in one reading, and the tokens or text it matched."""

    _fields = ("family", "rule", "weight", "excerpt")
    __slots__ = _fields
    family: str
    rule: str
    weight: float
    excerpt: str

    def __init__(self, family: str, rule: str, weight: float, excerpt: str) -> None:
        self._init(family=family, rule=rule, weight=weight, excerpt=excerpt)


class _Rule(Value):
    _fields = ("name", "family", "weight", "concepts", "window", "negatable")
    __slots__ = (*_fields, "needs")
    name: str
    family: str
    weight: float
    concepts: tuple[str, ...]
    window: int
    negatable: bool
    needs: frozenset[str]
    """The concepts as a set, to skip the rule in one test."""

    def __init__(self, name: str, family: str, weight: float, concepts: tuple[str, ...],
                 window: int, negatable: bool) -> None:
        self._init(name=name, family=family, weight=weight, concepts=concepts, window=window,
                   negatable=negatable, needs=frozenset(concepts))


class _Pattern(Value):
    _fields = ("family", "weight", "gates", "source")
    __slots__ = _fields
    family: str
    weight: float
    gates: tuple[str, ...]
    source: str
    """The regular expression, compiled on the first text that opens a gate (most never do:
    compiling all of them would cost every hook process a few milliseconds)."""

    def __init__(self, family: str, weight: float, gates: tuple[str, ...], source: str) -> None:
        self._init(family=family, weight=weight, gates=gates, source=source)

    def search(self, text: str) -> re.Match[str] | None:
        return re.search(self.source, text, re.MULTILINE)  # `re` caches the compiled form


class Phrasings:
    """Every concept's terms indexed by first token, the gated patterns, and the rules."""

    def __init__(self) -> None:
        self.exact: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        """First token -> (concept, the whole term's words) for terms of one word, or whose
        second word is a stem."""
        self.pairs: dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]] = {}
        """First two tokens -> (concept, words) for longer terms: "the" opens hundreds of
        terms, "the user" a few."""
        self.stems: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        """First stem (without ``*``) -> (concept, words) for terms opening with a stem."""
        self.stem_lengths: tuple[int, ...] = ()
        self.patterns: list[_Pattern] = []
        self.gates: tuple[str, ...] = ()
        """Every pattern's gates, each once: tested against a text together."""
        self.gate_finder: re.Pattern[str] = re.compile("(?!)")
        """Finds the gates in a text in one pass (longest first)."""
        self.implied: dict[str, frozenset[str]] = {}
        """Gate -> every gate inside it: a match of ``ncat`` is a match of ``cat`` too."""
        self.rules: list[_Rule] = []
        self._memo: dict[str, list[tuple[str, tuple[str, ...]]]] = {}

    def hits(self, text: str) -> Iterator[Hit]:
        """What fires in one folded reading: gated patterns first, then the rules."""
        present: frozenset[str] = frozenset().union(
            *(self.implied[gate] for gate in set(self.gate_finder.findall(text)))
        )
        for pattern in self.patterns if present else ():
            if present.isdisjoint(pattern.gates):
                continue
            match = pattern.search(text)
            if match is not None:
                yield Hit(pattern.family, f"{pattern.family}:pattern", pattern.weight,
                          match.group())
        words = tokens(text)
        spans = self._spans(words)
        if not spans:
            return
        ends = [i for i, word in enumerate(words) if word in _CLAUSE_END]
        scale = _CJK_SCALE if _HAS_CJK.search(text) else 1
        negations = sorted(end for _, end in spans.get("negation", ()))
        for rule in self.rules:
            if not rule.needs.issubset(spans):
                continue
            found = _co_occurs(rule, spans, ends, negations if rule.negatable else [], scale)
            if found is not None:
                yield Hit(rule.family, rule.name, rule.weight, " ".join(words[found[0]:found[1]]))

    def _spans(self, words: list[str]) -> dict[str, list[tuple[int, int]]]:
        """Concept -> the (start, end) token spans of its terms, in order."""
        spans: dict[str, list[tuple[int, int]]] = {}
        count = 0
        pairs = self.pairs
        last = len(words) - 1
        for index, word in enumerate(words):
            candidates = self._candidates(word)
            if index < last:
                paired = pairs.get((word, words[index + 1]))
                if paired is not None:
                    candidates = candidates + paired
            for concept, term in candidates:
                end = _match_at(words, index, term)
                if end is None:
                    continue
                spans.setdefault(concept, []).append((index, end))
                count += 1
            if count >= _MAX_HITS:
                break
        return spans

    def _candidates(self, word: str) -> list[tuple[str, tuple[str, ...]]]:
        found = self._memo.get(word)
        if found is None:
            found = list(self.exact.get(word, ()))
            for length in self.stem_lengths:
                if length > len(word):
                    break
                found.extend(self.stems.get(word[:length], ()))
            if len(self._memo) > 50_000:
                self._memo.clear()
            self._memo[word] = found
        return found


def _match_at(words: list[str], index: int, term: tuple[str, ...]) -> int | None:
    """The end of ``term`` when it matches at ``index`` (its first word is known to)."""
    end = index + len(term)
    if end > len(words):
        return None
    for offset in range(1, len(term)):
        want, got = term[offset], words[index + offset]
        if want.endswith("*"):
            if not got.startswith(want[:-1]):
                return None
        elif got != want:
            return None
    return end


def _co_occurs(
    rule: _Rule,
    spans: dict[str, list[tuple[int, int]]],
    ends: list[int],
    negations: list[int],
    scale: int,
) -> tuple[int, int] | None:
    """The first place every concept of ``rule`` occurs within its window in one clause.

    Each other concept must start or end within the window of the anchor's term; ``scale``
    widens the window for Chinese and Japanese, whose tokens are characters, not words.
    """
    anchor, *others = rule.concepts
    window = rule.window * scale
    for start, end in spans[anchor]:
        if negations and _negated(start, negations):
            continue
        if not others:
            return start, end
        first, last = start, end
        for name in others:
            near = _nearest(spans[name], start - window, end + window, (start, end))
            if near is None:
                break
            first, last = min(first, near[0]), max(last, near[1])
        else:
            if not _crosses(ends, first, last):
                return first, last
    return None


def _negated(start: int, negation_ends: list[int]) -> bool:
    index = bisect_right(negation_ends, start)
    return index > 0 and start - negation_ends[index - 1] <= _NEGATION_REACH - 1


def _nearest(
    spans: list[tuple[int, int]], low: int, high: int, anchor: tuple[int, int]
) -> tuple[int, int] | None:
    """The span inside [low, high] nearest ``anchor`` that does not overlap it."""
    index = bisect_left(spans, (low, -1))
    best: tuple[int, int] | None = None
    while index < len(spans) and spans[index][0] <= high:
        span = spans[index]
        index += 1
        if span[1] > high or (span[0] < anchor[1] and anchor[0] < span[1]):
            continue
        if best is None or abs(span[0] - anchor[0]) < abs(best[0] - anchor[0]):
            best = span
    return best


def _crosses(ends: list[int], first: int, last: int) -> bool:
    index = bisect_right(ends, first)
    return index < len(ends) and ends[index] < last - 1


# -- loading ---------------------------------------------------------------------------------


def load(directory: Path = DATA, files: tuple[str, ...] = FILES) -> Phrasings:
    """Parse and index the phrasing files and ``rules.txt``.

    Raises:
        ValueError: A line that does not parse, naming the file and the line.
    """
    phrasings = Phrasings()
    stems: set[int] = set()
    for name in files:
        lines = (directory / f"{name}.txt").read_text(encoding="utf-8").splitlines()
        _load_file(f"{name}.txt", lines, phrasings, stems)
    phrasings.stem_lengths = tuple(sorted(stems))
    phrasings.gates = tuple(dict.fromkeys(g for p in phrasings.patterns for g in p.gates))
    phrasings.implied = {
        gate: frozenset(other for other in phrasings.gates if other in gate)
        for gate in phrasings.gates
    }
    if phrasings.gates:
        phrasings.gate_finder = re.compile(
            "|".join(re.escape(g) for g in sorted(phrasings.gates, key=len, reverse=True))
        )
    rules_text = (directory / "rules.txt").read_text(encoding="utf-8").splitlines()
    phrasings.rules = [_parse_rule(line) for line in _content(rules_text)]
    known = {c for index in (phrasings.exact, phrasings.pairs, phrasings.stems)
             for entries in index.values() for c, _ in entries}
    missing = sorted({c for rule in phrasings.rules for c in rule.concepts} - known)
    if missing:
        raise ValueError(f"rules.txt names concepts no phrasing file defines: {missing}")
    return phrasings


def _content(lines: list[str]) -> Iterator[str]:
    for raw in lines:
        line = raw.strip()
        if line and not line.startswith("#"):
            yield line


def _load_file(name: str, lines: list[str], phrasings: Phrasings, stems: set[int]) -> None:
    section = ""
    memo: dict[str, list[str]] = {}
    for line in _content(lines):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if not section:
            raise ValueError(f"{name}: {line!r} comes before any [section]")
        if section == "patterns":
            phrasings.patterns.append(_parse_pattern(name, line))
            continue
        for term in _expand(name, line):
            words = _term_words(term, memo)
            if not words:
                continue
            first = words[0]
            if first.endswith("*"):
                phrasings.stems.setdefault(first[:-1], []).append((section, words))
                stems.add(len(first) - 1)
            elif len(words) > 1 and not words[1].endswith("*"):
                phrasings.pairs.setdefault((first, words[1]), []).append((section, words))
            else:
                phrasings.exact.setdefault(first, []).append((section, words))


def _term_words(term: list[str], memo: dict[str, list[str]]) -> tuple[str, ...]:
    """A term's words folded and tokenised as text is (a stem keeps its ``*``)."""
    out: list[str] = []
    for word in term:
        pieces = memo.get(word)
        if pieces is None:
            stem = word.endswith("*")
            pieces = tokens(fold(word[:-1] if stem else word))
            if stem and pieces:
                pieces[-1] += "*"
            memo[word] = pieces
        out.extend(pieces)
    return tuple(out)


def _parse_pattern(name: str, line: str) -> _Pattern:
    match = re.fullmatch(r"(\w+) ([0-9.]+) \{([^}]*)\}: (.+)", line)
    if match is None or not match.group(3).split():
        raise ValueError(f"{name}: pattern {line!r} is not 'family weight {{gates}}: regex'")
    family, weight, gates, regex = match.groups()
    return _Pattern(family, float(weight), tuple(gates.split()), regex.strip())


def check(phrasings: Phrasings) -> None:
    """Compile every pattern once (tests call this; processes compile on demand).

    Raises:
        ValueError: A pattern that does not compile, with its family and text.
    """
    for pattern in phrasings.patterns:
        try:
            re.compile(pattern.source, re.MULTILINE)
        except re.error as exc:
            raise ValueError(
                f"pattern of family {pattern.family} does not compile: {exc}: {pattern.source!r}"
            ) from exc


def _parse_rule(line: str) -> _Rule:
    """``name family weight concept+concept… window [neg]``."""
    parts = line.split()
    if len(parts) not in (5, 6) or (len(parts) == 6 and parts[5] != "neg"):
        raise ValueError(f"rules.txt: {line!r} is not 'name family weight a+b+c window [neg]'")
    name, family, weight, concepts, window = parts[:5]
    return _Rule(f"{family}:{name}", family, float(weight), tuple(concepts.split("+")),
                 int(window), len(parts) == 6)


def _expand(name: str, line: str) -> list[list[str]]:
    """Every word sequence a term line stands for (``a (b|c d)? e*`` -> 3 sequences)."""
    items = re.findall(r"\(|\)\??|\||[^\s()|]+", line)
    position = 0

    def alternatives() -> list[list[str]]:
        nonlocal position
        options: list[list[str]] = []
        current: list[list[str]] = [[]]
        while position < len(items):
            item = items[position]
            if item == "|":
                options.extend(current)
                current = [[]]
                position += 1
            elif item.startswith(")"):
                break
            elif item == "(":
                position += 1
                inner = alternatives()
                if position >= len(items) or not items[position].startswith(")"):
                    raise ValueError(f"{name}: unbalanced '(' in {line!r}")
                if items[position] == ")?":
                    inner = [*inner, []]
                position += 1
                current = [seq + alt for seq in current for alt in inner]
            else:
                current = [[*seq, item] for seq in current]
                position += 1
        options.extend(current)
        return options

    expanded = alternatives()
    if position != len(items):
        raise ValueError(f"{name}: unbalanced ')' in {line!r}")
    return expanded
