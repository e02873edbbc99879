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
* Patterns are validated at load; a pattern that repeats runs on RE2, in linear time, since
  Python's ``re`` backtracks and cannot be interrupted (`_skill_patterns`). The deadline is
  checked between rules; when it passes, matching stops and `SkillMatches.timed_out` is set.
* A pattern runs only when the literals any match must contain occur in the prompt, and is
  compiled on first use. With a ``cache_dir``, each file's validated form is kept between
  processes (`_RulesCache`), so a hook loading unchanged rules compiles nothing up front.

This module runs in every `hrm hook` process: its records are hand-written (`hrm._values`) and it
imports neither `typing`, `dataclasses` nor `logging`.

Confidence of a match: 0.8 when both a keyword and an intent pattern hit, 0.6 for patterns only,
0.5 for keywords only, plus 0.05 for every further distinct hit, capped at 1.0 — a pattern
states an intent, a keyword only mentions a topic.

The records live in `hrm.continuity._skill_records`, the pattern checks in
`hrm.continuity._skill_patterns` and the rules cache in `hrm.continuity._skill_rules_cache`,
each small enough to read whole; this module loads and matches, and re-exports every public name.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from hrm._paths import read_text
from hrm.continuity._skill_patterns import _Compiled, _Pattern, checked_pattern
from hrm.continuity._skill_records import (
    ActivationAction,
    ActivationRules,
    Enforcement,
    EnforcementAction,
    MatchReason,
    Priority,
    RuleLoadError,
    RuleType,
    SkillMatch,
    SkillMatches,
    SkillRule,
    TriggerConfig,
)

# `hook_entry` and the tests import `_path_digest` from here: an explicit re-export for mypy
from hrm.continuity._skill_rules_cache import _path_digest as _path_digest  # noqa: PLC0414
from hrm.continuity._skill_rules_cache import _RulesCache
from hrm.errors import HRMError

TYPE_CHECKING = False  # `hrm hook` imports this module: no typing, dataclasses or logging
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from hrm.home import HRMHome

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
    "user_rule_path",
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

_RULES_MAX_BYTES = 8 << 20
"""The largest rules file read (the real ones are tens of kilobytes)."""
_TOKEN = r"\w+|[^\w\s]"
"""Words and single punctuation marks (compiled on first use, by `re`'s own cache)."""


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


def default_rule_paths(home: HRMHome, project_dir: Path | None) -> list[Path]:
    """Where rules live, by precedence: the project's Claude Code and hrm files, the person's
    own Claude Code file (``~/.claude/skills``), then the home's; earlier ones win by name."""
    paths: list[Path] = []
    if project_dir is not None:
        paths.append(project_dir / ".claude" / "skills" / RULES_FILENAME)
        paths.append(project_dir / ".hrm" / RULES_FILENAME)
    paths.append(user_rule_path())
    paths.append(home.hot_config_dir / RULES_FILENAME)
    return paths


def user_rule_path() -> Path:
    """The person's own rules, ``$CLAUDE_CONFIG_DIR/skills`` or ``~/.claude/skills`` (D244)."""
    import os

    root = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return Path(root) / "skills" / RULES_FILENAME



def _labels(
    path: Path, name: str, raw: dict[str, Any], warnings: list[str]
) -> tuple[RuleType, Enforcement, Priority]:
    """A rule's type, enforcement and priority; an unknown value takes the default, warned."""
    rule_type, ok = _enum(RuleType, raw.get("type"), {}, RuleType.DOMAIN)
    if not ok:
        warnings.append(f"{path}: rule '{name}': unknown type {raw.get('type')!r}, using 'domain'")
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
    return rule_type, enforcement, priority

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
            doc = json.loads(read_text(path, max_bytes=_RULES_MAX_BYTES, what="skill rules"))
        except HRMError as exc:  # not a regular file, too large, unreadable, not UTF-8
            errors.append(RuleLoadError(path, None, exc.message))
            return None
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
                try:
                    bucket.append(checked_pattern(pattern))  # its engine chosen (D243)
                except ValueError as exc:
                    fail(str(exc))
                    return None
        rule_type, enforcement, priority = _labels(path, name, raw, warnings)
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
                    possible and pattern.search(regex_text) is not None
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

    def apply_enforcement(
        self,
        matches: Sequence[SkillMatch],
        *,
        enforcement: str = "suggest",
        may_block: Callable[[SkillMatch], bool] | None = None,
    ) -> EnforcementAction:
        """Decide the hook's action from the matches and the person's enforcement setting.

        A rule marked ``block`` blocks only when the person chose ``continuity.enforcement:
        block`` and `may_block` lets that rule (a project's rule blocks once the project is
        trusted, D220); otherwise it is a required step of a SUGGEST (D221). Then SUGGEST if
        any match suggests, WARN if all only warn, CONTINUE when there is nothing.

        Args:
            matches: What `match_skills` found.
            enforcement: ``suggest`` (the default) or ``block``.
            may_block: Whether a matched ``block`` rule may stop the prompt; default: all may.
        """
        if not matches:
            return EnforcementAction(
                action=ActivationAction.CONTINUE, skills=[], message="No skill matched."
            )
        names = [m.skill for m in matches]
        required = [m for m in matches if m.enforcement is Enforcement.BLOCK]
        blocking = [
            m.skill for m in required
            if enforcement == "block" and (may_block is None or may_block(m))
        ]
        if blocking:
            return EnforcementAction(
                action=ActivationAction.BLOCK,
                skills=names,
                message=f"Use {_join(blocking)} before proceeding (required).",
                blocking_skills=blocking,
            )
        if required or any(m.enforcement is Enforcement.SUGGEST for m in matches):
            listed = _join(f"{m.skill} ({m.priority.value})" for m in matches)
            needed = f"Required before proceeding: {_join(m.skill for m in required)}. " if (
                required
            ) else ""
            return EnforcementAction(
                action=ActivationAction.SUGGEST,
                skills=names,
                message=f"{needed}Suggested skills: {listed}.",
            )
        return EnforcementAction(
            action=ActivationAction.WARN, skills=names, message=f"Skills available: {_join(names)}."
        )


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
