"""What keeps a hybrid search cheap (D341), and that none of it changes what is found.

The lazy embedding after a write looks only at learnings stored since the last search; a
repeated query is embedded once; the vector scan over every stored vector gives exactly the
brute-force ranking.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput, SearchQuery
from hrm.storage.sqlite import Database

np = pytest.importorskip("numpy")

from hrm.continuity._vectors import VectorIndex, pack_vector  # noqa: E402  (needs numpy)


class CountingEmbedder:
    """Hashed-letter vectors; remembers every text it was asked to encode."""

    dimension = 32

    def __init__(self, model_id: str = "test/counting") -> None:
        self.model_id = model_id
        self.calls: list[str] = []

    def encode(self, texts: Sequence[str]) -> Any:
        self.calls.extend(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for char in text.lower():
                out[row, ord(char) % self.dimension] += 1.0
            out[row] /= max(1e-9, float(np.linalg.norm(out[row])))
        return out


@pytest.fixture
def db() -> Iterator[Database]:
    database = Database(":memory:")
    yield database
    database.close()


def store(repo: LearningsRepository, content: str) -> None:
    repo.store_learning(LearningInput(content=content, type="CODEBASE_PATTERN"))


def search(repo: LearningsRepository, text: str) -> list[str]:
    found = repo.search_memories(SearchQuery(text=text, limit=10))
    return [r.learning.content for r in found.results]


def vector_count(db: Database, model_id: str) -> int:
    row = db.one("SELECT count(*) AS n FROM learning_vectors WHERE model_id = ?", (model_id,))
    return 0 if row is None else int(row["n"])


def test_learnings_stored_by_another_writer_are_embedded_by_the_next_search(
    db: Database,
) -> None:
    writer = LearningsRepository(db)  # no embedder: stores text only
    for n in range(3):
        store(writer, f"cache invalidation note {n}")
    embedder = CountingEmbedder()
    reader = LearningsRepository(db, embedder=embedder)
    assert search(reader, "cache invalidation")
    assert vector_count(db, embedder.model_id) == 3
    store(writer, "cache warmup after deploy")
    embedder.calls.clear()
    assert "cache warmup after deploy" in search(reader, "cache warmup")
    assert embedder.calls == ["cache warmup after deploy", "cache warmup"]  # the new one only


def test_a_new_model_embeds_everything_again(db: Database) -> None:
    writer = LearningsRepository(db)
    for n in range(2):
        store(writer, f"retry budget note {n}")
    first = LearningsRepository(db, embedder=CountingEmbedder("test/one"))
    search(first, "retry budget")
    second = CountingEmbedder("test/two")
    first._embedder = second  # the model changed under a long-lived repository
    search(first, "retry budget")
    assert vector_count(db, "test/two") == 2


def test_a_repeated_query_is_embedded_once(db: Database) -> None:
    embedder = CountingEmbedder()
    repo = LearningsRepository(db, embedder=embedder)
    store(repo, "deadlock in the worker pool")
    first = search(repo, "worker pool deadlock")
    embedder.calls.clear()
    assert search(repo, "worker pool deadlock") == first
    assert embedder.calls == []
    search(repo, "another question")
    assert embedder.calls == ["another question"]


@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(min_value=1, max_value=60),
    k=st.integers(min_value=1, max_value=20),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_the_vector_scan_ranks_as_brute_force_does(rows: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(rows, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[0] + rng.normal(scale=0.5, size=8).astype(np.float32)
    query /= np.linalg.norm(query)
    db = Database(":memory:")
    try:
        db.execute("CREATE TABLE learning_vectors (vid INTEGER PRIMARY KEY, seq INTEGER,"
                   " model_id TEXT, dim INTEGER, vector BLOB)")
        db.executemany(
            "INSERT INTO learning_vectors (seq, model_id, dim, vector) VALUES (?, 'm', 8, ?)",
            [(100 + i, pack_vector(v)) for i, v in enumerate(vectors)],
        )
        index = VectorIndex("m", 8)
        index.refresh(db)
        found = index.top_k(query, k)
        scores = vectors @ query
        expected = sorted(range(rows), key=lambda i: (-scores[i], i))[: min(k, rows)]
        assert [seq for seq, _ in found] == [100 + i for i in expected]
        assert [c for _, c in found] == pytest.approx([float(scores[i]) for i in expected])
        among = [100 + i for i in range(0, rows, 2)]
        assert {s for s, _ in index.top_k(query, k, among=among)} <= set(among)
    finally:
        db.close()
