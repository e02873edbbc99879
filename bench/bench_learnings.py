"""Learnings search latency at 10k, 100k and 1M learnings, against a raw FTS5 MATCH.

For each size the same queries run three ways on the same on-disk table:

* ours: ``LearningsRepository.search_memories(SearchQuery(text, limit=10))`` — sanitising,
  term counting and planning, status and expiry filters, coverage re-ranking, highlights, row
  decoding and the access-time update (a write transaction) included;
* baseline (the ratio's denominator): the bare FTS5 statement with the same expression ours
  ranks on — ``SELECT rowid, rank FROM learnings_fts WHERE learnings_fts MATCH ? ORDER BY rank
  LIMIT 10`` over the planned words (or, when every word is common, the same newest-first AND
  ours runs) — interleaved with ours;
* unpruned: the bare statement OR-ing every query word, what a plain FTS5 search costs (timed
  on as many queries as fit in a few seconds; at 1M rows one can take seconds).

Learnings are synthetic but shaped like real ones: templated sentences about fixes, patterns and
decisions over a Zipf-distributed technical vocabulary plus project identifiers, 1-3 tags, a
type and a confidence; generation is seeded, so every run sees the same data. Rows are loaded in
bulk transactions of 20k with the FTS index rebuilt once per size. Goal (issue 5): p95 <= 10 ms
at 1M, ratio <= 1.5.

    .venv/bin/python bench/bench_learnings.py [--quick]   # --quick: 10k and 100k only
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from hrm.continuity import _fts  # noqa: E402
from hrm.continuity._learnings_sql import INSERT_LEARNING, format_ts, learning_params  # noqa: E402
from hrm.continuity.learnings import LearningsRepository  # noqa: E402
from hrm.continuity.learnings_types import LearningType, SearchQuery  # noqa: E402
from hrm.storage.sqlite import Database  # noqa: E402

OUT = ROOT / "bench" / "out" / "bench_learnings.json"
SEED = 20260112
BATCH = 20_000

_TECH_TEXT = """
async await promise callback timeout retry backoff cache invalidation index query migration
schema transaction deadlock lock mutex thread pool worker queue consumer producer kafka redis
postgres sqlite mysql orm session cookie token jwt oauth login logout password hash salt
encryption tls certificate proxy nginx docker container image volume kubernetes pod deployment
service ingress helm chart terraform module variable output state backend bucket s3 lambda
function handler middleware router endpoint request response header payload json yaml parser
serializer validator schema type generic interface protocol class method decorator fixture
mock stub test pytest unittest coverage lint ruff mypy typing annotation import circular
dependency package version lockfile build wheel compiler bundle webpack vite babel typescript
react component hook state effect render props context reducer store selector memo ref
css layout flexbox grid animation accessibility aria keyboard focus modal dialog form input
upload download stream buffer encoding utf8 unicode locale timezone datetime parsing format
logging trace span metric alert dashboard latency throughput memory leak garbage profiler
flamegraph benchmark regression release changelog branch merge rebase conflict commit hook
ci pipeline artifact deploy rollback feature flag config environment secret vault key rotation
pagination cursor offset sort filter search ranking embedding vector similarity tokenizer
"""
TECH = _TECH_TEXT.split()

PROJECT = [
    f"{a}_{b}"
    for a in ("billing", "auth", "search", "payments", "inventory", "reports", "gateway", "ingest")
    for b in ("service", "worker", "client", "api", "store", "job", "adapter", "cli")
]

TEMPLATES = [
    "Use {a} instead of {b} in {p} to avoid {c} problems",
    "The {a} in {p} fails when {b} {c} is missing; add a {d} check",
    "Fixed {a} {b} error in {p} by increasing the {c} {d}",
    "Tried {a} with {b} for {p} but the {c} made it too slow",
    "{p} expects {a} {b} before {c}; calling it after breaks {d}",
    "Decided to keep {a} and {b} separate in {p} so {c} stays testable",
    "When {a} {b} times out in {p}, retry with {c} and log the {d}",
    "Always run {a} {b} before {c} in {p}, otherwise {d} drifts",
]


def _zipf_weights(n: int, s: float = 1.05) -> list[float]:
    return [1.0 / (rank**s) for rank in range(1, n + 1)]


_SYLLABLE_TEXT = "ka lo mi ne ru sa ti vo ze bar cor dex fin gal hum jet lux mor nav pix quo rex"
SYLLABLES = _SYLLABLE_TEXT.split()


def _identifiers(rng: random.Random, count: int) -> list[str]:
    """Project-specific names (functions, modules, flags): the long tail real learnings carry."""
    names: set[str] = set()
    while len(names) < count:
        parts = rng.choices(SYLLABLES, k=rng.randint(2, 3))
        names.add("".join(parts) + rng.choice(("", "_handler", "_config", "er", "_id", "ing")))
    return sorted(names)


class Corpus:
    """Seeded generator of learnings and queries over one vocabulary.

    Words are Zipf-distributed over the technical list followed by 8,000 generated project
    identifiers, so a few words are common and most are rare, as in real notes.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        vocabulary = list(TECH)
        random.Random(SEED).shuffle(vocabulary)
        self.words = vocabulary + _identifiers(random.Random(SEED), 8000)
        # Cumulative weights once: `choices(weights=...)` would re-sum 8k weights per call.
        self.cum_weights = list(itertools.accumulate(_zipf_weights(len(self.words), s=0.9)))
        self.types = [t.value for t in LearningType]

    def words_(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum_weights, k=k)

    def sentence(self) -> str:
        a, b, c, d = self.words_(4)
        template = self.rng.choice(TEMPLATES)
        return template.format(a=a, b=b, c=c, d=d, p=self.rng.choice(PROJECT))

    def record(self, index: int, start: datetime) -> dict[str, object]:
        text = f"{self.sentence()} (#{index})"
        stamp = format_ts(start + timedelta(seconds=index))
        return {
            "id": f"lrn-bench-{index:09d}",
            "session_id": f"s-{index // 50}",
            "created_at": stamp,
            "accessed_at": stamp,
            "access_count": 0,
            "content": text,
            "type": self.rng.choice(self.types),
            "tags": sorted(set(self.words_(self.rng.randint(1, 3)))),
            "confidence": self.rng.choice(("HIGH", "MEDIUM", "LOW")),
            "context": self.rng.choice(PROJECT),
            "expires_at": None,
            "source": "bench",
            "relevance_score": 1.0,
            "status": "active",
            "pruned_at": None,
            "preference_class": None,
            "content_key": _fts.content_key(text),
        }

    def query(self) -> str:
        words = self.words_(self.rng.randint(2, 4))
        if self.rng.random() < 0.5:
            words.append(self.rng.choice(PROJECT).replace("_", " "))
        return "how to " + " ".join(words)


def load(db: Database, corpus: Corpus, start_index: int, stop_index: int) -> float:
    """Bulk-load learnings ``start_index..stop_index``; returns the seconds it took.

    The FTS insert trigger is set aside for the load and the index rebuilt once afterwards
    (``'rebuild'`` tokenizes every row in one pass: about five times faster here than the
    trigger's row-at-a-time inserts), then the trigger is restored exactly as it was. Nothing
    else reads the table meanwhile.
    """
    started = time.perf_counter()
    origin = datetime(2025, 1, 1, tzinfo=UTC)
    row = db.one(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'learnings_fts_insert'"
    )
    if row is None:
        raise SystemExit("learnings_fts_insert trigger not found; is the schema current?")
    with db.transaction():
        db.execute("DROP TRIGGER learnings_fts_insert")
    for low in range(start_index, stop_index, BATCH):
        records = [corpus.record(i, origin) for i in range(low, min(stop_index, low + BATCH))]
        with db.transaction():
            db.executemany(INSERT_LEARNING, [learning_params(r) for r in records])
    with db.transaction():
        db.execute("INSERT INTO learnings_fts (learnings_fts) VALUES ('rebuild')")
        db.execute(str(row["sql"]))
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


RANKED_SQL = (
    "SELECT rowid, rank FROM learnings_fts WHERE learnings_fts MATCH ? ORDER BY rank LIMIT 10"
)
NEWEST_SQL = (
    "SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH ? ORDER BY rowid DESC LIMIT 10"
)


def baseline_statement(repo: LearningsRepository, text: str) -> tuple[str, str]:
    """The bare FTS5 statement our search runs for `text`: same words, same expression."""
    terms = _fts.query_terms(text)
    plan = repo._plan(terms)  # the bench mirrors the repository's own plan
    if plan.all_common:
        ranked = list(plan.ranked)
        return NEWEST_SQL, _fts.match_all(ranked[:2]) if len(ranked) > 1 else _fts.match_any(ranked)
    return RANKED_SQL, _fts.match_any(plan.ranked)


def measure(
    db: Database, repo: LearningsRepository, queries: list[str], *, unpruned_budget_s: float
) -> dict[str, float]:
    """Time ours, the bare statement with our expression, and the bare unpruned OR query.

    Ours runs first for each query (its term counts may be cold, as in a fresh process), then
    the bare statement (on pages ours just warmed: a conservative ratio). The unpruned OR of
    every word, what a plain FTS5 search runs, is timed on as many queries as fit in
    `unpruned_budget_s` (at 1M rows one can take seconds).
    """
    raw: list[float] = []
    ours: list[float] = []
    unpruned: list[float] = []
    for text in queries[:10]:  # warm the page cache for both paths
        repo.search_memories(SearchQuery(text=text, limit=10))
        db.execute(*baseline_statement(repo, text)[:1], (baseline_statement(repo, text)[1],))
    for text in queries:
        t0 = time.perf_counter()
        repo.search_memories(SearchQuery(text=text, limit=10))
        t1 = time.perf_counter()
        sql, expression = baseline_statement(repo, text)
        t2 = time.perf_counter()
        db.execute(sql, (expression,))
        t3 = time.perf_counter()
        ours.append((t1 - t0) * 1000)
        raw.append((t3 - t2) * 1000)
    spent = 0.0
    for text in queries:
        if spent >= unpruned_budget_s:
            break
        t0 = time.perf_counter()
        db.execute(RANKED_SQL, (_fts.match_any(_fts.query_terms(text)),))
        took = time.perf_counter() - t0
        spent += took
        unpruned.append(took * 1000)
    return {
        "raw_p50_ms": statistics.median(raw),
        "raw_p95_ms": percentile(raw, 0.95),
        "ours_p50_ms": statistics.median(ours),
        "ours_p95_ms": percentile(ours, 0.95),
        "ratio_p50": statistics.median(ours) / statistics.median(raw),
        "ratio_p95": percentile(ours, 0.95) / percentile(raw, 0.95),
        "unpruned_queries": len(unpruned),
        "unpruned_p50_ms": statistics.median(unpruned),
        "unpruned_p95_ms": percentile(unpruned, 0.95),
        "ratio_p95_vs_unpruned": percentile(ours, 0.95) / percentile(unpruned, 0.95),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10k and 100k only (< 30 s)")
    parser.add_argument("--queries", type=int, default=None, help="queries per size")
    args = parser.parse_args()
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    query_count = args.queries or (60 if args.quick else 300)
    corpus = Corpus(SEED)
    query_gen = Corpus(SEED + 1)
    queries = [query_gen.query() for _ in range(query_count)]
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "memory.db")
        db.execute("PRAGMA cache_size = -262144")  # 256 MiB: a warm, realistic long-lived process
        repo = LearningsRepository(db)
        loaded = 0
        for size in sizes:
            seconds = load(db, corpus, loaded, size)
            loaded = size
            figures = measure(db, repo, queries, unpruned_budget_s=3.0 if args.quick else 20.0)
            row = {"learnings": size, "load_s": round(seconds, 2), **figures}
            rows.append(row)
            print(
                f"{size:>9,} learnings  raw p50 {figures['raw_p50_ms']:.2f} ms"
                f" p95 {figures['raw_p95_ms']:.2f} ms | ours p50 {figures['ours_p50_ms']:.2f} ms"
                f" p95 {figures['ours_p95_ms']:.2f} ms | ratio p50 {figures['ratio_p50']:.2f}"
                f" p95 {figures['ratio_p95']:.2f}"
                f" | unpruned OR p50 {figures['unpruned_p50_ms']:.1f} ms"
                f" p95 {figures['unpruned_p95_ms']:.1f} ms ({figures['unpruned_queries']} queries)"
                f"  (loaded in {seconds:.1f} s)",
                flush=True,
            )
        db.close()
    summary = {
        "benchmark": "learnings_search",
        "quick": args.quick,
        "queries_per_size": query_count,
        "baseline": "bare FTS5 statement with our expression (ranked words OR-ed, ORDER BY rank"
        " LIMIT 10; newest-first AND of the two rarest when every word is common)",
        "unpruned": "bare FTS5 MATCH of every query word OR-ed, ORDER BY rank LIMIT 10",
        "goal": {"p95_ms_at_1m": 10.0, "ratio": 1.5},
        "results": rows,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
