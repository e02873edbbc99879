"""MiniLM embeddings and hybrid learnings search (needs the `embeddings` extra)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hrm.continuity import embeddings
from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput, SearchFilters, SearchQuery
from hrm.home import HRMHome
from hrm.storage.sqlite import Database

pytestmark = [
    pytest.mark.embeddings,
    pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra"),
]


@pytest.fixture(scope="module")
def embedder() -> embeddings.Embedder:
    return embeddings.Embedder.load()


@pytest.fixture
def repo(embedder: embeddings.Embedder) -> Iterator[LearningsRepository]:
    db = Database(":memory:")
    yield LearningsRepository(db, embedder=embedder)
    db.close()


def test_vectors_are_unit_length_and_semantic(embedder: embeddings.Embedder) -> None:
    import numpy as np

    vectors = embedder.encode(
        ["The cat sits on the mat", "A kitten is resting on a rug", "Quarterly tax deadline"]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3


def test_batches_give_the_same_vectors_as_single_calls(embedder: embeddings.Embedder) -> None:
    import numpy as np

    texts = ["short", "a much longer sentence about database migrations and rollbacks", ""]
    batch = embedder.encode(texts)
    single = np.vstack([embedder.encode([t]) for t in texts])
    assert np.allclose(batch, single, atol=1e-4)
    assert embedder.encode([]).shape == (0, 384)


def test_a_one_shot_process_loads_quickly_and_gets_the_same_vectors(
    embedder: embeddings.Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hrm turn` loads the model without constant folding (D350); what a sentence means to
    the reading stage and to search must not change with how the model was loaded."""
    import numpy as np

    texts = ["I prefer metric units", "forget what I said about my cat", "where were we?"]
    monkeypatch.setattr(embeddings, "_quick_start", False)
    embeddings.prefer_quick_start()
    assert embeddings._quick_start is True
    quick = embeddings.Embedder.load(threads=1)
    assert np.allclose(quick.encode(texts), embedder.encode(texts), atol=1e-5)


def test_hybrid_search_finds_meaning_without_shared_words(repo: LearningsRepository) -> None:
    target = repo.store_learning(
        LearningInput(content="The automobile would not start on cold mornings", type="ERROR_FIX")
    ).id
    repo.store_learning(LearningInput(content="Spreadsheet totals were off by one", type="ERROR_FIX"))
    results = repo.search_memories(SearchQuery(text="car engine failure in winter"))
    assert results.mode == "hybrid"
    assert results.results[0].learning.id == target
    assert results.results[0].highlights == []
    assert 0.0 < results.results[0].relevance_score <= 1.0


def test_hybrid_search_keeps_filters(repo: LearningsRepository) -> None:
    repo.store_learning(
        LearningInput(content="The automobile stalls when cold", type="ERROR_FIX", session_id="a")
    )
    other = repo.store_learning(
        LearningInput(content="The vehicle stalls in winter", type="ERROR_FIX", session_id="b")
    ).id
    found = repo.search_memories(
        SearchQuery(text="car problems", filters=SearchFilters(session_id="b"))
    )
    assert [r.learning.id for r in found.results] == [other]


def test_vectors_are_stored_with_the_model_id(repo: LearningsRepository) -> None:
    repo.store_learning(LearningInput(content="vector row", type="ERROR_FIX"))
    rows = repo._db.execute("SELECT model_id, dim, length(vector) AS size FROM learning_vectors")
    assert [(r["model_id"], r["dim"], r["size"]) for r in rows] == [
        (embeddings.MODEL_ID, 384, 384 * 4)
    ]


class OtherModel:
    """Stands in for a different embedding model (a model change)."""

    model_id = "other-model"
    dimension = 384

    def __init__(self, inner: embeddings.Embedder) -> None:
        self.inner = inner

    def encode(self, texts: Any) -> Any:
        return self.inner.encode(texts)


def test_a_model_change_is_detected_and_reembedded(embedder: embeddings.Embedder) -> None:
    db = Database(":memory:")
    first = LearningsRepository(db, embedder=embedder)
    for i in range(3):
        first.store_learning(LearningInput(content=f"learning number {i} about caching", type="ERROR_FIX"))
    second = LearningsRepository(db, embedder=OtherModel(embedder))
    assert second.reembed() == 3
    assert second.reembed() == 0
    models = {r["model_id"] for r in db.execute("SELECT model_id FROM learning_vectors")}
    assert models == {"other-model"}
    db.close()


def test_learnings_stored_without_embedder_are_embedded_lazily(
    embedder: embeddings.Embedder,
) -> None:
    db = Database(":memory:")
    plain = LearningsRepository(db)
    plain.store_learning(LearningInput(content="The automobile would not start", type="ERROR_FIX"))
    hybrid = LearningsRepository(db, embedder=embedder)
    results = hybrid.search_memories(SearchQuery(text="car trouble"))
    assert [r.learning.content for r in results.results] == ["The automobile would not start"]
    db.close()


def test_a_spent_budget_skips_the_vector_phase(repo: LearningsRepository) -> None:
    repo.store_learning(LearningInput(content="budgeted search target", type="ERROR_FIX"))
    results = repo.search_memories(SearchQuery(text="budgeted search"), budget_ms=0)
    assert (results.mode, results.timed_out, len(results.results)) == ("fts", True, 1)


def test_open_on_loads_the_embedder(home: HRMHome) -> None:
    with LearningsRepository.open(home, embeddings="on") as repo:
        assert repo.supports_vectors


def test_relatedness_tells_a_new_subject_from_one_about_the_conversation() -> None:
    # D68's threshold sits between these: MiniLM scored them 0.36 and -0.01.
    from hrm.governance.arbiter import UNRELATED_BELOW

    related = embeddings.sentence_relatedness()
    assert related is not None and related is embeddings.sentence_relatedness()  # one per process
    topic = "I'm upgrading our Postgres cluster from 12 to 16 this weekend"
    about = related(topic, "My replica is on a different host, does it need upgrading first?")
    other = related(topic, "Also, my laptop's battery drains really fast on Ubuntu, any tips?")
    assert about is not None and other is not None
    assert other < UNRELATED_BELOW < about


def test_a_failing_sentence_model_answers_unknown_and_the_turn_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    related = embeddings.sentence_relatedness()
    assert related is not None

    class Broken:
        def encode(self, texts: Any) -> Any:
            raise RuntimeError("onnxruntime: out of memory")

    monkeypatch.setattr(related, "_model", Broken())
    assert related("a", "b") is None


@pytest.mark.parametrize(
    ("conversation", "question"),
    [
        ("I'm writing a fantasy novel and I'm stuck on chapter 3 What if her brother disappears?",
         "My editor thinks the pacing is slow, how do I fix it?"),
        ("I'm building a Flask API for a todo app Should I use SQLAlchemy?",
         "My boss wants it done by Friday, is that realistic?"),
    ],
)
def test_questions_about_the_people_around_the_work_stay_above_the_line(
    conversation: str, question: str
) -> None:
    # D68: at 0.08 these follow-ups (0.042, 0.078) would have opened problems of their own.
    from hrm.governance.arbiter import UNRELATED_BELOW

    related = embeddings.sentence_relatedness()
    assert related is not None
    score = related(conversation, question)
    assert score is not None and score > UNRELATED_BELOW
