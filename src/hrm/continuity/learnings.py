"""The learnings repository (003 §2 "Memory Repository"): what a coding assistant remembers.

Learnings live in the home's ``memory.db`` beside every other store. Search is full-text (FTS5,
BM25, porter stemming) on the query's rarer words within a row budget, so its cost does not grow
with the rows that share a common word; the index holds each learning's session neighbours' text
at half weight, but a result must hold a query word itself (D340). When an embedder is present
search is hybrid: the word list
and a cosine list over stored MiniLM vectors are fused by a weighted sum of their min-max
normalised scores (`_fts.convex_fuse`). Writes are scrubbed of secrets and checked for
duplicates first; ``USER_PREFERENCE`` learnings pass the preference truth model (001 §12.4), so
an inferred preference waits for confirmation instead of becoming canon.

Nothing is deleted: decay marks low-scoring learnings ``pruned`` (with ``pruned_at``) and
searches leave them out unless asked. Used by the Claude Code hooks (session start, prompt
submit, post-write indexing) and by ``hrm memory ...``.

The write path (row preparation, duplicate checks and inserts for `store_learning` and
`import_`) lives in `hrm.continuity._learnings_writes`, imported on first write: the hook only
reads, so it never loads it.
"""

from __future__ import annotations

import _thread  # not `threading`: the hook imports this module and needs only a lock
import math
import time
from collections.abc import Sequence

from hrm._clock import system_clock
from hrm.continuity import _fts
from hrm.continuity._learnings_sql import (
    COMPONENT,
    LEARNING_COLUMNS,
    MIGRATIONS,
    FilterSQL,
    build_filters,
    format_ts,
    parse_ts,
    row_to_learning,
)
from hrm.continuity.artifacts import ARTIFACT_KINDS, ArtifactIndex
from hrm.continuity.learnings_types import (
    DecayResult,
    DecayStrategy,
    Learning,
    SearchQuery,
    SearchResult,
    SearchResults,
    parse_learning_type,
)
from hrm.errors import ErrorCode, HRMError
from hrm.storage.sqlite import Database

TYPE_CHECKING = False  # `hrm hook` recalls learnings: no `typing` or `logging` at run time
if TYPE_CHECKING:
    import logging
    import sqlite3
    from datetime import datetime
    from pathlib import Path
    from typing import Any, TypeAlias

    from hrm.continuity._vectors import VectorIndex
    from hrm.continuity.embeddings import EmbeddingModel
    from hrm.continuity.learnings_types import LearningId, LearningInput, LearningType
    from hrm.home import HRMHome
    from hrm.types import Clock, ProgressCallback

    _Hit: TypeAlias = tuple[int, float, sqlite3.Row, list[str]]
    """A search hit before decoding: row number, relevance, the row, highlights. Only the hits
    a search returns are decoded into `SearchResult` (decoding dominates a window's cost)."""

__all__ = [
    "ACCESS_SATURATION",
    "AGE_HALF_LIFE_DAYS",
    "ARTIFACT_KINDS",
    "CORRECTION_JACCARD",
    "MIN_VECTOR_SIMILARITY",
    "NEAR_DUPLICATE_JACCARD",
    "RECALL_LOG",
    "LearningsRepository",
    "decay_score",
]


def _logger() -> logging.Logger:
    """The module's logger, imported on first use (see TYPE_CHECKING above)."""
    import logging

    return logging.getLogger(__name__)


NEAR_DUPLICATE_JACCARD = 0.9
"""Word-set overlap at which a new learning counts as a near-duplicate of a stored one."""
CORRECTION_JACCARD = 0.8
"""Word-set overlap (a typo counting as the same word) at which a new learning that differs in
a negation, a number or a value swapped for its opposite corrects a stored one and supersedes
it (D234)."""

MIN_VECTOR_SIMILARITY = 0.2
"""Vector hits below this cosine are noise for MiniLM and are left out of the fusion."""

AGE_HALF_LIFE_DAYS = 30.0
"""Age at which the age factor of decay reaches one half."""

ACCESS_SATURATION = 20
"""Accesses at which the access factor of decay reaches one."""

RECALL_LOG = "recalls.log"
"""The home's recall log (`hrm.continuity._recall_log`), beside ``memory.db``."""

_MAX_LIMIT = 100
_MIN_WINDOW = 20
_LAZY_EMBED_BATCH = 64
_QUERY_VECTOR_CACHE = 256
_OWN_HIGHLIGHT = " OR ".join(
    f"instr(highlight(learnings_fts, {column}, char(2), char(3)), char(2))" for column in (0, 1, 2)
)
"""True for a ``learnings_fts`` match whose own text, tags or context hold a query word (not
only its neighbours' text, D340); evaluated per fetched row, in the select list."""


def decay_score(strategy: DecayStrategy, *, age_days: float, access_count: int) -> float:
    """The decayed relevance of one learning, 0-1 (higher keeps it).

    ``1 - (age_weight * age_factor + access_weight * (1 - access_factor))`` where
    ``age_factor = age / (age + 30 days)`` (0 when new, 1/2 at a month, towards 1) and
    ``access_factor = log(1 + accesses) / log(1 + 20)`` capped at 1: an old learning nobody
    reads fades; one that keeps being found stays.
    """
    age = max(0.0, age_days)
    age_factor = age / (age + AGE_HALF_LIFE_DAYS)
    access_factor = min(1.0, math.log1p(max(0, access_count)) / math.log1p(ACCESS_SATURATION))
    score = 1.0 - (strategy.age_weight * age_factor + strategy.access_weight * (1 - access_factor))
    return min(1.0, max(0.0, score))


class LearningsRepository:
    """Store, search, decay, export and import learnings in one SQLite database.

    Thread-safe (the `Database` serialises statements; the vector cache has its own lock).
    Several processes may share the database: duplicate checks re-run inside the write
    transaction, and the vector cache reloads vectors other processes wrote.
    """

    def __init__(
        self,
        db: Database,
        *,
        clock: Clock = system_clock,
        embedder: EmbeddingModel | None = None,
        preference_classifier: Any | None = None,
        ranked_row_budget: int = _fts.RANKED_ROW_BUDGET,
    ) -> None:
        """Bind to `db`, applying the learnings migrations.

        Args:
            db: The home's database (or ``Database(":memory:")`` in tests).
            clock: Source of "now" for timestamps, expiry and decay.
            embedder: Turns on hybrid search; None keeps search pure FTS5.
            preference_classifier: A ``PreferenceClassifier`` for ``USER_PREFERENCE``
                learnings; None builds the default one on first use.
            ranked_row_budget: Most rows one search may BM25-rank; the commonest query
                words are left out of ranking to stay within it (see `_fts.plan_terms`).

        Raises:
            HRMError: ``DB_UNAVAILABLE`` when this SQLite build has no FTS5.
        """
        if not db.has_fts5():
            raise HRMError(
                ErrorCode.DB_UNAVAILABLE,
                "This SQLite build has no FTS5; learnings need a Python whose sqlite3 has it",
                recoverable=False,
            )
        db.migrate(COMPONENT, MIGRATIONS)
        self._db = db
        self._clock = clock
        self._embedder = embedder
        self._preference_classifier = preference_classifier
        self._vector_lock = _thread.allocate_lock()
        self._vectors: VectorIndex | None = None
        self._embedded_through: tuple[str, int] = ("", 0)
        """(model id, row number) through which every unpruned learning has a vector."""
        self._query_vectors: dict[tuple[str, str], Any] = {}
        self._term_counts = _fts.TermFrequencies()
        self.artifacts = ArtifactIndex(db, clock=clock)
        """Handoffs, plans and ledgers indexed for search, in the same database."""
        self._ranked_row_budget = max(1, ranked_row_budget)
        self._owns_db = False
        self._home: HRMHome | None = None
        """The home, when `open` opened it: what a forget sweeps besides the database."""
        self._recalls_path: Path | None = None
        """The home's recall log, applied by this repository's writes (`fold_recalls`)."""
        self._log_recalls = False
        """Whether searches append to the recall log instead of stamping the database."""

    supports_fts = True
    """Declared capability: full-text search is always on."""

    @property
    def supports_vectors(self) -> bool:
        """Whether searches are hybrid (an embedder is loaded)."""
        return self._embedder is not None

    @classmethod
    def open(
        cls,
        home: HRMHome,
        *,
        clock: Clock = system_clock,
        embeddings: str = "auto",
        recalls: str = "now",
    ) -> LearningsRepository:
        """Open the learnings of `home` (its ``memory.db``); close it with `close`.

        Args:
            home: The hrm home.
            clock: Source of "now".
            embeddings: ``auto`` (hybrid when the extra is installed), ``on`` (hybrid or
                ImportError naming the extra), ``off`` (never load it; the fast hook path).
            recalls: ``now`` stamps what a search returns in the database, and applies the
                recall log at open; ``log`` appends it to the home's recall log for the next
                `open` or write to apply (`_recall_log`): searches then never write, nor wait
                for, ``memory.db`` (the hooks).
        """
        if embeddings not in ("auto", "on", "off"):
            raise HRMError.validation_failed(
                f"embeddings must be 'auto', 'on' or 'off', got {embeddings!r}", value=embeddings
            )
        if recalls not in ("now", "log"):
            raise HRMError.validation_failed(
                f"recalls must be 'now' or 'log', got {recalls!r}", value=recalls
            )
        embedder: EmbeddingModel | None = None
        if embeddings != "off":
            # Deferred: the hook opens with embeddings off and must not pay for this import.
            from hrm.continuity import embeddings as emb

            if embeddings == "on" or emb.available():
                # One thread: a search encodes one short query, and onnxruntime's second
                # thread spins waiting for work, doubling a search's CPU on a busy machine
                # (13 ms against 27 ms a hybrid search at 10k learnings, D341).
                embedder = emb.Embedder.load(threads=1)
        repo = cls(Database(home.memory_db), clock=clock, embedder=embedder)
        repo._owns_db = True
        repo._home = home
        repo._recalls_path = home.root / RECALL_LOG
        repo._log_recalls = recalls == "log"
        if not repo._log_recalls:
            repo.fold_recalls()  # what `hrm memory show` prints counts the hooks' recalls too
        return repo

    def close(self) -> None:
        """Close the database if `open` opened it."""
        if self._owns_db:
            self._db.close()

    def __enter__(self) -> LearningsRepository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ── store ──────────────────────────────────────────────────────────────

    def store_learning(self, learning: LearningInput) -> LearningId:
        """Validate, scrub, de-duplicate and store one learning (003 "Store Learning").

        Raises:
            HRMError: ``VALIDATION_FAILED`` (unknown type, blank content, naive timestamp);
                ``DUPLICATE_DETECTED`` with ``context["duplicate_id"]`` when the same or a
                near-identical learning is stored; ``DB_LOCKED`` / ``DISK_FULL`` from storage.
        """
        # Deferred: the hook only recalls and must not pay for the write path.
        from hrm.continuity._learnings_writes import store_learning

        self.fold_recalls()
        return store_learning(self, learning)

    # ── read ───────────────────────────────────────────────────────────────

    def get(self, learning_id: str) -> Learning:
        """One learning by id, whatever its status.

        Raises:
            HRMError: ``NOT_FOUND``.
        """
        row = self._db.one(
            f"SELECT {LEARNING_COLUMNS} FROM learnings l WHERE l.id = ?", (learning_id,)
        )
        if row is None:
            raise HRMError.not_found("learning", learning_id, "list ids with `hrm memory search`")
        return row_to_learning(row)

    def recent(
        self, limit: int = 10, *, types: Sequence[LearningType | str] | None = None
    ) -> list[Learning]:
        """The newest active, unexpired learnings, newest first (session-start context)."""
        fsql = build_filters(None, include_expired=False, now=self._clock())
        if types:
            names = [parse_learning_type(t).value for t in types]
            fsql.clauses.append(f"l.type IN ({', '.join('?' for _ in names)})")
            fsql.params.extend(names)
        rows = self._db.execute(
            f"SELECT {LEARNING_COLUMNS} FROM learnings l WHERE {fsql.where}"
            " ORDER BY l.created_at DESC, l.seq DESC LIMIT ?",
            (*fsql.params, max(0, limit)),
        )
        return [row_to_learning(r) for r in rows]

    def count(self, *, status: str | None = None) -> int:
        """How many learnings are stored (with `status`, only those)."""
        if status is None:
            row = self._db.one("SELECT count(*) AS n FROM learnings")
        else:
            row = self._db.one("SELECT count(*) AS n FROM learnings WHERE status = ?", (status,))
        return 0 if row is None else int(row["n"])

    # ── search ─────────────────────────────────────────────────────────────

    def search_memories(
        self, query: SearchQuery, *, budget_ms: int | None = None
    ) -> SearchResults:
        """Search learnings, best first (003 "Search Memories").

        Any text is a safe query: it is reduced to quoted words, so FTS5 syntax in it is
        plain text; text with no words finds nothing. Returned learnings get their access
        time and count updated.

        Args:
            query: Text, filters, limit (1-100) and whether expired or pruned ones count.
            budget_ms: When the full-text phase alone uses the budget, the vector phase is
                skipped and ``timed_out`` is set (partial result, 003 error catalog).

        Raises:
            HRMError: ``QUERY_INVALID`` for blank text or a limit outside 1-100;
                ``VALIDATION_FAILED`` for an unknown type or confidence in the filters.
        """
        started = time.perf_counter()
        if not isinstance(query.text, str) or not query.text.strip():
            raise HRMError(
                ErrorCode.QUERY_INVALID,
                "Search text is empty",
                recoverable=False,
                context={"field": "text"},
            )
        if not 1 <= query.limit <= _MAX_LIMIT:
            raise HRMError(
                ErrorCode.QUERY_INVALID,
                f"Search limit {query.limit} is outside 1-{_MAX_LIMIT}",
                recoverable=False,
                context={"field": "limit", "value": query.limit},
            )
        mode = "hybrid" if self._embedder is not None else "fts"
        row_count = self._row_count()
        if row_count == 0 and query.filters is None:
            # Nothing stored: skip filters, planning, ranking and the query embedding. A
            # stack's store is empty until something is learned, and attention searches it
            # every turn. (Filters, when given, are still checked below.)
            return SearchResults(
                results=[], total_count=0, mode=mode,
                query_time_ms=int((time.perf_counter() - started) * 1000),
            )
        now = self._clock()
        fsql = build_filters(query.filters, include_expired=query.include_expired, now=now)
        terms = _fts.query_terms(query.text)
        if row_count == 0:
            return SearchResults(
                results=[], total_count=0, mode=mode,
                query_time_ms=int((time.perf_counter() - started) * 1000),
            )
        # Rank a window larger than the limit: coverage re-orders it (see fts_relevance).
        window = max(query.limit * 3, 30) if mode == "hybrid" else max(query.limit * 2, 20)
        hits, total, exact = (
            self._fts_hits(terms, fsql, window, row_count) if terms else ([], 0, True)
        )
        timed_out = False
        if mode == "hybrid":
            elapsed_ms = (time.perf_counter() - started) * 1000
            if budget_ms is not None and elapsed_ms >= budget_ms:
                timed_out, mode = True, "fts"
            else:
                hits, total = self._fuse(query.text, hits, total, fsql, window)
        returned = hits[: query.limit]
        results = [
            SearchResult(learning=row_to_learning(row), relevance_score=score, highlights=marks)
            for _, score, row, marks in returned
        ]
        self._touch(results, [seq for seq, *_ in returned], now)
        return SearchResults(
            results=results,
            total_count=total,
            query_time_ms=int((time.perf_counter() - started) * 1000),
            mode=mode,
            timed_out=timed_out,
            total_exact=exact,
        )

    def _row_count(self) -> int:
        """Rows ever stored (the highest row number; nothing is deleted, only marked).

        Attention searches a stack's learnings every turn, so the count is cached until the
        table changes (`Database.cached`): inside a turn that costs no statement at all.
        """
        return self._db.cached(("learnings.row_count",), self._read_row_count, table="learnings")

    def _read_row_count(self) -> int:
        row = self._db.one("SELECT max(seq) AS n FROM learnings")
        return 0 if row is None or row["n"] is None else int(row["n"])

    def _plan(self, terms: list[str], row_count: int | None = None) -> _fts.TermPlan:
        """Decide which words to rank on from their (cached, capped) row counts."""
        if row_count is None:
            row_count = self._row_count()
        cap = self._ranked_row_budget + 1

        def count(term: str) -> int:
            found = self._db.one(
                "SELECT count(*) AS n FROM (SELECT 1 FROM learnings_fts"
                " WHERE learnings_fts MATCH ? LIMIT ?)",
                (_fts.match_any([term]), cap),
            )
            return 0 if found is None else int(found["n"])

        counts = self._term_counts.lookup(terms, row_count=row_count, count=count)
        return _fts.plan_terms(terms, counts, budget=self._ranked_row_budget)

    def _match_bound(self, terms: Sequence[str], row_count: int) -> int:
        """The ranked words' row counts summed: at least how many rows the ranked query
        matches (the counts were just looked up by `_plan`, so this runs no statement)."""
        counts = self._term_counts.lookup(terms, row_count=row_count, count=lambda _: 0)
        return sum(counts.values())

    def _fts_hits(
        self, terms: list[str], fsql: FilterSQL, limit: int, row_count: int
    ) -> tuple[list[_Hit], int, bool]:
        """The best `limit` full-text hits, re-ranked by coverage, and the match total.

        Common words are left out of the ranked query (`plan_terms`): a row is not credited
        for holding them, but they stay in the coverage denominator, so a row answering only
        the rare part of the question is not scored as a full answer.
        """
        plan = self._plan(terms, row_count)
        if plan.all_common:
            rows, total, exact = self._newest(list(plan.ranked), fsql, limit)
            marks = {int(r["seq"]): _fts.extract_highlights(r["marked"]) for r in rows}
        elif fsql.selective:
            match = _fts.match_own(plan.ranked)
            rows = self._db.execute(
                f"SELECT {LEARNING_COLUMNS}, learnings_fts.rank AS score,"
                " count(*) OVER () AS total FROM learnings_fts"
                " CROSS JOIN learnings l ON l.seq = learnings_fts.rowid"
                f" WHERE learnings_fts MATCH ? AND {fsql.where}"
                " ORDER BY learnings_fts.rank LIMIT ?",
                (match, *fsql.params, limit),
            )
            total, exact = (int(rows[0]["total"]) if rows else 0), not plan.dropped
            marks = self._highlights(match, [int(r["seq"]) for r in rows])
        else:
            bound = self._match_bound(plan.ranked, row_count)
            rows, total, exact = self._windowed(_fts.match_own(plan.ranked), fsql, limit, bound)
            exact = exact and not plan.dropped
            marks = {int(r["seq"]): _fts.extract_highlights(r["marked"]) for r in rows}
        hits: list[_Hit] = []
        for row in rows:
            seq = int(row["seq"])
            found = marks.get(seq, [])
            matched = len({m.casefold() for m in found})
            relevance = _fts.fts_relevance(float(row["score"]), len(terms), matched=matched)
            hits.append((seq, relevance, row, found))
        hits.sort(key=lambda h: -h[1])
        return hits, total, exact

    def _newest(
        self, terms: list[str], fsql: FilterSQL, limit: int
    ) -> tuple[list[sqlite3.Row], int, bool]:
        """For a query of only common words: the newest rows holding the two rarest, then any.

        BM25 would score every one of the many matching rows; walking the index from its
        newest row stops after `limit` matches (an AND of every word could walk a whole
        list when they never meet; two common words meet often). `terms` come rarest first.
        The total is then the ranked-row budget plus one (``total_exact`` False).

        A row that only its neighbours' text matches is skipped by highlighting its own
        columns (`_OWN_HIGHLIGHT`) in the few rows fetched: the column filter of
        `_fts.match_own` would read the positions of every row the walk passes (D340).
        """
        rows: list[sqlite3.Row] = []
        seen: set[int] = set()
        expressions = [_fts.match_all(terms[:2])] if len(terms) > 1 else []
        for match in [*expressions, _fts.match_any(terms)]:
            found = self._db.execute(
                f"SELECT {LEARNING_COLUMNS}, 0.0 AS score,"
                f" highlight(learnings_fts, 0, ?, ?) AS marked, {_OWN_HIGHLIGHT} AS own"
                " FROM learnings_fts CROSS JOIN learnings l ON l.seq = learnings_fts.rowid"
                f" WHERE learnings_fts MATCH ? AND {fsql.where}"
                " ORDER BY learnings_fts.rowid DESC LIMIT ?",
                (_fts.HIGHLIGHT_OPEN, _fts.HIGHLIGHT_CLOSE, match, *fsql.params, limit),
            )
            for row in found:
                if row["own"] and int(row["seq"]) not in seen and len(rows) < limit:
                    seen.add(int(row["seq"]))
                    rows.append(row)
            if len(rows) >= limit:
                break
        # The plan is all-common only when some word's count passed the budget, so the OR of
        # them matches more rows than the budget: counting them again (0.6 ms at 1M) would
        # find the same capped number.
        return rows, max(len(rows), self._ranked_row_budget + 1), False

    def _windowed(
        self, match: str, fsql: FilterSQL, limit: int, bound: int
    ) -> tuple[list[sqlite3.Row], int, bool]:
        """Rank (and highlight) inside FTS5 first, then filter the window.

        Most rows pass the default filters, so a window of `limit` rows nearly always
        suffices (the caller already asks for more than it returns); FTS5 consumes
        ``ORDER BY rank``, so ``highlight()`` runs only for the window's rows. When the
        window did not hold every match, the total is `bound`, the ranked words' row counts
        summed (an upper bound: it counts hidden learnings, and rows only their neighbours
        match). Counting the matches instead made FTS5 check the column filter of
        `_fts.match_own` on every one (D340).
        """
        window = max(limit, _MIN_WINDOW)
        while True:
            rows = self._db.execute(
                f"SELECT {LEARNING_COLUMNS}, m.score AS score, m.marked AS marked,"
                f" ({fsql.where}) AS passes FROM"
                " (SELECT rowid AS seq, rank AS score, highlight(learnings_fts, 0, ?, ?) AS marked"
                "  FROM learnings_fts WHERE learnings_fts MATCH ? ORDER BY rank LIMIT ?) AS m"
                " CROSS JOIN learnings l ON l.seq = m.seq ORDER BY m.score",
                (*fsql.params, _fts.HIGHLIGHT_OPEN, _fts.HIGHLIGHT_CLOSE, match, window),
            )
            kept = [r for r in rows if r["passes"]]
            if len(rows) < window:
                return kept[:limit], len(kept), True  # the window held every match
            if len(kept) >= limit:
                break
            window *= 4
        return kept[:limit], max(len(kept), bound), False

    def _highlights(self, match: str, seqs: list[int]) -> dict[int, list[str]]:
        if not seqs:
            return {}
        rows = self._db.execute(
            "SELECT rowid AS seq, highlight(learnings_fts, 0, ?, ?) AS marked FROM learnings_fts"
            f" WHERE learnings_fts MATCH ? AND rowid IN ({', '.join('?' for _ in seqs)})",
            (_fts.HIGHLIGHT_OPEN, _fts.HIGHLIGHT_CLOSE, match, *seqs),
        )
        return {int(r["seq"]): _fts.extract_highlights(r["marked"]) for r in rows}

    def _touch(self, results: list[SearchResult], seqs: list[int], now: datetime) -> None:
        """Record the access: in the recall log when searches must not write (the hooks), else
        in the database by row number (half the cost of going through the id index)."""
        if not results:
            return
        stamp = format_ts(now)
        if self._log_recalls and self._recalls_path is not None:
            self._log_recall(stamp, [result.learning.id for result in results])
        else:
            self._stamp_accessed(stamp, seqs)
        for result in results:
            result.learning.accessed_at = now
            result.learning.access_count += 1

    def _log_recall(self, stamp: str, ids: list[str]) -> None:
        from hrm.continuity._recall_log import FOLD_BYTES, append_recall

        assert self._recalls_path is not None
        try:
            size = append_recall(self._recalls_path, stamp, ids)
        except OSError as exc:  # bookkeeping: the search's answer stands without it
            _logger().warning("could not log a recall in %s: %s", self._recalls_path, exc)
            return
        if size > FOLD_BYTES:
            self.fold_recalls()

    def fold_recalls(self) -> int:
        """Apply the home's recall log (what hooks recalled) to the database; returns how
        many learnings it stamped. Called by this repository's writes; safe to call any time."""
        from hrm.continuity._recall_log import take_recalls

        if self._recalls_path is None:
            return 0
        try:
            recalls = take_recalls(self._recalls_path)
        except OSError as exc:
            _logger().warning("could not read the recall log %s: %s", self._recalls_path, exc)
            return 0
        if recalls.skipped_lines:
            _logger().warning(
                "recall log %s: %d lines did not parse and were skipped",
                self._recalls_path, recalls.skipped_lines,
            )
        rows = recalls.rows()
        if not rows:
            return 0
        try:
            with self._db.transaction():
                self._db.executemany(
                    "UPDATE learnings SET accessed_at = max(accessed_at, ?),"
                    " access_count = access_count + ? WHERE id = ?",
                    rows,
                )
        except HRMError as exc:  # the write that called this must not fail for bookkeeping
            _logger().warning("recall log %s not applied: %s", self._recalls_path, exc.message)
            return 0
        return len(rows)

    def _stamp_accessed(self, stamp: str, seqs: list[int]) -> None:
        with self._db.transaction():
            self._db.execute(
                "UPDATE learnings SET accessed_at = ?, access_count = access_count + 1"
                f" WHERE seq IN ({', '.join('?' for _ in seqs)})",
                (stamp, *seqs),
            )

    # ── hybrid ─────────────────────────────────────────────────────────────

    def _embed_one(self, text: str) -> Any | None:
        if self._embedder is None:
            return None
        return self._embedder.encode([text])[0]

    def _insert_vector(self, seq: int, vector: Any) -> None:
        from hrm.continuity._vectors import pack_vector

        if self._embedder is None:
            return
        self._db.execute(
            "INSERT OR REPLACE INTO learning_vectors (seq, model_id, dim, vector)"
            " VALUES (?, ?, ?, ?)",
            (seq, self._embedder.model_id, int(vector.shape[0]), pack_vector(vector)),
        )

    def reembed(
        self,
        *,
        batch_size: int = 256,
        max_rows: int | None = None,
        progress: ProgressCallback | None = None,
    ) -> int:
        """Embed learnings with no vector of the current model (new, or another model's).

        Search does this lazily in small batches; call it to catch up at once after a model
        change or a bulk import. Returns how many learnings were embedded.

        Args:
            batch_size: Learnings encoded per model call (and per transaction).
            max_rows: Stop after this many.
            progress: Called as ``progress(embedded, to_embed)`` after each batch; counting
                what is to embed costs one query, made only when this is given.
        """
        embedder = self._embedder
        if embedder is None:
            return 0
        done = 0
        todo = 0
        if progress is not None:
            row = self._db.one(
                "SELECT COUNT(*) FROM learnings l LEFT JOIN learning_vectors v"
                " ON v.seq = l.seq AND v.model_id = ? WHERE v.seq IS NULL"
                " AND l.status != 'pruned'",
                (embedder.model_id,),
            )
            todo = int(row[0]) if row is not None else 0
            todo = todo if max_rows is None else min(todo, max_rows)
        while max_rows is None or done < max_rows:
            take = batch_size if max_rows is None else min(batch_size, max_rows - done)
            rows = self._db.execute(
                "SELECT l.seq, l.content FROM learnings l LEFT JOIN learning_vectors v"
                " ON v.seq = l.seq AND v.model_id = ? WHERE v.seq IS NULL"
                " AND l.status != 'pruned' ORDER BY l.seq LIMIT ?",
                (embedder.model_id, take),
            )
            if not rows:
                break
            vectors = embedder.encode([r["content"] for r in rows])
            with self._db.transaction():
                for row, vector in zip(rows, vectors, strict=True):
                    self._insert_vector(int(row["seq"]), vector)
            done += len(rows)
            if progress is not None:
                progress(done, max(todo, done))
        return done

    def _embed_new(self) -> None:
        """Embed up to `_LAZY_EMBED_BATCH` learnings stored since the last search (D341).

        Row numbers only grow, so learnings above ``_embedded_through`` are the only ones a
        search can find without a vector: the check is a short walk of the primary key, not
        the join over every learning that `reembed` does (8 ms a search at 6k learnings).
        Learnings that lost their vector some other way (a pruned one restored) wait for an
        explicit `reembed`.
        """
        embedder = self._embedder
        if embedder is None:
            return
        model, through = self._embedded_through
        if model != embedder.model_id:
            through = 0
        newest = self._row_count()
        if newest <= through:
            return
        rows = self._db.execute(
            "SELECT l.seq, l.content FROM learnings l LEFT JOIN learning_vectors v"
            " ON v.seq = l.seq AND v.model_id = ? WHERE l.seq > ? AND v.seq IS NULL"
            " AND l.status != 'pruned' ORDER BY l.seq LIMIT ?",
            (embedder.model_id, through, _LAZY_EMBED_BATCH),
        )
        if rows:
            vectors = embedder.encode([r["content"] for r in rows])
            with self._db.transaction():
                for row, vector in zip(rows, vectors, strict=True):
                    self._insert_vector(int(row["seq"]), vector)
        # A full batch may leave more behind it: resume after its last row next time.
        through = int(rows[-1]["seq"]) if len(rows) == _LAZY_EMBED_BATCH else newest
        self._embedded_through = (embedder.model_id, through)

    def _query_vector(self, text: str) -> Any:
        """The query's embedding, from a small per-repository cache (D341).

        Attention and the prompt hook ask the same text again within a session, and encoding
        is most of a hybrid search's time (4-7 ms of MiniLM on one core).
        """
        embedder = self._embedder
        if embedder is None:
            raise HRMError.internal("vector search without an embedder")
        key = (embedder.model_id, text)
        vector = self._query_vectors.get(key)
        if vector is None:
            vector = embedder.encode([text])[0]
            if len(self._query_vectors) >= _QUERY_VECTOR_CACHE:
                self._query_vectors.pop(next(iter(self._query_vectors)))  # oldest first
            self._query_vectors[key] = vector
        return vector

    def _vector_index(self) -> VectorIndex:
        from hrm.continuity._vectors import VectorIndex

        embedder = self._embedder
        if embedder is None:
            raise HRMError.internal("vector search without an embedder")
        if self._vectors is None or self._vectors.model_id != embedder.model_id:
            self._vectors = VectorIndex(embedder.model_id, embedder.dimension)
        self._vectors.refresh(self._db)
        return self._vectors

    def _fuse(
        self,
        text: str,
        fts_hits: list[_Hit],
        fts_total: int,
        fsql: FilterSQL,
        window: int,
    ) -> tuple[list[_Hit], int]:
        embedder = self._embedder
        if embedder is None:
            return fts_hits, fts_total
        self._embed_new()
        query_vector = self._query_vector(text)
        with self._vector_lock:
            index = self._vector_index()
            among = None
            if fsql.selective:
                among = [
                    int(r["seq"])
                    for r in self._db.execute(
                        f"SELECT l.seq FROM learnings l WHERE {fsql.where}", fsql.params
                    )
                ]
            candidates = index.top_k(query_vector, window, among=among)
        candidates = [(s, c) for s, c in candidates if c >= MIN_VECTOR_SIMILARITY]
        by_seq = {seq: (row, marks) for seq, _, row, marks in fts_hits}
        missing = [s for s, _ in candidates if s not in by_seq]
        if missing:
            rows = self._db.execute(
                f"SELECT {LEARNING_COLUMNS} FROM learnings l WHERE {fsql.where}"
                f" AND l.seq IN ({', '.join('?' for _ in missing)})",
                (*fsql.params, *missing),
            )
            for row in rows:
                by_seq[int(row["seq"])] = (row, [])
        semantic = [(s, c) for s, c in candidates if s in by_seq]
        lexical = [(seq, score) for seq, score, _, _ in fts_hits]
        fused = _fts.convex_fuse(lexical, semantic)
        neighbours = self._session_neighbours(by_seq, fsql)
        if neighbours:
            fused = _fts.lend_scores(fused, neighbours)
        results: list[_Hit] = [
            (seq, min(1.0, score), *by_seq[seq]) for seq, score in fused
        ]
        return results, fts_total + len({s for s, _ in semantic} - {s for s, _ in lexical})

    def _session_neighbours(
        self, by_seq: dict[int, tuple[Any, list[str]]], fsql: FilterSQL
    ) -> dict[int, list[int]]:
        """For each candidate that shares its session with another: the learnings stored just
        before and after it there (that pass the filters), for `_fts.lend_scores`.

        Only sessions holding two or more candidates are looked up — a lone candidate has no
        one to lend to it — and each lookup is two short walks of the session index.
        """
        sessions: dict[str, list[int]] = {}
        for seq, (row, _) in by_seq.items():
            if row["session_id"]:
                sessions.setdefault(row["session_id"], []).append(seq)
        reach = _fts.SESSION_NEIGHBOUR_REACH

        def side(op: str, order: str) -> str:
            return (
                f"SELECT l.seq FROM learnings l INDEXED BY learnings_session"
                f" WHERE l.session_id = ? AND {fsql.where}"
                f" AND (l.created_at, l.seq) {op} (?, ?)"
                f" ORDER BY l.created_at {order}, l.seq {order} LIMIT {reach}"
            )

        # Both sides in one statement: each is a short walk of the (session, created) index.
        statement = (
            f"SELECT seq FROM ({side('<', 'DESC')}) UNION ALL SELECT seq FROM ({side('>', 'ASC')})"
        )
        found: dict[int, list[int]] = {}
        for session, seqs in sessions.items():
            if len(seqs) < 2:
                continue
            for seq in seqs:
                created = by_seq[seq][0]["created_at"]
                rows = self._db.execute(
                    statement,
                    (session, *fsql.params, created, seq, session, *fsql.params, created, seq),
                )
                found[seq] = [int(r["seq"]) for r in rows]
        return found

    # ── lifecycle ──────────────────────────────────────────────────────────

    def apply_decay(self, strategy: DecayStrategy) -> DecayResult:
        """Re-score active and pending learnings and prune those below ``min_score``.

        Pruning marks (``status = 'pruned'``, ``pruned_at``); nothing is deleted. See
        `decay_score` for the formula.

        Raises:
            HRMError: ``VALIDATION_FAILED`` with ``context["reason"] == "INVALID_STRATEGY"``
                when a weight or ``min_score`` is outside 0-1 or the weights sum above 1.
        """
        _validate_strategy(strategy)
        self.fold_recalls()  # decay weighs how often each learning was recalled
        now = self._clock()
        stamp = format_ts(now)
        rows = self._db.execute(
            "SELECT seq, created_at, access_count FROM learnings"
            " WHERE status IN ('active', 'pending_confirmation')"
        )
        updates: list[tuple[float, str, str | None, int]] = []
        total_age = 0.0
        pruned = 0
        for row in rows:
            created = parse_ts(row["created_at"]) or now
            age_days = max(0.0, (now - created).total_seconds() / 86400)
            total_age += age_days
            score = decay_score(strategy, age_days=age_days, access_count=row["access_count"])
            if score < strategy.min_score:
                pruned += 1
                updates.append((score, "pruned", stamp, int(row["seq"])))
            else:
                updates.append((score, "", None, int(row["seq"])))
        with self._db.transaction():
            self._db.executemany(
                "UPDATE learnings SET relevance_score = ?,"
                " status = CASE WHEN ?2 = '' THEN status ELSE ?2 END,"
                " pruned_at = COALESCE(?3, pruned_at) WHERE seq = ?4",
                updates,
            )
        _logger().info("decay re-scored %s learnings, pruned %s", len(updates), pruned)
        return DecayResult(
            memories_decayed=len(updates),
            memories_pruned=pruned,
            average_age_days=total_age / len(updates) if updates else 0.0,
        )

    def confirm(self, learning_id: str) -> Learning:
        """Activate an inferred preference the person confirmed (idempotent when active).

        Raises:
            HRMError: ``NOT_FOUND``; ``VALIDATION_FAILED`` for a pruned learning.
        """
        learning = self.get(learning_id)
        if learning.status == "pruned":
            raise HRMError.validation_failed(
                f"Learning {learning_id} was pruned by decay; store it again to keep it",
                id=learning_id,
            )
        if learning.status == "pending_confirmation":
            with self._db.transaction():
                self._db.execute(
                    "UPDATE learnings SET status = 'active', preference_class = 'EXPLICIT'"
                    " WHERE id = ?",
                    (learning_id,),
                )
            learning = self.get(learning_id)
        return learning

    def forget(self, id_or_query: str) -> Any:
        """Delete a learning for real: its row, tags, vectors and index entries, and its text
        from every ledger, handoff, log and cache of the home (`hrm.storage.forget`).

        `id_or_query` is a learning's id, or words its text holds: exactly one learning must
        hold them (otherwise nothing is deleted and the error lists the candidates).

        Returns:
            A `LearningForgotten`: the learning as it was, and what the sweep changed.

        Raises:
            HRMError: ``NOT_FOUND`` when nothing matches; ``VALIDATION_FAILED`` when several
                learnings match a query (give an id).
        """
        from hrm.continuity._learnings_writes import forget_learning

        return forget_learning(self, id_or_query)

    # ── export / import ────────────────────────────────────────────────────

    def export(self) -> list[dict[str, Any]]:
        """Every learning, any status, oldest first, in `Learning.to_dict` form."""
        rows = self._db.execute(f"SELECT {LEARNING_COLUMNS} FROM learnings l ORDER BY l.seq")
        return [row_to_learning(r).to_dict() for r in rows]

    def import_(
        self, items: Sequence[dict[str, Any]], *, progress: ProgressCallback | None = None
    ) -> tuple[int, int]:
        """Import exported learnings (or minimal ``{"content", "type"}`` dicts).

        Every item is validated before anything is written, so a bad file changes nothing.
        Ids, timestamps, counts and statuses are kept when present. An item whose id or
        normalised content is already stored (or earlier in `items`) is skipped. Large
        imports are written in bulk transactions.

        Args:
            items: The learnings to import.
            progress: Called as ``progress(items_written_or_skipped, len(items))`` after each
                bulk transaction.

        Returns:
            ``(imported, skipped_duplicates)``.

        Raises:
            HRMError: ``VALIDATION_FAILED`` naming the item index and field.
        """
        from hrm.continuity._learnings_writes import import_learnings

        self.fold_recalls()
        return import_learnings(self, items, progress)

    # ── artifacts (003 Integration 5) ──────────────────────────────────────

    def index_artifact(
        self, path: str, kind: str, content: str, *, session_id: str | None = None
    ) -> str:
        """Index a handoff, plan or ledger file for search (see `ArtifactIndex.index`)."""
        return self.artifacts.index(path, kind, content, session_id=session_id)

    def search_artifacts(self, text: str, limit: int = 5) -> list[dict[str, Any]]:
        """Indexed artifacts matching `text`, best first (see `ArtifactIndex.search`)."""
        return self.artifacts.search(text, limit)


def _validate_strategy(strategy: DecayStrategy) -> None:
    fields = {
        "age_weight": strategy.age_weight,
        "access_weight": strategy.access_weight,
        "min_score": strategy.min_score,
    }
    for name, value in fields.items():
        if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
            raise HRMError.validation_failed(
                f"Decay {name} must be between 0 and 1, got {value!r}",
                reason="INVALID_STRATEGY",
                field=name,
            )
    if strategy.age_weight + strategy.access_weight > 1.0 + 1e-9:
        raise HRMError.validation_failed(
            f"Decay weights sum to {strategy.age_weight + strategy.access_weight:.3f}; "
            "age_weight + access_weight must be at most 1.0",
            reason="INVALID_STRATEGY",
        )
