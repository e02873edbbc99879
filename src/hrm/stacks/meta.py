"""The meta agent (KERNEL.semantic, 004 §1 S3): finds patterns that span stacks.

It is the only component that reads every stack, and it does so through a `CrossStackReader`
(role ``KERNEL.semantic``), so each read is in the governance ledger. From each stack it reads
the learning outcomes in the episodic trace, the turns in HO2m and the work orders in HO1m, and
looks for what no single stack can see:

* ``strategy_success`` / ``strategy_failure`` — the same input signature and strategy mostly
  succeeding (or mostly failing) in at least two stacks;
* ``shared_problem`` — problems with the same content word in their titles in several stacks;
* ``recurring_escalation`` — the same kind of escalation to the same strategy in several stacks;
* ``recurring_failure`` — work orders failing with the same error code (or degraded turns) in
  several stacks.

Each pattern is written to ``HOT/ledger/meta_learning.jsonl`` as a ``meta_pattern`` record with
its evidence (stack, ledger, seq, hash of each supporting record). The id is derived from what
the pattern is about, and a record is appended only when a pattern is new or its evidence
changed, so re-running the analysis over the same ledgers appends nothing. The latest record
of an id is the pattern.

Stacks consult the ledger through `meta_patterns_for`, which answers like the Learning layer's
own pattern search (`PatternMatch`), and through the attention stage ``ledger_query`` with
``source: meta`` (records carry ``id`` and ``text`` for that).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm._keywords import STOPWORDS
from hrm.home import HRMHome
from hrm.learning.patterns import MIN_SIMILARITY, signature_key, signature_similarity
from hrm.reasoning.types import PatternMatch
from hrm.stacks.visibility import ROLE_META, CrossStackReader
from hrm.storage.ledger import Ledger, LedgerRecord

if TYPE_CHECKING:
    from hrm.types import ProgressCallback

__all__ = [
    "META_PATTERN_KIND",
    "PATTERN_TYPES",
    "Evidence",
    "MetaAgent",
    "MetaPattern",
    "MetaReport",
    "meta_patterns_for",
    "read_meta_patterns",
]

logger = logging.getLogger(__name__)

META_PATTERN_KIND = "meta_pattern"
"""Record kind of a cross-stack pattern in the Meta Learning Ledger."""
PATTERN_TYPES = (
    "recurring_escalation",
    "recurring_failure",
    "shared_problem",
    "strategy_failure",
    "strategy_success",
)
MAX_EVIDENCE = 50
"""Evidence items kept in one record (the newest); ``evidence_count`` keeps the total."""

_STOPWORDS = STOPWORDS  # the package's one stop-word list (`hrm._keywords`)
_WORD = re.compile(r"[a-z][a-z0-9]{3,}")


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """One ledger record that supports a pattern."""

    stack: str
    ledger: str
    """``ho2m``, ``ho1m`` or ``episodic``."""
    seq: int
    hash: str

    def to_record(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"stack": self.stack, "ledger": self.ledger, "seq": self.seq, "hash": self.hash}


@dataclass(frozen=True, kw_only=True)
class MetaPattern:
    """A pattern that spans stacks, with the evidence for it."""

    pattern_id: str
    pattern_type: str
    key: dict[str, Any]
    """What the pattern is about (signature and strategy, keyword, escalation, error code)."""
    stacks: list[str]
    summary: str
    confidence: float
    evidence_count: int
    evidence: list[Evidence] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    """Per stack: observations, successes or failures behind the pattern."""

    @property
    def fingerprint(self) -> str:
        """Changes exactly when the pattern's content or evidence does."""
        body = json.dumps(
            [self.pattern_type, self.key, self.stacks, self.confidence, self.evidence_count,
             self.stats, [e.hash for e in self.evidence]],
            sort_keys=True, default=str,
        )
        return hashlib.sha256(body.encode()).hexdigest()

    def to_record(self) -> dict[str, Any]:
        """The ``meta_pattern`` record (``id``/``text``/``agent_class`` for attention stages)."""
        return {
            "id": self.pattern_id,
            "text": self.summary,
            "agent_class": None,
            "pattern_type": self.pattern_type,
            "key": self.key,
            "stacks": list(self.stacks),
            "confidence": self.confidence,
            "evidence_count": self.evidence_count,
            "evidence": [e.to_record() for e in self.evidence],
            "stats": self.stats,
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> MetaPattern:
        """Read a ``meta_pattern`` record back."""
        return cls(
            pattern_id=str(data["id"]),
            pattern_type=str(data.get("pattern_type", "")),
            key=dict(data.get("key") or {}),
            stacks=[str(s) for s in data.get("stacks") or []],
            summary=str(data.get("text", "")),
            confidence=float(data.get("confidence") or 0.0),
            evidence_count=int(data.get("evidence_count") or 0),
            evidence=[Evidence(stack=str(e["stack"]), ledger=str(e["ledger"]),
                               seq=int(e["seq"]), hash=str(e["hash"]))
                      for e in data.get("evidence") or []],
            stats=dict(data.get("stats") or {}),
        )


@dataclass(frozen=True, kw_only=True)
class MetaReport:
    """What one analysis run read, found and wrote."""

    stacks: list[str]
    records_read: int
    patterns: list[MetaPattern]
    written: list[str]
    """Ids of patterns appended this run (new or with changed evidence)."""
    unchanged: list[str]

    def to_record(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "stacks": list(self.stacks),
            "records_read": self.records_read,
            "patterns": [p.to_record() for p in self.patterns],
            "written": list(self.written),
            "unchanged": list(self.unchanged),
        }


@dataclass
class _Observations:
    """What was read, grouped by what a pattern could be about."""

    records_read: int = 0
    outcomes: dict[tuple[str, str], dict[str, list[tuple[bool, Evidence]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    signatures: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: dict[str, dict[str, list[tuple[str, Evidence]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    escalations: dict[tuple[str, str], dict[str, list[Evidence]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    failures: dict[str, dict[str, list[Evidence]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))


class MetaAgent:
    """Reads every stack, finds cross-stack patterns, writes them to the Meta Learning Ledger.

    Args:
        home: The home.
        min_stacks: How many stacks must show a pattern (at least 2: that is what "spans
            stacks" means).
    """

    def __init__(self, home: HRMHome, *, min_stacks: int = 2) -> None:
        self.home = home
        self.min_stacks = max(2, min_stacks)

    def analyze(self, *, progress: ProgressCallback | None = None) -> MetaReport:
        """Read, find and write; idempotent (an unchanged pattern is not written again).

        Args:
            progress: Called as ``progress(stacks_read, stacks_total)`` after each stack.
        """
        reader = CrossStackReader(self.home, ROLE_META, purpose="meta analysis")
        stacks = reader.stacks()
        observations = self.observe(reader, stacks, progress=progress)
        patterns = self.find_patterns(observations)
        existing = {p.pattern_id: p.fingerprint for p in read_meta_patterns(self.home)}
        fresh = [p for p in patterns if existing.get(p.pattern_id) != p.fingerprint]
        if fresh:
            with Ledger(self.home.meta_learning_ledger) as ledger:
                ledger.append_many([(META_PATTERN_KIND, p.to_record()) for p in fresh])
        written = [p.pattern_id for p in fresh]
        unchanged = [p.pattern_id for p in patterns if p.pattern_id not in set(written)]
        logger.info("meta analysis: %s stacks, %s patterns, %s written", len(stacks),
                    len(patterns), len(written))
        return MetaReport(stacks=stacks, records_read=observations.records_read,
                          patterns=patterns, written=written, unchanged=unchanged)

    # ── reading ────────────────────────────────────────────────────────────

    def observe(
        self,
        reader: CrossStackReader,
        stacks: Iterable[str],
        *,
        progress: ProgressCallback | None = None,
    ) -> _Observations:
        """Read every stack's ledgers once, keeping only what patterns are made of."""
        obs = _Observations()
        names = list(stacks)
        for done, stack in enumerate(names, start=1):
            for rec in reader.records(stack, "episodic"):
                obs.records_read += 1
                self._episode(obs, stack, rec)
            for rec in reader.records(stack, "ho2m"):
                obs.records_read += 1
                if rec.kind == "turn":
                    self._turn(obs, stack, rec)
            for rec in reader.records(stack, "ho1m"):
                obs.records_read += 1
                self._work_order(obs, stack, rec)
            if progress is not None:
                progress(done, len(names))
        return obs

    @staticmethod
    def _episode(obs: _Observations, stack: str, rec: LedgerRecord) -> None:
        if rec.data.get("entry_type") != "learning_outcome":
            return
        content = rec.data.get("content") or {}
        signal = content.get("signal") or {}
        strategy = (content.get("routing") or {}).get("strategy")
        if not isinstance(signal, dict) or not isinstance(strategy, str):
            return
        signature = {k: signal[k] for k in ("complexity", "stakes", "horizon", "domain")
                     if k in signal}
        key = signature_key(signature)
        obs.signatures[key] = signature
        evidence = Evidence(stack=stack, ledger="episodic", seq=rec.seq, hash=rec.hash)
        obs.outcomes[(key, strategy)][stack].append((bool(content.get("success")), evidence))

    @staticmethod
    def _turn(obs: _Observations, stack: str, rec: LedgerRecord) -> None:
        evidence = Evidence(stack=stack, ledger="ho2m", seq=rec.seq, hash=rec.hash)
        decision = rec.data.get("decision") or {}
        problem = decision.get("problem") if isinstance(decision, dict) else None
        if isinstance(problem, dict) and problem.get("id") and problem.get("title"):
            seen = obs.problems[stack]
            pid = str(problem["id"])
            if pid not in seen:
                seen[pid].append((str(problem["title"]), evidence))
        for esc in rec.data.get("escalation_events") or []:
            if isinstance(esc, dict):
                key = (str(esc.get("kind", "escalation")), str(esc.get("strategy", "")))
                obs.escalations[key][stack].append(evidence)

    @staticmethod
    def _work_order(obs: _Observations, stack: str, rec: LedgerRecord) -> None:
        evidence = Evidence(stack=stack, ledger="ho1m", seq=rec.seq, hash=rec.hash)
        if rec.kind == "work_order" and rec.data.get("outcome") not in ("ok", None):
            code = str(rec.data.get("error_code") or rec.data.get("outcome"))
            obs.failures[code][stack].append(evidence)
        elif rec.kind == "degradation":
            obs.failures[f"degraded:{rec.data.get('reason')}"][stack].append(evidence)

    # ── finding (pure over the observations) ───────────────────────────────

    def find_patterns(self, obs: _Observations) -> list[MetaPattern]:
        """Every pattern the observations support, sorted by type and id."""
        found = [*self._strategies(obs), *self._problems(obs), *self._escalations(obs),
                 *self._failures(obs)]
        return sorted(found, key=lambda p: (p.pattern_type, p.pattern_id))

    def _strategies(self, obs: _Observations) -> list[MetaPattern]:
        patterns: list[MetaPattern] = []
        for (key, strategy), per_stack in sorted(obs.outcomes.items()):
            stats = {s: {"observations": len(v), "successes": sum(ok for ok, _ in v)}
                     for s, v in sorted(per_stack.items())}
            good = [s for s, st in stats.items() if st["successes"] * 2 >= st["observations"]]
            bad = [s for s in stats if s not in good]
            signature = obs.signatures[key]
            for kind, stacks in (("strategy_success", good), ("strategy_failure", bad)):
                if len(stacks) < self.min_stacks:
                    continue
                total = sum(stats[s]["observations"] for s in stacks)
                wins = sum(stats[s]["successes"] for s in stacks)
                rate = wins / total if kind == "strategy_success" else 1 - wins / total
                evidence = [e for s in stacks for _, e in per_stack[s]]
                verb = "succeeds" if kind == "strategy_success" else "fails"
                summary = (f"strategy {strategy} {verb} for inputs like {_describe(signature)} "
                           f"in {len(stacks)} stacks ({', '.join(stacks)}; {total} outcomes)")
                patterns.append(_pattern(kind, {"signature": signature, "strategy": strategy},
                                         stacks, summary, round(rate, 4), evidence,
                                         {s: stats[s] for s in stacks}))
        return patterns

    def _problems(self, obs: _Observations) -> list[MetaPattern]:
        by_word: dict[str, dict[str, list[tuple[str, Evidence]]]] = defaultdict(
            lambda: defaultdict(list))
        for stack, problems in obs.problems.items():
            for items in problems.values():
                for title, proof in items:
                    for word in sorted(set(_WORD.findall(title.lower())) - _STOPWORDS):
                        by_word[word][stack].append((title, proof))
        patterns: list[MetaPattern] = []
        for word, per_stack in sorted(by_word.items()):
            if len(per_stack) < self.min_stacks:
                continue
            stacks = sorted(per_stack)
            titles = {s: sorted({t for t, _ in per_stack[s]})[:5] for s in stacks}
            evidence = [e for s in stacks for _, e in per_stack[s]]
            summary = (f"problems about '{word}' recur in {len(stacks)} stacks: "
                       + "; ".join(f"{s}: {', '.join(titles[s][:2])}" for s in stacks))
            patterns.append(_pattern("shared_problem", {"keyword": word}, stacks, summary[:500],
                                     round(min(1.0, len(stacks) / 3), 4), evidence,
                                     {s: {"problems": len(per_stack[s]), "titles": titles[s]}
                                      for s in stacks}))
        return patterns

    def _escalations(self, obs: _Observations) -> list[MetaPattern]:
        patterns: list[MetaPattern] = []
        for (kind, strategy), per_stack in sorted(obs.escalations.items()):
            if len(per_stack) < self.min_stacks:
                continue
            stacks = sorted(per_stack)
            items = [e for s in stacks for e in per_stack[s]]
            summary = (f"{kind} to strategy {strategy or '?'} recurs in {len(stacks)} stacks "
                       f"({len(items)} times)")
            patterns.append(_pattern("recurring_escalation", {"kind": kind, "strategy": strategy},
                                     stacks, summary, round(min(1.0, len(stacks) / 3), 4),
                                     items, {s: {"count": len(per_stack[s])} for s in stacks}))
        return patterns

    def _failures(self, obs: _Observations) -> list[MetaPattern]:
        patterns: list[MetaPattern] = []
        for code, per_stack in sorted(obs.failures.items()):
            if len(per_stack) < self.min_stacks:
                continue
            stacks = sorted(per_stack)
            items = [e for s in stacks for e in per_stack[s]]
            summary = (f"work orders fail with {code} in {len(stacks)} stacks "
                       f"({len(items)} times)")
            patterns.append(_pattern("recurring_failure", {"error_code": code}, stacks, summary,
                                     round(min(1.0, len(stacks) / 3), 4), items,
                                     {s: {"count": len(per_stack[s])} for s in stacks}))
        return patterns


def _pattern(kind: str, key: dict[str, Any], stacks: list[str], summary: str,
             confidence: float, evidence: list[Evidence], stats: dict[str, Any]) -> MetaPattern:
    digest = hashlib.sha256(
        json.dumps([kind, key], sort_keys=True, default=str).encode()).hexdigest()
    ordered = sorted(evidence, key=lambda e: (e.stack, e.ledger, e.seq))
    return MetaPattern(pattern_id=f"mp_{digest[:16]}", pattern_type=kind, key=key,
                       stacks=list(stacks), summary=summary, confidence=confidence,
                       evidence_count=len(ordered), evidence=ordered[-MAX_EVIDENCE:], stats=stats)


def _describe(signature: dict[str, Any]) -> str:
    domain = signature.get("domain")
    parts = [str(signature.get(k)) for k in ("complexity", "stakes", "horizon") if k in signature]
    if isinstance(domain, list) and domain:
        parts.append("/".join(str(d) for d in domain))
    return " ".join(parts) or "any input"


# ── consulting the ledger ──────────────────────────────────────────────────

_cache_lock = threading.Lock()
_cache: dict[Path, tuple[tuple[int, int], list[MetaPattern]]] = {}


def read_meta_patterns(home: HRMHome) -> list[MetaPattern]:
    """The current patterns (latest record per id), in the order they first appeared.

    Cached per file until the ledger changes (size and modification time), so a stack may call
    it every turn.
    """
    path = home.meta_learning_ledger
    try:
        stat = path.stat()
    except FileNotFoundError:
        return []
    stamp = (stat.st_size, stat.st_mtime_ns)
    with _cache_lock:
        cached = _cache.get(path)
        if cached is not None and cached[0] == stamp:
            return list(cached[1])
    latest: dict[str, MetaPattern] = {}
    with Ledger(path) as ledger:
        for rec in ledger.records():
            if rec.kind == META_PATTERN_KIND:
                latest[str(rec.data.get("id"))] = MetaPattern.from_record(rec.data)
    patterns = list(latest.values())
    with _cache_lock:
        _cache[path] = (stamp, patterns)
    return list(patterns)


def meta_patterns_for(
    home: HRMHome, signature: dict[str, Any], *, min_similarity: float = MIN_SIMILARITY
) -> list[PatternMatch]:
    """Cross-stack strategy patterns matching an input signature, best first.

    Answers in the Learning layer's shape, so a stack's router can chain it after its own
    pattern source. Only ``strategy_success`` patterns recommend anything.
    """
    matches: list[PatternMatch] = []
    for pattern in read_meta_patterns(home):
        if pattern.pattern_type != "strategy_success":
            continue
        similarity = signature_similarity(dict(pattern.key.get("signature") or {}), signature)
        if similarity < min_similarity:
            continue
        matches.append(PatternMatch(
            pattern_id=pattern.pattern_id,
            match_confidence=round(similarity * pattern.confidence, 4),
            recommended_strategy=str(pattern.key.get("strategy", "")),
            evidence_count=pattern.evidence_count,
        ))
    matches.sort(key=lambda m: (-m.match_confidence, -m.evidence_count, m.pattern_id))
    return matches
