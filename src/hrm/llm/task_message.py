"""How a task is put to an agent as one user message, and how that message is read back.

The runtime writes it (an agent's task, a synthesis's delegate outputs); the offline model reads
it, so that it answers the task from the material the message carries and not from the agent's
instructions in the system prompt. One module holds both sides, so the format cannot drift.

The message is labelled parts separated by blank lines, the task first::

    Task: <the task, any text>

    (Delegated to you by planner.)
    Problem: prob_1 (stance: execution)

    Output of researcher, the previous agent:
    <material>

    Context:
    <material>

Only ``Task:`` is required. The task ends where the first of the other labelled parts begins
(a blank line, then a label line exactly as written here); a task that itself contains such a
line is cut there when read back, which costs the offline model some question words and nothing
else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "SYNTHESIZE",
    "TaskMessage",
    "delegated_note",
    "output_label",
    "previous_label",
    "problem_note",
    "read_task_message",
    "task_message",
]

_TASK = "Task: "
_CONTEXT = "Context:"
_NO_TASK = "(no task text given)"
SYNTHESIZE = "Synthesize these delegate outputs into one coherent response:"
"""The synthesis's instruction line, a label of its own (it is no material)."""

_LABEL = (
    r"\(Delegated to you by [^\n]*\)"
    r"|Problem: [^\n]* \(stance: [a-z_]+\)"
    r"|Output of [^\n]*, the previous agent:"
    r"|Output \d+, from [^\n]*:"
    rf"|{re.escape(SYNTHESIZE)}"
    rf"|{_CONTEXT}"
)
_PART = re.compile(rf"\n\n(?=(?:{_LABEL})(?:\n|\Z))")
_LABEL_LINE = re.compile(rf"^(?:{_LABEL})$")


@dataclass(frozen=True, slots=True)
class TaskMessage:
    """A task message read back: the task and the material it was given."""

    task: str
    material: tuple[str, ...]
    """The lines of the labelled parts (context, earlier outputs), labels left out."""


def task_message(
    task: str,
    *,
    notes: Sequence[str] = (),
    sections: Sequence[tuple[str, str]] = (),
    context: str = "",
) -> str:
    """The user message that puts ``task`` to a model.

    Args:
        task: The work itself.
        notes: Label lines after the task: `delegated_note`, `problem_note`.
        sections: ``(label, body)`` parts of material, in order: `previous_label`,
            `output_label`, `SYNTHESIZE`.
        context: What the agent should know (the stack's assembled context), last.
    """
    parts = [f"{_TASK}{task.strip() or _NO_TASK}"]
    if notes:
        parts.append("\n".join(notes))
    parts.extend(f"{label}\n{body}" if body else label for label, body in sections)
    if context.strip():
        parts.append(f"{_CONTEXT}\n{context.strip()}")
    return "\n\n".join(parts)


def delegated_note(agent_id: str) -> str:
    return f"(Delegated to you by {agent_id}.)"


def problem_note(problem_id: str, stance: str) -> str:
    return f"Problem: {problem_id or '-'} (stance: {stance})"


def previous_label(agent_id: str) -> str:
    return f"Output of {agent_id}, the previous agent:"


def output_label(index: int, agent_id: str) -> str:
    return f"Output {index}, from {agent_id}:"


def read_task_message(text: str) -> TaskMessage | None:
    """The task and material of a message `task_message` wrote; ``None`` for any other text."""
    if not text.startswith(_TASK):
        return None
    body = text[len(_TASK):]
    parts = _PART.split(body)
    task = parts[0].strip()
    material = tuple(
        line
        for part in parts[1:]
        for line in part.splitlines()
        if line.strip() and not _LABEL_LINE.match(line)
    )
    return TaskMessage("" if task == _NO_TASK else task, material)
