"""Attention templates (004 §6): config-driven retrieval that assembles what a stack's model sees.

Templates live in the home's ``HOT/config/attention/*.json`` and are validated against
``HOT/schemas/attention_template.schema.json`` with jsonschema when a stack is created. A stack
never starts with an invalid template: the error names the template, the field and the rule.
A template byte-identical to one hrm ships, checked by a schema byte-identical to the shipped
one, is valid by construction (a test validates every shipped template): only edited or added
files pay for jsonschema, whose import alone is about a tenth of `hrm turn`'s start.

Binding (004 §6): a template applies to a stack when every selector it sets matches —
``applies_to.agent_class`` contains the stack's class kind (``ADMIN``, ``RESIDENT``) or its full
name (``RESIDENT:DoPeJar``); ``tier`` contains ``ho2`` (context assembly is HO2's retrieval);
``framework_id`` intersects the frameworks the stack is configured with. Templates are loaded,
not copied; which are bound is part of the stack's state (``active_templates`` in HO2m).

Each pipeline stage maps to a retrieval source; the `ContextAssembler` bounds the result by the
token budget and records what was retrieved, excluded, and why (``attention_state``).
"""

from __future__ import annotations

import calendar
import csv
import functools
import json
import logging
import os
import re
import stat as stat_module
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm._shipped import shipped_bytes, unchanged
from hrm.config import HRMConfig
from hrm.context import (
    AssembledContext,
    ContextAssembler,
    ContextItem,
    content_words,
    score_items,
)
from hrm.continuity.learnings_types import SearchQuery
from hrm.errors import HRMError
from hrm.governance.preferences import is_retracted
from hrm.home import HRMHome, parse_agent_class
from hrm.llm.types import estimate_tokens as estimate_model_tokens
from hrm.storage.redaction import MARKER, MIN_TEXT, Needles
from hrm.turn.state import RECENT_CLIP, shown
from hrm.types import HRMContext

if TYPE_CHECKING:
    from hrm.stacks.factory import CognitiveStack

__all__ = ["AttentionPipeline", "AttentionTemplate", "load_templates"]

logger = logging.getLogger(__name__)

TEMPLATE_DIR = Path("HOT") / "config" / "attention"
SCHEMA_PATH = Path("HOT") / "schemas" / "attention_template.schema.json"
STACK_TIER = "ho2"

_ROLE = {
    "ADMIN": (
        "You are hrm's ADMIN stack: you inspect and operate the system. Be precise, cite what "
        "you read, and report discrepancies plainly."
    ),
    "RESIDENT": (
        "You are a resident assistant. Be warm and brief; honour the person's stated "
        "preferences; mention what matters most first, then offer choices."
    ),
}


@dataclass(frozen=True)
class AttentionTemplate:
    """One validated attention template."""

    template_id: str
    applies_to: dict[str, list[str]]
    pipeline: list[dict[str, Any]]
    path: Path
    description: str = ""

    def applies(self, agent_class: str, frameworks: Iterable[str] = ()) -> bool:
        """Conjunctive selector match (004 §6 binding rule 2)."""
        kind, _ = parse_agent_class(agent_class)
        selectors = self.applies_to
        classes = selectors.get("agent_class")
        if classes is not None and kind not in classes and agent_class not in classes:
            return False
        tiers = selectors.get("tier")
        if tiers is not None and STACK_TIER not in tiers:
            return False
        wanted = selectors.get("framework_id")
        return wanted is None or bool(set(wanted) & set(frameworks))


def _schema(home: HRMHome) -> dict[str, Any]:
    path = home.root / SCHEMA_PATH
    try:
        schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise HRMError.validation_failed(
            f"Attention template schema missing at {path}; run `hrm init --force`", path=str(path)
        ) from exc
    except json.JSONDecodeError as exc:
        raise HRMError.parse_error(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from exc
    return schema


def load_templates(home: HRMHome) -> list[AttentionTemplate]:
    """Every template in the home, validated; the first invalid one raises (fail closed).

    Raises:
        HRMError: ``PARSE_ERROR`` for broken JSON, ``VALIDATION_FAILED`` naming the template,
            the field path and the rule that failed.
    """
    templates: list[AttentionTemplate] = []
    directory = home.root / TEMPLATE_DIR
    if not directory.is_dir():
        return templates
    schema_shipped = unchanged(home.root / SCHEMA_PATH, SCHEMA_PATH)
    validator: Any = None
    for path in sorted(directory.glob("*.json")):
        raw = path.read_bytes()
        try:
            data = json.loads(raw.decode("utf-8"))
        except json.JSONDecodeError as exc:
            raise HRMError.parse_error(
                f"invalid JSON in attention template: {exc.msg}", path=path, line=exc.lineno
            ) from exc
        except UnicodeDecodeError as exc:
            raise HRMError.parse_error(
                f"attention template is not UTF-8 text: {exc.reason} at byte {exc.start}",
                path=path,
            ) from exc
        if schema_shipped and raw == shipped_bytes(TEMPLATE_DIR / path.name):
            errors = []
        else:
            if validator is None:
                import jsonschema

                validator = jsonschema.Draft202012Validator(_schema(home))
            errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "(root)"
            name = data.get("template_id", path.stem) if isinstance(data, dict) else path.stem
            raise HRMError.validation_failed(
                f"Attention template {name!r} ({path}) is invalid at '{where}': "
                f"{first.message} (rule: {first.validator})",
                template=name,
                field=where,
                rule=str(first.validator),
                path=str(path),
            )
        templates.append(
            AttentionTemplate(
                template_id=data["template_id"],
                applies_to={k: list(v) for k, v in data.get("applies_to", {}).items()},
                pipeline=list(data["pipeline"]),
                path=path,
                description=data.get("description", ""),
            )
        )
    ids = [t.template_id for t in templates]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise HRMError.validation_failed(
            f"Attention template id(s) {', '.join(dupes)} defined more than once in {directory}",
            field="template_id",
        )
    return templates


@dataclass
class AttentionPipeline:
    """The templates bound to one stack, run as retrieval stages each turn."""

    agent_class: str
    templates: list[AttentionTemplate]
    budget_tokens: int
    stack: CognitiveStack | None = None
    last_failures: list[str] = field(default_factory=list)
    _stages: tuple[list[int], list[dict[str, Any]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """The merged stages and the templates they came from: merged once, not every turn."""
    flow_cache: tuple[list[int], Any] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """The 004 §9 flow the bound templates call for, and the templates it was chosen for
    (`hrm.stacks.flows.flow_for`)."""

    @classmethod
    def bind(cls, home: HRMHome, agent_class: str, config: HRMConfig) -> AttentionPipeline:
        """Load, validate and bind the templates for `agent_class` (004 §6 binding rule 1)."""
        templates = [t for t in load_templates(home) if t.applies(agent_class)]
        return cls(agent_class, templates, config.context_token_budget)

    def attach(self, stack: CognitiveStack) -> None:
        self.stack = stack

    @property
    def template_ids(self) -> list[str]:
        return [t.template_id for t in self.templates]

    def stages(self) -> list[dict[str, Any]]:
        """The bound templates' stages in order, identical stages once (copies)."""
        if self._stages is None or self._stages[0] != [id(t) for t in self.templates]:
            self._stages = ([id(t) for t in self.templates], self._merge_stages())
        return [dict(stage) for stage in self._stages[1]]

    def _merge_stages(self) -> list[dict[str, Any]]:
        seen: set[str] = set()
        out: list[dict[str, Any]] = []
        for template in self.templates:
            for stage in template.pipeline:
                key = json.dumps([stage.get("type"), stage.get("config", {})], sort_keys=True)
                if key in seen:
                    continue
                seen.add(key)
                out.append({**stage, "template_id": template.template_id})
        if not out:
            out = [
                {"stage": s, "type": s, "config": {}, "template_id": "(built-in)"}
                for s in ("canon", "working_set", "recent_turns")
            ]
        return out

    def assemble(self, text: str, ctx: HRMContext, problem: Any) -> AssembledContext:
        """Run every stage and bound the result (the stack's attention for this turn)."""
        if self.stack is None:
            raise HRMError.internal("attention pipeline used before being attached to a stack")
        kind, _ = _agent_kind(self.agent_class)
        runner = _StageRunner(self.stack, ctx, problem)
        sources: list[tuple[str, Callable[[str], Iterable[ContextItem]]]] = []
        stages = self.stages()
        for stage in stages:
            stage_type = stage.get("type", "")
            fn = runner.source(stage_type, stage.get("config", {}))
            sources.append((f"{stage.get('template_id')}:{stage.get('stage', stage_type)}", fn))
        forgotten = _forgotten(self.stack.forgotten())
        if forgotten is not None:
            sources = [(name, _masking(fn, forgotten)) for name, fn in sources]
        failures: list[str] = []
        budget = fitted_budget(self.stack, self.budget_tokens, text)
        assembler = ContextAssembler(_ROLE[kind], budget)
        assembled = assembler.assemble(text, sources, failures=failures)
        assembled.extra = {
            "templates": self.template_ids,
            "stages": [s.get("stage", s.get("type")) for s in stages],
            "tiers": runner.tiers,
            "failures": failures,
        }
        self.last_failures = failures
        return assembled


@dataclass(frozen=True)
class _Forgotten:
    """What the person asked to forget, as context assembly finds it in stored text: each
    statement in any case and as a key made of it (`Needles`), and the names it holds as
    words of their own — "Sintra, since you live in Lisbon" quotes no statement but still
    says where the person lives."""

    needles: Needles | None
    names: re.Pattern[str] | None

    def search(self, text: str) -> bool:
        return bool(
            (self.needles is not None and self.needles.pattern.search(text))
            or (self.names is not None and self.names.search(text))
        )

    def sub(self, text: str) -> str:
        if self.needles is not None:
            text = self.needles.sub(text)
        return text if self.names is None else self.names.sub(MARKER, text)


_NAME = re.compile(r"(?<!^)(?<![.!?] )\b[A-Z][\w'-]*[a-z][\w'-]*")
"""A capitalised word that does not open a sentence: a name ("Lisbon", "Carla", "O'Neill")."""


@functools.lru_cache(maxsize=8)
def _forgotten(texts: tuple[str, ...]) -> _Forgotten | None:
    """The matcher of `texts` (the stack's `forgotten`); None when nothing was forgotten, or
    only texts too short to match safely. Month and day names are not private: kept."""
    usable = tuple(text for text in texts if len("".join(text.split())) >= MIN_TEXT)
    if not usable:
        return None
    names = {
        name for text in usable for name in _NAME.findall(text)
        if len(name) >= MIN_TEXT and name not in _CALENDAR_WORDS
    }
    words = sorted(names | {value for text in usable for value in _values_of(text)},
                   key=len, reverse=True)
    return _Forgotten(
        Needles(usable),
        re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, words)) + r")(?![\w-])",
                   re.IGNORECASE) if words else None,
    )


_COPULA = re.compile(
    r"\b(?:is|are|am|was|were|prefers?|likes?|loves?|hates?|wants?|avoids?)\b(?:\s+to\b)?"
    r"|(?<=\w)'(?:s|m|re)\b",
    re.IGNORECASE,
)
_BEING = frozenset({"is", "are", "am", "was", "were", "s", "m", "re"})
"""Of `_COPULA`'s words, those that say what something is: its value's last word is masked
too ("peanuts"); a preference's ("answers" of "I like to get short answers") is too common."""
_VALUE_LEAD = re.compile(
    r"^(?:(?:on|at|in|to|the|a|an|my|our|his|her|their|called|named|now|still)\s+)+",
    re.IGNORECASE,
)
_WITH_DIGIT = re.compile(r"[\w-]*\d[\w-]*")


def _values_of(statement: str) -> set[str]:
    """What a forgotten statement said its subject is, or what it prefers — "lemon drizzle" of
    "her favourite cake is lemon drizzle", "metric units" of "I prefer metric units",
    "allergic to peanuts" (and "peanuts") of "I'm allergic to peanuts" — and every token with a
    digit in it ("4512", "db-prod-7"). An answer that repeated the fact in
    other words ("Since her favourite is lemon drizzle, …", "Your locker code is 4512.") says
    it as surely as the statement (D467)."""
    found = {token for token in _WITH_DIGIT.findall(statement) if len(token) >= MIN_TEXT}
    copulas = list(_COPULA.finditer(statement))
    if copulas:
        value = _VALUE_LEAD.sub("", statement[copulas[-1].end():].strip(" .,;:!?\"'"))
        if len(value) >= MIN_TEXT + 1 and value.lower() not in _NOT_PRIVATE \
                and value not in _CALENDAR_WORDS and len(value.split()) <= 6:
            found.add(value)
            last = value.split()[-1]
            being = copulas[-1].group().lower().lstrip("'") in _BEING
            if being and len(last) >= 5 and last.isalpha():  # "peanuts" of "allergic to …"
                found.add(last)
    return found


_NOT_PRIVATE = frozenset({"true", "false", "fine", "good", "done", "here", "there", "this",
                          "that", "it", "ok", "okay", "right", "wrong", "yes", "none"})
"""Values too common to be a private detail: masking them would blank ordinary talk."""


_CALENDAR_WORDS = frozenset(calendar.month_name[1:]).union(calendar.day_name)
"""Month and day names (in the C locale's English): capitalised, but no one's private detail."""


def _masking(
    source: Callable[[str], Iterable[ContextItem]], forgotten: _Forgotten
) -> Callable[[str], Iterable[ContextItem]]:
    """`source` with what was forgotten replaced by the redaction marker in every item it gives.

    A forget retracts the canon entry, but the conversation that said it ("Remember that I
    live in Lisbon. What's a good day trip?") and the answer that quoted it were still shown
    to the model next turn, which then answered "where do I live?" with Lisbon (D450).
    """

    def masked(text: str) -> Iterable[ContextItem]:
        items = []
        for item in source(text):
            exchange = item.exchange
            if forgotten.search(item.text) or (
                exchange is not None and forgotten.search(f"{exchange[0]}\n{exchange[1]}")
            ):
                items.append(replace(
                    item,
                    text=forgotten.sub(item.text),
                    exchange=None if exchange is None else (forgotten.sub(exchange[0]),
                                                            forgotten.sub(exchange[1])),
                ))  # fmt: skip
            else:
                items.append(item)
        return items

    return masked


CONTEXT_MARGIN = 1.85
"""How far a model's tokenizer may count above the assembler's estimate (four characters a
token): SmolLM2 counted the ADMIN stack's registry lines, dense with ids, 1.82 times it."""
INPUT_MARGIN = 1.35
"""The same for the input, estimated by `hrm.llm.types.estimate_tokens` (at most 1.33 times
under SmolLM2's count, chat template included)."""


def model_window(stack: CognitiveStack) -> int | None:
    """The model's context window in tokens, when it is small enough to matter.

    Only the ``local`` adapter says (``context_window``, its ``n_ctx``): a hosted model's
    window is a hundred times the context budget, but SmolLM2's 2,048 tokens are not.
    """
    window = getattr(stack.gateway.adapter, "context_window", None)
    return window if isinstance(window, int) and window > 0 else None


def input_chars(stack: CognitiveStack, text: str) -> int | None:
    """How much of the input a small-window model is shown, in characters (``None``: all).

    Half the window, counted in the model's tokens (a pasted log of timestamps and ids runs
    at two or three characters a token, not four): the context and the answer share the rest.
    """
    window = model_window(stack)
    if window is None:
        return None
    allowed = window / 2 / INPUT_MARGIN
    shown = min(len(text), window * 16)  # no tokenizer packs more: a megabyte is not read
    estimated = estimate_model_tokens(text[:shown])
    while estimated > allowed and shown > 0:  # density varies along a text: shrink to fit
        shown = min(shown - 1, int(shown * allowed / estimated))
        estimated = estimate_model_tokens(text[:shown])
    return shown


def fitted_budget(stack: CognitiveStack, budget: int, text: str) -> int:
    """The context budget, narrowed so the prompt, the input and an answer fit the window.

    Without this, a long input (a pasted log) or a long canon sent the local model more than
    it accepts and the turn failed with ``token_limit``; now the assembler drops the
    lowest-priority items and records each exclusion as over budget. A quarter of the window
    (at most ``llm.max_tokens``) stays free for the answer; the input counts as the model will
    see it (`input_chars`).
    """
    window = model_window(stack)
    if window is None:
        return budget
    answer = min(stack.config.llm.max_tokens, window // 4)
    shown = input_chars(stack, text)
    question = estimate_model_tokens(text[:shown]) * INPUT_MARGIN
    room = int((window - answer - question) / CONTEXT_MARGIN)
    return max(_MIN_BUDGET, min(budget, room))


_MIN_BUDGET = 64
"""The smallest context budget: the stack's role and the start of the canon."""


class _StageRunner:
    """Maps stage types to retrieval functions over ONE stack's own state."""

    def __init__(self, stack: CognitiveStack, ctx: HRMContext, problem: Any) -> None:
        self.stack = stack
        self.ctx = ctx
        self.problem = problem
        self.tiers = ["hot", "ho2", "ho1"]

    def source(
        self, stage_type: str, config: dict[str, Any]
    ) -> Callable[[str], Iterable[ContextItem]]:
        method = _STAGE_METHODS.get(stage_type)
        if method is None:
            raise HRMError.validation_failed(f"Unknown attention stage type {stage_type!r}")
        fn: Callable[[str, dict[str, Any]], Iterable[ContextItem]] = getattr(self, method)
        return lambda text: fn(text, config)

    # ── stages ─────────────────────────────────────────────────────────────

    def _tier_select(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        self.tiers = [t for t in config.get("tiers", self.tiers) if t in ("hot", "ho2", "ho1")]
        return []

    def _registry_query(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        """The registry's rows that bear on the input; every row when it asks about the registry.

        ADMIN's template scans the framework registry for system inspection (004 §6). Every row
        in every prompt put "framework_id=FMWK-008A, name=Work Order Protocol, …" before a
        question about a failing ETL job, and the local model answered with those ids (D65).
        """
        if "hot" not in self.tiers:
            return []
        target = str(config.get("target", "frameworks_registry.csv"))
        found = _registry_file_recent(_registries_dir(self.stack.home), target)
        if found is None:
            return [ContextItem("registry", target, f"Registry {target}: not found", 0.6)]
        rows = _registry_items(*found, target, int(config.get("limit", 50)))
        asked = content_words(text)
        if not asked.isdisjoint(_registry_names(target)):
            return list(rows.items)
        return [item for item, ids, named in zip(rows.items, rows.ids, rows.named, strict=True)
                if _names_row(asked, ids, named)]

    def _horizontal_search(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        """Recent episodes and open loops of THIS stack (HO2m)."""
        if "ho2" not in self.tiers:
            return []
        limit = int(config.get("limit", 10))
        items: list[ContextItem] = []
        registry = self.stack.focus.problem_registry
        from hrm.governance.problems import ProblemStatus

        for status in (ProblemStatus.ACTIVE, ProblemStatus.PAUSED, ProblemStatus.QUEUED):
            for problem in registry.list(status)[:limit]:
                items.append(
                    ContextItem(
                        "open_loop",
                        problem.id,
                        f"{problem.title} ({status.value}, priority {problem.priority})",
                        0.75 if status is ProblemStatus.ACTIVE else 0.65,
                    )
                )
        # The newest episodes that say what happened: receipts of writes and learning outcomes
        # (one a turn) are bookkeeping, left out by the query rather than after it (D394).
        for episode in self.stack.bus.episodic.query(limit=limit, events_only=True):
            summary = json.dumps(episode.content, ensure_ascii=False)[:200]
            items.append(
                ContextItem("episode", episode.id, f"{episode.entry_type}: {summary}", 0.4)
            )
        return items

    def _ledger_query(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        """Salience anchors and other HO3 records (governance or meta ledger)."""
        source = str(config.get("source", "ho3m"))
        if "hot" not in self.tiers and source in ("ho3m", "governance", "meta"):
            return []
        home = self.stack.home
        path = home.meta_learning_ledger if source == "meta" else home.governance_ledger
        wanted = str(config.get("filter", "salience_anchors"))
        kind = {"salience_anchors": "salience_anchor", "meta_patterns": "meta_pattern"}.get(
            wanted, wanted
        )
        from hrm.stacks.anchors import read_anchors

        items: list[ContextItem] = []
        for anchor in read_anchors(path, kind=kind, agent_class=self.stack.agent_class):
            items.append(
                ContextItem(
                    "salience",
                    anchor["id"],
                    anchor["text"],
                    0.9 if anchor.get("must_mention") else 0.7,
                    always=bool(anchor.get("must_mention")),
                )
            )
        return items[: int(config.get("limit", 10))]

    def _canon(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        return _canon_items(self.stack.bus.shared.latest())

    def _memory_search(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        canon = self.stack.canon()
        # The model is shown what a fact says, not its key: a key made of the first wording
        # ("fact.the-release-is-on-the-14th") still names the old value once corrected (D500).
        refs = [
            (k, v if isinstance(v, str) else f"{k}: {v}") for k, v in canon.items()
            if not k.startswith("preference.") and not is_retracted(v)
        ]
        # A handful of facts is all shown, the ones sharing words with the input first: words
        # cannot tell that "what did I tell you about my diet?" asks for "I'm allergic to
        # peanuts" (D474). A larger canon shows only what shares a word.
        limit = int(config.get("limit", 8))
        floor = 0.0 if len(refs) <= limit else 0.01
        items = score_items("shared_reference", text, refs, base=0.5, floor=floor, limit=limit)
        items += list(self._working_set(text, config))
        items += list(self._patterns(text, config))
        return items

    def _working_set(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        # The working set of the problem the input went to (the one it was queued as, too),
        # as the recent turns are (D80).
        problem_id = self.ctx.topic_id or (self.problem.id if self.problem is not None else None)
        if problem_id is None:
            return []
        ws = self.stack.bus.working.get(problem_id)
        if ws is None:
            return []
        entries: list[tuple[str, str]] = []
        for key, value in ws.constraints.items():
            entries.append((f"constraint.{key}", f"constraint {key}: {value}"))
        for key, value in ws.partial_artifacts.items():
            entries.append((f"artifact.{key}", f"{key}: {value}"))
        for i, question in enumerate(ws.open_questions):
            entries.append((f"question.{i}", f"open question: {question}"))
        for i, decision in enumerate(ws.local_decisions):
            said = decision.get("decision", decision) if isinstance(decision, dict) else decision
            entries.append((f"decision.{i}", f"decided: {said}"))
        return score_items("working_set", text, entries, base=0.6, limit=12)

    def _patterns(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        items: list[ContextItem] = []
        for pattern in self.stack.patterns.summaries(limit=5):
            desc = (
                f"inputs like {pattern.signature_text} went well with strategy "
                f"{pattern.strategy} (confidence {pattern.confidence:.2f})"
            )
            items.append(ContextItem("pattern", pattern.id, desc, 0.35))
        return items

    def _learnings_search(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        if not text.strip():
            return []
        limit = int(config.get("limit", 5))
        results = self.stack.learnings().search_memories(
            SearchQuery(text=text[:2000], limit=limit), budget_ms=int(config.get("budget_ms", 300))
        )
        return [
            ContextItem(
                "learning",
                r.learning.id,
                # the type's name as the hooks show it: "[CODEBASE_PATTERN]", not the enum's
                f"[{getattr(r.learning.type, 'value', r.learning.type)}] {r.learning.content}",
                0.3 + 0.4 * r.relevance_score,
            )
            for r in results.results
        ]

    def _recent_turns(self, text: str, config: dict[str, Any]) -> Iterable[ContextItem]:
        limit = int(config.get("limit", 4))
        decisions = self.ctx.recent_decisions or [{}] * len(self.ctx.recent_inputs)
        topic = self.ctx.topic_id
        window = zip(self.ctx.recent_inputs, self.ctx.recent_outputs, decisions, strict=False)
        earlier = ((t["input"], t["output"], t) for t in self.ctx.topic_history)
        exchanges = [
            (said, answered, decision.get("problem"))
            for said, answered, decision in (*earlier, *window)
            # hrm's own words are not the model's; an empty side is no message (a hosted API
            # refuses one)
            if shown(decision) and said.strip() and answered.strip()
        ]
        # The turns on the problem at hand (D80): back on the offsite after an outage, the
        # model sees the offsite's turns, not the outage's; a turn about no problem (a thanks)
        # belongs to every one. A problem new with this input has no turns yet: it is shown
        # the last exchange, which the input follows in time — arbitration may have taken
        # "Write the migration for the invoices table" for a task of its own.
        fresh = topic is not None and all(problem != topic for _, _, problem in exchanges)
        pairs = [
            (said, answered)
            for i, (said, answered, problem) in enumerate(exchanges)
            if topic is None or problem in (topic, None) or (fresh and i == len(exchanges) - 1)
        ][-limit:]
        items = []
        for i, (said, answered) in enumerate(pairs):
            recency = (i + 1) / max(1, len(pairs))
            # The last exchange is what a follow-up ("shorter", "now add tests") is about: it
            # is shown as kept (RECENT_CLIP), the earlier ones as their gist.
            if i == len(pairs) - 1:
                exchange = (_clipped(said, RECENT_CLIP), _clipped(answered, RECENT_CLIP))
            else:
                exchange = (_gist(said, _EARLIER_CLIP), _gist(answered, _EARLIER_CLIP))
            items.append(
                ContextItem(
                    "recent_turn",
                    f"turn-{i}",
                    f"person: {exchange[0]} / assistant: {exchange[1]}",
                    0.2 + 0.3 * recency,
                    sequence=i,
                    exchange=exchange,
                )
            )
        return items


_EARLIER_CLIP = 400
"""Characters of each side of an exchange before the last one that the model is shown."""


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _gist(text: str, limit: int) -> str:
    """The start of an earlier exchange's side: at most `limit` characters, ending at a word.

    Unmarked, and cut where a word ends, so its tokens begin exactly as they did when the
    exchange was the last one and shown whole: a model server's prompt cache, which holds
    that longer text, then still matches everything after it (D230). A marker at the cut
    ("…") was a token the cache never saw and made it evaluate the rest of the conversation
    again.
    """
    if len(text) <= limit:
        return text
    for end in range(limit, limit * 3 // 4, -1):
        if text[end].isspace():
            return text[:end].rstrip()
    return text[:limit]


_STAGE_METHODS = {
    "tier_select": "_tier_select",
    "registry_query": "_registry_query",
    "horizontal_search": "_horizontal_search",
    "ledger_query": "_ledger_query",
    "memory_search": "_memory_search",
    "learnings_search": "_learnings_search",
    "canon": "_canon",
    "working_set": "_working_set",
    "recent_turns": "_recent_turns",
    "patterns": "_patterns",
}
"""Each stage type and the `_StageRunner` method that retrieves for it."""


def _canon_items(latest: tuple[tuple[str, Any], ...]) -> tuple[ContextItem, ...]:
    """The canon's preferences as always-kept items, built once per state of the canon.

    Keyed by the identity of the store's cached `latest` tuple, which stays the same object
    until the canon changes (its values need not be hashable, and hashing a large canon every
    turn is what this avoids): a canon of hundreds is not rebuilt into items on every turn.
    """
    entry = _CANON_ITEMS.get(id(latest))
    if entry is not None and entry[0] is latest:
        return entry[1]
    items = tuple(
        ContextItem("canon", key, str(value), 1.0, always=True)
        for key, value in latest
        if key.startswith("preference.") and not is_retracted(value)
    )
    if len(_CANON_ITEMS) >= 16:
        _CANON_ITEMS.clear()
    _CANON_ITEMS[id(latest)] = (latest, items)
    return items


_CANON_ITEMS: dict[int, tuple[tuple[tuple[str, Any], ...], tuple[ContextItem, ...]]] = {}
"""`_canon_items` by the id of the tuple they were built from (kept alive here, so the id
cannot be reused while its entry stands)."""


@functools.lru_cache(maxsize=64)
def _agent_kind(agent_class: str) -> tuple[str, str | None]:
    """`parse_agent_class`, once per agent class (a stack assembles every turn)."""
    return parse_agent_class(agent_class)


_REGISTRY_CACHE: dict[tuple[Path, str, int], tuple[tuple[int, int], _RegistryRows]] = {}


@dataclass(frozen=True)
class _RegistryRows:
    items: tuple[ContextItem, ...]
    words: tuple[frozenset[str], ...]
    """Each row's content words that set it apart: from its values only (a column named
    "version" must not make every question about a version bear on every row), without the
    words every row has ("hot" and "frameworks" of each "HOT/frameworks/…" path)."""

    @functools.cached_property
    def ids(self) -> tuple[frozenset[str], ...]:
        """Each row's words holding a digit ("fmwk-009"): naming one names the row."""
        return tuple(frozenset(w for w in words if any(c.isdigit() for c in w))
                     for words in self.words)

    @functools.cached_property
    def named(self) -> tuple[frozenset[str], ...]:
        """Each row's other words, half of which name it."""
        return tuple(words - ids for words, ids in zip(self.words, self.ids, strict=True))


def _names_row(asked: frozenset[str], ids: frozenset[str], named: frozenset[str]) -> bool:
    """Does the input name this row: by an id ("FMWK-009"), or by half its other words?

    "How does the tier boundary work?" names "Tier Boundary", not "Work Order Protocol":
    one word of three, and a common one, is no reference to a row. A row's `ids` and `named`
    words are worked out once per registry file (`_RegistryRows`), not every turn.
    """
    if not asked.isdisjoint(ids):
        return True
    return bool(named) and 2 * len(asked & named) >= len(named)


def _distinguishing(rows: list[frozenset[str]]) -> tuple[frozenset[str], ...]:
    if len(rows) < 2:
        return tuple(rows)
    common = frozenset.intersection(*rows)
    return tuple(words - common for words in rows)


def _registry_items(path: Path, stat: os.stat_result, target: str, limit: int) -> _RegistryRows:
    """A registry's first rows as context items, re-read only when the file changes.

    Keyed by the file's size and mtime; the items are frozen, so every turn shares them.
    """
    stamp = (stat.st_size, stat.st_mtime_ns)
    key = (path, target, limit)
    cached = _REGISTRY_CACHE.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:limit]
    found = _RegistryRows(
        items=tuple(
            ContextItem(
                "registry", f"{target}#{i}", ", ".join(f"{k}={v}" for k, v in row.items() if v),
                0.7,
            )
            for i, row in enumerate(rows)
        ),
        words=_distinguishing([content_words(" ".join(str(v) for v in row.values() if v))
                               for row in rows]),
    )
    _REGISTRY_CACHE[key] = (stamp, found)
    return found


@functools.lru_cache(maxsize=16)
def _registry_names(target: str) -> frozenset[str]:
    """Words that ask about the registry itself: its file name's words and their singulars
    ("frameworks_registry.csv": frameworks, framework, registry, registries)."""
    stem = target.rsplit(".", 1)[0].lower()
    words = {w for w in stem.replace("-", "_").split("_") if len(w) >= 3}
    words |= {w[:-1] for w in words if w.endswith("s")} | {"registry", "registries"}
    return frozenset(words)


REGISTRY_RECHECK_S = 1.0
"""How long a registry file's status is trusted before it is looked up again."""
_FOUND: dict[tuple[Path, str], tuple[float, tuple[Path, os.stat_result] | None]] = {}


def _registry_file_recent(root: Path, name: str) -> tuple[Path, os.stat_result] | None:
    """`_registry_file`, looked up at most once a second per file.

    Every turn reads the registry and the lookup is a system call; registries change by hand,
    rarely, so an edit shows in a running process's context within a second (a new process
    sees it at once) instead of costing a system call a turn.
    """
    key = (root, name)
    now = time.monotonic()
    known = _FOUND.get(key)
    if known is not None and now - known[0] < REGISTRY_RECHECK_S:
        return known[1]
    found = _registry_file(root, name)
    _FOUND[key] = (now, found)
    return found


def _registry_file(root: Path, name: str) -> tuple[Path, os.stat_result] | None:
    """The registry file `name` inside `root` and its status, or None when there is none.

    A plain file named directly in `root` cannot lead outside it, and one ``lstat`` shows that
    it is one: the common case costs one system call a turn instead of resolving the whole path.
    Anything else (a subpath, a symbolic link) is resolved and checked by `_inside`.
    """
    if name not in ("", ".", "..") and "/" not in name and os.sep not in name:
        direct = _joined(root, name)
        try:
            info = os.lstat(direct)
        except OSError:
            return None
        if stat_module.S_ISREG(info.st_mode):
            return direct, info
        if not stat_module.S_ISLNK(info.st_mode):
            return None
    path = _inside(root, name)
    if path is None:
        return None
    try:
        info = path.stat()
    except OSError:
        return None
    return (path, info) if stat_module.S_ISREG(info.st_mode) else None


@functools.lru_cache(maxsize=16)
def _registries_dir(home: HRMHome) -> Path:
    """`home.registries_dir`, built once per home (homes are frozen values)."""
    return home.registries_dir


@functools.lru_cache(maxsize=64)
def _joined(root: Path, name: str) -> Path:
    """`root / name`, built once: pathlib joins cost more than the ``lstat`` they feed."""
    return root / name


def _inside(root: Path, name: str) -> Path | None:
    """`root / name` if it stays inside `root` (no traversal, no symlink escape).

    The candidate is resolved every time (a link inside may change); the root, a directory of
    the home, is resolved once per process.
    """
    candidate = (root / name).resolve()
    try:
        candidate.relative_to(_resolved(root))
    except ValueError:
        return None
    return candidate


@functools.lru_cache(maxsize=64)
def _resolved(root: Path) -> Path:
    return root.resolve()
