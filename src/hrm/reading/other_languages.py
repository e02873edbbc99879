"""Requests said in a language hrm does not read (D494).

hrm reads what a message asks of its memory in English. "Je préfère les réponses en français"
or "Recuerda que mi cumpleaños es el 5 de mayo" asked something, and nothing was kept and
nothing said. A table of the words such requests use in other languages (data, not code:
`data/other_languages.txt`) lets the turn say it read no request there, so the person can say
it in English; it never acts on them.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from hrm.errors import HRMError

__all__ = ["asks_in_another_language"]

_FILE = "other_languages.txt"
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SCAN_CHARS = 600


def asks_in_another_language(said: str) -> bool:
    """Whether `said` holds a word another language asks to keep, prefer or forget with."""
    return not _words().isdisjoint(_WORD.findall(said[:_SCAN_CHARS].lower()))


@cache
def _words() -> frozenset[str]:
    """Every word of the table, lower-cased."""
    text = resources.files("hrm.reading").joinpath("data", _FILE).read_text(encoding="utf-8")
    found: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        code, sep, listed = line.partition(":")
        if not sep or not code.strip().isalpha():
            raise HRMError.parse_error(
                "expected 'code: word, word, …'", path=f"hrm/reading/data/{_FILE}", line=number
            )
        found.update(w.strip().lower() for w in listed.split(",") if w.strip())
    return frozenset(found)
