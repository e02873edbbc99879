"""Learnings search latency at 10k, 100k and 1M learnings, against a raw FTS5 MATCH.

For each size the same queries run three ways on the same on-disk table:

* ours: ``LearningsRepository.search_memories(SearchQuery(text, limit=10))`` — sanitising,
  term counting and planning, status and expiry filters, coverage re-ranking, highlights, row
  decoding and the access-time update (a write transaction) included;
* baseline (the ratio's denominator): the bare FTS5 statement with the same expression ours
  ranks on — ``SELECT rowid, rank FROM learnings_fts WHERE learnings_fts MATCH ? ORDER BY rank
  LIMIT 10`` over the planned words, own-column filter included (`_fts.match_own`, D340) (or,
  when every word is common, the same newest-first AND ours runs, whose own-column check is per
  fetched row) — interleaved with ours;
* unpruned: the bare statement OR-ing every query word, what a plain FTS5 search costs (timed
  on as many queries as fit in a few seconds; at 1M rows one can take seconds).

Learnings are synthetic but shaped like real ones: templated sentences about fixes, patterns and
decisions over a Zipf-distributed technical vocabulary plus project identifiers, 1-3 tags, a
type and a confidence; generation is seeded, so every run sees the same data. Rows are loaded in
bulk transactions of 20k with the FTS index filled once per size; each size's database is
cached under ``bench/out`` (keyed by the schema), so only the first run builds the 1M one. At 10k
hybrid search (MiniLM vectors, D31) is timed too, with the query embedding alone beside it.
Goals (issue 35): ours <= 3x the bare statement at p50 and p95; hybrid p50 <= 10 ms at 10k.

    .venv/bin/python bench/bench_learnings.py [--quick]   # --quick: 10k and 100k only
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
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
CORPUS_VERSION = 1
"""Raise when `Corpus` generates different learnings, so cached databases are rebuilt."""
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

    The FTS insert trigger is set aside for the load and the new rows indexed afterwards in
    one statement, with their session neighbours' text from the `learnings_nearby` view
    (D340): about five times faster here than the trigger's row-at-a-time inserts. The
    trigger is then restored exactly as it was. Nothing else reads the table meanwhile.
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
        db.execute(
            "INSERT INTO learnings_fts (rowid, content, tags, context, nearby)"
            " SELECT l.seq, l.content, l.tags, l.context, n.nearby"
            " FROM learnings l JOIN learnings_nearby n ON n.seq = l.seq WHERE l.seq > ?",
            (start_index,),
        )
        db.execute(str(row["sql"]))
    return time.perf_counter() - started


def cached_database(size: int) -> tuple[Database, float]:
    """A database of `size` learnings under ``bench/out``, built once per schema (D342).

    The file's name carries a digest of the learnings migrations and of this generator's
    seed, so a schema change builds a new one; returns the database and the seconds spent
    building it (0 when it was cached). At 1M learnings a build takes minutes.
    """
    import hashlib

    from hrm.continuity._learnings_sql import MIGRATIONS

    digest = hashlib.sha256(("\n".join(MIGRATIONS) + f"|{SEED}|{CORPUS_VERSION}").encode())
    path = OUT.parent / f"learnings-{size}-{digest.hexdigest()[:12]}.db"
    if path.exists():
        db = Database(path)
        LearningsRepository(db)  # applies nothing new; checks FTS5
        return db, 0.0
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    for leftover in path.parent.glob(partial.name + "*"):
        leftover.unlink()
    db = Database(partial)
    LearningsRepository(db)
    seconds = load(db, Corpus(SEED), 0, size)
    # One self-contained file: renaming a WAL database would leave its -wal behind.
    db.execute("VACUUM INTO ?", (str(path),))
    db.close()
    for leftover in path.parent.glob(partial.name + "*"):
        leftover.unlink()
    return Database(path), seconds


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
        if len(ranked) > 1:
            return NEWEST_SQL, _fts.match_all(ranked[:2])
        return NEWEST_SQL, _fts.match_any(ranked)
    return RANKED_SQL, _fts.match_own(plan.ranked)


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


def measure_hybrid(db: Database, queries: list[str]) -> dict[str, float]:
    """Time hybrid search (D31) on `db`, and the query embedding alone, per query.

    Every stored learning is embedded first (kept in the cached database, so only the first
    run pays). Each query text is new to the repository, so its query-vector cache (D341)
    never answers: these are cold-query figures, the cost a new prompt pays.
    """
    from hrm.continuity import embeddings

    embedder = embeddings.Embedder.load(threads=1)  # as `LearningsRepository.open` loads it
    repo = LearningsRepository(db, embedder=embedder)
    started = time.perf_counter()
    embedded = repo.reembed(batch_size=64)
    embed_s = time.perf_counter() - started
    for text in queries[:5]:  # warm: the vector matrix loads on the first search
        repo.search_memories(SearchQuery(text=f"warm {text}", limit=10))
    hybrid: list[float] = []
    encode: list[float] = []
    for text in queries:
        t0 = time.perf_counter()
        embedder.encode([f"{text} again"])
        t1 = time.perf_counter()
        repo.search_memories(SearchQuery(text=text, limit=10))
        t2 = time.perf_counter()
        encode.append((t1 - t0) * 1000)
        hybrid.append((t2 - t1) * 1000)
    return {
        "embedded_now": embedded,
        "embed_all_s": round(embed_s, 1),
        "hybrid_p50_ms": statistics.median(hybrid),
        "hybrid_p95_ms": percentile(hybrid, 0.95),
        "query_embedding_p50_ms": statistics.median(encode),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10k and 100k only")
    parser.add_argument("--queries", type=int, default=None, help="queries per size")
    parser.add_argument("--no-hybrid", action="store_true", help="skip hybrid search at 10k")
    args = parser.parse_args()
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    query_count = args.queries or (60 if args.quick else 300)
    query_gen = Corpus(SEED + 1)
    queries = [query_gen.query() for _ in range(query_count)]
    rows: list[dict[str, float]] = []
    for size in sizes:
        db, seconds = cached_database(size)
        db.execute("PRAGMA cache_size = -262144")  # 256 MiB: a warm, realistic long-lived process
        repo = LearningsRepository(db)
        figures = measure(db, repo, queries, unpruned_budget_s=3.0 if args.quick else 20.0)
        row = {"learnings": size, "load_s": round(seconds, 2), **figures}
        print(
            f"{size:>9,} learnings  raw p50 {figures['raw_p50_ms']:.2f} ms"
            f" p95 {figures['raw_p95_ms']:.2f} ms | ours p50 {figures['ours_p50_ms']:.2f} ms"
            f" p95 {figures['ours_p95_ms']:.2f} ms | ratio p50 {figures['ratio_p50']:.2f}"
            f" p95 {figures['ratio_p95']:.2f}"
            f" | unpruned OR p50 {figures['unpruned_p50_ms']:.1f} ms"
            f" p95 {figures['unpruned_p95_ms']:.1f} ms ({figures['unpruned_queries']} queries)"
            f"  (built in {seconds:.1f} s; 0 = cached)",
            flush=True,
        )
        if size == 10_000 and not args.no_hybrid and _embeddings_available():
            hybrid = measure_hybrid(db, queries)
            row.update(hybrid)
            print(
                f"{size:>9,} learnings  hybrid p50 {hybrid['hybrid_p50_ms']:.2f} ms"
                f" p95 {hybrid['hybrid_p95_ms']:.2f} ms | query embedding alone p50"
                f" {hybrid['query_embedding_p50_ms']:.2f} ms"
                f"  ({hybrid['embedded_now']} embedded in {hybrid['embed_all_s']} s)",
                flush=True,
            )
        rows.append(row)
        db.close()
    summary = {
        "benchmark": "learnings_search",
        "quick": args.quick,
        "queries_per_size": query_count,
        "baseline": "bare FTS5 statement with our expression (ranked words OR-ed, ORDER BY rank"
        " LIMIT 10; newest-first AND of the two rarest when every word is common)",
        "unpruned": "bare FTS5 MATCH of every query word OR-ed, ORDER BY rank LIMIT 10",
        "goal": {"ratio": 3.0, "hybrid_p50_ms_at_10k": 10.0},
        "results": rows,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


def _embeddings_available() -> bool:
    from hrm.continuity import embeddings

    return embeddings.available()


if __name__ == "__main__":
    raise SystemExit(main())
