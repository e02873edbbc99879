"""The output firewall (001 §4.5 "inlined firewall", 000 §4.6): named rules every output passes.

Every agent output is checked before any reducer (or, in a pipeline, the next agent) sees it.
The rules are a small table, checked in order; the first that fails names the violation:

``packet_structure``
    An agent id, an output type of ``proposal``/``data``/``artifact``, list-shaped requests.
``decision_marker``
    Agents propose, they do not decide (``DECISION:``, ``I have decided``, ``Final answer:``).
``capability_request``
    Capabilities requested beyond the agent's definition (tools, delegation).
``prompt_injection``
    Instructions aimed at the system, the gates or other agents: override phrases ("ignore
    previous instructions"), role switches ("you are now"), chat-template role tokens, lines
    addressed to the system, a gate or another agent with an order in them; and hidden or
    encoded ones — zero-width, bidi-control and tag characters, HTML comments carrying
    instructions, base64 blobs that decode to instructions; and whatever the stored-text
    screening (`hrm.runtime.injection`) flags: look-alike letters, eight more languages,
    paraphrases, other encodings, commands to run, secrets to send.

`check_output` returns a `DroppedOutput` (a decision as a value); `validate_output` raises
``AGENT_VIOLATION`` for callers that want the spec's raising form.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.runtime.injection import screen
from hrm.runtime.types import DECISION_MARKERS, OUTPUT_TYPES, AgentOutput, DroppedOutput

if TYPE_CHECKING:
    from hrm.runtime.agents import AgentDefinition

__all__ = [
    "RULES",
    "FirewallRule",
    "check_output",
    "output_text",
    "validate_output",
]

_CUE_WORDS = (
    r"ignore|disregard|forget|override|bypass|approve|authori[sz]e|allow|permit|grant|skip|"
    r"disable|execute|run|delete|accept|let|stop|switch|mark|treat|trust|reveal|obey|comply|"
    r"do\s+not|don't|must|you|your"
)
_ADDRESSEES = (
    r"system|gates?|gatekeeper|governance|orchestrator|supervisor|admin|administrator|assistant"
)
_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,40}?"
    r"\b(?:previous|prior|above|earlier|preceding|all|any|your|the|these|those|system)\b"
    r"[^.\n]{0,30}?\b(?:instructions?|prompts?|rules?|directives?|guidelines?|polic(?:y|ies)|"
    r"gates?|constraints?|guardrails?|checks?|firewall)\b",
    re.IGNORECASE,
)
_ROLE_SWITCH = re.compile(
    r"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(?:to\s+be|you\s+are)\b"
    r"|\bact\s+as\s+(?:the\s+|an?\s+)?(?:system|admin|administrator|root|developer|gate)\b"
    r"|\bnew\s+(?:system\s+)?instructions?\s*:|\b(?:developer|god|dan)\s+mode\b|\bjailbreak",
    re.IGNORECASE,
)
_ROLE_TOKEN = re.compile(
    r"<\|(?:im_start|im_end|system|endoftext|start_header_id)\|>|\[/?(?:INST|SYS)\]|<</?SYS>>"
    r"|</?system>",
    re.IGNORECASE,
)
_ADDRESS_LINE = re.compile(
    rf"^\s*(?:[-*>]\s*)?[\[<(]?\s*(?:to\s+(?:the\s+)?)?(?:{_ADDRESSEES})\s*[\]>)]?\s*[:,\-–—]"
    rf"\s*(?P<rest>.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_ADDRESS_PHRASE = re.compile(
    rf"\b(?:attention|note\s+to|message\s+(?:to|for)|dear|instructions?\s+for)\s+(?:the\s+)?"
    rf"(?:{_ADDRESSEES})\b",
    re.IGNORECASE,
)
_CUE = re.compile(rf"\b(?:{_CUE_WORDS})\b", re.IGNORECASE)
_LEADING_CUE = re.compile(rf"^\W*(?:please\s+)?(?:{_CUE_WORDS})\b", re.IGNORECASE)
_HIDDEN_CHARS = re.compile(
    "[\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
    "\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
)
_HTML_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.DOTALL)
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
_PRINTABLE_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class FirewallRule:
    """One named check: returns why ``output`` breaks the rule, or ``None`` when it does not."""

    name: str
    """The rule's name, recorded with every violation."""
    description: str
    """What the rule protects."""
    check: Callable[[AgentOutput, AgentDefinition | None, Collection[str]], str | None]
    """``(output, definition, agent ids in play) -> reason | None``."""


def output_text(content: Any) -> str:
    """Every string in ``content`` (keys and values of nested data), one per line."""
    return "\n".join(_strings(content))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def _packet_structure(
    output: AgentOutput, definition: AgentDefinition | None, others: Collection[str]
) -> str | None:
    if not isinstance(output.agent_id, str) or not output.agent_id.strip():
        return "the packet has no agent id"
    if output.output_type not in OUTPUT_TYPES:
        return f"output type {output.output_type!r} is not one of {list(OUTPUT_TYPES)}"
    if definition is not None and output.agent_id != definition.id:
        return f"the packet claims agent '{output.agent_id}' but came from '{definition.id}'"
    if not output.is_valid_packet():
        return "requested_capabilities must be a list of names and metadata a mapping"
    if output.content is None or (isinstance(output.content, str) and not output.content.strip()):
        return "the packet has no content"
    return None


def _decision_marker(
    output: AgentOutput, definition: AgentDefinition | None, others: Collection[str]
) -> str | None:
    if not output.contains_decision():
        return None
    text = str(output.content)
    marker = next(m for m in DECISION_MARKERS if m in text)
    return f"the output contains the decision marker {marker!r}; agents may only propose"


def _capability_request(
    output: AgentOutput, definition: AgentDefinition | None, others: Collection[str]
) -> str | None:
    allowed = set(definition.capabilities) if definition is not None else set()
    beyond = sorted({c for c in output.requested_capabilities if c not in allowed})
    if not beyond:
        return None
    declared = ", ".join(sorted(allowed)) or "none"
    return f"requested {beyond} beyond the agent's capabilities ({declared})"


def _prompt_injection(
    output: AgentOutput, definition: AgentDefinition | None, others: Collection[str]
) -> str | None:
    text = output_text(output.content)
    hidden = _HIDDEN_CHARS.search(text)
    if hidden:
        return f"hidden character U+{ord(hidden.group()):04X} in the output"
    own = str(output.agent_id).casefold()
    found = _instruction(text, others, own)
    if found:
        return found
    for comment in _HTML_COMMENT.findall(text):
        if _instruction(comment, others, own) or _LEADING_CUE.search(comment):
            return f"an HTML comment hides an instruction: {_quote(comment)}"
    for blob in _BASE64.findall(text):
        decoded = _decode(blob)
        if decoded and (_instruction(decoded, others, own) or _LEADING_CUE.search(decoded)):
            return f"a base64 blob decodes to an instruction: {_quote(decoded)}"
    # The stored-text screening reads what these rules cannot: look-alike letters, other
    # languages, paraphrases, other encodings (D140).
    screening = screen(text)
    if screening.flagged:
        first = screening.findings[0]
        families = ", ".join(screening.families)
        return f"injection screening ({families}; score {screening.score}): {first.excerpt!r}"
    return None


def _instruction(text: str, others: Collection[str], own: str) -> str | None:
    """Why ``text`` reads as an instruction to the system, a gate or an agent, if it does."""
    for pattern, what in (
        (_OVERRIDE, "an override of instructions"),
        (_ROLE_SWITCH, "a role switch"),
        (_ROLE_TOKEN, "a chat-template role token"),
        (_ADDRESS_PHRASE, "a message addressed to the system"),
    ):
        match = pattern.search(text)
        if match:
            return f"{what}: {_quote(match.group())}"
    for match in _ADDRESS_LINE.finditer(text):
        if _CUE.search(match.group("rest")):
            return f"an order addressed to the system or a gate: {_quote(match.group())}"
    if others:
        for match in _addressed(frozenset(others)).finditer(text):
            named = (match.group("name") or match.group("at")).casefold()
            if named != own and _CUE.search(match.group("rest")):
                return f"an order addressed to another agent: {_quote(match.group())}"
    return None


@functools.lru_cache(maxsize=64)
def _addressed(names: frozenset[str]) -> re.Pattern[str]:
    """Lines opening with ``<agent>:`` and ``@agent`` mentions (compiled once per agent set)."""
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(
        rf"(?:^\s*(?:[-*>]\s*)?(?P<name>{alternatives})\s*[:,]|@(?P<at>{alternatives})\b)"
        r"(?P<rest>.*)$",
        re.IGNORECASE | re.MULTILINE,
    )


def _decode(blob: str) -> str | None:
    padded = blob + "=" * (-len(blob) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not text:
        return None
    printable = sum(1 for ch in text if ch.isprintable() or ch in "\n\t")
    return text if printable / len(text) >= _PRINTABLE_SHARE else None


def _quote(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


RULES: tuple[FirewallRule, ...] = (
    FirewallRule(
        name="packet_structure",
        description="A packet has an agent id, a known output type and well-formed requests.",
        check=_packet_structure,
    ),
    FirewallRule(
        name="decision_marker",
        description="Agents propose; they never decide.",
        check=_decision_marker,
    ),
    FirewallRule(
        name="capability_request",
        description="No capability beyond the agent's definition.",
        check=_capability_request,
    ),
    FirewallRule(
        name="prompt_injection",
        description="No instructions aimed at the system, the gates or other agents.",
        check=_prompt_injection,
    ),
)
"""The firewall's rules, in the order they are checked."""


def check_output(
    output: AgentOutput,
    definition: AgentDefinition | None,
    *,
    agent_ids: Collection[str] = (),
    rules: tuple[FirewallRule, ...] = RULES,
) -> DroppedOutput | None:
    """The first rule ``output`` breaks, as a `DroppedOutput`, or ``None`` when it passes.

    Args:
        output: The packet to check.
        definition: The agent that produced it (``None``: no capabilities at all).
        agent_ids: The agents in play; orders addressed to any of them but the author are
            injection attempts.
        rules: The rule table (default `RULES`).
    """
    names = frozenset(agent_ids)
    for rule in rules:
        reason = rule.check(output, definition, names)
        if reason is not None:
            return DroppedOutput(agent_id=str(output.agent_id), rule=rule.name, reason=reason)
    return None


def validate_output(
    output: AgentOutput,
    definition: AgentDefinition | None,
    *,
    agent_ids: Collection[str] = (),
) -> AgentOutput:
    """``output`` unchanged when it passes every rule (001 §4.5 ``_validate_output``).

    Raises:
        HRMError: ``AGENT_VIOLATION`` naming the agent and the rule.
    """
    verdict = check_output(output, definition, agent_ids=agent_ids)
    if verdict is not None:
        raise HRMError.agent_violation(verdict.reason, agent_id=verdict.agent_id, rule=verdict.rule)
    return output
