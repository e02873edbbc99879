"""The Generalizer (001 §5.3): similar patterns merged into broader ones, evidence kept.

Similarity of two patterns of the same type (`Generalizer.similarity`):
``0.7 x signature_similarity + 0.3 x [same recommended action]``. Patterns of different types
score 0. With the default threshold of 0.75, patterns recommending different actions can never
be merged (their similarity is at most 0.7).

A merge (`Generalizer.merge`) keeps:

- the id of the protected pattern, else of the one with more evidence (references to it from
  routing records stay valid);
- a broader signature: the union of domains; a field on which they differ becomes the sorted
  list of both values (a list matches any of its values);
- every piece of evidence of both, in order, without duplicates;
- confidence as the evidence-weighted mean (not the max: merging must not inflate it);
- the earliest creation, the latest match, the summed match counts, both weakening histories,
  and protection if either was protected.

Two protected patterns are never merged (one of them would disappear). Pure: the caller stores
the results (`PatternStore.replace_pattern`, then `remove` for the absorbed one).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hrm.learning.patterns import Pattern, signature_similarity

__all__ = ["DEFAULT_MERGE_THRESHOLD", "Generalizer"]

DEFAULT_MERGE_THRESHOLD = 0.75
"""Pairs at least this similar are merged by `Generalizer.generalize_batch`."""

_SIGNATURE_WEIGHT, _ACTION_WEIGHT = 0.7, 0.3


class Generalizer:
    """Finds similar patterns and merges them. Stateless."""

    def __init__(self, threshold: float = DEFAULT_MERGE_THRESHOLD) -> None:
        self.threshold = threshold

    def similarity(self, p1: Pattern, p2: Pattern) -> float:
        """How alike two patterns are, in [0, 1] (symmetric)."""
        if p1.pattern_type != p2.pattern_type:
            return 0.0
        signature = min(
            signature_similarity(p1.input_signature, p2.input_signature),
            signature_similarity(p2.input_signature, p1.input_signature),
        )
        action = 1.0 if p1.recommended_action == p2.recommended_action else 0.0
        return round(_SIGNATURE_WEIGHT * signature + _ACTION_WEIGHT * action, 6)

    def find_similar(self, patterns: list[Pattern]) -> list[tuple[Pattern, Pattern, float]]:
        """Pairs at least `threshold` similar, most similar first (ties in input order)."""
        pairs: list[tuple[float, int, int]] = []
        for i, first in enumerate(patterns):
            for j in range(i + 1, len(patterns)):
                score = self.similarity(first, patterns[j])
                if score >= self.threshold:
                    pairs.append((score, i, j))
        pairs.sort(key=lambda item: (-item[0], item[1], item[2]))
        return [(patterns[i], patterns[j], score) for score, i, j in pairs]

    def merge(self, p1: Pattern, p2: Pattern) -> Pattern:
        """One broader pattern holding both patterns' evidence (see the module docstring)."""
        keep, other = (p1, p2) if _keeps(p1, p2) else (p2, p1)
        evidence = list(dict.fromkeys([*keep.evidence_ids, *other.evidence_ids]))
        n1, n2 = max(1, len(p1.evidence_ids)), max(1, len(p2.evidence_ids))
        confidence = (p1.confidence * n1 + p2.confidence * n2) / (n1 + n2)
        matched = [m for m in (p1.last_matched_at, p2.last_matched_at) if m is not None]
        return replace(
            keep,
            input_signature=_broader(keep.input_signature, other.input_signature),
            recommended_action=dict(keep.recommended_action),
            confidence=round(min(1.0, max(0.0, confidence)), 6),
            evidence_ids=evidence,
            created_at=min(p1.created_at, p2.created_at),
            last_matched_at=max(matched) if matched else None,
            match_count=p1.match_count + p2.match_count,
            protected=p1.protected or p2.protected,
            weaken_reasons=[*keep.weaken_reasons, *other.weaken_reasons],
        )

    def generalize_batch(self, patterns: list[Pattern]) -> list[Pattern]:
        """Merge the most similar mergeable pair until none is left; order otherwise kept."""
        current = list(patterns)
        while True:
            pair = next(
                (
                    (a, b)
                    for a, b, _ in self.find_similar(current)
                    if not (a.protected and b.protected)
                ),
                None,
            )
            if pair is None:
                return current
            first, second = pair
            merged = self.merge(first, second)
            position = min(current.index(first), current.index(second))
            current = [p for p in current if p is not first and p is not second]
            current.insert(position, merged)


def _keeps(p1: Pattern, p2: Pattern) -> bool:
    """Whether p1's identity survives a merge with p2."""
    if p1.protected != p2.protected:
        return p1.protected
    return len(p1.evidence_ids) >= len(p2.evidence_ids)


def _broader(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for name in sorted(set(first) | set(second)):
        if name not in first or name not in second:
            continue  # one side matches anything on this field, so the merge does too
        a, b = first[name], second[name]
        if name == "domain":
            merged[name] = sorted(set(_as_list(a)) | set(_as_list(b)))
        elif a == b:
            merged[name] = a
        else:
            values = sorted(set(_as_list(a)) | set(_as_list(b)))
            merged[name] = values[0] if len(values) == 1 else values
    return merged


def _as_list(value: Any) -> list[str]:
    if isinstance(value, list | tuple | set | frozenset):
        return [str(v) for v in value]
    return [str(value)]
