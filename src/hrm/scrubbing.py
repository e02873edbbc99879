"""Secret scrubbing: nothing hrm stores may contain a credential or a person's private text.

Every store and ledger calls `scrub` on values before they are written. Two things go:

* text inside ``<private>…</private>`` (any case; an unclosed tag hides the rest of the text),
  which becomes ``[private]``: the person marked it as not to be kept;
* credentials, as the families table in `hrm._secret_families` recognises them; each becomes
  ``[REDACTED:<kind>]`` so a reader knows something was there and what, without it.

Patterns are linear-time, so scrubbing a megabyte stays fast, and each runs only when the text
holds one of its hints; a pattern is compiled the first time a text holds one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hrm._secret_families import FAMILIES as SECRET_PATTERNS
    from hrm._secret_families import SecretPattern

__all__ = [
    "PRIVATE_MARKER",
    "SECRET_PATTERNS",
    "SecretPattern",
    "contains_secret",
    "scrub",
    "scrub_text",
    "strip_private",
]


def __getattr__(name: str) -> object:
    """`SECRET_PATTERNS` (the families, in the order they are applied) and `SecretPattern`,
    loaded on first use: a hook imports this module on every prompt and scrubs rarely."""
    if name in ("SECRET_PATTERNS", "SecretPattern"):
        from hrm import _secret_families

        value = _secret_families.FAMILIES if name == "SECRET_PATTERNS" else (
            _secret_families.SecretPattern
        )
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

PRIVATE_MARKER = "[private]"
"""What stands in a stored text where the person's ``<private>`` text was."""

_PRIVATE_TAG = r"(?i)<[ \t]*(/?)[ \t]*private(?:[ \t][^<>\r\n]{0,200})?>"
"""An opening or closing tag (with attributes); compiled and cached by `re` on first use."""
_REDACTED = "[REDACTED:"


def strip_private(text: str) -> str:
    """Replace every ``<private>…</private>`` span of `text` by ``[private]``.

    Tags nest; an opening tag never closed hides everything after it, and a closing tag whose
    opening was cut off (a text clipped at its start) hides everything before it: a person's
    private text is never kept because a tag went missing.
    """
    if "private" not in text.lower():
        return text
    pieces: list[str] = []
    depth = 0
    last = 0
    for tag in re.finditer(_PRIVATE_TAG, text):
        if not tag.group(1):
            if depth == 0:
                pieces.append(text[last : tag.start()])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                pieces.append(PRIVATE_MARKER)
                last = tag.end()
        else:
            pieces = [PRIVATE_MARKER]
            last = tag.end()
    if depth > 0:
        pieces.append(PRIVATE_MARKER)
    else:
        pieces.append(text[last:])
    return "".join(pieces)


_CACHED_MAX_LEN = 256
"""Texts up to this length are memoised: keys, kinds, ids and labels repeat in every record."""


def scrub_text(text: str) -> str:
    """Return `text` without private spans and with every credential replaced.

    Every layer scrubs what it writes (a turn's input reaches the episodic store, the learning
    outcome and the ledgers), so the same short strings come back many times per turn: they are
    memoised. Text holding none of a pattern's hints skips that pattern's regex (substring
    scans are ~10x faster than even one case-insensitive alternation of every hint).
    """
    if type(text) is not str and isinstance(text, str):
        # A str subclass (a `str` enum member) must not enter the memo as itself: the memo
        # would then hand that member back for the plain string, and a record holding it
        # as a key is refused by the ledger's fast encoder (D360). Its characters, plainly.
        text = str.__str__(text)
    if not text:
        return text
    if len(text) <= _CACHED_MAX_LEN:
        done = SCRUBBED.get(text)
        if done is None:
            if len(SCRUBBED) >= _CACHED_ENTRIES:
                SCRUBBED.clear()
            done = SCRUBBED[text] = _scrub(text)
        return done
    return _scrub(text)


_CACHED_ENTRIES = 8192
SCRUBBED: dict[str, str] = {}
"""Short texts already scrubbed, and their scrubbed form (bounded: cleared when full).

A plain dict rather than `functools.lru_cache` so the ledger's walk over a record's hundreds
of strings can look each up without two function calls (``SCRUBBED.get(s) or scrub_text(s)``).
Only `scrub_text` writes it."""


def remember_clean(text: str) -> None:
    """Note that `text` scrubs to itself — a caller's screen found no secret's hint in it and
    no private span — so that the next `scrub_text` of it is one lookup (texts up to the
    memoised length only)."""
    if len(text) <= _CACHED_MAX_LEN and type(text) is str:
        if len(SCRUBBED) >= _CACHED_ENTRIES:
            SCRUBBED.clear()
        SCRUBBED[text] = text


def _scrub(text: str) -> str:
    lower = text.lower()
    if "private" in lower:
        text = strip_private(text)
    shapes, contexts, scans = _GROUPS or _load_groups()
    text = _apply_anchored(text, text, shapes)
    lower = text.lower()
    if len(lower) == len(text):
        text = _apply_anchored(text, lower, contexts)
    else:  # lower-casing changed the length (a few Unicode letters): search row by row
        for pattern in contexts.rows:
            text = _replace_checked(pattern, text)
        lower = text.lower()
    for pattern in scans:
        for hint in pattern.hints:
            if hint in lower:
                text = _replace_checked(pattern, text)
                break
    return text


class _Anchored:
    """A group of rows and one regex that finds all their anchors in one pass.

    The regex is a trie of the anchors (``pass(?:word)?|pwd?|…``), so at each position it
    tests one character class and rarely more: one pass over a text costs about what one
    substring search per anchor would, for fifty anchors. It is compiled on first use.
    """

    __slots__ = ("_regex", "_starting", "rows")

    def __init__(self, rows: tuple[SecretPattern, ...]) -> None:
        self.rows = rows
        self._starting: dict[str, list[tuple[int, SecretPattern]]] | None = None
        self._regex: re.Pattern[str] | None = None

    @property
    def starting(self) -> dict[str, list[tuple[int, SecretPattern]]]:
        """For each anchor, the rows a match of it starts (a longer anchor found at a position
        stands for every shorter one it begins with), with their order in the table."""
        if self._starting is None:
            anchors = sorted({anchor for row in self.rows for anchor in row.anchors})
            self._starting = {
                found: [
                    (order, row)
                    for order, row in enumerate(self.rows)
                    if any(found.startswith(anchor) for anchor in row.anchors)
                ]
                for found in anchors
            }
        return self._starting

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(_trie(list(self.starting)))
        return self._regex


def _trie(words: list[str]) -> str:
    """A regex matching the longest of `words` that starts at a position."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items())
                    if char]
        if not branches:
            return ""
        body = "(?:" + "|".join(branches) + ")" if len(branches) > 1 else branches[0]
        if "" in node:
            return "(?:" + body + ")?"
        return body

    return build(root)


_STEP_BACK_LIMIT = 130
"""How far left of an anchor a name may start (a setting's name is at most 128 characters)."""


def _apply_anchored(text: str, haystack: str, group: _Anchored) -> str:
    """Apply `group`'s rows at the anchors found in `haystack` (`text`, or it lower-cased)."""
    regex = group.regex
    found = regex.search(haystack)
    if found is None:
        return text
    candidates: list[tuple[int, int, SecretPattern]] = []
    backwards = ""
    while found is not None:
        at = found.start()
        for order, row in group.starting[found.group()]:
            start = at
            if row.back:
                backwards = backwards or text[::-1]
                start = _step_back(backwards, at, row.back)
            start -= row.lead
            if start >= 0:
                candidates.append((start, order, row))
        found = regex.search(haystack, at + 1)
    candidates.sort(key=_by_position)
    pieces: list[str] = []
    last = consumed = 0
    tried: set[tuple[int, int]] = set()
    for start, order, row in candidates:
        if start < consumed or (start, order) in tried:
            continue
        tried.add((start, order))
        match = row.regex.match(text, start)
        if match is None:
            continue
        span = _secret_span(row, match)
        if span is None:
            continue
        pieces.append(text[last : span[0]])
        pieces.append(f"[REDACTED:{row.kind}]")
        last = span[1]
        consumed = match.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _by_position(candidate: tuple[int, int, SecretPattern]) -> tuple[int, int]:
    return candidate[0], candidate[1]


def _step_back(backwards: str, at: int, chars: str) -> int:
    """Where the run of `chars` ending at `at` starts (`backwards` is the text reversed).

    Matched in the reversed text so the step is one regex call, not a loop in Python.
    """
    run = _RUNS.get(chars)
    if run is None:
        run = _RUNS[chars] = re.compile(f"[{re.escape(chars)}]{{0,{_STEP_BACK_LIMIT}}}")
    origin = len(backwards) - at
    match = run.match(backwards, origin)
    return at - (match.end() - origin) if match is not None else at


_RUNS: dict[str, re.Pattern[str]] = {}
"""The compiled run of each row's `back` characters."""


def _secret_span(pattern: SecretPattern, match: re.Match[str]) -> tuple[int, int] | None:
    """Where the secret of `match` lies, or None when the match holds none."""
    start, end = match.span(pattern.group)
    if start < 0:
        return None
    value = match.string[start:end]
    if value.startswith(_REDACTED) or value.startswith(PRIVATE_MARKER):
        return None
    if pattern.check is not None and not pattern.check(match):
        return None
    if end - start >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return start + 1, end - 1  # a quoted value keeps its quotes
    return start, end


def _replace_checked(pattern: SecretPattern, text: str) -> str:
    """Search the whole text with one row; replace the secret of each match it accepts.

    A rejected match is searched again from where its secret part starts, so a secret inside
    it (``x = "password=hunter2"``: the outer name is no secret's) is still found.
    """
    regex = pattern.regex
    label = f"[REDACTED:{pattern.kind}]"
    pieces: list[str] = []
    last = position = 0
    while True:
        match = regex.search(text, position)
        if match is None:
            break
        span = _secret_span(pattern, match)
        if span is None:
            start = match.start(pattern.group)
            position = start if start > match.start() else match.start() + 1
            continue
        pieces.append(text[last : span[0]])
        pieces.append(label)
        last = span[1]
        position = max(match.end(), span[0] + 1)
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


_GROUPS: list[Any] = []
"""The shape rows, the context rows (each an `_Anchored`) and the scan rows, once loaded."""


def _load_groups() -> list[Any]:
    from hrm._secret_families import FAMILIES

    _GROUPS[:] = [
        _Anchored(tuple(p for p in FAMILIES if p.phase == "shape")),
        _Anchored(tuple(p for p in FAMILIES if p.phase == "context")),
        tuple(p for p in FAMILIES if p.phase == "scan"),
    ]
    return _GROUPS


def prepare() -> None:
    """Load the secret families and compile their anchor regexes now, not on first use.

    For a process that forks workers (the resident process, D403): what it builds before the
    fork, no child builds again.
    """
    for group in _GROUPS or _load_groups():
        if isinstance(group, _Anchored):
            group.regex  # noqa: B018  (compiled on first access)


def scrub(value: Any) -> Any:
    """Scrub credentials out of any JSON-like value: strings, and dict/list/tuple containers.

    Keys are scrubbed as well as values. Other types pass through unchanged.
    """
    kind = type(value)  # exact types first: the Mapping check below is an ABC (slow) one
    if kind is str:
        return SCRUBBED.get(value) or scrub_text(value)
    if kind is dict:
        return {
            (scrub_text(k) if type(k) is str else k): (
                v if v is None or type(v) in _PLAIN else scrub(v)
            )
            for k, v in value.items()
        }
    if kind in _PLAIN:
        return value
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, Mapping):
        return {(scrub_text(k) if isinstance(k, str) else k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub(v) for v in value)
    return value


_PLAIN = frozenset({int, float, bool})
"""Types `scrub` returns as they are without a closer look."""


def contains_secret(text: str) -> bool:
    """True if scrubbing would change `text`: it holds a credential or private text."""
    return scrub_text(text) != text
