"""Content words: the one stop-word list and the one stemmer of the whole package.

Problems are matched to messages, forget requests to what is kept, and titles to each other by
their content words: lower-cased, stop words dropped, each word reduced to its stem so that
"deploying", "deployments" and "deploy" meet, and "migrating", "migrate" and "migration" do
too. The stemmer is Snowball's English (Porter 2) stemmer (`snowballstemmer`), not a hand-kept
suffix list: the list met one paraphrase at a time ("migration" and "migrating" shared no stem
until D59 added a rule). Stems are memoised; a text's keywords are too.

Keywords stored before the Snowball stemmer (problem keywords in ``memory.db``) are not read
back: a problem's keywords are recomputed from its title and description when it is read (D152).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

__all__ = ["STOPWORDS", "keywords", "stem"]

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are aren't as at back be because
    been before being below between both but by can can't cannot could couldn't did didn't do
    does doesn't doing don't down during each else even ever every few for from further get
    gets getting go going got had hadn't has hasn't have haven't having he her here hers herself
    him himself his how i i'd i'll i'm i've if in into is isn't it it's its itself just let let's
    like lets me more most much must my myself need needs no nor not now of off on once only or
    other ought our ours ourselves out over own please quite rather really same shall she should
    shouldn't so some such than that that's the their theirs them themselves then there there's
    these they they're this those though through to too under until up upon us very was wasn't
    we we're were weren't what what's when where which while who whom why will with won't would
    wouldn't yes yet you you're your yours yourself yourselves ok okay hey hi hello thanks thank
    want wants make makes made work working works thing things something still again lets
    one two three new now also maybe way look looking continue keep see
    good morning afternoon evening night bye goodbye cheers welcome sure cool great nice
    awesome sorry howdy yo
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
"""Words that say nothing of what a message is about."""

_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]*")
_HAS_LETTER = re.compile(r"[a-z]")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_stem_word: Callable[[str], str] | None = None


def stem(word: str) -> str:
    """The stem of one lower-case word ("deployments" → "deploy")."""
    global _stem_word
    if _stem_word is None:
        # Imported on first use: the hook path never stems.
        import snowballstemmer  # type: ignore[import-untyped]

        _stem_word = snowballstemmer.stemmer("english").stemWord
    return _stem(word, _stem_word)


@lru_cache(maxsize=8192)
def _stem(word: str, stem_word: Callable[[str], str]) -> str:
    if word.endswith("'s"):
        word = word[:-2]
    # Snowball leaves "creation" whole while "create" gives "creat": an -ate verb and its
    # -ation noun share a stem when the noun is said as the verb first (D59).
    if len(word) >= 8 and word.endswith(("ation", "ations")):
        word = word[: word.rindex("ation")] + "ate"
    return stem_word(word.replace("'", ""))


@lru_cache(maxsize=4096)
def keywords(text: str) -> tuple[str, ...]:
    """The stemmed content words of `text`, in first-seen order, without duplicates. URLs,
    stop words and tokens without letters (numbers, dates) are dropped."""
    seen = dict.fromkeys(_keyword(raw) for raw in _WORD.findall(_URL.sub(" ", text.lower())))
    seen.pop("", None)
    return tuple(seen)


@lru_cache(maxsize=8192)
def _keyword(raw: str) -> str:
    """The keyword a word gives, or "" for none (memoised: texts are new, words seldom are)."""
    word = raw.strip("'-_")
    if len(word) < 2 or word in STOPWORDS or not _HAS_LETTER.search(word):
        return ""
    return stem(word)
