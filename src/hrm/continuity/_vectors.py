"""The in-memory side of vector search: stored vectors as one matrix, cosine top-k over it.

Imported only when an embedder is in use (it needs numpy, part of the `embeddings` extra).
Vectors live in SQLite (``learning_vectors``: float32 BLOB plus model id); this cache loads them
incrementally by the table's rowid, so a process pays for each vector once, and a re-embedded
learning (a new row for the same learning) replaces its old vector in place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    from hrm.storage.sqlite import Database

__all__ = ["VectorIndex", "pack_vector"]

_GROWTH_ROWS = 1024


def pack_vector(vector: npt.NDArray[np.float32]) -> bytes:
    """Serialise one vector as little-endian float32 bytes (the BLOB format)."""
    return np.asarray(vector, dtype="<f4").tobytes()


def _scores(matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32]) -> Any:
    """Each row's dot product with `query`, on this thread alone (D341).

    Not ``matrix @ query``: OpenBLAS splits that product over its threads, which on a busy
    machine (or right after onnxruntime's threads ran the query embedding) wait for a core —
    10-20 ms for 10k vectors where one thread takes 0.2-0.4 ms. ``einsum`` without
    ``optimize`` runs numpy's own loop and never calls BLAS.
    """
    return np.einsum("ij,j->i", matrix, np.asarray(query, dtype=np.float32))


class VectorIndex:
    """Every stored vector of one model, kept as a dense matrix for brute-force cosine search.

    Brute force is exact and, at 384 dimensions, scores 100k vectors in a few milliseconds;
    learnings stores stay far below the size where an approximate index would pay off.
    Not thread-safe on its own: the repository calls it under its lock.
    """

    def __init__(self, model_id: str, dimension: int) -> None:
        self.model_id = model_id
        self.dimension = dimension
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        self._seqs = np.zeros(0, dtype=np.int64)
        self._size = 0
        self._position: dict[int, int] = {}
        self._last_vid = 0

    def __len__(self) -> int:
        return self._size

    def refresh(self, db: Database) -> int:
        """Load vectors written since the last refresh (by any process); returns how many."""
        rows = db.execute(
            "SELECT vid, seq, vector FROM learning_vectors WHERE model_id = ? AND vid > ?"
            " ORDER BY vid",
            (self.model_id, self._last_vid),
        )
        for row in rows:
            vector = np.frombuffer(row["vector"], dtype="<f4")
            if vector.shape[0] == self.dimension:
                self._put(int(row["seq"]), vector)
            self._last_vid = max(self._last_vid, int(row["vid"]))
        return len(rows)

    def _put(self, seq: int, vector: npt.NDArray[np.float32]) -> None:
        position = self._position.get(seq)
        if position is None:
            if self._size == self._matrix.shape[0]:
                grow = max(_GROWTH_ROWS, self._size)
                self._matrix = np.vstack(
                    [self._matrix, np.zeros((grow, self.dimension), dtype=np.float32)]
                )
                self._seqs = np.concatenate([self._seqs, np.zeros(grow, dtype=np.int64)])
            position = self._size
            self._size += 1
            self._position[seq] = position
            self._seqs[position] = seq
        self._matrix[position] = vector

    def top_k(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        among: Iterable[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The `k` stored learnings most similar to `query`: ``(seq, cosine)``, best first.

        Args:
            query: A unit-length vector of this model.
            k: How many to return at most.
            among: Restrict to these learning seqs (already filtered by the caller).
        """
        if self._size == 0 or k <= 0:
            return []
        if among is None:
            # A view of the filled rows, not `self._matrix[np.arange(n)]`: fancy indexing
            # copies the whole matrix (15 MB at 10k vectors) on every search (D341).
            scores = _scores(self._matrix[: self._size], query)
            return self._best(scores, np.arange(self._size), k)
        rows = np.fromiter(
            (p for p in (self._position.get(s) for s in among) if p is not None),
            dtype=np.int64,
        )
        if rows.size == 0:
            return []
        scores = _scores(self._matrix[rows], query)
        return self._best(scores, rows, k)

    def _best(
        self, scores: npt.NDArray[np.float32], rows: npt.NDArray[np.int64], k: int
    ) -> list[tuple[int, float]]:
        """The `k` best of `scores` (one per entry of `rows`): ``(seq, cosine)``, best first."""
        count = min(k, rows.size)
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self._seqs[rows[i]]), float(scores[i])) for i in best]
