"""The InputClassifier (001 §3.2): every dimension of an input from deterministic markers.

Reasoning's strategy, escalation and voting all read this classification, so it must be cheap
and total: regular expressions are compiled once and run on a bounded window (the first and
last `WINDOW_CHARS` characters), and only those whose words can occur in it (`HeadIndex`: the
window is split into words once); only length metrics look at the whole text. Any string —
empty, a megabyte, control characters — gets a classification.

Dimensions and their markers:

- complexity: points for length (> 60 words, > 200 words), clauses (>= 3, >= 6), multi-step
  markers (first/then/finally/step), list items (>= 3), code blocks, conjunctions (>= 3) and
  heavy-work words (architecture, refactor, migrate, end-to-end); 0 SIMPLE, 1-2 MODERATE,
  >= 3 COMPLEX.
- uncertainty: 0.1, + 0.15 per question mark (max 2), + 0.2 per hedge (maybe, not sure,
  unclear, which, might, perhaps, wondering, don't know, any idea; max 3), + 0.1 per vague
  referent (something, somehow, this thing, whatever, stuff; max 2); clamped to [0, 1].
- conflict: contradictory markers ("but also", vs, versus, either...or, conflicting,
  contradict, trade-off, on the other hand, competing): 1 LOW, 2 MEDIUM, >= 3 HIGH; the
  caller's ``conflict_hint`` (from governance signals) raises it, never lowers it.
- stakes: HIGH words (production, delete, drop table, payment, legal, security, irreversible,
  credentials, customer data, rm -rf, force push, outage, data loss, "every team", "all
  customers", company-wide...), else MEDIUM words (deploy, release, database, migrate,
  migration, config, customer, deadline, important, infrastructure, architecture), else LOW.
- irreversible: delete, drop table/database, truncate, deploy/push to prod, force push,
  rm -rf, wipe, purge, destroy, overwrite.
- horizon: the most frequent of immediate (now, today, asap, urgent), near (this week,
  tomorrow, soon, next sprint) and far (roadmap, long-term, quarter, next year); a tie goes to
  the farther horizon; no marker means immediate.
- domain: keyword lexicons (`DOMAIN_LEXICONS`); ``general`` when none fires.
- confidence: 0.5 + 0.05 per fired marker, at most 0.95 (0.3 for empty input).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hrm._wordlists import HeadIndex
from hrm.reasoning.types import InputClassification
from hrm.types import Complexity, ConflictLevel, Stakes

if TYPE_CHECKING:
    from hrm.types import TurnInput

__all__ = ["DOMAIN_LEXICONS", "WINDOW_CHARS", "InputClassifier"]

WINDOW_CHARS = 8192
"""Markers are matched on the first and last WINDOW_CHARS characters of the text."""


def _words(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b")


DOMAIN_LEXICONS: dict[str, re.Pattern[str]] = {
    "code": _words(
        r"code", r"function", r"bug", r"python", r"javascript", r"typescript", r"tests?",
        r"compile\w*", r"api", r"class", r"refactor\w*", r"stack ?trace", r"exception",
        r"repo\w*", r"git", r"commit", r"module", r"library", r"lint\w*", r"type ?check\w*",
    ),
    "data": _words(
        r"data(?:set)?s?", r"sql", r"query", r"quer(?:ies)", r"tables?", r"csv", r"database",
        r"analytics", r"metrics?", r"schema", r"etl",
    ),
    "writing": _words(
        r"write", r"draft", r"essay", r"email", r"blog", r"article", r"edit", r"proofread",
        r"tone", r"copy", r"paragraph", r"summar(?:y|ize)",
    ),
    "planning": _words(
        r"plan\w*", r"roadmap", r"schedule", r"milestones?", r"priorit\w*", r"timeline",
        r"strategy", r"goals?", r"okrs?",
    ),
    "ops": _words(
        r"deploy\w*", r"servers?", r"infrastructure", r"kubernetes", r"k8s", r"docker", r"ci",
        r"pipeline", r"production", r"prod", r"outage", r"monitor\w*", r"incident",
    ),
    "personal": _words(
        r"i feel", r"my family", r"health", r"personal", r"my life", r"relationship",
        r"habits?", r"mood", r"stress\w*",
    ),
    "research": _words(
        r"research", r"papers?", r"study", r"literature", r"investigate", r"evidence",
        r"sources", r"survey", r"benchmark\w*", r"compare",
    ),
    "finance": _words(r"budget", r"costs?", r"payments?", r"invoice", r"price", r"pricing"),
    "security": _words(
        r"security", r"vulnerabilit\w*", r"passwords?", r"auth\w*", r"credentials?",
        r"encrypt\w*", r"secrets?",
    ),
    "legal": _words(r"legal", r"contract", r"licen[cs]e", r"compliance", r"gdpr", r"lawsuit"),
}
"""Keyword lexicons per domain (matched on lowercased text)."""

_MULTI_STEP = _words(
    r"first", r"then", r"finally", r"next", r"afterwards", r"steps?", r"after that"
)
_CONJUNCTION = _words(r"and", r"also", r"plus", r"as well as", r"while")
_HEAVY = _words(
    r"architecture", r"refactor\w*", r"migrat\w*", r"end-to-end", r"redesign", r"overhaul",
    r"system-wide", r"integrat\w*",
)
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+\S", re.MULTILINE)
_HEDGE = _words(
    r"maybe", r"perhaps", r"not sure", r"unsure", r"unclear", r"which", r"might", r"possibly",
    r"wondering", r"don'?t know", r"any idea", r"confused", r"could be",
)
_VAGUE = _words(r"something", r"somehow", r"this thing", r"that thing", r"whatever", r"stuff")
_CONFLICT = re.compile(
    r"\bbut also\b|\bvs\.?(?=\s)|\bversus\b|\beither\b.{1,80}?\bor\b|\bconflicting\b"
    r"|\bcontradict\w*|\btrade-?offs?\b|\bon the other hand\b|\bcompeting\b"
)
_HIGH_STAKES = _words(
    r"production", r"prod", r"delete\w*", r"drop (?:table|database)", r"payments?", r"legal",
    r"security", r"irreversibl\w*", r"credentials?", r"customer data", r"rm -rf", r"force[- ]push",
    r"lawsuit", r"compliance", r"money", r"outage", r"data loss",
    r"(?:every|all) (?:teams?|customers?|users?)", r"company[- ]wide",
)
_MEDIUM_STAKES = _words(
    r"deploy\w*", r"release", r"database", r"migrat\w*", r"config\w*", r"customers?",
    r"deadline", r"important", r"infrastructure", r"architecture",
)
_IRREVERSIBLE = re.compile(
    r"\b(?:delete\w*|drop (?:table|database|schema)|truncate|wipe|purge|destroy|overwrite)\b"
    r"|\b(?:deploy|push|release)\w* (?:\w+ ){0,3}?to (?:prod|production)\b"
    r"|\bforce[- ]push\b|\bpush (?:-f|--force)\b|\brm -rf\b"
)
_HORIZONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("immediate", _words(r"now", r"today", r"asap", r"urgent\w*", r"immediately", r"right away")),
    ("near", _words(r"this week", r"tomorrow", r"soon", r"next week", r"next sprint", r"upcoming")),
    ("far", _words(r"roadmap", r"long[- ]term", r"quarter\w*", r"next year", r"years?", r"vision")),
)
_INDEX = HeadIndex(
    {
        **{f"domain:{name}": [lexicon] for name, lexicon in DOMAIN_LEXICONS.items()},
        **{name: [pattern] for name, pattern in _HORIZONS},
        "multi_step": [_MULTI_STEP],
        "conjunction": [_CONJUNCTION],
        "heavy": [_HEAVY],
        "hedge": [_HEDGE],
        "vague": [_VAGUE],
        "conflict": [_CONFLICT],
        "high_stakes": [_HIGH_STAKES],
        "medium_stakes": [_MEDIUM_STAKES],
        "irreversible": [_IRREVERSIBLE],
    }
)
"""Which of the lists above can match a window: one pass over its words (`HeadIndex`)."""
_DOMAIN_KEYS = {name: f"domain:{name}" for name in DOMAIN_LEXICONS}
_CLAUSE_MARKS = ".;!?\n"
_CONFLICT_LEVELS = (ConflictLevel.NONE, ConflictLevel.LOW, ConflictLevel.MEDIUM, ConflictLevel.HIGH)


class InputClassifier:
    """Classifies an input over complexity, uncertainty, conflict, stakes, horizon and domain.

    Pure and stateless: safe to share between threads and turns.
    """

    def classify(
        self, input: TurnInput, *, conflict_hint: ConflictLevel | None = None
    ) -> InputClassification:
        """The classification of one input (see the module docstring for every rule).

        Args:
            input: The turn's input.
            conflict_hint: Conflict already known from governance signals; the result's
                conflict is at least this.
        """
        return self.classify_text(input.text, conflict_hint=conflict_hint)

    def classify_text(
        self, text: str, *, conflict_hint: ConflictLevel | None = None
    ) -> InputClassification:
        """`classify` on bare text (for callers without a `TurnInput`)."""
        text = text if isinstance(text, str) else str(text)
        window = _window(text).lower()
        maybe = _INDEX.candidates(window)  # the lists that cannot match are not run
        signals: list[str] = []
        complexity = _complexity(text, window, maybe, signals)
        uncertainty = _uncertainty(window, maybe, signals)
        conflict = _conflict(window, maybe, conflict_hint, signals)
        stakes = _stakes(window, maybe, signals)
        irreversible_hits = (
            sorted({m.group(0) for m in _IRREVERSIBLE.finditer(window)})
            if "irreversible" in maybe else []
        )
        signals += [f"irreversible:{hit}" for hit in irreversible_hits[:3]]
        horizon = _horizon(window, maybe, signals)
        domain = _domains(window, maybe, signals)
        confidence = 0.3 if not text.strip() else min(0.95, 0.5 + 0.05 * len(signals))
        return InputClassification(
            complexity=complexity,
            uncertainty=uncertainty,
            conflict=conflict,
            stakes=stakes,
            horizon=horizon,
            domain=domain,
            confidence=round(confidence, 4),
            irreversible=bool(irreversible_hits),
            signals=signals,
        )


def _window(text: str) -> str:
    if len(text) <= 2 * WINDOW_CHARS:
        return text
    return text[:WINDOW_CHARS] + "\n" + text[-WINDOW_CHARS:]


def _complexity(text: str, window: str, maybe: set[str], signals: list[str]) -> Complexity:
    points = 0
    words = len(text.split()) if len(text) < 200_000 else text.count(" ") + 1
    if words > 60:
        points += 2 if words > 200 else 1
        signals.append(f"complexity:words={words}")
    clauses = sum(text.count(mark) for mark in _CLAUSE_MARKS) + (1 if text.strip() else 0)
    if clauses >= 3:
        points += 2 if clauses >= 6 else 1
        signals.append(f"complexity:clauses={clauses}")
    steps = len(_MULTI_STEP.findall(window)) if "multi_step" in maybe else 0
    if steps >= 2:
        points += 1
        signals.append(f"complexity:multi_step={steps}")
    items = len(_LIST_ITEM.findall(window))
    if items >= 3:
        points += 1
        signals.append(f"complexity:list_items={items}")
    if "```" in window:
        points += 1
        signals.append("complexity:code_block")
    conjunctions = len(_CONJUNCTION.findall(window)) if "conjunction" in maybe else 0
    if conjunctions >= 3:
        points += 1
        signals.append(f"complexity:conjunctions={conjunctions}")
    heavy = _HEAVY.search(window) if "heavy" in maybe else None
    if heavy:
        points += 1
        signals.append(f"complexity:heavy:{heavy.group(0)}")
    if points >= 3:
        return Complexity.COMPLEX
    return Complexity.MODERATE if points else Complexity.SIMPLE


def _uncertainty(window: str, maybe: set[str], signals: list[str]) -> float:
    questions = min(2, window.count("?"))
    hedges = _distinct(_HEDGE, window) if "hedge" in maybe else []
    vague = _distinct(_VAGUE, window) if "vague" in maybe else []
    hedges, vague = hedges[:3], vague[:2]
    if questions:
        signals.append(f"uncertainty:questions={questions}")
    signals += [f"uncertainty:hedge:{h}" for h in hedges]
    signals += [f"uncertainty:vague:{v}" for v in vague]
    value = 0.1 + 0.15 * questions + 0.2 * len(hedges) + 0.1 * len(vague)
    return round(min(1.0, max(0.0, value)), 4)


def _conflict(
    window: str, maybe: set[str], hint: ConflictLevel | None, signals: list[str]
) -> ConflictLevel:
    found = (
        [m.group(0).split()[0] for m in _CONFLICT.finditer(window)][:5]
        if "conflict" in maybe else []
    )
    signals += [f"conflict:{marker}" for marker in found]
    level = _CONFLICT_LEVELS[min(3, len(found))]
    if hint is not None:
        hint = ConflictLevel(hint)
        if hint != ConflictLevel.NONE:
            signals.append(f"conflict:hint:{hint.value}")
        if _CONFLICT_LEVELS.index(hint) > _CONFLICT_LEVELS.index(level):
            level = hint
    return level


def _stakes(window: str, maybe: set[str], signals: list[str]) -> Stakes:
    high = _distinct(_HIGH_STAKES, window) if "high_stakes" in maybe else []
    if high:
        signals += [f"stakes:high:{word}" for word in high[:3]]
        return Stakes.HIGH
    medium = _distinct(_MEDIUM_STAKES, window) if "medium_stakes" in maybe else []
    if medium:
        signals += [f"stakes:medium:{word}" for word in medium[:3]]
        return Stakes.MEDIUM
    return Stakes.LOW


def _horizon(window: str, maybe: set[str], signals: list[str]) -> str:
    counts = [
        (len(pattern.findall(window)) if name in maybe else 0, rank, name)
        for rank, (name, pattern) in enumerate(_HORIZONS)
    ]
    best = max(counts)
    if best[0] == 0:
        return "immediate"
    signals.append(f"horizon:{best[2]}")
    return best[2]


def _domains(window: str, maybe: set[str], signals: list[str]) -> list[str]:
    found: list[str] = []
    for name, lexicon in DOMAIN_LEXICONS.items():
        if _DOMAIN_KEYS[name] not in maybe:
            continue
        match = lexicon.search(window)
        if match:
            found.append(name)
            signals.append(f"domain:{name}:{match.group(0)}")
    return found or ["general"]


def _distinct(pattern: re.Pattern[str], window: str) -> list[str]:
    """The distinct texts `pattern` matches in `window`, sorted."""
    return sorted({m.group(0) for m in pattern.finditer(window)})
