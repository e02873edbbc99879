"""The typed records of a handoff (003 §3): the enums and frozen dataclasses one handoff is made of.

Plain values with no I/O. They live apart from `hrm.continuity.handoffs`, which reads, writes,
validates and migrates them, so each module holds one concept; `handoffs` re-exports every name
here, so ``from hrm.continuity.handoffs import HandoffData`` keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

from hrm.continuity.confidence import VerificationStatus

__all__ = [
    "ArtifactReferences",
    "Blocker",
    "BlockerSeverity",
    "BlockerType",
    "ContextInfo",
    "Decision",
    "HandoffData",
    "HandoffFormat",
    "HandoffLearning",
    "HandoffMigrationResult",
    "HandoffSummary",
    "ResumeInstructions",
    "SerializedHandoff",
    "SessionMetadata",
    "TaskInfo",
    "TaskStatus",
    "ValidationError",
    "ValidationReport",
]


class HandoffFormat(str, Enum):
    """How a handoff is written."""

    YAML = "yaml"
    MARKDOWN = "markdown"


class TaskStatus(str, Enum):
    """Where the task stands at the end of the session (003 §3)."""

    COMPLETED = "completed"
    PAUSED = "paused"
    BLOCKED = "blocked"
    FAILED = "failed"


class BlockerType(str, Enum):
    """What kind of thing is in the way (003 §3)."""

    TECHNICAL = "technical"
    CLARIFICATION = "clarification"
    EXTERNAL = "external"


class BlockerSeverity(str, Enum):
    """How badly a blocker stops the work (003 §3)."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"


# Enum-valued fields hold the enum when the value is known and the raw string otherwise, so a
# lenient read never loses a value and `validate_schema` can say exactly which one is wrong.


@dataclass(frozen=True)
class SessionMetadata:
    """Which session wrote the handoff and when."""

    id: str
    started_at: datetime | None
    """Aware datetime; None only when a legacy file does not say (validation rejects it)."""
    ended_at: datetime | None = None
    duration_seconds: int | None = None


@dataclass(frozen=True)
class TaskInfo:
    """The task and its status."""

    description: str
    status: TaskStatus | str
    skills_used: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ContextInfo:
    """Where the work happened."""

    project_path: str
    git_commit: str = ""
    git_branch: str = ""
    key_files: list[str] = field(default_factory=list)
    """At most `MAX_KEY_FILES`, most relevant first."""


@dataclass(frozen=True)
class Decision:
    """A choice made during the session and why."""

    decision: str
    rationale: str = ""
    alternatives: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ArtifactReferences:
    """Files the session created, modified or deleted."""

    created: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HandoffLearning:
    """Something learned, typed like a long-term learning (one of `LEARNING_TYPES`)."""

    type: str
    content: str
    confidence: VerificationStatus | str = VerificationStatus.UNCERTAIN


@dataclass(frozen=True)
class Blocker:
    """Something that stops the work."""

    type: BlockerType | str
    description: str
    severity: BlockerSeverity | str = BlockerSeverity.MEDIUM


@dataclass(frozen=True)
class ResumeInstructions:
    """How the next session should pick the work up."""

    next_steps: list[str] = field(default_factory=list)
    context_needed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HandoffData:
    """One handoff (003 §3). `extra` keeps every field read that has no place here."""

    session: SessionMetadata
    task: TaskInfo
    context: ContextInfo
    decisions: list[Decision] = field(default_factory=list)
    artifacts: ArtifactReferences = field(default_factory=ArtifactReferences)
    learnings: list[HandoffLearning] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    resume: ResumeInstructions = field(default_factory=ResumeInstructions)
    notes: str = ""
    """Free-form Markdown; the body of the Markdown format."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Fields read from a file that this schema has no place for, written back as they were."""
    source_format: HandoffFormat | None = field(default=None, compare=False)
    """The format it was read from; None for a handoff built in memory."""


@dataclass(frozen=True)
class SerializedHandoff:
    """A handoff rendered to text."""

    content: str
    format: HandoffFormat
    byte_size: int
    token_estimate: int


@dataclass(frozen=True)
class ValidationError:
    """One violated constraint, located by its path (``decisions[2].rationale``)."""

    field: str
    constraint: str
    message: str


@dataclass(frozen=True)
class ValidationReport:
    """Every error `validate_schema` found, plus non-blocking warnings."""

    valid: bool
    errors: list[ValidationError]
    warnings: list[str]


@dataclass(frozen=True, kw_only=True)
class HandoffMigrationResult:
    """What `migrate` wrote (003 §3 MigrationResult)."""

    source: Path
    destination: Path
    format_from: HandoffFormat
    format_to: HandoffFormat
    preserved_original: bool
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class HandoffSummary:
    """One line of `HandoffStore.list`."""

    path: Path
    session_id: str
    created_at: datetime
    status: str
    description: str
    project_path: str
