"""The memory bus's data types (001 §6.2, §6.4) and the JSON encoding every compartment shares.

The four compartment records (`WorkingSet`, `SharedReference`, `EpisodeEntry`,
`SynthesizedPattern`) keep 001's field names; the write-gate types (`WriteSignals`,
`WriteRequest`, `WriteDecision`) carry a write from whoever asks for it, through the gate, to the
compartment it is finally allowed into.

Every value a compartment stores passes `encode_json` first: it scrubs credentials and refuses
anything `json` would silently change or cannot represent (sets, objects, non-string keys, NaN),
naming the key and the path inside the value, so a bad write fails before anything is stored.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.scrubbing import contains_secret, scrub
from hrm.types import BlastRadius, ConflictLevel

if TYPE_CHECKING:
    from hrm.governance.preferences import PreferenceClassification

__all__ = [
    "WRITE_COMPLETED",
    "EpisodeEntry",
    "MemoryTarget",
    "SharedReference",
    "SynthesizedPattern",
    "WorkingSet",
    "WriteDecision",
    "WriteRequest",
    "WriteSignals",
    "check_json",
    "decode_json",
    "encode_json",
    "format_timestamp",
    "parse_timestamp",
]

WRITE_COMPLETED = "write_completed"
"""The episode type every write through the bus logs, approved, redirected or denied (001 §8.3)."""


class MemoryTarget(str, Enum):
    """The four compartments a write can be aimed at or redirected to (000 `WriteRequest.target`).

    A str enum, so ``decision.target == "working_set"`` holds. 001 §12.6 spells the episodic
    target ``"episodic_trace"``; `parse` accepts that spelling too.
    """

    WORKING_SET = "working_set"
    SHARED_REFERENCE = "shared_reference"
    EPISODIC = "episodic"
    SYNTHESIS = "synthesis"

    @classmethod
    def parse(cls, value: str | MemoryTarget) -> MemoryTarget:
        """The target named by `value`, or ``VALIDATION_FAILED`` listing the valid names."""
        if isinstance(value, MemoryTarget):
            return value
        text = str(value).strip().lower()
        if text == "episodic_trace":
            return cls.EPISODIC
        for member in cls:
            if member.value == text:
                return member
        raise HRMError.validation_failed(
            f"Unknown memory target {value!r}: use one of {', '.join(m.value for m in cls)}",
            target=str(value),
        )


# ── timestamps ─────────────────────────────────────────────────────────────


def format_timestamp(moment: datetime) -> str:
    """Fixed-width UTC ISO-8601 (``2026-11-22T10:00:00.000000Z``), so text order is time order.

    Raises:
        HRMError: ``VALIDATION_FAILED`` for a naive datetime (its zone would be a guess).
    """
    if moment.tzinfo is UTC:  # the system clock's own times: no conversion to pay for
        return moment.isoformat(timespec="microseconds")[:-6] + "Z"
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise HRMError.validation_failed(
            f"Timestamp {moment.isoformat()} has no time zone; pass an aware datetime (UTC)",
            timestamp=moment.isoformat(),
        )
    # isoformat is several times faster than strftime; microseconds keep the width fixed.
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_timestamp(text: str) -> datetime:
    """The aware UTC datetime of an ISO-8601 string; a string without zone is taken as UTC.

    Raises:
        HRMError: ``VALIDATION_FAILED`` naming the text when it is not ISO-8601.
    """
    raw = text.strip()
    if raw.endswith("z"):
        raw = raw[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError as exc:
        raise HRMError.validation_failed(
            f"Not an ISO-8601 timestamp: {text!r} (e.g. 2026-11-22T10:00:00Z)", timestamp=text
        ) from exc
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


# ── JSON values ────────────────────────────────────────────────────────────


def encode_json(value: Any, *, what: str) -> str:
    """Scrub `value` of credentials and encode it as JSON text that decodes to an equal value.

    Tuples are accepted and come back as lists; everything else must already be JSON-native
    (dict with str keys, list, str, int, finite float, bool, None), because `json` would
    otherwise change it silently (int keys become strings, NaN is not JSON).

    Args:
        value: The value to store.
        what: What is being written, for the error (e.g. ``"shared reference 'tone'"``).

    Raises:
        HRMError: ``VALIDATION_FAILED`` naming `what` and the path of the first bad part.
    """
    texts: list[str] = []
    _check_json(value, "$", what, texts)
    # One scan of every string joined is far cheaper than scanning each string, and sound: a
    # secret inside any one string still matches in the joined text (the separator is a
    # non-word character, like a string's edge). Only when something matches is each string
    # scrubbed on its own.
    if texts and contains_secret("\n".join(texts)):
        value = scrub(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def check_json(value: Any, *, what: str) -> None:
    """Check `value` is JSON data as `encode_json` requires, without encoding or scrubbing it.

    For writers whose storage scrubs on its own (the ledger does).

    Raises:
        HRMError: ``VALIDATION_FAILED`` naming `what` and the path of the first bad part.
    """
    _check_json(value, "$", what, [])


def decode_json(text: str) -> Any:
    """The value `encode_json` stored."""
    return json.loads(text)


def _check_json(value: Any, path: str, what: str, texts: list[str]) -> None:
    if isinstance(value, str):
        texts.append(value)
        return
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _not_serialisable(what, path, f"the float {value!r} is not valid JSON")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _not_serialisable(
                    what, path, f"the key {key!r} is a {type(key).__name__}, not a string"
                )
            texts.append(key)
            _check_json(item, f"{path}.{key}", what, texts)
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_json(item, f"{path}[{index}]", what, texts)
        return
    raise _not_serialisable(what, path, f"a {type(value).__name__} is not JSON-serialisable")


def _not_serialisable(what: str, path: str, reason: str) -> HRMError:
    return HRMError.validation_failed(
        f"Cannot store {what}: value at {path}: {reason}; pass JSON data "
        "(dict with string keys, list, str, int, float, bool, None)",
        what=what,
        path=path,
    )


# ── 001 §6.2: write gate types ─────────────────────────────────────────────


@dataclass(frozen=True)
class WriteSignals:
    """What the governance kernel knows about a write (001 §6.2); the gate decides on these."""

    progress_delta: float
    """How much progress this write represents."""
    conflict_level: ConflictLevel
    """How much the value conflicts with what is known; HIGH keeps it in the working set."""
    source_quality: float
    """0.0-1.0: how trustworthy the source is."""
    alignment_score: float
    """0.0-1.0: how well the value fits the current goals; low values are never synthesised."""
    blast_radius: BlastRadius
    """How much a wrong value would damage; SEVERE needs a high-quality source."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "conflict_level", ConflictLevel(self.conflict_level))
        object.__setattr__(self, "blast_radius", BlastRadius(self.blast_radius))
        for name in ("source_quality", "alignment_score"):
            score = getattr(self, name)
            if not isinstance(score, int | float) or not 0.0 <= float(score) <= 1.0:
                raise HRMError.validation_failed(
                    f"WriteSignals.{name} must be a number in [0, 1], got {score!r}",
                    field=name,
                )

    @classmethod
    def trusted(cls) -> WriteSignals:
        """Signals of a deliberate edit by a person (the CLI): no conflict, full quality."""
        return cls(
            progress_delta=0.0,
            conflict_level=ConflictLevel.NONE,
            source_quality=1.0,
            alignment_score=1.0,
            blast_radius=BlastRadius.MINIMAL,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for episodes and `--json` output."""
        return {
            "progress_delta": self.progress_delta,
            "conflict_level": self.conflict_level.value,
            "source_quality": self.source_quality,
            "alignment_score": self.alignment_score,
            "blast_radius": self.blast_radius.value,
        }


@dataclass(frozen=True)
class WriteRequest:
    """One request to write `value` under `key` into the `target` compartment (000 §2.4)."""

    target: MemoryTarget
    key: str
    value: Any
    signals: WriteSignals
    reason: str = ""
    """Why the caller wants this written; kept in the `write_completed` episode."""
    is_preference: bool = False
    """Apply the preference truth model (001 §12.4) to ``str(value)`` first."""
    preference: PreferenceClassification | None = None
    """How the turn's reading classified the statement: the truth model applies to that class
    rather than to a second reading of the bare statement by word rules, which could disagree
    with the one reading stage (an exemplar-read "no more java examples for me, kotlin only",
    explicit at 0.86, came back from the rules as inferred and silent, and went to the working
    set)."""
    source: str = "user"
    """Who said it: user, agent or system; only a user states an explicit preference."""
    problem_id: str | None = None
    """The problem a working-set write (or a redirect there) belongs to."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", MemoryTarget.parse(self.target))
        if not isinstance(self.key, str) or not self.key.strip():
            raise HRMError.validation_failed(
                f"A write to {self.target.value} needs a non-empty key, got {self.key!r}",
                target=self.target.value,
            )


@dataclass(frozen=True)
class WriteDecision:
    """The gate's answer (001 §6.2): a value, never an exception."""

    approved: bool
    target: MemoryTarget
    """Where the write may go; differs from the request's target when redirected."""
    reason: str
    conditions: list[str] = field(default_factory=list)
    """Conditions on the write, e.g. ``needs_user_confirmation`` or ``redirected_from:<target>``."""

    @property
    def redirected_from(self) -> MemoryTarget | None:
        """The target the request asked for when the gate redirected it, else None."""
        for condition in self.conditions:
            if condition.startswith("redirected_from:"):
                return MemoryTarget.parse(condition.split(":", 1)[1])
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for episodes and `--json` output."""
        return {
            "approved": self.approved,
            "target": self.target.value,
            "reason": self.reason,
            "conditions": list(self.conditions),
        }


# ── 001 §6.4: compartment records ──────────────────────────────────────────


@dataclass
class WorkingSet:
    """Per-problem scratch memory with a time to live (001 §6.4)."""

    problem_id: str
    constraints: dict[str, Any]
    assumptions: list[dict[str, Any]]
    open_questions: list[str]
    partial_artifacts: dict[str, Any]
    local_decisions: list[dict[str, Any]]
    created_at: datetime
    expires_at: datetime

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (timestamps as ISO-8601 UTC)."""
        return {
            "problem_id": self.problem_id,
            "constraints": self.constraints,
            "assumptions": self.assumptions,
            "open_questions": self.open_questions,
            "partial_artifacts": self.partial_artifacts,
            "local_decisions": self.local_decisions,
            "created_at": format_timestamp(self.created_at),
            "expires_at": format_timestamp(self.expires_at),
        }


@dataclass
class SharedReference:
    """One version of a citable cross-problem fact (001 §6.4)."""

    key: str
    value: Any
    version: int
    source: str
    """Who set this version."""
    created_at: datetime
    """When the key's first version was written."""
    updated_at: datetime
    """When this version was written."""
    rollback_of: int | None = None
    """The version whose value this one restored, when it was made by a rollback."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (timestamps as ISO-8601 UTC)."""
        return {
            "key": self.key,
            "value": self.value,
            "version": self.version,
            "source": self.source,
            "created_at": format_timestamp(self.created_at),
            "updated_at": format_timestamp(self.updated_at),
            "rollback_of": self.rollback_of,
        }


@dataclass
class EpisodeEntry:
    """One append-only record of the episodic trace (001 §6.4).

    ``id`` and ``timestamp`` may be left empty: the store assigns ``ep_<16 hex>`` and its clock's
    now on append.
    """

    id: str = ""
    timestamp: datetime | None = None
    problem_id: str | None = None
    entry_type: str = "observation"
    """decision | action | observation | reflection, or an event type such as write_completed."""
    content: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    supersedes: str | None = None
    """ID of the entry this one supersedes."""
    superseded_by: str | None = None
    """ID of the entry that supersedes this one (derived from the trace's link records)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (timestamp as ISO-8601 UTC)."""
        return {
            "id": self.id,
            "timestamp": None if self.timestamp is None else format_timestamp(self.timestamp),
            "problem_id": self.problem_id,
            "entry_type": self.entry_type,
            "content": self.content,
            "tags": list(self.tags),
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
        }


@dataclass
class SynthesizedPattern:
    """A pattern learned from episodes, linked to them as evidence (001 §6.4).

    ``id`` and the timestamps may be left empty: the store assigns ``syn_<16 hex>`` and now.
    """

    id: str = ""
    pattern_type: str = ""
    description: str = ""
    input_signature: dict[str, Any] = field(default_factory=dict)
    recommended_action: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.5
    evidence_ids: list[str] = field(default_factory=list)
    """IDs of the EpisodeEntry records this pattern was learned from, oldest first."""
    created_at: datetime | None = None
    last_strengthened_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (timestamps as ISO-8601 UTC)."""
        return {
            "id": self.id,
            "pattern_type": self.pattern_type,
            "description": self.description,
            "input_signature": self.input_signature,
            "recommended_action": self.recommended_action,
            "confidence": self.confidence,
            "evidence_ids": list(self.evidence_ids),
            "created_at": None if self.created_at is None else format_timestamp(self.created_at),
            "last_strengthened_at": (
                None
                if self.last_strengthened_at is None
                else format_timestamp(self.last_strengthened_at)
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SynthesizedPattern:
        """Build a pattern from `to_dict` output or a caller's mapping of its fields.

        Raises:
            HRMError: ``VALIDATION_FAILED`` naming unknown fields or a malformed timestamp.
        """
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise HRMError.validation_failed(
                f"Unknown synthesized pattern field(s): {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}",
                fields=unknown,
            )
        values = dict(data)
        for name in ("created_at", "last_strengthened_at"):
            raw = values.get(name)
            if isinstance(raw, str):
                values[name] = parse_timestamp(raw)
        return cls(**values)
