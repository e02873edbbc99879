"""How an agent is asked (prompt) and how its reply becomes an `AgentOutput` packet.

A reply is plain text with a few optional protocol lines, each alone on its line:
``Confidence: 0.8``, ``Tool: read_file {"path": "README.md"}``,
``Delegate: researcher, critic: check the figures`` and ``Request capability: name``.
A reply that is one JSON object with a ``content`` key is read as a packet directly
(``output_type``, ``requested_capabilities``, ``confidence``, ``delegate`` and ``findings``
optional). Protocol lines are taken out of the content, so a vote compares answers, not
confidences. Findings are marked with their confidence and rendered as a Verification section
(`hrm.runtime._findings`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hrm.llm import task_message
from hrm.runtime.tools import CAPABILITY_DELEGATE
from hrm.runtime.types import AgentOutput

if TYPE_CHECKING:
    from hrm.runtime.agents import AgentDefinition
    from hrm.runtime.tools import ToolRegistry
    from hrm.runtime.types import AgentExecutionContext

__all__ = ["ParsedReply", "build_output", "parse_reply", "system_prompt", "user_prompt"]

_LINES = re.IGNORECASE | re.MULTILINE
_CONFIDENCE = re.compile(r"^\s*confidence\s*:\s*(\d*\.?\d+)\s*%?\s*$", _LINES)
_TOOL = re.compile(r"^\s*tool\s*:\s*([a-z][a-z0-9_]*)\s*(\{.*\})?\s*$", _LINES)
_DELEGATE = re.compile(
    r"^\s*delegate\s*:\s*([a-z][a-z0-9_-]*(?:\s*,\s*[a-z][a-z0-9_-]*)*)\s*(?::\s*(.*\S))?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_REQUEST = re.compile(
    r"^\s*request(?:ed)?\s+capabilit(?:y|ies)\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE
)
_PROTOCOL_LINE = (_CONFIDENCE, _TOOL, _DELEGATE, _REQUEST)


@dataclass(kw_only=True)
class ParsedReply:
    """What a reply says, protocol lines separated from content."""

    content: Any
    output_type: str | None = None
    confidence: float | None = None
    requested_capabilities: list[str] = field(default_factory=list)
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    delegations: list[tuple[list[str], str]] = field(default_factory=list)
    findings: Any = None
    """A JSON packet's ``findings`` list, as sent (marked in `build_output`)."""


def system_prompt(definition: AgentDefinition, tools: ToolRegistry | None) -> str:
    """The agent's own prompt plus how to answer (and which tools it may call)."""
    lines = [
        definition.system_prompt,
        "",
        "How to answer:",
        "- Write your contribution as plain text; it is a proposal for others to weigh.",
        '- You may end with a line of the form "Confidence: 0.7" (a number from 0 to 1).',
    ]
    usable = tools.tools_for(definition.capabilities) if tools is not None else []
    usable = [t for t in usable if t.name in definition.tools]
    if usable:
        lines.append(
            '- To use a tool, reply with only lines of the form "Tool: <name> {json arguments}";'
            " the results come back in the next message. Tools you may use:"
        )
        for tool in usable:
            params = ", ".join(f"{k}: {v}" for k, v in tool.parameters.items())
            lines.append(f"  {tool.name} ({params}): {tool.description}")
    if CAPABILITY_DELEGATE in definition.capabilities:
        lines.append(
            '- To hand part of the work to other agents, add lines of the form '
            '"Delegate: <agent id>[, <agent id>]: <subtask>".'
        )
    return "\n".join(lines)


def user_prompt(
    context: AgentExecutionContext,
    *,
    task: str,
    previous: AgentOutput | None,
    delegated_by: str | None = None,
) -> str:
    """The task, the problem it serves, in a pipeline the previous agent's output, and what
    the agents should know (`AgentExecutionContext.background`), in `task_message`'s format."""
    notes = [] if delegated_by is None else [task_message.delegated_note(delegated_by)]
    notes.append(task_message.problem_note(context.problem_id, context.stance.value))
    sections = (
        [] if previous is None
        else [(task_message.previous_label(previous.agent_id), str(previous.content))]
    )
    return task_message.task_message(
        task, notes=notes, sections=sections, context=context.background
    )


def parse_reply(text: str) -> ParsedReply:
    """Split a reply into content and its protocol lines (see the module docstring)."""
    packet = _json_packet(text)
    if packet is not None:
        return packet
    confidences = [_confidence(m) for m in _CONFIDENCE.findall(text)]
    tool_calls = [(name.lower(), _arguments(raw)) for name, raw in _TOOL.findall(text)]
    delegations = [
        ([a.strip().lower() for a in ids.split(",")], subtask.strip())
        for ids, subtask in _DELEGATE.findall(text)
    ]
    requested = [
        c.strip().lower() for raw in _REQUEST.findall(text) for c in raw.split(",") if c.strip()
    ]
    content = text
    for pattern in _PROTOCOL_LINE:
        content = pattern.sub("", content)
    content = re.sub(r"\n{3,}", "\n\n", content).strip()
    valid = [c for c in confidences if c is not None]
    return ParsedReply(
        content=content,
        confidence=valid[-1] if valid else None,
        requested_capabilities=requested,
        tool_calls=tool_calls,
        delegations=delegations,
    )


def build_output(
    definition: AgentDefinition, parsed: ParsedReply, *, metadata: dict[str, Any]
) -> AgentOutput:
    """The packet for ``parsed``; delegation adds the ``delegate`` capability request."""
    requested = list(dict.fromkeys(parsed.requested_capabilities))
    meta = dict(metadata)
    if parsed.confidence is not None:
        meta["confidence"] = parsed.confidence
    if parsed.delegations:
        meta["delegate"] = [{"agents": ids, "task": task} for ids, task in parsed.delegations]
        if CAPABILITY_DELEGATE not in requested:
            requested.append(CAPABILITY_DELEGATE)
    content = parsed.content
    if parsed.findings is not None:
        from hrm.runtime._findings import mark_findings, verification_section

        marked = mark_findings(parsed.findings)
        if marked:  # 003 Integration 4: every finding with its marker and evidence chain
            section, meta["verification"] = verification_section(marked)
            content = f"{content}\n\n{section}" if isinstance(content, str) else content
    return AgentOutput(
        agent_id=definition.id,
        output_type=parsed.output_type or definition.output_type,
        content=content,
        requested_capabilities=requested,
        metadata=meta,
    )


def _json_packet(text: str) -> ParsedReply | None:
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or "content" not in data:
        return None
    requested = data.get("requested_capabilities", [])
    delegations: list[tuple[list[str], str]] = []
    for item in data.get("delegate", []) or []:
        if isinstance(item, dict) and isinstance(item.get("agents"), list):
            delegations.append(([str(a) for a in item["agents"]], str(item.get("task", ""))))
    output_type = data.get("output_type")
    return ParsedReply(
        content=data["content"],
        output_type=output_type if isinstance(output_type, str) else None,
        confidence=_confidence(str(data["confidence"])) if "confidence" in data else None,
        requested_capabilities=[str(c) for c in requested] if isinstance(requested, list) else [],
        delegations=delegations,
        findings=data.get("findings"),
    )


def _confidence(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    if value > 1 and value <= 100:
        value /= 100
    return value if 0.0 <= value <= 1.0 else None


def _arguments(raw: str) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"_unparsed": raw}
    return value if isinstance(value, dict) else {"_unparsed": raw}
