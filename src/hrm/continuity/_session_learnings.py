"""Which learnings a new session sees, and the learnings handoffs carry into the store.

Two jobs around capture (`hrm.continuity.capture`), both on hook paths off the prompt:

* `captured_for` picks the learnings earlier sessions of *this* project captured by themselves
  (tagged ``captured``, the project as context), so the next SessionStart shows them even when
  the project's name and branch share no word with them;
* `rank_by_decay` orders what SessionStart shows by relevance weighted with each learning's
  decayed score (003 §2 ``apply_decay``), so an old learning nobody reads gives way to one that
  keeps being found (D246). The search itself is the store's and is left as it ranks;
* `store_handoff_learnings` makes the ``learnings:`` of a handoff searchable: a handoff Claude
  wrote into the project (PostToolUse) or one hrm stores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from hrm.continuity.learnings_types import Learning, SearchResult

__all__ = ["captured_for", "rank_by_decay", "store_handoff_learnings"]

_SCAN = 200
"""Newest learnings looked through for a project's captured ones."""
_DECAY_FLOOR = 0.5
"""A fully decayed learning keeps half its search relevance: decay orders, it never hides."""


def _decay(learning: Learning) -> float:
    raw = learning.metadata.get("relevance_score", 1.0)
    return min(1.0, max(0.0, float(raw))) if isinstance(raw, int | float) else 1.0


def rank_by_decay(results: list[SearchResult]) -> list[Learning]:
    """Search results best first by ``relevance × (½ + ½ × decayed score)``."""

    def weight(result: SearchResult) -> float:
        kept = _DECAY_FLOOR + (1 - _DECAY_FLOOR) * _decay(result.learning)
        return result.relevance_score * kept

    return [r.learning for r in sorted(results, key=weight, reverse=True)]


def captured_for(repository: Any, project: Path, limit: int) -> list[Learning]:
    """The project's captured learnings, highest decayed score first, then newest."""
    if limit <= 0:
        return []
    wanted = str(project)
    found = [
        item for item in repository.recent(_SCAN)
        if "captured" in item.tags and (item.context or "") == wanted
    ]
    found.sort(key=lambda item: (_decay(item), item.created_at), reverse=True)
    return found[:limit]


def store_handoff_learnings(
    repository: Any, content: str, *, path: str, session_id: str | None, project: Path
) -> int:
    """Store the ``learnings:`` of a handoff's text; return how many were new.

    A text that is not a handoff, or a learning the store rejects (a duplicate, an unknown
    type), is skipped: indexing the file already succeeded and stays.
    """
    from hrm.continuity.capture import learnings_from_handoff, store_captured
    from hrm.continuity.handoffs import deserialize
    from hrm.errors import HRMError

    try:
        handoff = deserialize(content, path=path)
    except HRMError:
        return 0
    ids, _ = store_captured(
        repository, learnings_from_handoff(handoff), session_id=session_id,
        project_path=str(project), source="handoff",
    )
    return len(ids)
