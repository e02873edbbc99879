"""Context assembly: what a model sees in a turn, bounded by a token budget, with its audit trail.

Before a model is called, the context is assembled from sources in priority order — explicit
preferences (canon) above all, then the rest of the Shared Reference that bears on the input,
the active problem's working set, learned patterns, retrieved learnings and episodes, and the
recent turns. Each source yields `ContextItem`s; the assembler keeps items greedily by priority
until the budget is spent, and records every inclusion and exclusion with a reason. That record is
the ``attention_state`` of the stack's decision ledger (004 §4, §6).

Attention templates (004 §6) drive the same machinery: each pipeline stage of a template maps to
a source here, so a template changes *what* is retrieved without changing *how* it is bounded and
recorded.

Everything a source offers is stored text — canon, learnings, the working set, episodes,
registry rows — and passes the injection screening before the budget sees it (D141): a flagged
item is quoted as untrusted data or left out, and the decision is part of the audit record. The
conversation's own exchanges (what the person said and what the assistant answered) are not
screened: they reach the model as the messages they were.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hrm._text import shorten
from hrm.runtime.injection import guard, screen

__all__ = [
    "AssembledContext",
    "ContextAssembler",
    "ContextItem",
    "ContextSource",
    "content_words",
    "echoes_reminder",
    "estimate_tokens",
    "preference_reminder",
    "relevance",
]

_WORD = re.compile(r"[A-Za-z0-9_]{3,}")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "that",
        "this",
        "with",
        "from",
        "have",
        "what",
        "when",
        "where",
        "which",
        "your",
        "you",
        "are",
        "was",
        "were",
        "will",
        "would",
        "could",
        "should",
        "about",
        "into",
        "them",
        "they",
        "then",
        "than",
        "there",
        "their",
        "been",
        "being",
        "also",
        "just",
        "like",
        "does",
        "doing",
        "done",
        "can",
        "not",
        "but",
        "all",
        "any",
        "how",
        "why",
        "who",
        "its",
        "it's",
        "our",
        "out",
        "use",
        "using",
    ]
)


def estimate_tokens(text: str) -> int:
    """A cheap, provider-independent token estimate (about four characters per token)."""
    return max(1, (len(text) + 3) // 4)


def content_words(text: str) -> frozenset[str]:
    """The lower-cased words of three or more letters of `text`, without stop words."""
    return frozenset(w for w in (m.lower() for m in _WORD.findall(text[:20_000])) if w not in _STOP)


def relevance(query_words: frozenset[str], text: str) -> float:
    """Share of the query's content words found in `text` (0..1)."""
    if not query_words:
        return 0.0
    return len(query_words & content_words(text)) / len(query_words)


@dataclass(frozen=True)
class ContextItem:
    """One candidate piece of context."""

    source: str
    """Which source produced it: canon, shared_reference, working_set, pattern, learning, episode,
    recent_turn, registry, ledger, open_loop, …"""
    key: str
    text: str
    priority: float
    """Higher is kept first; explicit preferences sit at 1.0."""
    always: bool = False
    """Kept even when it alone exceeds the remaining budget (truncated instead)."""
    sequence: int | None = None
    """An exchange's place in time: the budget keeps the highest priority first, the
    conversation is shown oldest first."""
    exchange: tuple[str, str] | None = None
    """What the person said and what the assistant answered: such an item reaches the model
    as those two messages before the input (`AssembledContext.conversation`), as a chat model
    is trained to read a conversation, not as a line of the system prompt."""
    untrusted: bool = False
    """The injection screening flagged it: `text` is its quotation as data (D141), never
    restated as the person's words (`preference_reminder`)."""


@dataclass
class AssembledContext:
    """The context a model sees, and what was left out and why."""

    system: str
    """The system prompt: role, then the kept context items grouped by source — the sections
    that stay the same from turn to turn first (`stable`), then what was retrieved for this
    input (`retrieved`)."""
    items: list[ContextItem]
    tokens: int
    budget: int
    included: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    """What the caller adds to the audit record (bound templates, stages, tiers)."""
    conversation: list[tuple[str, str]] = field(default_factory=list)
    """The kept exchanges (person, assistant), oldest first: the messages before the input."""
    firewall: list[dict[str, Any]] = field(default_factory=list)
    """The injection screening's decisions on flagged items (quoted or left out), each with
    source, key, action, score, families and findings (D141)."""
    stable: str = ""
    """The start of `system` that changes only when the person or governance changes it: the
    role, the canon and the salience anchors. Byte-identical between the turns of a session
    while they do not change, so a model server can reuse its cache of it (D230)."""
    retrieved: str = ""
    """The rest of `system`: the sections chosen for this input (shared reference, working
    set, patterns, learnings, episodes, open loops, registry rows); empty when none were."""

    def transcript(self) -> str:
        """The system prompt with the conversation appended, for a reader of one text (an
        agent's task)."""
        if not self.conversation:
            return self.system
        lines = [f"- person: {said} / assistant: {answer}" for said, answer in self.conversation]
        return self.system + f"\n\n## {_SECTION_TITLES['recent_turn']}\n" + "\n".join(lines)

    def attention_state(self) -> dict[str, Any]:
        """The audit record of this assembly (004 §4 ``attention_state``)."""
        state = {
            "budget_tokens": self.budget,
            "used_tokens": self.tokens,
            "retrieved": self.included,
            "excluded": self.excluded,
            **self.extra,
        }
        if self.firewall:
            state["firewall"] = self.firewall
        return state


REMINDER_PREFERENCES = 5
"""At most this many preferences are restated after the person's message."""
_REMINDER_CHARS = 200


def preference_reminder(items: Iterable[ContextItem]) -> tuple[str, int]:
    """The canon the assembly kept, as a line for the end of the person's message, and how many
    preferences it restates ("", 0 with none).

    Small models follow what is nearest the question: "Always answer with a bullet list" in the
    system prompt alone was followed in 3 of 10 answers by Qwen2.5-Coder-0.5B and 1 of 10 by
    SmolLM2; restated here, in 10 and 5 of 10 (D60). Only what the budget kept: the reminder
    never says what the system prompt does not.
    """
    kept = [
        shorten(item.text, _REMINDER_CHARS).rstrip(" .;")
        for item in items
        if item.source == "canon" and item.text.strip() and not item.untrusted
    ][:REMINDER_PREFERENCES]
    if not kept:
        return "", 0
    return "(Follow my standing preferences: " + "; ".join(kept) + ".)", len(kept)


def echoes_reminder(reply: str, reminder: str) -> bool:
    """Is `reply` nothing but the restated preferences ("- Always answer in short bullet
    points"), not an answer?

    Qwen2.5-Coder-0.5B did this to "What's the quickest fix?" in a conversation about a failing
    ETL job, and then copied its own echo in every later answer: 8 of 8 follow-ups (D66). An
    answer brings at least two words of its own; an empty reply is no echo (it is a failure
    of its own kind).
    """
    said = content_words(reply)
    return bool(said) and len(said - content_words(reminder)) <= 1


ContextSource = Callable[[str], Iterable[ContextItem]]
"""A source: given the input text, the items it offers (already scored)."""


_SECTION_TITLES = {
    "canon": "Canon — the person's explicit preferences (always honour these)",
    "shared_reference": "Shared reference (versioned facts)",
    "working_set": "Working set of the active problem",
    "pattern": "Learned patterns",
    "learning": "Learnings from earlier sessions",
    "episode": "Recent episodes",
    "open_loop": "Open loops",
    "salience": "Salience anchors",
    "registry": "Registry",
    "ledger": "Ledger",
    "recent_turn": "Recent conversation",
}


_STABLE_SOURCES = ("canon", "salience")
"""Sections that change only when the person (canon) or governance (salience anchors) changes
them. They open the system prompt, after the role, and everything chosen for the input follows:
a model server that caches the prompts it has seen (llama.cpp, a hosted provider's prefix cache)
then finds the same opening every turn and evaluates only what changed (D230)."""


class ContextAssembler:
    """Assembles bounded context from sources; records inclusions and exclusions.

    Args:
        role: The first lines of the system prompt (who the assistant is, the stack's role).
        budget_tokens: The most context tokens a model sees per turn.
    """

    def __init__(self, role: str, budget_tokens: int = 2000) -> None:
        self.role = role
        self.budget_tokens = max(64, budget_tokens)

    def assemble(
        self,
        text: str,
        sources: Sequence[tuple[str, ContextSource]],
        *,
        failures: list[str] | None = None,
    ) -> AssembledContext:
        """Gather items from every source, keep the best under the budget, render the prompt.

        A source that raises is skipped and named in `failures` (and in the excluded list):
        context assembly degrades, it never fails the turn.
        """
        candidates: list[ContextItem] = []
        excluded: list[dict[str, Any]] = []
        for name, source in sources:
            try:
                candidates.extend(source(text))
            except Exception as exc:  # a broken source must not fail the turn
                excluded.append({"source": name, "key": None, "reason": f"source failed: {exc}"})
                if failures is not None:
                    failures.append(f"{name}: {exc}")
        firewall: list[dict[str, Any]] = []
        candidates = _screened(candidates, excluded, firewall)
        role_tokens = estimate_tokens(self.role)
        remaining = self.budget_tokens - role_tokens
        kept: list[ContextItem] = []
        included: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        over_budget: dict[str, dict[str, Any]] = {}
        # Always-items first, then by priority; the sort is stable, so ties keep the sources'
        # order.
        for item in sorted(candidates, key=_order):
            ident = (item.source, item.key)
            if ident in seen:
                excluded.append({"source": item.source, "key": item.key, "reason": "duplicate"})
                continue
            seen.add(ident)
            cost = estimate_tokens(item.text)
            if cost <= remaining:
                kept.append(item)
                remaining -= cost
                included.append(_entry(item, cost))
            elif item.always and remaining > 16:
                clipped = item.text[: remaining * 4 - 4] + "…"
                trimmed = replace(item, text=clipped)
                kept.append(trimmed)
                included.append({**_entry(trimmed, remaining), "truncated": True})
                remaining = 0
            else:
                over = over_budget.get(item.source)
                if over is None:
                    over = over_budget[item.source] = {
                        "source": item.source,
                        "key": item.key,
                        "reason": f"over budget ({cost} tokens, {max(remaining, 0)} left)",
                        "priority": round(item.priority, 3),
                    }
                    excluded.append(over)
                else:
                    # A source's further items that do not fit are one entry, each key named:
                    # a canon of hundreds of preferences must not write hundreds of records
                    # into every turn's audit trail.
                    more = over.setdefault("more", {"keys": [], "tokens": 0})
                    more["keys"].append(item.key)
                    more["tokens"] += cost
        exchanges = sorted((item for item in kept if item.exchange is not None), key=_sequence)
        stable, retrieved = self._render([item for item in kept if item.exchange is None])
        return AssembledContext(
            system=f"{stable}\n\n{retrieved}" if retrieved else stable,
            stable=stable,
            retrieved=retrieved,
            items=kept,
            tokens=self.budget_tokens - remaining,
            budget=self.budget_tokens,
            included=included,
            excluded=excluded,
            conversation=[item.exchange for item in exchanges if item.exchange is not None],
            firewall=firewall,
        )

    def _render(self, items: list[ContextItem]) -> tuple[str, str]:
        """The role and the stable sections; then the sections retrieved for this input."""
        by_source: dict[str, list[ContextItem]] = {}
        for item in items:
            by_source.setdefault(item.source, []).append(item)
        others = [s for s in _SECTION_TITLES if s not in _STABLE_SOURCES]
        stable = [self.role.rstrip()]
        retrieved: list[str] = []
        for source in [*_STABLE_SOURCES, *others, *sorted(set(by_source) - set(_SECTION_TITLES))]:
            group = by_source.get(source)
            if not group:
                continue
            lines = stable if source in _STABLE_SOURCES else retrieved
            if lines:
                lines.append("")
            lines.append(f"## {_SECTION_TITLES.get(source, source.replace('_', ' ').title())}")
            lines.extend(f"- {item.text}" for item in group)
        return "\n".join(stable), "\n".join(retrieved)


def _screened(
    candidates: list[ContextItem], excluded: list[dict[str, Any]], firewall: list[dict[str, Any]]
) -> list[ContextItem]:
    """The candidates as the model may see them: flagged stored text quoted or left out (D141).

    Screening is cached by text, so canon and registry rows that come back every turn cost a
    lookup. Left-out items are excluded with the reason ``firewall``.
    """
    kept: list[ContextItem] = []
    for item in candidates:
        if item.exchange is not None or not screen(item.text).flagged:
            kept.append(item)
            continue
        guarded = guard(item.text, source=item.source.replace("_", " "))
        firewall.append(guarded.record(source=item.source, key=item.key))
        if guarded.text is None:
            families = ", ".join(guarded.screening.families)
            excluded.append({"source": item.source, "key": item.key,
                             "reason": f"firewall: left out ({families})"})
            continue
        kept.append(replace(item, text=guarded.text, untrusted=True))
    return kept


def _sequence(item: ContextItem) -> int:
    return item.sequence if item.sequence is not None else -1


def _order(item: ContextItem) -> tuple[bool, float]:
    return (not item.always, -item.priority)


def _entry(item: ContextItem, tokens: int) -> dict[str, Any]:
    return {
        "source": item.source,
        "key": item.key,
        "tokens": tokens,
        "priority": round(item.priority, 3),
    }


def score_items(
    source: str,
    query: str,
    entries: Iterable[tuple[str, str]],
    *,
    base: float,
    floor: float = 0.0,
    limit: int = 10,
) -> list[ContextItem]:
    """Turn ``(key, text)`` pairs into items scored by relevance to `query` above `base`.

    Items with relevance below `floor` are dropped (not relevant enough to cost tokens).
    """
    words = content_words(query)
    scored: list[ContextItem] = []
    for key, text in entries:
        rel = relevance(words, text)
        if rel < floor:
            continue
        scored.append(ContextItem(source, key, text, base + (1 - base) * rel * 0.5))
    scored.sort(key=lambda item: -item.priority)
    return scored[:limit]
