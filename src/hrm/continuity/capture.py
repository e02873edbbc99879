"""Learnings captured by themselves: what a Claude Code session learned, read from its transcript.

Until now a learning existed only if someone typed ``hrm memory learn``. Capture reads the
session's transcript (Claude Code's JSON Lines) at Stop, PreCompact and SessionEnd and keeps the
candidates a later session would want (issue 31 item 4):

* **error → fix**: a tool call that failed (``is_error``, a Bash exit code, a traceback) and a
  later call on the same command or file that succeeded; the learning names the error and what
  changed in between (the assistant's explanation, else the files edited);
* **stated learnings**: sentences of the assistant or the person that say how something was
  fixed, why an approach failed, or what was decided (`_capture_cues`);
* with a capable model configured, a bounded structured call adds what the wording misses
  (`hrm.continuity._capture_model`).

Deterministic first: the model tier only adds. Each candidate is stored as a learning of its
type, tagged ``captured`` and ``inferred`` (nobody confirmed it), with the confidence its
evidence supports, scrubbed and de-duplicated by the store (`LearningsRepository`); handoffs'
``learnings:`` become searchable the same way (`learnings_from_handoff`).

Reading is streamed and bounded: a transcript is read line by line from where the last capture
of the session stopped (`CaptureState`), a line longer than `MAX_LINE_BYTES` is skipped without
being held, at most `DEFAULT_MAX_BYTES` are read per call (the newest, for a first look at a huge
file), and a deadline stops it between lines. What is not a JSON object is counted and skipped.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.continuity._capture_cues import MAX_SENTENCE, read_sentence, sentences
from hrm.scrubbing import strip_private

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from hrm.continuity.handoffs import HandoffData, HandoffLearning

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_LINE_BYTES",
    "CaptureResult",
    "CaptureState",
    "CapturedLearning",
    "capture_entries",
    "capture_transcript",
    "learnings_from_handoff",
    "store_captured",
    "with_learnings",
]

DEFAULT_MAX_BYTES = 16 << 20
"""At most this much of a transcript is read by one capture; on a first look at a larger file,
its newest part."""
MAX_LINE_BYTES = 4 << 20
"""A longer line (a pasted dump) is skipped without being held in memory."""
RECORD_CHARS = 12_000
MAX_PER_SESSION = 20
"""A session yields at most this many learnings; the first found are kept."""
_CHUNK = 1 << 16
_MAX_PENDING = 50
_ERROR_MARKERS = (
    "Traceback (most recent call last)", "Error:", "error:", "ERROR", "FAILED", "Exception:",
    "exit code", "Exit code", "command not found", "No such file", "panic:", "fatal:",
)
_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})


@dataclass(frozen=True, kw_only=True)
class CapturedLearning:
    """One candidate learning read from a session."""

    type: str
    """A `LearningType` name: ``ERROR_FIX``, ``WORKING_SOLUTION``, ``FAILED_APPROACH`` or
    ``ARCHITECTURAL_DECISION``."""
    content: str
    confidence: str
    """``MEDIUM`` when a later success or an explicit statement backs it, ``LOW`` otherwise."""
    evidence: str
    """How it was found: ``error-then-success``, a cue name (``fix-was``), or ``model``."""
    subject: str = ""
    """The command or file it is about, when known."""


@dataclass
class CaptureState:
    """Where the last capture of a session stopped, and what the session has yielded so far."""

    offset: int = 0
    """Bytes of the transcript already read."""
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Failed command or file → ``{"error": …, "edits": […], "tool": …}``, awaiting a fix."""
    kept: list[list[str]] = field(default_factory=list)
    """``[type, content]`` of every learning the session yielded (at most `MAX_PER_SESSION`),
    so the session's handoff can list them all, whichever capture found them."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, for the state file between hook processes."""
        return {"offset": self.offset, "pending": self.pending, "kept": self.kept}

    @classmethod
    def from_dict(cls, raw: object) -> CaptureState:
        """Read a state file's content; anything malformed starts afresh."""
        if not isinstance(raw, dict):
            return cls()
        offset, pending, kept = raw.get("offset"), raw.get("pending"), raw.get("kept")
        if not isinstance(offset, int) or offset < 0 or not isinstance(pending, dict):
            return cls()
        waiting = {str(k): v for k, v in pending.items() if isinstance(v, dict)}
        rows = [
            [str(row[0]), str(row[1])] for row in (kept if isinstance(kept, list) else [])
            if isinstance(row, list) and len(row) == 2
        ]
        return cls(offset, dict(list(waiting.items())[-_MAX_PENDING:]), rows[:MAX_PER_SESSION])


@dataclass(frozen=True, kw_only=True)
class CaptureResult:
    """What one capture found, and how much of the transcript it could read."""

    learnings: tuple[CapturedLearning, ...] = ()
    state: CaptureState = field(default_factory=CaptureState)
    lines_read: int = 0
    lines_skipped: int = 0
    """Lines that were not JSON objects, or longer than `MAX_LINE_BYTES`."""
    skipped_head: bool = False
    """A first look at a huge transcript read only its newest `DEFAULT_MAX_BYTES`."""
    timed_out: bool = False
    problem: str | None = None
    """Why the transcript could not be read at all."""
    record: str = ""
    """What was read, condensed (prompts, the assistant's words, errors met), newest last and
    at most `RECORD_CHARS`: what the model tier reads (`_capture_model`)."""


def capture_transcript(
    path: str | Path | None,
    *,
    state: CaptureState | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    deadline: float | None = None,
) -> CaptureResult:
    """Read a transcript from `state.offset` and return the learnings it yields. Never raises.

    Args:
        path: The transcript (a payload's ``transcript_path``); only a regular file is read.
        state: Where the last capture of this session stopped; None reads from the start.
        max_bytes: The most bytes read by this call.
        deadline: A `time.monotonic()` value; reading stops at the first line past it.
    """
    state = CaptureState.from_dict(state.to_dict()) if state is not None else CaptureState()
    if path is None or str(path) == "":
        return CaptureResult(state=state, problem="no transcript path")
    from hrm._paths import open_regular
    from hrm.errors import HRMError

    try:
        handle = open_regular(path, what="transcript")
    except HRMError as exc:
        return CaptureResult(state=state, problem=exc.message)
    with handle as fh:
        size = os.fstat(fh.fileno()).st_size
        start = state.offset if state.offset <= size else 0  # a rewritten file starts over
        skipped_head = False
        if size - start > max_bytes:
            start, skipped_head = size - max_bytes, start == 0
        reader = _LineReader(fh, start, limit=max_bytes)
        extractor = _Extractor(state)
        timed_out = False
        for line in reader.lines():
            if deadline is not None and time.monotonic() > deadline:
                timed_out = True
                break
            extractor.feed_line(line)
        state.offset = reader.consumed
    return CaptureResult(
        learnings=tuple(extractor.found),
        state=state,
        lines_read=extractor.read,
        lines_skipped=extractor.skipped + reader.oversized,
        skipped_head=skipped_head,
        timed_out=timed_out,
        record="\n".join(extractor.record)[-RECORD_CHARS:],
    )


def capture_entries(entries: Iterable[object]) -> tuple[CapturedLearning, ...]:
    """The learnings a sequence of parsed transcript entries yields (tests, the MCP tool)."""
    extractor = _Extractor(CaptureState())
    for entry in entries:
        extractor.feed(entry)
    return tuple(extractor.found)


class _LineReader:
    """Lines of a binary file from `start`, at most `limit` bytes, none longer than a bound.

    Only whole lines are yielded: a line cut by the end of the file (Claude Code still writing
    it) is left for the next capture, so `consumed` stops before it. A first line entered in
    its middle (reading a huge file's tail) is skipped.
    """

    def __init__(self, fh: Any, start: int, *, limit: int) -> None:
        self._fh = fh
        self._start = start
        self._limit = limit
        self.consumed = start
        self.oversized = 0

    def lines(self) -> Iterator[bytes]:
        self._fh.seek(max(0, self._start - 1))
        if self._start > 0 and self._fh.read(1) != b"\n":
            skipped, whole = self._skip_line()  # entered mid-line: not a line of ours
            if not whole:
                return
            self.consumed += skipped
        while self.consumed - self._start < self._limit:
            line = self._fh.readline(MAX_LINE_BYTES + 1)
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                skipped, whole = self._skip_line()
                if not whole:
                    return
                self.consumed += len(line) + skipped
                self.oversized += 1
                continue
            if not line.endswith(b"\n"):
                return  # the end of the file, maybe a line still being written
            yield line
            self.consumed += len(line)  # only once the caller has taken it in

    def _skip_line(self) -> tuple[int, bool]:
        """Read to the end of the current line in chunks: (bytes read, found its end)."""
        skipped = 0
        while True:
            chunk = self._fh.readline(_CHUNK)
            skipped += len(chunk)
            if not chunk:
                return skipped, False
            if chunk.endswith(b"\n"):
                return skipped, True


class _Extractor:
    """Reads transcript entries in order and collects learnings (see the module docstring)."""

    def __init__(self, state: CaptureState) -> None:
        self.state = state
        self.found: list[CapturedLearning] = []
        self.read = 0
        self.skipped = 0
        self._uses: dict[str, tuple[str, str]] = {}
        self._seen = {" ".join(content.lower().split()) for _, content in state.kept}
        self._explanation = ""
        self.record: list[str] = []
        self._record_chars = 0
        self._last_fix: tuple[int, str] | None = None
        """(index in `found`, "`cmd` failed with …") of the last error→fix of this turn: a
        statement of the fix that follows joins it instead of becoming a second learning."""

    def feed_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            self.skipped += 1
            return
        self.feed(entry)

    def feed(self, entry: object) -> None:
        if not isinstance(entry, dict):
            self.skipped += 1
            return
        self.read += 1
        if entry.get("isSidechain") is True or entry.get("isMeta") is True:
            return
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        kind = entry.get("type") or (message.get("role") if isinstance(message, dict) else None)
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        for part in content:
            if isinstance(part, dict):
                self._part(kind, part, entry)

    def _part(self, kind: object, part: dict[str, Any], entry: dict[str, Any]) -> None:
        ptype = part.get("type")
        if ptype == "text" and isinstance(part.get("text"), str):
            self._text(part["text"], from_assistant=kind == "assistant")
        elif ptype == "tool_use" and kind == "assistant":
            self._tool_use(part)
        elif ptype == "tool_result":
            self._tool_result(part, entry.get("toolUseResult"))

    def _text(self, raw: str, *, from_assistant: bool) -> None:
        text = strip_private(raw)
        if text.lstrip().startswith(("<command-", "<local-command", "Caveat:", "[Request")):
            return
        if not from_assistant:
            self._last_fix = None  # a new prompt: what follows is about something else
        self._note(f"{'Assistant' if from_assistant else 'Person'}: {text.strip()[:2000]}")
        for sentence in sentences(text[:20_000]):
            cue = read_sentence(sentence)
            fix = cue is not None and cue.type in ("ERROR_FIX", "WORKING_SOLUTION")
            if fix and from_assistant and self._last_fix is not None:
                self._join_fix(sentence)
            elif cue is not None:
                self._add(cue.type, sentence, "MEDIUM", cue.name)
            if from_assistant and (fix or (cue is None and _explains(sentence))):
                self._explanation = sentence

    def _tool_use(self, part: dict[str, Any]) -> None:
        name, tool_input = part.get("name"), part.get("input")
        if not isinstance(name, str) or not isinstance(tool_input, dict):
            return
        subject = _subject(name, tool_input)
        if isinstance(part.get("id"), str) and subject:
            self._uses[part["id"]] = (name, subject)
        if name in _EDIT_TOOLS and isinstance(tool_input.get("file_path"), str):
            edited = Path(tool_input["file_path"]).name
            for failure in self.state.pending.values():
                edits = failure.setdefault("edits", [])
                if edited not in edits and len(edits) < 5:
                    edits.append(edited)

    def _tool_result(self, part: dict[str, Any], extra: object) -> None:
        use = self._uses.pop(str(part.get("tool_use_id")), None)
        if use is None:
            return
        name, subject = use
        output = _result_text(part.get("content"), extra)
        if _failed(part, output, extra):
            self._note(f"Error from {subject}: {_error_line(output)}")
            if subject not in self.state.pending and len(self.state.pending) < _MAX_PENDING:
                self.state.pending[subject] = {"error": _error_line(output), "edits": [],
                                               "tool": name}
                self._explanation = ""
            return
        failure = self.state.pending.pop(subject, None)
        if failure is not None:
            self._fixed(name, subject, failure)

    def _fixed(self, name: str, subject: str, failure: dict[str, Any]) -> None:
        error = str(failure.get("error") or "an error")
        edits = [str(e) for e in failure.get("edits") or []]
        what = f"`{subject}`" if name == "Bash" else f"{name} on {subject}"
        head = f"{what} failed with \"{error}\""
        explained = self._explanation.rstrip(".")
        if explained and edits:
            text = f"{head}. {explained}; fixed by editing {', '.join(edits)}."
        elif explained:
            text = f"{head}. {explained}."
        elif edits:
            text = f"{head}; it passed after editing {', '.join(edits)}."
        else:
            return  # a retry that passed with nothing changed says nothing worth keeping
        if self._explanation:
            self._drop(self._explanation)  # kept on its own a moment ago: it lives on in `text`
        self._add("ERROR_FIX", text, "MEDIUM", "error-then-success", subject=subject)
        if self.found and self.found[-1].content == text[:MAX_SENTENCE * 2]:
            self._last_fix = (len(self.found) - 1, head)
        self._explanation = ""

    def _join_fix(self, sentence: str) -> None:
        """A statement of the fix right after an error→fix: one learning with both."""
        if self._last_fix is None:
            return
        index, head = self._last_fix
        joined = f"{head}. {sentence.rstrip('.')}."[: MAX_SENTENCE * 2]
        old = self.found[index]
        self.found[index] = replace(old, content=joined)
        for row in self.state.kept:
            if row[1] == old.content:
                row[1] = joined
        self._seen.add(" ".join(sentence.lower().split()))
        self._last_fix = None

    def _drop(self, content: str) -> bool:
        """Take back a learning found in this capture (it is being folded into another)."""
        for index, item in enumerate(self.found):
            if item.content == content:
                del self.found[index]
                self.state.kept = [row for row in self.state.kept if row[1] != content]
                return True
        return False

    def _note(self, line: str) -> None:
        """Keep `line` in the condensed record, dropping the oldest past twice its bound."""
        self.record.append(line)
        self._record_chars += len(line) + 1
        while self._record_chars > 2 * RECORD_CHARS and len(self.record) > 1:
            self._record_chars -= len(self.record.pop(0)) + 1

    def _add(self, kind: str, content: str, confidence: str, evidence: str, *,
             subject: str = "") -> None:
        key = " ".join(content.lower().split())
        if key in self._seen or len(self.state.kept) >= MAX_PER_SESSION:
            return
        self._seen.add(key)
        self.state.kept.append([kind, content[:MAX_SENTENCE * 2]])
        self.found.append(CapturedLearning(type=kind, content=content[:MAX_SENTENCE * 2],
                                           confidence=confidence, evidence=evidence,
                                           subject=subject))


def _subject(name: str, tool_input: dict[str, Any]) -> str:
    """What a tool call is about, so a later call on the same thing can be recognised."""
    if name == "Bash" and isinstance(tool_input.get("command"), str):
        command = " ".join(tool_input["command"].split())
        return command[:160]
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    return str(path)[:300] if isinstance(path, str) and path else ""


def _result_text(content: object, extra: object) -> str:
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(
            str(p.get("text")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    else:
        text = ""
    if isinstance(extra, dict) and isinstance(extra.get("stderr"), str):
        text = f"{text}\n{extra['stderr']}"
    return text[:20_000]


def _failed(part: dict[str, Any], output: str, extra: object) -> bool:
    if part.get("is_error") is True:
        return True
    if isinstance(extra, dict) and extra.get("interrupted") is True:
        return False
    head = output[:4000]
    return any(marker in head for marker in _ERROR_MARKERS) and "0 failed" not in head


def _error_line(output: str) -> str:
    """The line of a tool's output that names the error, cut to 200 characters.

    A line naming an exception or an ``error:`` beats a summary line (``1 failed``, ``make:
    *** Error 1``), which says only that something failed; the last such line wins.
    """
    lines = [line.strip() for line in strip_private(output).splitlines() if line.strip()]
    lines = lines[:400]
    for line in reversed(lines):
        if _NAMED_ERROR.search(line) and not line.startswith(("make:", "npm ERR!")):
            return line[:200]
    for line in reversed(lines):
        if any(marker in line for marker in _ERROR_MARKERS):
            return line[:200]
    return (lines[-1] if lines else "an error")[:200]


_NAMED_ERROR = re.compile(r"\w(?:Error|Exception)\b|\berror:|^E\s{2,}\S|\bnot found\b")
_EXPLAINS = ("because", "the issue", "the problem", "caused by", "missing", "lacks", "lacked",
             "needs", "requires", "expects", "should have been", "instead of", "wrong",
             "forgot", "never", "since")


def _explains(sentence: str) -> bool:
    lowered = sentence.lower()
    return len(sentence.split()) >= 5 and any(word in lowered for word in _EXPLAINS)


def learnings_from_handoff(handoff: HandoffData) -> list[HandoffLearning]:
    """The ``learnings:`` of a handoff worth storing: typed and with some content."""
    return [item for item in handoff.learnings if str(item.content).strip()]


_HANDOFF_CONFIDENCE = {"verified": "HIGH", "inferred": "MEDIUM", "uncertain": "LOW"}


def store_captured(
    repository: Any,
    learnings: Iterable[CapturedLearning | HandoffLearning],
    *,
    session_id: str | None,
    project_path: str,
    source: str = "capture",
) -> tuple[list[str], int]:
    """Store captured (or handoff) learnings through the repository; return (ids, duplicates).

    Each is tagged ``captured`` and ``inferred``, with the project as its context, so the next
    SessionStart of the project finds it; the repository scrubs and de-duplicates. A learning
    the repository rejects (a duplicate, an unknown type) is skipped, never raised.
    """
    from hrm.continuity.learnings_types import LearningInput
    from hrm.errors import ErrorCode, HRMError

    ids: list[str] = []
    duplicates = 0
    for item in learnings:
        if isinstance(item, CapturedLearning):
            kind, confidence, tags = item.type, item.confidence, ["captured", "inferred"]
        else:
            status = str(getattr(item.confidence, "value", item.confidence)).lower()
            kind, confidence = item.type, _HANDOFF_CONFIDENCE.get(status, "LOW")
            tags = ["captured", "handoff"] + (["inferred"] if status != "verified" else [])
        try:
            stored = repository.store_learning(LearningInput(
                content=item.content, type=kind, tags=tags, confidence=confidence,
                context=project_path, session_id=session_id, source=source,
            ))
        except HRMError as exc:
            duplicates += exc.code is ErrorCode.DUPLICATE_DETECTED
            continue
        ids.append(stored.id)
    return ids, duplicates


def with_learnings(handoff: HandoffData, found: Iterable[CapturedLearning]) -> HandoffData:
    """`handoff` with captured learnings added to its ``learnings:`` (marked inferred)."""
    from hrm.continuity.confidence import VerificationStatus
    from hrm.continuity.handoffs import HandoffLearning

    known = {" ".join(item.content.lower().split()) for item in handoff.learnings}
    added = [
        HandoffLearning(type=item.type, content=item.content,
                        confidence=VerificationStatus.INFERRED)
        for item in found if " ".join(item.content.lower().split()) not in known
    ]
    return replace(handoff, learnings=[*handoff.learnings, *added])
