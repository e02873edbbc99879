"""The sentence model's integer graph (D407): derived once from the packaged weights, kept
privately, agreeing with the packaged graph; anything wrong with it leaves the packaged graph
running (needs the `embeddings` extra)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hrm.continuity import _int8_graph, embeddings

pytestmark = [
    pytest.mark.embeddings,
    pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra"),
]

SENTENCES = [
    "forget the password I just gave you",
    "Why does the test suite fail on CI but not locally after the dependency bump?",
    "I prefer short answers with examples",
    "yes",
    "concentrate on the webhook, next 3 messages",
]


def _runtime_derives() -> bool:
    """Whether this onnxruntime's quantizer writes 8-bit MatMulNBits (1.22 and later; the
    floor environment's 1.18 does not, and runs the packaged graph)."""
    import onnxruntime

    major, minor = (int(part) for part in onnxruntime.__version__.split(".")[:2])
    return (major, minor) >= (1, 22)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Derived graphs go to a private folder of this test only."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(_int8_graph, "_folders", lambda: [folder])
    # An in-process `hrm turn` earlier in this worker may have asked for a quick start.
    monkeypatch.setattr(embeddings, "_quick_start", False)
    return folder


@pytest.fixture(scope="module")
def packaged_vectors() -> object:
    saved = _int8_graph.derived_graph, _int8_graph.derive
    _int8_graph.derived_graph = lambda sha: None  # type: ignore[assignment]
    _int8_graph.derive = lambda source, sha: None  # type: ignore[assignment]
    try:
        model = embeddings.Embedder.load(threads=1)
    finally:
        _int8_graph.derived_graph, _int8_graph.derive = saved
    assert model.graph == "packaged"
    return model.encode(SENTENCES)


def test_the_integer_graph_is_derived_privately_and_agrees_with_the_packaged_one(
    cache: Path, packaged_vectors: object
) -> None:
    import numpy as np

    model = embeddings.Embedder.load(threads=1)
    if not _runtime_derives():
        assert model.graph == "packaged"
        return
    assert model.graph == "int8"
    (kept,) = cache.iterdir()
    assert kept.name.startswith(f"minilm-{embeddings.MODEL_SHA256[:16]}-int8")
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    vectors = model.encode(SENTENCES)
    agreement = np.sum(vectors * np.asarray(packaged_vectors), axis=1)
    assert agreement.min() >= 0.995, agreement
    assert not list(cache.glob(".deriving-*"))  # the scratch files are gone


def test_a_kept_graph_is_loaded_without_deriving_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = embeddings.Embedder.load(threads=1)
    if not _runtime_derives():
        # Nothing to keep: the failure is, so the next process does not try again.
        assert first.graph == "packaged"
        assert [p.suffix for p in cache.iterdir()] == [".failed"]
        assert _int8_graph.derive(embeddings._model_file(), embeddings.MODEL_SHA256) is None
        return

    def no_second_derivation(source: Path, sha: str) -> Path | None:
        raise AssertionError("derived again")

    monkeypatch.setattr(_int8_graph, "derive", no_second_derivation)
    assert embeddings.Embedder.load(threads=1).graph == first.graph


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file owners are POSIX")
def test_a_graph_in_a_folder_others_may_write_is_not_loaded(cache: Path) -> None:
    if embeddings.Embedder.load(threads=1).graph != "int8":
        return  # nothing was derived to refuse (an onnxruntime before 1.22)
    cache.chmod(0o777)
    try:
        assert _int8_graph.derived_graph(embeddings.MODEL_SHA256) is None
    finally:
        cache.chmod(0o700)
    assert _int8_graph.derived_graph(embeddings.MODEL_SHA256) is not None


def test_a_damaged_graph_leaves_the_packaged_one_answering(cache: Path) -> None:
    import onnxruntime

    cache.mkdir(mode=0o700)
    damaged = cache / _int8_graph._name(embeddings.MODEL_SHA256, onnxruntime.__version__)
    damaged.write_bytes(b"not a model at all")
    damaged.chmod(0o600)
    model = embeddings.Embedder.load(threads=1)
    assert model.graph == "packaged"
    assert model.encode(["still answers"]).shape == (1, embeddings.Embedder.dimension)


def test_without_onnx_the_packaged_graph_runs(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError
    assert _int8_graph.derive(embeddings._model_file(), embeddings.MODEL_SHA256) is None
    assert embeddings.Embedder.load(threads=1).graph == "packaged"
    assert not cache.exists()


def test_a_process_that_answers_once_does_not_wait_for_a_derivation(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_derivation(source: Path, sha: str) -> Path | None:
        raise AssertionError("a one-shot process derived the graph")

    monkeypatch.setattr(_int8_graph, "derive", no_derivation)
    monkeypatch.setattr(embeddings, "_quick_start", True)
    assert embeddings.Embedder.load(threads=1).graph == "packaged"


def test_a_failed_derivation_is_not_tried_again_by_every_process(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []

    def failing(source: Path, target: Path) -> None:
        calls.append(target)
        raise RuntimeError("this onnxruntime's quantizer has no 8-bit blocks")

    monkeypatch.setattr(_int8_graph, "_write", failing)
    source = embeddings._model_file()
    assert _int8_graph.derive(source, embeddings.MODEL_SHA256) is None
    assert _int8_graph.derive(source, embeddings.MODEL_SHA256) is None
    assert len(calls) == 1
    (note,) = cache.glob("*.failed")
    assert "no 8-bit blocks" in note.read_text(encoding="utf-8")
    assert embeddings.Embedder.load(threads=1).graph == "packaged"
