"""Skill activation (003 §4): which skills a prompt calls for, and how firmly.

Rules come from our ``skill-rules.json`` and from Continuous-Claude's files as they are
(``promptTriggers.keywords`` / ``intentPatterns``, open-ended ``type`` values, extra keys such as
``reminder`` or ``blockCondition``). Several files merge, the project's rules overriding the
global ones by name. A rule that cannot load (bad regex, a pattern that could backtrack
exponentially, a wrong shape) is reported in `ActivationRules.errors` naming file and rule; the
others still load.

Matching is bounded on any input, because the UserPromptSubmit hook has a one-second budget and
a pasted log can be megabytes (running every real ``intentPattern`` over 1 MB takes 11-37 s):

* Only a window of the prompt is examined: its first `WINDOW_HEAD` and last `WINDOW_TAIL`
  characters. Intent lives at the start and end of a prompt; what is pasted in between is data.
* Keywords are matched as whole token sequences (``hook not firing`` matches those three words
  in a row, case-insensitively; ``PR`` does not match ``prompt``) in one pass over the window's
  tokens, through an index by first token.
* Patterns are validated at load; patterns with nested unbounded quantifiers (``(a+)+``) are
  rejected there, since Python's ``re`` cannot be interrupted. The deadline is checked between
  rules; when it passes, matching stops and `SkillMatches.timed_out` is set.
* A pattern runs only when the literals any match must contain occur in the prompt, and is
  compiled on first use. With a ``cache_dir``, each file's validated form is kept between
  processes (`_RulesCache`), so a hook loading unchanged rules compiles nothing up front.

This module runs in every `hrm hook` process: its records are hand-written (`hrm._values`) and it
imports neither `typing`, `dataclasses` nor `logging`.

Confidence of a match: 0.8 when both a keyword and an intent pattern hit, 0.6 for patterns only,
0.5 for keywords only, plus 0.05 for every further distinct hit, capped at 1.0 — a pattern
states an intent, a keyword only mentions a topic.
"""

from __future__ import annotations

import _thread
import json
import os
import re
import time
from enum import Enum
from pathlib import Path

from hrm._values import Value

TYPE_CHECKING = False  # `hrm hook` imports this module: no typing, dataclasses or logging
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from hrm.home import HRMHome

    _Loaded = tuple[str, dict[str, "SkillRule"], dict[str, "SkillRule"]] | None

__all__ = [
    "LINE_WIDTH",
    "REGEX_HEAD",
    "REGEX_TAIL",
    "RULES_FILENAME",
    "WINDOW_HEAD",
    "WINDOW_TAIL",
    "ActivationAction",
    "ActivationRules",
    "Enforcement",
    "EnforcementAction",
    "MatchReason",
    "Priority",
    "RuleLoadError",
    "RuleType",
    "SkillActivator",
    "SkillMatch",
    "SkillMatches",
    "SkillRule",
    "TriggerConfig",
    "default_rule_paths",
    "render_activation_check",
]

RULES_FILENAME = "skill-rules.json"
WINDOW_HEAD = 20_000
"""Characters examined from the start of a prompt."""
WINDOW_TAIL = 20_000
"""Characters examined from the end of a prompt."""
REGEX_HEAD = 8_000
"""Characters of the start of a prompt intent patterns run on."""
REGEX_TAIL = 4_000
"""Characters of the end of a prompt intent patterns run on."""
LINE_WIDTH = 500
"""Longer lines are cut (at a space) before patterns run, bounding ``.*?`` scans."""

_TOKEN = r"\w+|[^\w\s]"
"""Words and single punctuation marks (compiled on first use, by `re`'s own cache)."""


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


_ENFORCEMENT_SYNONYMS = {
    "required": Enforcement.BLOCK,
    "require": Enforcement.BLOCK,
    "must": Enforcement.BLOCK,
    "mandatory": Enforcement.BLOCK,
    "recommend": Enforcement.SUGGEST,
    "recommended": Enforcement.SUGGEST,
    "warning": Enforcement.WARN,
    "info": Enforcement.WARN,
    "notice": Enforcement.WARN,
    "log": Enforcement.WARN,
}
_PRIORITY_SYNONYMS = {
    "urgent": Priority.CRITICAL,
    "highest": Priority.CRITICAL,
    "p0": Priority.CRITICAL,
    "important": Priority.HIGH,
    "p1": Priority.HIGH,
    "normal": Priority.MEDIUM,
    "default": Priority.MEDIUM,
    "moderate": Priority.MEDIUM,
    "p2": Priority.MEDIUM,
    "optional": Priority.LOW,
    "lowest": Priority.LOW,
    "minor": Priority.LOW,
    "p3": Priority.LOW,
}


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


class _Pattern:
    """One intent or negative pattern: compiled on first use, when its literals are present."""

    __slots__ = ("_regex", "pattern", "required")

    def __init__(self, pattern: str, required: tuple[frozenset[str], ...] | None) -> None:
        self.pattern = pattern
        self.required = required
        """Literals a match must contain (see `_required_literals`); None means always run."""
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern, re.IGNORECASE)
        return self._regex


class _Compiled:
    __slots__ = ("intents", "keywords", "negatives")

    def __init__(
        self,
        keywords: tuple[tuple[str, tuple[str, ...]], ...],
        intents: tuple[_Pattern, ...],
        negatives: tuple[_Pattern, ...],
    ) -> None:
        self.keywords = keywords
        self.intents = intents
        self.negatives = negatives


_NOTHING_COMPILED = _Compiled((), (), ())


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


def default_rule_paths(home: HRMHome, project_dir: Path | None) -> list[Path]:
    """Where rules live, by precedence: the project's Claude Code and hrm files, then the home's."""
    paths: list[Path] = []
    if project_dir is not None:
        paths.append(project_dir / ".claude" / "skills" / RULES_FILENAME)
        paths.append(project_dir / ".hrm" / RULES_FILENAME)
    paths.append(home.hot_config_dir / RULES_FILENAME)
    return paths


def _has_nested_quantifier(pattern: str) -> bool:
    """Whether a group containing an unbounded quantifier is itself repeated (``(a+)+``)."""
    stack: list[bool] = []
    index, closed_with_quantifier = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            closed_with_quantifier = False
            continue
        if char == "[":
            end = index + 1
            if end < len(pattern) and pattern[end] == "^":
                end += 1
            end += 1  # a ']' right after '[' is literal
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            index = end + 1
            closed_with_quantifier = False
            continue
        repeats = char in "*+" or (char == "{" and re.match(r"\{\d*,\d*\}", pattern[index:]))
        if repeats and closed_with_quantifier:
            return True
        if char == "(":
            stack.append(False)
        elif char == ")" and stack:
            inner = stack.pop()
            closed_with_quantifier = inner
            if stack:
                stack[-1] = stack[-1] or inner
            index += 1
            continue
        elif repeats and stack:
            stack[-1] = True
        closed_with_quantifier = False
        index += 1
    return False


_LITERAL_CHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _'-/:,")
_GROUP_ALTERNATIVES = r"\((?:\?:)?([A-Za-z0-9 _'\-/:,|]+)\)"


def _required_literals(pattern: str) -> tuple[frozenset[str], ...] | None:
    """Literals a match must contain: each set needs one member present. None: no filter.

    Understands the shape nearly all real intent patterns have — top-level literal runs and
    groups of literal alternatives, joined by anything (``(create|make).*?handoff``). Runs or
    groups followed by an optional quantifier are not required; a top-level ``|`` disables it.
    """
    required: list[frozenset[str]] = []
    run: list[str] = []
    index, depth = 0, 0
    for char in pattern:
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            return None

    def optional_at(position: int) -> bool:
        return position < len(pattern) and (
            pattern[position] in "?*" or pattern.startswith("{0", position)
        )

    def flush(drop_last: bool) -> None:
        text = "".join(run[:-1] if drop_last else run).strip().lower()
        if text and text.isascii():
            required.append(frozenset({text}))
        run.clear()

    while index < len(pattern):
        char = pattern[index]
        group = re.compile(_GROUP_ALTERNATIVES).match(pattern, index) if char == "(" else None
        if group:
            flush(drop_last=False)
            end = group.end()
            options = {o.strip().lower() for o in group.group(1).split("|")}
            if not optional_at(end) and all(o and o.isascii() for o in options):
                required.append(frozenset(options))
            index = end
        elif char in _LITERAL_CHAR:
            run.append(char)
            index += 1
            if optional_at(index):
                flush(drop_last=True)
        elif char == "\\" and index + 1 < len(pattern) and not pattern[index + 1].isalnum():
            run.append(pattern[index + 1])
            index += 2
            if optional_at(index):
                flush(drop_last=True)
        else:
            flush(drop_last=False)
            index = _skip_construct(pattern, index)
    flush(drop_last=False)
    return tuple(required) or None


def _skip_construct(pattern: str, index: int) -> int:
    """The index after the escape, character class or (non-literal) group at `index`."""
    char = pattern[index]
    if char == "\\":
        return index + 2
    if char == "{":
        close = pattern.find("}", index)
        return index + 1 if close < 0 else close + 1
    if char not in "([":
        return index + 1
    depth, position = 0, index
    while position < len(pattern):
        current = pattern[position]
        if current == "\\":
            position += 2
            continue
        if current == "[":
            position = _class_end(pattern, position)
            if char == "[":
                return position
            continue
        depth += (current == "(") - (current == ")")
        position += 1
        if depth == 0:
            return position
    return position


def _class_end(pattern: str, index: int) -> int:
    end = index + 1
    if end < len(pattern) and pattern[end] == "^":
        end += 1
    end += 1  # a ']' right after '[' is literal
    while end < len(pattern) and pattern[end] != "]":
        end += 2 if pattern[end] == "\\" else 1
    return end + 1


def _enum(kind: type[Any], raw: Any, synonyms: dict[str, Any], default: Any) -> tuple[Any, bool]:
    text = str(raw).strip().lower() if raw is not None else ""
    for member in kind:
        if text == member.value:
            return member, True
    if text in synonyms:
        return synonyms[text], True
    return default, False


def _strings(raw: Any) -> list[str] | None:
    if raw is None:
        return []
    if isinstance(raw, list) and all(isinstance(item, str) for item in raw):
        return raw
    return None


class SkillActivator:
    """Loads activation rules and matches prompts against them (003 §4).

    Stateless apart from the injected timer and the optional rules cache, so one instance may
    serve many threads.
    """

    def __init__(
        self, *, timer: Callable[[], float] = time.perf_counter, cache_dir: Path | None = None
    ) -> None:
        """Create an activator.

        Args:
            timer: Seconds, for the matching budget (injected by tests).
            cache_dir: Where to keep each rules file's parsed, validated form (see
                `_RulesCache`); None parses and validates every file on every load.
        """
        self._timer = timer
        self._cache = _RulesCache(cache_dir) if cache_dir is not None else None

    # ── loading ──────────────────────────────────────────────────────────────

    def load_rules(self, paths: Sequence[Path]) -> ActivationRules:
        """Load and merge rule files given most important first (project, then global).

        Missing files are skipped. A file that is not valid JSON, or a rule that is malformed,
        becomes a `RuleLoadError` and everything else still loads.

        Raises:
            HRMError: ``NOT_FOUND`` when none of `paths` exists.
        """
        existing = [Path(p) for p in paths if Path(p).is_file()]
        if not existing:
            from hrm.errors import HRMError

            raise HRMError.not_found(
                "skill rules file",
                ", ".join(str(p) for p in paths) or "(no paths)",
                f"create {RULES_FILENAME} in .hrm/ or run `hrm init`",
            )
        skills: dict[str, SkillRule] = {}
        agents: dict[str, SkillRule] = {}
        errors: list[RuleLoadError] = []
        warnings: list[str] = []
        versions: list[str] = []
        for path in reversed(existing):
            loaded = self._load_cached(path, errors, warnings)
            if loaded is None:
                continue
            version, file_skills, file_agents = loaded
            versions.append(version)
            skills.update(file_skills)
            agents.update(file_agents)
        return ActivationRules(
            skills=skills,
            agents=agents,
            version=versions[-1] if versions else "",
            source_paths=existing,
            errors=errors,
            warnings=warnings,
        )

    def _load_cached(
        self, path: Path, errors: list[RuleLoadError], warnings: list[str]
    ) -> tuple[str, dict[str, SkillRule], dict[str, SkillRule]] | None:
        """`_load_file` through the cache: what a file yielded, errors and warnings included."""
        if self._cache is None:
            return self._load_file(path, errors, warnings)
        key = self._cache.key(path)
        cached = self._cache.read(path, key) if key is not None else None
        if cached is not None:
            loaded, file_errors, file_warnings = cached
        else:
            file_errors, file_warnings = [], []
            loaded = self._load_file(path, file_errors, file_warnings)
            if key is not None:
                self._cache.write(path, key, loaded, file_errors, file_warnings)
        errors.extend(file_errors)
        warnings.extend(file_warnings)
        return loaded

    def _load_file(
        self, path: Path, errors: list[RuleLoadError], warnings: list[str]
    ) -> tuple[str, dict[str, SkillRule], dict[str, SkillRule]] | None:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            errors.append(
                RuleLoadError(
                    path, None, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
                )
            )
            return None
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(RuleLoadError(path, None, f"cannot read: {exc}"))
            return None
        if not isinstance(doc, dict) or not any(
            isinstance(doc.get(k), dict) for k in ("skills", "agents")
        ):
            errors.append(
                RuleLoadError(path, None, "expected an object with a 'skills' or 'agents' map")
            )
            return None
        maps: dict[str, dict[str, SkillRule]] = {"skills": {}, "agents": {}}
        for section, kind in (("skills", "skill"), ("agents", "agent")):
            raw_rules = doc.get(section) or {}
            if not isinstance(raw_rules, dict):
                errors.append(RuleLoadError(path, None, f"'{section}' must be an object"))
                continue
            for name, raw in raw_rules.items():
                rule = self._parse_rule(
                    path, str(name), raw, kind=kind, errors=errors, warnings=warnings
                )
                if rule is not None:
                    maps[section][rule.skill] = rule
        return str(doc.get("version", "")), maps["skills"], maps["agents"]

    def _parse_rule(
        self,
        path: Path,
        name: str,
        raw: Any,
        *,
        kind: str,
        errors: list[RuleLoadError],
        warnings: list[str],
    ) -> SkillRule | None:
        def fail(message: str) -> None:
            errors.append(RuleLoadError(path, name, message))

        if not name.strip() or not isinstance(raw, dict):
            fail("a rule must be an object under a non-empty name")
            return None
        triggers_raw = raw.get("triggers", raw.get("promptTriggers", {}))
        if not isinstance(triggers_raw, dict):
            fail("'triggers' must be an object")
            return None
        lists = {
            "keywords": _strings(triggers_raw.get("keywords")),
            "intent_patterns": _strings(
                triggers_raw.get("intent_patterns", triggers_raw.get("intentPatterns"))
            ),
            "negative_patterns": _strings(
                triggers_raw.get("negative_patterns", triggers_raw.get("negativePatterns"))
            ),
        }
        for key, value in lists.items():
            if value is None:
                fail(f"'{key}' must be a list of strings")
                return None
        compiled: dict[str, list[_Pattern]] = {"intent_patterns": [], "negative_patterns": []}
        for key, bucket in compiled.items():
            for pattern in lists[key] or []:
                if _has_nested_quantifier(pattern):
                    fail(f"pattern {pattern!r} nests quantifiers and could take exponential time")
                    return None
                try:
                    entry = _Pattern(pattern, _required_literals(pattern))
                    entry._regex = re.compile(pattern, re.IGNORECASE)
                    bucket.append(entry)
                except re.error as exc:
                    fail(f"invalid regex {pattern!r}: {exc}")
                    return None
        rule_type, ok = _enum(RuleType, raw.get("type"), {}, RuleType.DOMAIN)
        if not ok:
            warnings.append(
                f"{path}: rule '{name}': unknown type {raw.get('type')!r}, using 'domain'"
            )
        enforcement, ok = _enum(
            Enforcement, raw.get("enforcement"), _ENFORCEMENT_SYNONYMS, Enforcement.SUGGEST
        )
        if not ok:
            warnings.append(
                f"{path}: rule '{name}': unknown enforcement "
                f"{raw.get('enforcement')!r}, using 'suggest'"
            )
        priority, ok = _enum(Priority, raw.get("priority"), _PRIORITY_SYNONYMS, Priority.MEDIUM)
        if not ok:
            warnings.append(
                f"{path}: rule '{name}': unknown priority {raw.get('priority')!r}, using 'medium'"
            )
        keywords = tuple(k for k in lists["keywords"] or [] if k.strip())
        known = {"type", "enforcement", "priority", "description", "triggers", "promptTriggers"}
        return SkillRule(
            skill=name,
            type=rule_type,
            enforcement=enforcement,
            priority=priority,
            description=str(raw.get("description") or ""),
            triggers=TriggerConfig(
                keywords=keywords,
                intent_patterns=tuple(lists["intent_patterns"] or []),
                negative_patterns=tuple(lists["negative_patterns"] or []),
            ),
            source_path=path,
            kind=kind,
            extra={k: v for k, v in raw.items() if k not in known},
            _compiled=_Compiled(
                keywords=tuple((k, tuple(re.findall(_TOKEN, k.lower()))) for k in keywords),
                intents=tuple(compiled["intent_patterns"]),
                negatives=tuple(compiled["negative_patterns"]),
            ),
        )

    # ── matching ─────────────────────────────────────────────────────────────

    def match_skills(
        self, prompt: str, rules: ActivationRules, *, budget_ms: int = 1000
    ) -> SkillMatches:
        """Match a prompt against every rule within `budget_ms` (see the module docstring).

        Raises:
            HRMError: ``VALIDATION_FAILED`` when the prompt is empty.
        """
        if not prompt.strip():
            from hrm.errors import HRMError

            raise HRMError.validation_failed("Cannot match an empty prompt", field="prompt")
        started = self._timer()
        deadline = started + budget_ms / 1000
        window = prompt
        if len(prompt) > WINDOW_HEAD + WINDOW_TAIL:
            window = prompt[:WINDOW_HEAD] + "\n" + prompt[-WINDOW_TAIL:]
        lowered = window.lower()
        finder = _KeywordFinder(re.findall(_TOKEN, lowered))
        regex_text = _regex_window(prompt)
        regex_lowered = regex_text.lower()
        pattern_hits: dict[str, bool] = {}

        def hits(pattern: _Pattern) -> bool:
            if pattern.pattern not in pattern_hits:
                possible = pattern.required is None or all(
                    any(literal in regex_lowered for literal in options)
                    for options in pattern.required
                )
                pattern_hits[pattern.pattern] = (
                    possible and pattern.regex.search(regex_text) is not None
                )
            return pattern_hits[pattern.pattern]

        found: list[SkillMatch] = []
        excluded: dict[str, list[str]] = {}
        checked, timed_out = 0, False
        for rule in [*rules.skills.values(), *rules.agents.values()]:
            if self._timer() > deadline:
                timed_out = True
                break
            checked += 1
            compiled = rule._compiled
            keywords = [text for text, tokens in compiled.keywords if finder.contains(tokens)]
            patterns = [p.pattern for p in compiled.intents if hits(p)]
            if not keywords and not patterns:
                continue
            negatives = [p.pattern for p in compiled.negatives if hits(p)]
            if negatives:
                excluded[rule.skill] = negatives
                continue
            found.append(
                SkillMatch(
                    skill=rule.skill,
                    enforcement=rule.enforcement,
                    priority=rule.priority,
                    match_reason=MatchReason(
                        matched_keywords=keywords,
                        matched_patterns=patterns,
                        excluded_by=list(rule.triggers.negative_patterns),
                    ),
                    confidence=_confidence(len(keywords), len(patterns)),
                    description=rule.description,
                    kind=rule.kind,
                )
            )
        found.sort(key=lambda m: (m.priority.rank, -m.confidence, m.skill))
        unique: dict[str, SkillMatch] = {}
        for match in found:
            unique.setdefault(match.skill, match)
        return SkillMatches(
            matches=list(unique.values()),
            total_checked=checked,
            match_time_ms=round((self._timer() - started) * 1000),
            timed_out=timed_out,
            excluded=excluded,
        )

    def apply_enforcement(self, matches: Sequence[SkillMatch]) -> EnforcementAction:
        """Decide the hook's action: BLOCK if any match blocks, SUGGEST if any suggests, WARN if
        all only warn, CONTINUE when there is nothing."""
        if not matches:
            return EnforcementAction(
                action=ActivationAction.CONTINUE, skills=[], message="No skill matched."
            )
        names = [m.skill for m in matches]
        blocking = [m.skill for m in matches if m.enforcement is Enforcement.BLOCK]
        if blocking:
            return EnforcementAction(
                action=ActivationAction.BLOCK,
                skills=names,
                message=f"Use {_join(blocking)} before proceeding (required).",
                blocking_skills=blocking,
            )
        if any(m.enforcement is Enforcement.SUGGEST for m in matches):
            listed = _join(f"{m.skill} ({m.priority.value})" for m in matches)
            return EnforcementAction(
                action=ActivationAction.SUGGEST,
                skills=names,
                message=f"Suggested skills: {listed}.",
            )
        return EnforcementAction(
            action=ActivationAction.WARN, skills=names, message=f"Skills available: {_join(names)}."
        )


_CACHE_FORMAT = 1
"""Bump when the cached form of a rule changes; older cache files are then ignored."""
_RACY_SECONDS = 2
"""Files changed more recently than this are parsed without the cache (see `_RulesCache.key`)."""


class _RulesCache:
    """Each rules file's parsed and validated form, as JSON, in the home's cache directory.

    Loading a rules file means parsing it, checking every pattern for nested quantifiers,
    extracting its required literals and compiling it to prove it valid: about 0.15 ms a pattern,
    most of a hook's time on a real (~100 KB) Continuous-Claude rules file. The cache keeps the
    result keyed by the file's path, size, modification and change times and inode, so a hook
    that finds the file unchanged rebuilds the rules without compiling anything; patterns are
    then compiled on first use, only when their required literals occur in a prompt. A
    cache that cannot be read or written is ignored: the file is parsed as without one.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @staticmethod
    def key(path: Path) -> str | None:
        """The file's identity, or None (no caching) for a file changed in the last seconds.

        File times tick coarsely: a same-size rewrite within one tick of the cached version
        would keep its key. A file is cached only once it has been still for `_RACY_SECONDS`,
        so any later change moves its times (git's "racily clean" rule).
        """
        try:
            st = path.stat()
        except OSError:
            return None
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _RACY_SECONDS * 1_000_000_000:
            return None
        return f"{_CACHE_FORMAT}|{path}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}"

    def _file(self, path: Path) -> Path:
        return self.directory / f"skill-rules-{_path_digest(path)}.json"

    def read(
        self, path: Path, key: str
    ) -> tuple[_Loaded, list[RuleLoadError], list[str]] | None:
        try:
            doc = json.loads(self._file(path).read_bytes())
            if not isinstance(doc, dict) or doc.get("key") != key:
                return None
            loaded = None
            if doc["rules"] is not None:
                version, skills, agents = doc["rules"]
                loaded = (str(version), _rules_from(skills, path), _rules_from(agents, path))
            errors = [RuleLoadError(path, rule, str(message)) for rule, message in doc["errors"]]
            return loaded, errors, [str(w) for w in doc["warnings"]]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # no cache, another version's, or damaged: parse the file instead

    def write(
        self,
        path: Path,
        key: str,
        loaded: _Loaded,
        errors: list[RuleLoadError],
        warnings: list[str],
    ) -> None:
        rules = None
        if loaded is not None:
            version, skills, agents = loaded
            rules = [version, _rules_to(skills), _rules_to(agents)]
        doc = {
            "key": key,
            "rules": rules,
            "errors": [[e.rule, e.message] for e in errors],
            "warnings": warnings,
        }
        target = self._file(path)
        writer = f"{os.getpid()}.{_thread.get_ident()}"  # processes and threads race safely
        temporary = target.with_name(f".{target.name}.{writer}.tmp")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(doc, ensure_ascii=True), encoding="utf-8")
            os.replace(temporary, target)
        except (OSError, ValueError, TypeError):  # a cache is an optimisation, never a failure
            try:
                temporary.unlink(missing_ok=True)
            except OSError:
                return


def _path_digest(path: Path) -> str:
    """A stable short name for a path (64-bit FNV-1a); cache files check the full key inside.

    Not `zlib` or `hashlib`: loading either extension module costs a hook more than this loop.
    """
    value = 0xCBF29CE484222325
    for byte in str(path).encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def _rules_to(rules: dict[str, SkillRule]) -> list[list[Any]]:
    def patterns(compiled: tuple[_Pattern, ...]) -> list[list[Any]]:
        return [
            [p.pattern, None if p.required is None else [sorted(o) for o in p.required]]
            for p in compiled
        ]

    return [
        [
            r.skill,
            r.type.value,
            r.enforcement.value,
            r.priority.value,
            r.description,
            r.kind,
            r.extra,
            [[text, list(tokens)] for text, tokens in r._compiled.keywords],
            patterns(r._compiled.intents),
            patterns(r._compiled.negatives),
        ]
        for r in rules.values()
    ]


def _rules_from(rows: list[list[Any]], path: Path) -> dict[str, SkillRule]:
    def patterns(raw: list[list[Any]]) -> tuple[_Pattern, ...]:
        return tuple(
            _Pattern(str(text), None if req is None else tuple(frozenset(o) for o in req))
            for text, req in raw
        )

    rules: dict[str, SkillRule] = {}
    for name, rule_type, enforcement, priority, description, kind, extra, kws, pos, neg in rows:
        keywords = tuple((str(text), tuple(tokens)) for text, tokens in kws)
        intents, negatives = patterns(pos), patterns(neg)
        rules[name] = SkillRule(
            skill=name,
            type=RuleType(rule_type),
            enforcement=Enforcement(enforcement),
            priority=Priority(priority),
            description=description,
            triggers=TriggerConfig(
                keywords=tuple(text for text, _ in keywords),
                intent_patterns=tuple(p.pattern for p in intents),
                negative_patterns=tuple(p.pattern for p in negatives),
            ),
            source_path=path,
            kind=kind,
            extra=dict(extra),
            _compiled=_Compiled(keywords, intents, negatives),
        )
    return rules


def _regex_window(prompt: str) -> str:
    """The part of a prompt patterns run on: head and tail, long lines cut at `LINE_WIDTH`.

    ``.`` never crosses a newline, so cutting lines bounds what one ``X.*?Y`` attempt scans.
    """
    text = prompt
    if len(prompt) > REGEX_HEAD + REGEX_TAIL:
        text = prompt[:REGEX_HEAD] + "\n" + prompt[-REGEX_TAIL:]
    lines = []
    for raw_line in text.split("\n"):
        line = raw_line
        while len(line) > LINE_WIDTH:
            cut = line.rfind(" ", 0, LINE_WIDTH)
            cut = cut if cut > LINE_WIDTH // 2 else LINE_WIDTH
            lines.append(line[:cut])
            line = line[cut:]
        lines.append(line)
    return "\n".join(lines)


class _KeywordFinder:
    """Whole-token phrase lookup over one tokenised text."""

    def __init__(self, tokens: list[str]) -> None:
        self._tokens = tokens
        self._starts: dict[str, list[int]] = {}
        for index, token in enumerate(tokens):
            self._starts.setdefault(token, []).append(index)
        self._cache: dict[tuple[str, ...], bool] = {}

    def contains(self, phrase: tuple[str, ...]) -> bool:
        if not phrase:
            return False
        if phrase not in self._cache:
            width = len(phrase)
            self._cache[phrase] = any(
                tuple(self._tokens[i : i + width]) == phrase
                for i in self._starts.get(phrase[0], ())
            )
        return self._cache[phrase]


def _confidence(keywords: int, patterns: int) -> float:
    if keywords and patterns:
        base = 0.8
    elif patterns:
        base = 0.6
    else:
        base = 0.5
    extra = keywords + patterns - (1 if keywords else 0) - (1 if patterns else 0)
    return round(min(1.0, base + 0.05 * extra), 3)


def _join(items: Iterable[str]) -> str:
    return ", ".join(items)


def render_activation_check(matches: Sequence[SkillMatch], *, max_skills: int = 8) -> str:
    """Plain text for Claude's context, grouped by priority like Continuous-Claude's hook.

    Blocking skills are marked REQUIRED; this is context, not a protocol-level block.
    """
    if not matches:
        return ""
    lines = ["SKILL ACTIVATION CHECK"]
    shown = list(matches)[:max_skills]
    for priority in Priority:
        group = [m for m in shown if m.priority is priority]
        if not group:
            continue
        lines.append(f"{priority.value.upper()}:")
        for match in group:
            required = " (REQUIRED)" if match.enforcement is Enforcement.BLOCK else ""
            about = f" — {match.description}" if match.description else ""
            lines.append(f"  → {match.skill}{required}{about}")
    return "\n".join(lines)
