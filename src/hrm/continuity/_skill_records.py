"""The records and enums of skill activation (003 §4): rules, load errors, matches, actions.

Plain values with no I/O, shared by the loader and matcher in `hrm.continuity.skills` (which
re-exports every public name here: import them from there) and by the rules cache. They are
`hrm._values` records rather than dataclasses because `hrm hook` loads rules and matches a prompt
in a fresh process on every prompt, where importing `dataclasses` and generating these classes
would cost more than the matching itself.
"""

from __future__ import annotations

from enum import Enum

from hrm._values import Value
from hrm.continuity._skill_patterns import _NOTHING_COMPILED

TYPE_CHECKING = False  # `hrm hook` imports this module: no typing, dataclasses or logging
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from hrm.continuity._skill_patterns import _Compiled

__all__ = [
    "ActivationAction",
    "ActivationRules",
    "Enforcement",
    "EnforcementAction",
    "MatchReason",
    "Priority",
    "RuleLoadError",
    "RuleType",
    "SkillMatch",
    "SkillMatches",
    "SkillRule",
    "TriggerConfig",
]


class RuleType(str, Enum):
    """What kind of skill a rule activates: the spec's three plus every value real files use."""

    GUARDRAIL = "guardrail"
    DOMAIN = "domain"
    WORKFLOW = "workflow"
    PROCESS = "process"
    EXPLORATION = "exploration"
    RESEARCH = "research"
    PLANNING = "planning"
    VALIDATION = "validation"
    DEBUGGING = "debugging"
    IMPLEMENTATION = "implementation"
    TESTING = "testing"
    DESIGN = "design"
    REFACTORING = "refactoring"
    SECURITY = "security"
    INVESTIGATION = "investigation"
    ORCHESTRATION = "orchestration"


class Enforcement(str, Enum):
    """How firmly a matched skill is pressed on the user (003 §4)."""

    BLOCK = "block"
    """Must use the skill before proceeding."""
    SUGGEST = "suggest"
    """Recommend the skill."""
    WARN = "warn"
    """Mention that the skill is available."""


class Priority(str, Enum):
    """How strongly a rule triggers; orders the matches (003 §4)."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        """0 for CRITICAL up to 3 for LOW: sort ascending for most important first."""
        return list(Priority).index(self)


class ActivationAction(str, Enum):
    """What the prompt hook should do (003 §4 EnforcementAction.action)."""

    BLOCK = "block"
    SUGGEST = "suggest"
    WARN = "warn"
    CONTINUE = "continue"


class TriggerConfig(Value):
    """What makes a rule fire."""

    _fields = ("keywords", "intent_patterns", "negative_patterns")
    __slots__ = _fields
    keywords: tuple[str, ...]
    """Phrases matched as whole words, case-insensitively."""
    intent_patterns: tuple[str, ...]
    """Regular expressions searched anywhere, case-insensitively."""
    negative_patterns: tuple[str, ...]
    """Regular expressions that, when any matches, exclude the rule."""

    def __init__(
        self,
        keywords: tuple[str, ...] = (),
        intent_patterns: tuple[str, ...] = (),
        negative_patterns: tuple[str, ...] = (),
    ) -> None:
        self._init(
            keywords=keywords, intent_patterns=intent_patterns, negative_patterns=negative_patterns
        )


class SkillRule(Value):
    """One activation rule (003 §4 SkillRule)."""

    _fields = (
        "skill",
        "type",
        "enforcement",
        "priority",
        "description",
        "triggers",
        "source_path",
        "kind",
        "extra",
        "_compiled",
    )
    __slots__ = _fields
    _uncompared = ("extra", "_compiled")
    _hidden = ("_compiled",)
    skill: str
    """The skill or agent name, verbatim (``create_handoff``, ``math/linear-algebra``)."""
    type: RuleType
    enforcement: Enforcement
    priority: Priority
    description: str
    triggers: TriggerConfig
    source_path: Path | None
    kind: str
    """``skill`` or ``agent``: which map of the rules file it came from."""
    extra: dict[str, Any]
    """Keys of the rule we do not interpret (``reminder``, ``blockCondition``, ...)."""
    _compiled: _Compiled

    def __init__(
        self,
        *,
        skill: str,
        type: RuleType,
        enforcement: Enforcement,
        priority: Priority,
        description: str,
        triggers: TriggerConfig,
        source_path: Path | None = None,
        kind: str = "skill",
        extra: dict[str, Any] | None = None,
        _compiled: _Compiled = _NOTHING_COMPILED,
    ) -> None:
        self._init(
            skill=skill,
            type=type,
            enforcement=enforcement,
            priority=priority,
            description=description,
            triggers=triggers,
            source_path=source_path,
            kind=kind,
            extra={} if extra is None else extra,
            _compiled=_compiled,
        )


class RuleLoadError(Value):
    """A file or rule that could not be loaded; the rest still were."""

    _fields = ("file_path", "rule", "message")
    __slots__ = _fields
    file_path: Path
    rule: str | None
    message: str

    def __init__(self, file_path: Path, rule: str | None, message: str) -> None:
        self._init(file_path=file_path, rule=rule, message=message)

    def __str__(self) -> str:
        where = f"{self.file_path}" + (f" (rule '{self.rule}')" if self.rule else "")
        return f"{where}: {self.message}"


class ActivationRules(Value):
    """Every rule loaded, merged with the project's overriding the global ones."""

    _fields = ("skills", "agents", "version", "source_paths", "errors", "warnings")
    __slots__ = _fields
    skills: dict[str, SkillRule]
    agents: dict[str, SkillRule]
    version: str
    source_paths: list[Path]
    errors: list[RuleLoadError]
    warnings: list[str]
    """Values we mapped to a default (an unknown ``type``, ``priority`` or ``enforcement``)."""

    def __init__(
        self,
        *,
        skills: dict[str, SkillRule],
        agents: dict[str, SkillRule],
        version: str,
        source_paths: list[Path],
        errors: list[RuleLoadError] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self._init(
            skills=skills,
            agents=agents,
            version=version,
            source_paths=source_paths,
            errors=[] if errors is None else errors,
            warnings=[] if warnings is None else warnings,
        )


class MatchReason(Value):
    """Why a rule matched."""

    _fields = ("matched_keywords", "matched_patterns", "excluded_by")
    __slots__ = _fields
    matched_keywords: list[str]
    matched_patterns: list[str]
    excluded_by: list[str]
    """The rule's negative patterns that were checked and did not match (003 §4 wording)."""

    def __init__(
        self, matched_keywords: list[str], matched_patterns: list[str], excluded_by: list[str]
    ) -> None:
        self._init(
            matched_keywords=matched_keywords,
            matched_patterns=matched_patterns,
            excluded_by=excluded_by,
        )


class SkillMatch(Value):
    """A skill the prompt calls for."""

    _fields = (
        "skill", "enforcement", "priority", "match_reason", "confidence", "description", "kind"
    )
    __slots__ = _fields
    skill: str
    enforcement: Enforcement
    priority: Priority
    match_reason: MatchReason
    confidence: float
    description: str
    kind: str

    def __init__(
        self,
        *,
        skill: str,
        enforcement: Enforcement,
        priority: Priority,
        match_reason: MatchReason,
        confidence: float,
        description: str = "",
        kind: str = "skill",
    ) -> None:
        self._init(
            skill=skill,
            enforcement=enforcement,
            priority=priority,
            match_reason=match_reason,
            confidence=confidence,
            description=description,
            kind=kind,
        )


class SkillMatches(Value):
    """The result of matching one prompt."""

    _fields = ("matches", "total_checked", "match_time_ms", "timed_out", "excluded")
    __slots__ = _fields
    matches: list[SkillMatch]
    """Sorted by priority, then confidence (highest first), then name; one per skill."""
    total_checked: int
    match_time_ms: int
    timed_out: bool
    excluded: dict[str, list[str]]
    """Rules that matched but were excluded, with the negative patterns that excluded them."""

    def __init__(
        self,
        *,
        matches: list[SkillMatch],
        total_checked: int,
        match_time_ms: int,
        timed_out: bool = False,
        excluded: dict[str, list[str]] | None = None,
    ) -> None:
        self._init(
            matches=matches,
            total_checked=total_checked,
            match_time_ms=match_time_ms,
            timed_out=timed_out,
            excluded={} if excluded is None else excluded,
        )


class EnforcementAction(Value):
    """What to tell the user and whether to stop (003 §4)."""

    _fields = ("action", "skills", "message", "blocking_skills")
    __slots__ = _fields
    action: ActivationAction
    skills: list[str]
    message: str
    blocking_skills: list[str]

    def __init__(
        self,
        *,
        action: ActivationAction,
        skills: list[str],
        message: str,
        blocking_skills: list[str] | None = None,
    ) -> None:
        self._init(
            action=action,
            skills=skills,
            message=message,
            blocking_skills=[] if blocking_skills is None else blocking_skills,
        )
