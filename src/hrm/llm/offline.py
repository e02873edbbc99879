"""The built-in offline model: deterministic, no network, and plainly not a real model.

`OfflineAdapter` answers from what it is given — the system prompt (the assembled context) and
the messages — so tests and machines without a model still get a useful, reproducible turn.

Prose answers always start with ``(offline model)``. They quote up to three context lines that
share the most words with the user's last message, then up to two lines that mention canon or
preferences; with no overlap they say so and point at ``hrm models list``. When the last message
is a task message (`hrm.llm.task_message`, what an agent or a synthesis is sent), the question is
its task and the lines come from the material it carries and the earlier messages: the system
prompt then holds the agent's instructions, which answer nothing.

JSON answers are given when the call sets ``json_mode`` or a prompt says "return (only) JSON"
(or "respond/reply/answer with JSON", "JSON only"). Exactly these cases, in this order:

1. ``purpose`` (or the system prompt) names plan generation ("plan" + "step"):
   ``{"steps": [{"id", "description", "success_criteria"}...], "rationale"}`` with one step
   per sentence or clause ("then", ";", numbered lines) of the user's last message, at most 5.
2. The prompt contains a flat JSON template (``{"source_quality": X, "alignment_score": Y}``):
   the same keys, filled neutrally — numbers and placeholders ``0.5``, ``"a|b|c"`` the first
   option, other strings kept, booleans ``false``, lists ``[]``, ``null`` kept.
3. ``purpose`` ``classification`` (or "classif" in the system prompt): an InputClassification
   shape with neutral values — complexity ``simple`` (``moderate`` past 25 words), uncertainty
   and confidence ``0.5``, conflict ``none``, stakes ``low``, horizon ``immediate``.
4. ``purpose`` ``signal_estimation`` (or "signal" in the system prompt):
   ``{"source_quality": 0.5, "alignment_score": 0.5}``.
5. Otherwise ``{}``.

Neutral values are deliberate: the offline model has no judgement, so model-assisted signals
(advisory and bounded, 001 §12.2) stay at their midpoint and deterministic rules decide.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hrm._text import shorten
from hrm.llm.task_message import read_task_message
from hrm.llm.types import (
    FINISH_LENGTH,
    FINISH_STOP,
    LLMCallConfig,
    LLMResponse,
    Message,
    StreamChunk,
    estimate_tokens,
)

if TYPE_CHECKING:
    from hrm.config import LLMConfig

__all__ = ["OFFLINE_MARKER", "OFFLINE_MODEL", "OfflineAdapter", "wants_json"]

OFFLINE_MODEL = "hrm-offline-1"
"""The model id the offline adapter reports."""
OFFLINE_MARKER = "(offline model)"
"""How every prose answer of the offline adapter begins."""

_JSON_REQUEST = re.compile(
    r"\b(?:return|respond|reply|answer|output)\s+(?:with\s+)?(?:only\s+)?(?:valid\s+)?"
    r"(?:a\s+)?json\b|\bjson\s+only\b",
    re.IGNORECASE,
)
_TEMPLATE = re.compile(r"\{[^{}]*\"[A-Za-z_]\w*\"\s*:[^{}]*\}")
_TEMPLATE_ITEM = re.compile(r"\"([A-Za-z_]\w*)\"\s*:\s*(\"[^\"]*\"|\[[^\]]*\]|[^,}\s][^,}]*)")
_WORD = re.compile(r"[a-z0-9]+")
_CLAUSE_SPLIT = re.compile(r"(?:\n+|(?<=[.!?;])\s+|,?\s+then\s+|,?\s+and then\s+)", re.I)
_CANON_HEADING = re.compile(r"#+\s*canon\b", re.IGNORECASE)
_CANON_LABEL = re.compile(r"canon\s*:", re.IGNORECASE)
"""A line a caller's own prompt labels as canon ("Canon: the user prefers short answers")."""
_NUMBERING = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
_STOPWORDS_TEXT = (
    "the a an and or but of to in on at for with from by is are was were be been it its this "
    "that these those what which who how why when where do does did can could should would will "
    "i you we they he she me my your our their us them not no yes about into as if so"
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_CANON_HEADER = "Canon and preferences in view:"
_OWN_LINES = (OFFLINE_MARKER, _CANON_HEADER, "• ")
"""How the lines of an earlier answer that are not content begin (its framing, hrm's notes)."""
_MAX_QUOTES = 3
_MAX_CANON = 2
_MAX_STEPS = 5
_LONG_INPUT_WORDS = 25


def wants_json(system: str, messages: list[Message], config: LLMCallConfig | None) -> bool:
    """Whether a call asks for a JSON answer (``json_mode`` or a "return only JSON" prompt)."""
    if config is not None and config.json_mode:
        return True
    texts = [system] + [m.content for m in messages[-1:]]
    # Every request names JSON: a substring scan spares the regex on most prompts.
    return any("json" in text.casefold() and _JSON_REQUEST.search(text) for text in texts)


class OfflineAdapter:
    """The deterministic, network-free model (see the module docstring for exact behaviour).

    Args:
        config: Optional LLM settings; only ``max_tokens`` is used (to cut long answers).
    """

    python_bound = True
    """Its answers are Python computing, never a wait: a served turn keeps the turn slot
    through them (`hrm._turn_slot`)."""

    def __init__(self, config: LLMConfig | None = None) -> None:
        self._max_tokens: int | None = getattr(config, "max_tokens", None)

    @property
    def provider(self) -> str:
        """Always ``offline``."""
        return "offline"

    @property
    def model(self) -> str:
        """Always `OFFLINE_MODEL`."""
        return OFFLINE_MODEL

    def count_tokens(self, text: str) -> int:
        """The shared estimate, `estimate_tokens`."""
        return estimate_tokens(text)

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        """Answer from the given context, deterministically."""
        started = time.perf_counter()
        if wants_json(system, messages, config):
            purpose = config.purpose if config is not None else None
            content = json.dumps(json_answer(system, messages, purpose=purpose))
            finish = FINISH_STOP
        else:
            content, finish = self._cut(text_answer(system, messages), config)
        input_tokens = estimate_tokens(system) + sum(estimate_tokens(m.content) for m in messages)
        output_tokens = estimate_tokens(content)
        return LLMResponse(
            content=content,
            model=OFFLINE_MODEL,
            provider="offline",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            finish_reason=finish,
            latency_ms=int((time.perf_counter() - started) * 1000),
        )

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        """The `chat` answer, one word (with its trailing space) per chunk."""
        response = self.chat(messages, system, config)
        accumulated = ""
        for piece in re.findall(r"\S+\s*|\s+", response.content):
            accumulated += piece
            yield StreamChunk(delta=piece, accumulated=accumulated, done=False)
        yield StreamChunk(
            delta="",
            accumulated=accumulated,
            done=True,
            finish_reason=response.finish_reason,
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
        )

    def _cut(self, content: str, config: LLMCallConfig | None) -> tuple[str, str]:
        limit = config.output_limit if config is not None else None
        limit = limit if limit is not None else self._max_tokens
        if limit is None or estimate_tokens(content) <= limit:
            return content, FINISH_STOP
        words = content.split(" ")
        while words and estimate_tokens(" ".join(words)) > limit:
            words.pop()
        return " ".join(words), FINISH_LENGTH


def _words(text: str) -> frozenset[str]:
    """Content words, cut to a four-letter stem so "store" meets "storage"."""
    if len(text) <= _MEMO_MAX_LEN:
        return _line_words(text)
    return _stems(text)


def _stems(text: str) -> frozenset[str]:
    return frozenset(
        w[:4] for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOPWORDS
    )


_MEMO_MAX_LEN = 1000
_line_words = functools.lru_cache(maxsize=4096)(_stems)
"""Context lines (registry rows, canon, patterns) come back every turn: their stems are kept."""


def _last_user(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


def _request(system: str, messages: list[Message]) -> tuple[str, list[tuple[str, bool]]]:
    """The question, and the texts to quote from, each with whether it is an earlier answer.

    A task message (`hrm.llm.task_message`: an agent's task, a synthesis) carries its own
    material; its system prompt is then the agent's instructions, nothing to quote.
    """
    question = _last_user(messages)
    earlier = messages[:-1] if messages and messages[-1].role == "user" else messages
    texts = [(m.content, m.role == "assistant") for m in earlier]
    task = read_task_message(question)
    if task is None:
        return question, [(system, False), *texts]
    return task.task, [*texts, ("\n".join(task.material), True)]


def _context_lines(texts: list[tuple[str, bool]]) -> tuple[list[str], list[str]]:
    """The context's lines worth quoting, and those of them in the prompt's canon section.

    Canon is what the canon section holds (or a line labelled "Canon:"), not any line that
    says "prefer": a role line that asks to "honour the person's stated preferences", or a
    pasted ``# I prefer …`` comment in a recent turn, is no preference of the person's.
    """
    lines: list[str] = []
    canon: list[str] = []
    seen: set[str] = set()
    for text, own in texts:
        in_canon = False
        for raw in text.splitlines():
            if own and raw.startswith(_OWN_LINES):
                continue  # its own framing and the turn's notes: never context worth quoting
            if raw.startswith("#"):
                # A heading names a section of the prompt; it answers nothing.
                in_canon = bool(_CANON_HEADING.match(raw))
                continue
            line = _NUMBERING.sub("", raw).strip()
            if len(line) > 3 and line not in seen:
                seen.add(line)
                lines.append(line)
                if in_canon or _CANON_LABEL.match(line):
                    canon.append(line)
    return lines, canon


def text_answer(system: str, messages: list[Message]) -> str:
    """The offline prose answer: the context lines most relevant to the last user message."""
    question, texts = _request(system, messages)
    asked = _words(question)
    lines, canon_lines = _context_lines(texts)
    scored = [(len(asked & _words(line)), -index, line) for index, line in enumerate(lines)]
    relevant = [line for score, _, line in sorted(scored, reverse=True) if score > 0]
    relevant = relevant[:_MAX_QUOTES]
    canon = [line for line in canon_lines if line not in relevant][:_MAX_CANON]
    topic = f' "{shorten(question, 80)}"' if question.strip() else " this"
    if relevant:
        parts = [f"{OFFLINE_MARKER} From the context I was given, the lines most relevant to"
                 f"{topic}:"]
        parts.extend(f"- {shorten(line, 200)}" for line in relevant)
    else:
        parts = [
            f"{OFFLINE_MARKER} I found nothing in the context I was given about{topic}. "
            "I only quote context; configure a real model (see `hrm models list`) for a "
            "generated answer."
        ]
    if canon:
        parts.append(_CANON_HEADER)
        parts.extend(f"- {shorten(line, 200)}" for line in canon)
    return "\n".join(parts)


def json_answer(system: str, messages: list[Message], *, purpose: str | None) -> Any:
    """The offline JSON answer; the module docstring lists the cases in order."""
    task = (purpose or "").lower()
    all_text = "\n".join([system, *(m.content for m in messages)])
    lowered_system = system.lower()
    if task == "plan_generation" or (
        not task and "plan" in lowered_system and "step" in all_text.lower()
    ):
        return _plan(_last_user(messages))
    templates = _TEMPLATE.findall(all_text)
    if templates:
        return _fill_template(templates[-1])
    question = _last_user(messages)
    if task == "classification" or (not task and "classif" in lowered_system):
        return _classification(question)
    if task == "signal_estimation" or (not task and "signal" in lowered_system):
        return {"source_quality": 0.5, "alignment_score": 0.5}
    return {}


def _plan(request: str) -> dict[str, Any]:
    clauses = [_NUMBERING.sub("", c).strip(" .;") for c in _CLAUSE_SPLIT.split(request)]
    clauses = [c for c in clauses if c][:_MAX_STEPS] or [request.strip() or "Clarify the goal"]
    steps = [
        {
            "id": f"step_{index}",
            "description": clause,
            "success_criteria": f"Done: {clause}",
        }
        for index, clause in enumerate(clauses, start=1)
    ]
    return {"steps": steps, "rationale": f"{OFFLINE_MARKER} one step per clause of the request"}


def _fill_template(template: str) -> dict[str, Any]:
    filled: dict[str, Any] = {}
    for key, raw in _TEMPLATE_ITEM.findall(template):
        filled[key] = _neutral(raw.strip())
    return filled


def _neutral(raw: str) -> Any:
    if raw.startswith('"'):
        text = raw.strip('"')
        return text.split("|")[0].strip() if "|" in text else text
    if raw.startswith("["):
        return []
    if raw in {"true", "false"}:
        return False
    if raw == "null":
        return None
    return 0.5


def _classification(text: str) -> dict[str, Any]:
    long_input = len(text.split()) > _LONG_INPUT_WORDS
    return {
        "complexity": "moderate" if long_input else "simple",
        "uncertainty": 0.5,
        "conflict": "none",
        "stakes": "low",
        "horizon": "immediate",
        "domain": [],
        "confidence": 0.5,
        "irreversible": False,
        "signals": ["offline_model"],
    }
