"""The memory bus (001 §6): four compartments behind one write gate.

`MemoryBus` is the door: it gates every write with `WriteGate` (001 §6.2, §12.6) and logs each
as a ``write_completed`` episode. The compartments — `WorkingSetStore`, `SharedReferenceStore`,
`EpisodicTraceStore`, `SemanticSynthesisStore` — persist in the home (``memory.db``, and the
stack's episodic ledger), each bound to one stack (agent class).

Names are imported on first use, so ``import hrm.memory.types`` (the data types other layers
share) does not load the stores, SQLite or the ledger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm._lazy import lazy_exports

if TYPE_CHECKING:
    from hrm.memory.bus import DEFAULT_PROBLEM_ID, MemoryBus, default_write_gate
    from hrm.memory.episodic import EpisodicTraceStore
    from hrm.memory.shared_reference import SharedReferenceStore
    from hrm.memory.synthesis import SemanticSynthesisStore
    from hrm.memory.types import (
        WRITE_COMPLETED,
        EpisodeEntry,
        MemoryTarget,
        SharedReference,
        SynthesizedPattern,
        WorkingSet,
        WriteDecision,
        WriteRequest,
        WriteSignals,
    )
    from hrm.memory.working_set import WorkingSetStore
    from hrm.memory.write_gate import WriteGate

__all__ = [
    "DEFAULT_PROBLEM_ID",
    "WRITE_COMPLETED",
    "EpisodeEntry",
    "EpisodicTraceStore",
    "MemoryBus",
    "MemoryTarget",
    "SemanticSynthesisStore",
    "SharedReference",
    "SharedReferenceStore",
    "SynthesizedPattern",
    "WorkingSet",
    "WorkingSetStore",
    "WriteDecision",
    "WriteGate",
    "WriteRequest",
    "WriteSignals",
    "default_write_gate",
]

_HOMES = {
    "DEFAULT_PROBLEM_ID": "bus",
    "MemoryBus": "bus",
    "default_write_gate": "bus",
    "EpisodicTraceStore": "episodic",
    "SharedReferenceStore": "shared_reference",
    "SemanticSynthesisStore": "synthesis",
    "WorkingSetStore": "working_set",
    "WriteGate": "write_gate",
    "WRITE_COMPLETED": "types",
    "EpisodeEntry": "types",
    "MemoryTarget": "types",
    "SharedReference": "types",
    "SynthesizedPattern": "types",
    "WorkingSet": "types",
    "WriteDecision": "types",
    "WriteRequest": "types",
    "WriteSignals": "types",
}

__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
