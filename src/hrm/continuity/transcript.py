"""Reading a Claude Code session transcript to hand the session off (003 §3, protocol §3).

Claude Code writes the transcript as JSON Lines, asynchronously: when a hook reads it, it may not
exist yet, may end in half a line, and holds entry types we do not know. So reading is lenient —
a bad line is counted and skipped, never an error — and bounded: a transcript can grow to tens of
megabytes and SessionEnd has 1.5 s, so past `max_bytes` only its head (where the task was stated)
and its tail (where the session stopped) are read. Its path comes from the payload: only a
regular file is read (never a FIFO or a device, which would hang the hook). Text the person
marked ``<private>`` is dropped as each message is read, before anything is cut to length.

`build_session_handoff` turns what was read into a `HandoffData`: the task from the first user
prompt, the files written or edited, status PAUSED, next steps from the last assistant message.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.scrubbing import scrub_text, strip_private

if TYPE_CHECKING:
    from hrm.continuity.handoffs import HandoffData
    from hrm.continuity.hooks import SessionCheckpoint
    from hrm.types import Clock

__all__ = [
    "DEFAULT_MAX_BYTES",
    "TranscriptSummary",
    "build_session_handoff",
    "read_transcript",
    "summarize_entries",
]

DEFAULT_MAX_BYTES = 4 << 20
"""How much of a transcript is read at most: 2 MB of head and 2 MB of tail beyond this."""

_MAX_PROMPTS = 50
_MAX_FILES = 500
_MAX_TEXT = 4000
_WRITE_TOOLS = frozenset({"Write"})
_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "NotebookEdit"})
_NOT_PROMPTS = ("<command-", "<local-command", "Caveat:", "[Request interrupted")
_STEP_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$")


@dataclass(frozen=True, kw_only=True)
class TranscriptSummary:
    """What a transcript says about its session, as far as it could be read."""

    path: Path | None = None
    user_prompts: tuple[str, ...] = ()
    """The first prompts the user typed (not tool results, commands or meta entries)."""
    prompt_count: int = 0
    """How many prompts were seen, including those beyond `user_prompts`."""
    files_written: tuple[str, ...] = ()
    """Files passed to Write, in first-seen order."""
    files_edited: tuple[str, ...] = ()
    """Files passed to Edit, MultiEdit or NotebookEdit, in first-seen order."""
    skills_used: tuple[str, ...] = ()
    last_assistant_message: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    cwd: str | None = None
    git_branch: str | None = None
    lines_read: int = 0
    lines_skipped: int = 0
    """Lines that were not JSON objects (partial last line, garbage, a cut at the bound)."""
    truncated: bool = False
    """True when only the head and the tail of a large transcript were read."""
    problem: str | None = None
    """Why the transcript could not be read (missing, not a regular file, unreadable)."""

    @property
    def files_modified(self) -> tuple[str, ...]:
        """Every file written or edited, each once, in first-seen order."""
        return tuple(dict.fromkeys((*self.files_written, *self.files_edited)))

    @property
    def is_empty(self) -> bool:
        """True when there is nothing worth handing off."""
        return not self.user_prompts and not self.files_modified


def read_transcript(
    path: str | Path | None, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> TranscriptSummary:
    """Read a transcript leniently; a missing or unreadable file gives an empty summary."""
    if path is None or str(path) == "":
        return TranscriptSummary()
    from hrm._paths import open_regular
    from hrm.errors import HRMError

    target = Path(path)
    try:
        # The path comes from the payload: a FIFO or a device must not hang the hook.
        handle = open_regular(target, what="transcript")
    except HRMError as exc:
        return TranscriptSummary(path=target, problem=exc.message)
    try:
        with handle as fh:
            size = os.fstat(fh.fileno()).st_size
            if size <= max_bytes:
                lines: list[bytes] = fh.read(max_bytes).splitlines()
                truncated = False
            else:
                half = max(1, max_bytes // 2)
                head = fh.read(half).splitlines()[:-1]
                fh.seek(max(0, size - half))
                tail = fh.read(half).splitlines()[1:]
                lines = head + tail
                truncated = True
    except OSError as exc:
        return TranscriptSummary(path=target, problem=f"cannot read transcript: {exc}")
    summary = summarize_entries(lines)
    return _replace(summary, path=target, truncated=truncated)


def summarize_entries(lines: Iterable[bytes | str]) -> TranscriptSummary:
    """Summarise transcript lines; anything that is not a JSON object is counted and skipped."""
    acc = _Accumulator()
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            acc.skipped += 1
            continue
        if not isinstance(entry, dict):
            acc.skipped += 1
            continue
        acc.read += 1
        acc.add(entry)
    return acc.summary()


@dataclass
class _Accumulator:
    read: int = 0
    skipped: int = 0
    prompts: list[str] = field(default_factory=list)
    prompt_count: int = 0
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)
    skills: dict[str, None] = field(default_factory=dict)
    last_assistant: str | None = None
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    cwd: str | None = None
    branch: str | None = None

    def add(self, entry: dict[str, Any]) -> None:
        self._note_time(entry.get("timestamp"))
        if isinstance(entry.get("cwd"), str) and self.cwd is None:
            self.cwd = entry["cwd"]
        if isinstance(entry.get("gitBranch"), str) and entry["gitBranch"]:
            self.branch = entry["gitBranch"]
        if entry.get("isSidechain") is True or entry.get("isMeta") is True:
            return
        message = entry.get("message")
        if not isinstance(message, dict):
            return
        kind = entry.get("type") or message.get("role")
        if kind == "user":
            self._add_prompt(message.get("content"))
        elif kind == "assistant":
            self._add_assistant(message.get("content"))

    def _note_time(self, raw: object) -> None:
        if not isinstance(raw, str):
            return
        try:
            ts = datetime.fromisoformat(raw)
        except ValueError:
            return
        ts = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
        if self.first_ts is None or ts < self.first_ts:
            self.first_ts = ts
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts

    def _add_prompt(self, content: object) -> None:
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            if any(isinstance(p, dict) and p.get("type") == "tool_result" for p in content):
                return
            text = "\n".join(_texts(content))
        else:
            return
        text = strip_private(text).strip()
        if not text or text.startswith(_NOT_PROMPTS):
            return
        self.prompt_count += 1
        if len(self.prompts) < _MAX_PROMPTS:
            self.prompts.append(_head(text, _MAX_TEXT))

    def _add_assistant(self, content: object) -> None:
        if isinstance(content, str):
            text = strip_private(content).strip()
            if text:
                self.last_assistant = _tail(text, _MAX_TEXT)
            return
        if not isinstance(content, list):
            return
        for part in content:
            if isinstance(part, dict) and part.get("type") == "tool_use":
                self._add_tool_use(part.get("name"), part.get("input"))
        joined = strip_private("\n".join(_texts(content))).strip()
        if joined:
            self.last_assistant = _tail(joined, _MAX_TEXT)

    def _add_tool_use(self, name: object, tool_input: object) -> None:
        if not isinstance(name, str) or not isinstance(tool_input, dict):
            return
        if name == "Skill" and isinstance(tool_input.get("skill"), str):
            self.skills.setdefault(tool_input["skill"][:200], None)
            return
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        if not isinstance(path, str) or not path:
            return
        target = self.written if name in _WRITE_TOOLS else None
        if name in _EDIT_TOOLS:
            target = self.edited
        if target is not None and len(target) < _MAX_FILES:
            target.setdefault(path[:4096], None)

    def summary(self) -> TranscriptSummary:
        return TranscriptSummary(
            user_prompts=tuple(self.prompts),
            prompt_count=self.prompt_count,
            files_written=tuple(self.written),
            files_edited=tuple(p for p in self.edited if p not in self.written),
            skills_used=tuple(self.skills),
            last_assistant_message=self.last_assistant,
            started_at=self.first_ts,
            ended_at=self.last_ts,
            cwd=self.cwd,
            git_branch=self.branch,
            lines_read=self.read,
            lines_skipped=self.skipped,
        )


_SECRET_MARGIN = 1024
"""Room past a cut for a secret that straddles it (a PEM block is caught by its header)."""


def _head(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, scrubbed before the cut.

    A secret cut in two is no longer recognisable, so what is kept is scrubbed with a margin
    first; the store scrubs again, which finds nothing more.
    """
    if len(text) <= limit:
        return text
    return scrub_text(text[: limit + _SECRET_MARGIN])[:limit]


def _tail(text: str, limit: int) -> str:
    """The last `limit` characters of `text`, scrubbed before the cut (see `_head`)."""
    if len(text) <= limit:
        return text
    return scrub_text(text[-(limit + _SECRET_MARGIN) :])[-limit:]


def _texts(content: list[Any]) -> Iterator[str]:
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            if isinstance(text, str):
                yield text


def _replace(summary: TranscriptSummary, **changes: Any) -> TranscriptSummary:
    from dataclasses import replace

    return replace(summary, **changes)


def _iter_next_steps(message: str) -> Iterator[str]:
    for line in message.splitlines():
        match = _STEP_LINE.match(line)
        if match:
            yield _head(" ".join(match.group(1).split()), 300)


def _task_description(prompt: str) -> str:
    first = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return first if len(first) <= 200 else _head(first, 199) + "…"


def build_session_handoff(
    summary: TranscriptSummary,
    checkpoint: SessionCheckpoint,
    *,
    clock: Clock | None = None,
) -> HandoffData | None:
    """A PAUSED handoff of the session, or None when the transcript holds nothing to hand off.

    Args:
        summary: What `read_transcript` found.
        checkpoint: Which moment this is (PreCompact or SessionEnd) and for which project.
        clock: Current time, for the end of the session when the transcript has no timestamps.
    """
    if summary.is_empty:
        return None
    from hrm.continuity.handoffs import (
        MAX_KEY_FILES,
        ArtifactReferences,
        ContextInfo,
        HandoffData,
        ResumeInstructions,
        SessionMetadata,
        TaskInfo,
        TaskStatus,
    )

    now = clock() if clock is not None else datetime.now(UTC)
    started = summary.started_at or now
    ended = summary.ended_at or now
    prompts = summary.user_prompts
    description = _task_description(prompts[0]) if prompts else "Continue the session's work"
    message = summary.last_assistant_message or ""
    steps = list(_iter_next_steps(message))[:10]
    if not steps and message:
        steps = [f"Pick up from the last reply: {_head(' '.join(message.split()), 300)}"]
    moment = "compaction" if checkpoint.kind == "pre_compact" else "session end"
    trigger = f" ({checkpoint.trigger})" if checkpoint.trigger else ""
    notes = f"Written automatically by `hrm hook` at {moment}{trigger}."
    if summary.truncated:
        notes += " The transcript was large; only its beginning and end were read."
    return HandoffData(
        session=SessionMetadata(
            id=checkpoint.session_id,
            started_at=started,
            ended_at=ended,
            duration_seconds=max(0, int((ended - started).total_seconds())),
        ),
        task=TaskInfo(
            description=description,
            status=TaskStatus.PAUSED,
            skills_used=list(summary.skills_used),
        ),
        context=ContextInfo(
            project_path=str(checkpoint.project_path),
            git_commit="",
            git_branch=summary.git_branch or "",
            key_files=list(summary.files_modified[:MAX_KEY_FILES]),
        ),
        decisions=[],
        artifacts=ArtifactReferences(
            created=[], modified=list(summary.files_modified), deleted=[]
        ),
        learnings=[],
        blockers=[],
        resume=ResumeInstructions(
            next_steps=steps,
            context_needed=[_head(p, 300) for p in prompts[1:6]],
            warnings=[],
        ),
        notes=notes,
        extra={
            "source": "hrm-hook",
            "trigger": checkpoint.trigger,
            "instructions": _head(strip_private(checkpoint.instructions), 1000),
            "prompt_count": summary.prompt_count,
        },
    )
