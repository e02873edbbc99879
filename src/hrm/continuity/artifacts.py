"""Handoffs, plans and ledgers indexed for search beside the learnings (003 Integration 5).

PostToolUse indexes the files Claude Code writes so a later session can find them by content.
The ``artifacts`` table and its FTS5 index live in the learnings schema (`_learnings_sql`),
in the same database; an artifact is keyed by its path, so re-indexing a file replaces it.
"""

from __future__ import annotations

from hrm._clock import system_clock
from hrm.continuity import _fts
from hrm.continuity._learnings_sql import format_ts, new_id
from hrm.errors import HRMError
from hrm.scrubbing import scrub_text

TYPE_CHECKING = False  # imported by `hrm hook` through the learnings repository
if TYPE_CHECKING:
    from typing import Any

    from hrm.storage.sqlite import Database
    from hrm.types import Clock

__all__ = ["ARTIFACT_KINDS", "ArtifactIndex"]

ARTIFACT_KINDS = ("handoff", "plan", "ledger")
"""What PostToolUse indexing may store beside learnings (003 Integration 5)."""

_MAX_LIMIT = 100


class ArtifactIndex:
    """Full-text search over indexed artifact files, in the home's memory database.

    The schema is applied by `LearningsRepository` (it is part of the learnings migrations).
    """

    def __init__(self, db: Database, *, clock: Clock = system_clock) -> None:
        self._db = db
        self._clock = clock

    def index(self, path: str, kind: str, content: str, *, session_id: str | None = None) -> str:
        """Index a handoff, plan or ledger file for search; re-indexing a path replaces it.

        Returns:
            The artifact id (stable across re-indexing of the same path).

        Raises:
            HRMError: ``VALIDATION_FAILED`` for an unknown kind or an empty path.
        """
        if kind not in ARTIFACT_KINDS:
            raise HRMError.validation_failed(
                f"Unknown artifact kind {kind!r}; use one of {', '.join(ARTIFACT_KINDS)}",
                field="kind",
            )
        if not path.strip():
            raise HRMError.validation_failed("Artifact path is empty", field="path")
        # The path and the session are a tool's input too: a secret in a file name is a secret.
        text, path = scrub_text(content), scrub_text(path)
        session_id = scrub_text(session_id) if session_id else session_id
        stamp = format_ts(self._clock())
        with self._db.transaction():
            row = self._db.one("SELECT id FROM artifacts WHERE path = ?", (path,))
            if row is not None:
                self._db.execute(
                    "UPDATE artifacts SET kind = ?, content = ?, session_id = ?, indexed_at = ?"
                    " WHERE path = ?",
                    (kind, text, session_id, stamp, path),
                )
                return str(row["id"])
            artifact_id = new_id("art")
            self._db.execute(
                "INSERT INTO artifacts (id, path, kind, content, session_id, indexed_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (artifact_id, path, kind, text, session_id, stamp),
            )
            return artifact_id

    def search(self, text: str, limit: int = 5) -> list[dict[str, Any]]:
        """Indexed artifacts matching `text`, best first (any text is a safe query)."""
        terms = _fts.query_terms(text)
        if not terms or limit <= 0:
            return []
        rows = self._db.execute(
            "SELECT a.id, a.path, a.kind, a.session_id, a.indexed_at, artifacts_fts.rank AS score,"
            " snippet(artifacts_fts, 1, '', '', '…', 16) AS snippet"
            " FROM artifacts_fts CROSS JOIN artifacts a ON a.seq = artifacts_fts.rowid"
            " WHERE artifacts_fts MATCH ? ORDER BY artifacts_fts.rank LIMIT ?",
            (_fts.match_any(terms), min(limit, _MAX_LIMIT)),
        )
        return [
            {
                "id": r["id"],
                "path": r["path"],
                "kind": r["kind"],
                "session_id": r["session_id"],
                "indexed_at": r["indexed_at"],
                "relevance_score": _fts.bm25_relevance(float(r["score"]), len(terms)),
                "snippet": r["snippet"],
            }
            for r in rows
        ]

    def newest(self, kind: str, *, under: str, limit: int = 5) -> list[dict[str, Any]]:
        """The artifacts of `kind` whose path lies under the folder `under`, newest first.

        SessionStart reads the handoffs Claude wrote into a project (``thoughts/shared/handoffs``)
        from here: PostToolUse indexed them, with their content, when they were written.
        `under` is compared as a path prefix, never as a LIKE pattern (a ``%`` or ``_`` in a
        folder name is a character, not a wildcard).

        Returns:
            Rows with ``path``, ``content``, ``session_id`` and ``indexed_at``.
        """
        prefix = under.rstrip("/\\") + "/"
        rows = self._db.execute(
            "SELECT path, content, session_id, indexed_at FROM artifacts"
            " WHERE kind = ? AND substr(path, 1, ?) = ? ORDER BY indexed_at DESC, seq DESC"
            " LIMIT ?",
            (kind, len(prefix), prefix, max(0, min(limit, _MAX_LIMIT))),
        )
        return [
            {"path": r["path"], "content": r["content"], "session_id": r["session_id"],
             "indexed_at": r["indexed_at"]}
            for r in rows
        ]
