"""The turn's step for a fact the person asks hrm to remember (D73).

"Remember that our API base URL is https://api.internal" is written to the Shared Reference
through the write gate, like an explicit preference, and said back; said again word for word,
it is already canon and nothing is written.
"""

from __future__ import annotations

from typing import Any

from hrm.governance.memory_requests import MemoryRequest, fact_key
from hrm.records import DecisionRecord
from hrm.turn_preferences import contradicted_canon

__all__ = ["remember_fact"]


def remember_fact(
    stack: Any, request: MemoryRequest, *, signals: Any, record: DecisionRecord, event: Any
) -> list[str]:
    """Write what the person asked to be remembered; returns the notes for the answer."""
    key = fact_key(request)
    record.memory_request = {"key": key, "fact": request.fact, "statement": request.statement}
    if stack.canon().get(key) == request.fact:
        record.memory_request["resolution"] = "already canon"
        return [f"Already canon: “{request.fact}”."]
    decision = stack.write_fact(request.fact, key, signals=signals)
    record.writes.append(decision)
    if decision.get("approved") and decision.get("target") == "shared_reference":
        event("fact_remembered", key=key, fact=request.fact)
        return [f"Noted as canon: “{request.fact}”."]
    if decision.get("approved") and decision.get("target") == "working_set":
        # The gate keeps what contradicts the canon for the problem at hand (001 §12.6).
        earlier = "”, “".join(contradicted_canon(signals).values())
        against = f" “{earlier}”" if earlier else " what you told me before"
        return [
            f"This conflicts with{against}, so I kept “{request.fact}” for this problem only."
        ]
    return [f"I did not keep “{request.fact}”: {decision.get('reason')}."]
