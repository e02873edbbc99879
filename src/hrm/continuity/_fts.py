"""Pure text logic behind learnings search: query terms, safe MATCH strings, scores, fusion.

No I/O here, so every rule can be property-tested. The one safety rule: user text never reaches
``MATCH`` raw. It is cut into words, each word is double-quoted (FTS5 then treats ``AND``,
``NEAR(``, ``*``, ``-``, ``:`` and parentheses inside it as plain text), and the quoted words are
OR-ed, so BM25 ranks rows by how many rare query words they hold (`match_own` adds the filter
that keeps rows holding a word in their own columns, D340).

The cost rule: FTS5 scores every row an OR query matches before ``ORDER BY rank LIMIT n`` keeps
the best, so one common word ("service" in a quarter of a million rows) makes a query cost
seconds while adding almost nothing to the ranking (its IDF is near zero). `plan_terms` keeps the
rarest words within a row budget and leaves the common ones out of the ranked query.
"""

from __future__ import annotations

import _thread  # not `threading`: the hook imports this module and needs only a lock
import re
import unicodedata
from collections.abc import Callable, Hashable, Mapping, Sequence

from hrm._values import Value

TYPE_CHECKING = False  # `hrm hook` searches learnings: no `typing` or `dataclasses` at run time
if TYPE_CHECKING:
    from typing import TypeVar

    K = TypeVar("K", bound=Hashable)

__all__ = [
    "HIGHLIGHT_CLOSE",
    "HIGHLIGHT_OPEN",
    "HYBRID_VECTOR_WEIGHT",
    "MAX_QUERY_TERMS",
    "RANKED_ROW_BUDGET",
    "STOPWORDS",
    "TermFrequencies",
    "TermPlan",
    "bm25_relevance",
    "content_key",
    "convex_fuse",
    "extract_highlights",
    "fts_relevance",
    "jaccard",
    "match_all",
    "match_any",
    "match_own",
    "plan_terms",
    "query_terms",
    "token_set",
]

MAX_QUERY_TERMS = 32
"""More words add cost but almost never change the top results."""

RANKED_ROW_BUDGET = 2000
"""Most rows a ranked (BM25) query may match. FTS5 spends 1-5 microseconds scoring each
matched row, so this bounds the ranked phase near 10 ms whatever the store's size."""

HYBRID_VECTOR_WEIGHT = 0.4
"""Share of the vector list in `convex_fuse` (the word list gets the rest). Set from the two
lists' standalone quality, not by search: on LoCoMo conversations 0-4 the vector list alone
recalls 0.49 of the evidence at 10 and the word list 0.64, so vectors get
0.49 / (0.49 + 0.64) ~ 0.4 of the weight."""

SESSION_NEIGHBOUR_SHARE = 0.4
"""How much of a session neighbour's fused score a hybrid candidate gains (see `lend_scores`)."""

SESSION_NEIGHBOUR_REACH = 2
"""How many learnings before and after a candidate, in its session's order, count as near."""

HIGHLIGHT_OPEN = "\x02"
HIGHLIGHT_CLOSE = "\x03"
"""Markers passed to FTS5 ``highlight()``: control characters no stored text contains."""

_WORD = re.compile(r"\w+", re.UNICODE)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
"""Query words split as the index's unicode61 tokenizer splits them (``_`` separates)."""

# Function words that match nearly every row: OR-ing them in only adds noise to BM25. Negations
# are stopwords for ranking only, never for duplicate detection (see `token_set`).
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves s t d ll m re ve don didn doesn isn
    wasn weren won wouldn shouldn couldn also get got let like may might must shall us via yes yeah
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


def query_terms(text: str, *, limit: int = MAX_QUERY_TERMS) -> list[str]:
    """The distinct search words of `text`, stopwords dropped, in first-seen order.

    Words split where the index's tokenizer splits them, so ``parse_config`` is the two words
    ``parse`` and ``config``: each is counted and ranked on its own, and the common half of
    an identifier cannot drag its whole phrase into a full scan. A query made only of
    stopwords keeps them (``"the who"`` still searches), and text with no word characters at
    all (``"*** ("``) gives no terms.
    """
    normal = unicodedata.normalize("NFKC", text)
    words = [w.casefold() for w in _TOKEN.findall(normal)]
    kept = [w for w in words if w not in STOPWORDS]
    return list(dict.fromkeys(kept or words))[:limit]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_any(terms: Sequence[str]) -> str:
    """An FTS5 query matching rows holding any of `terms` (each quoted: never a syntax error)."""
    return " OR ".join(_quote(t) for t in terms)


def match_all(terms: Sequence[str]) -> str:
    """An FTS5 query matching rows that hold every one of `terms`."""
    return " AND ".join(_quote(t) for t in terms)


OWN_COLUMNS = "{content tags context}"
"""The learnings index's columns that hold a learning's own text (not its neighbours', D340)."""


def match_own(terms: Sequence[str], *, every: bool = False) -> str:
    """An FTS5 query for learnings whose own text, tags or context hold any of `terms` (all,
    with `every`), ranked on every column.

    The first half matches in any column, so BM25 counts the words where the learning's
    session neighbours hold them too (the ``nearby`` column); the column-filtered second half
    keeps out a learning that only its neighbours make a match: every result answers the query
    by itself, and its neighbours only rank it higher (D340). The own columns' words are counted
    by both halves, which weighs them against ``nearby`` by about two to its one half.
    """
    expression = match_all(terms) if every else match_any(terms)
    return f"({expression}) AND {OWN_COLUMNS} : ({expression})"


class TermPlan(Value):
    """Which query words a search ranks on, and how (decided from document frequencies)."""

    _fields = ("ranked", "dropped", "all_common")
    __slots__ = _fields
    ranked: tuple[str, ...]
    """Words OR-ed into the BM25-ranked query: the rarest, within `RANKED_ROW_BUDGET`, in
    query order; when `all_common`, every word, rarest first."""
    dropped: tuple[str, ...]
    """Common words left out of the ranked query; they stay in the coverage denominator."""
    all_common: bool
    """Every word that occurs at all is too common to rank on within the budget: the search
    takes the newest rows holding the two rarest (then any word) instead of BM25-ranking."""

    def __init__(
        self, *, ranked: tuple[str, ...], dropped: tuple[str, ...], all_common: bool
    ) -> None:
        self._init(ranked=ranked, dropped=dropped, all_common=all_common)


def plan_terms(
    terms: Sequence[str], frequencies: Mapping[str, int], *, budget: int = RANKED_ROW_BUDGET
) -> TermPlan:
    """Choose the words to rank on: rarest first while their matches fit `budget`.

    A word's frequency is the number of rows holding it (counts may be capped just above
    `budget`). Words no row holds are always kept: they cost nothing, and a stale count must
    never hide a new learning. The others are kept, rarest first, while the running total
    of their matches stays within `budget`; when even the rarest exceeds it the plan is
    `all_common`. Below the budget nothing is dropped: BM25's IDF already weighs common
    words down, and a word common in the whole store can still tell rows apart inside a
    filtered search (a session, a type).
    """
    order = sorted(range(len(terms)), key=lambda i: (frequencies.get(terms[i], 0), i))
    ranked: list[str] = []
    dropped: list[str] = []
    matches = 0
    for index in order:
        term = terms[index]
        count = max(0, frequencies.get(term, 0))
        if matches + count <= budget:
            ranked.append(term)
            matches += count
        else:
            dropped.append(term)
    if matches == 0 and dropped:  # (`ranked` holds only words no row holds, if any)
        return TermPlan(ranked=(*dropped, *ranked), dropped=(), all_common=True)
    position = {term: i for i, term in enumerate(terms)}
    return TermPlan(
        ranked=tuple(sorted(ranked, key=position.__getitem__)),
        dropped=tuple(sorted(dropped, key=position.__getitem__)),
        all_common=False,
    )


class TermFrequencies:
    """Row counts of query words, cached while the store has not grown much.

    Counts steer `plan_terms` only, so a stale count costs time, never a result: a word once
    common stays common as rows are added (rows leave the index only when deleted, and
    nothing is), a rare word that grew common is merely ranked on at a higher cost, and an
    absent word is never cached, so a row that brings it in is found at once. An entry is
    reused until the store grew by a tenth (or 50 rows) since it was counted. Thread-safe;
    the counting itself is injected (the repository runs a capped ``MATCH``), which keeps
    this class free of I/O.
    """

    def __init__(self, *, capacity: int = 8192) -> None:
        self._capacity = capacity
        self._entries: dict[str, tuple[int, int]] = {}
        self._lock = _thread.allocate_lock()

    def lookup(
        self, terms: Sequence[str], *, row_count: int, count: Callable[[str], int]
    ) -> dict[str, int]:
        """Each term's row count: cached when fresh, else ``count(term)`` (and cached)."""
        found: dict[str, int] = {}
        missing: list[str] = []
        with self._lock:
            for term in terms:
                entry = self._entries.get(term)
                if entry is not None and row_count <= entry[1] + max(50, entry[1] // 10):
                    found[term] = entry[0]
                else:
                    missing.append(term)
        counted = {term: count(term) for term in missing}
        with self._lock:
            for term, value in counted.items():
                if value == 0:
                    continue  # absent words are recounted (one index probe): a new row may hold one
                if len(self._entries) >= self._capacity:
                    self._entries.pop(next(iter(self._entries)))  # oldest first
                self._entries[term] = (value, row_count)
        found.update(counted)
        return found


def bm25_relevance(rank: float, term_count: int) -> float:
    """Map an FTS5 ``bm25()`` value (negative, lower is better) to a 0-1 relevance.

    ``s / (s + 2n)`` with ``s = -rank`` and ``n`` query terms: monotonic in the BM25 score, it
    depends only on this row and this query (not on the other rows returned), and a row matching
    every query term with typical IDF lands near 0.5.
    """
    score = max(0.0, -rank)
    scale = 2.0 * max(1, term_count)
    return score / (score + scale)


def fts_relevance(rank: float, term_count: int, *, matched: int) -> float:
    """The 0-1 relevance of a full-text hit: half term coverage, half `bm25_relevance`.

    Coverage (distinct query words found / query words, the "coordination" factor of classic
    Lucene scoring) keeps the score meaningful in a small store, where BM25's IDF is near
    zero, and favours rows answering more of the question. Like `bm25_relevance` it depends
    only on this row and this query.
    """
    coverage = min(1.0, matched / max(1, term_count))
    return 0.5 * coverage + 0.5 * bm25_relevance(rank, term_count)


def convex_fuse(
    lexical: Sequence[tuple[K, float]],
    semantic: Sequence[tuple[K, float]],
    *,
    semantic_weight: float = HYBRID_VECTOR_WEIGHT,
) -> list[tuple[K, float]]:
    """Fuse two scored candidate lists by a convex combination of min-max normalised scores.

    ``score(d) = (1 - w) * lexical'(d) + w * semantic'(d)`` where each list's scores are
    scaled to 0-1 over that list (best 1, worst 0) and a key absent from a list gets 0 from
    it, so agreement between the lists lifts a candidate. Bruch et al. (2023, "An Analysis
    of Fusion Functions for Hybrid Retrieval") find this beats reciprocal rank fusion, which
    throws the score gaps away; on LoCoMo it does too (RRF with k=60 ranked below the word
    list alone, this fusion above it).

    Returns:
        ``(key, score)`` best first, scores in 0-1; ties keep first-seen order (lexical
        first).
    """
    weight = min(1.0, max(0.0, semantic_weight))
    scores: dict[K, float] = {}
    for items, share in ((lexical, 1.0 - weight), (semantic, weight)):
        if not items:
            continue
        values = [score for _, score in items]
        low, high = min(values), max(values)
        span = high - low
        for key, score in items:
            scaled = (score - low) / span if span > 0 else 1.0
            scores[key] = scores.get(key, 0.0) + share * scaled
    return sorted(scores.items(), key=lambda item: -item[1])


def lend_scores(
    scored: Sequence[tuple[K, float]],
    neighbours: Mapping[K, Sequence[K]],
    *,
    share: float = SESSION_NEIGHBOUR_SHARE,
) -> list[tuple[K, float]]:
    """Let candidates stored near each other lift each other: ``s'(d) = s(d) + share * Σ s(n)``.

    `neighbours` maps a candidate to the learnings stored just before and after it in its
    session; only those that are candidates themselves lend (a neighbour that matched nothing
    lends 0 and is never added), so every result still matches the query on its own. Learnings
    written one after the other in a session are usually one episode — a failed approach and its
    fix, a question and its answer — and the wording that matches a query is often in one of
    them while the answer is in the next. On LoCoMo's conversations 0-4 this lifts hybrid
    recall@10 from 0.68 to 0.73; the held-out conversations 5-9 gain as much (0.63 to 0.70),
    and the same share lent from learnings seven or eight places away lowers recall instead,
    so the gain is closeness, not smoothing.

    Returns:
        ``(key, score)`` best first, scaled down only if a score passed 1 (then the best is
        1); ties keep the input order.
    """
    base = dict(scored)
    lifted = [
        (key, score + share * sum(base.get(n, 0.0) for n in neighbours.get(key, ())))
        for key, score in scored
    ]
    top = max((score for _, score in lifted), default=0.0)
    scale = 1.0 / top if top > 1.0 else 1.0
    return sorted(((key, score * scale) for key, score in lifted), key=lambda item: -item[1])


def token_set(text: str) -> frozenset[str]:
    """All words of `text`, case- and accent-folded (duplicate detection keeps every word)."""
    return frozenset(_words(text))


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    """Overlap of two word sets, 0 (disjoint) to 1 (equal); two empty sets count as equal."""
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def content_key(text: str) -> str:
    """A key equal for texts that differ only in case, accents form, punctuation or spacing."""
    normal = " ".join(_words(text))
    import hashlib  # deferred: only the duplicate check hashes, and hooks mostly read

    return hashlib.sha256(normal.encode("utf-8")).hexdigest()[:32]


def extract_highlights(marked: str | None) -> list[str]:
    """The distinct spans FTS5 ``highlight()`` wrapped in `HIGHLIGHT_OPEN`/`HIGHLIGHT_CLOSE`."""
    if not marked:
        return []
    spans: list[str] = []
    start = marked.find(HIGHLIGHT_OPEN)
    while start != -1:
        end = marked.find(HIGHLIGHT_CLOSE, start + 1)
        if end == -1:
            break
        span = marked[start + 1 : end].strip()
        if span and span not in spans:
            spans.append(span)
        start = marked.find(HIGHLIGHT_OPEN, end + 1)
    return spans
