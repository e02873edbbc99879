"""The first thing SessionEnd and PreCompact do: a minimal handoff, on disk, before anything else.

Under load, three SessionEnd hooks run at once wrote none of their handoffs: reading the
transcript, validating and serialising took longer than Claude Code's 1.5 s, the process was
killed, and the session was gone (issue 31). So the hook now writes a *minimal* handoff first —
who, where, when, the first thing the person asked and where the transcript is — with nothing but
the standard library, ``json`` (a JSON document is YAML, so the store reads it like any other),
and the scrubber; fsynced, renamed into place without ever replacing another file, its
directory fsynced. Only then is the full handoff built, and it replaces this file (`HandoffStore
.enrich`) if time allows (D240).

Names never collide, even between processes racing on one home: the file is published with
``link``, which fails rather than overwrite, and the next counter is tried.

This module is imported by the SessionEnd hook before anything heavy: it imports only `json`,
`os`, `time` and hrm's own cheap modules.
"""

from __future__ import annotations

import contextlib
import json
import os
import re  # json imports it anyway
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = [
    "MINIMAL_STAGE",
    "STAGE_KEY",
    "first_prompt",
    "fsync_directory",
    "is_minimal",
    "minimal_document",
    "publish",
    "session_dirname",
    "write_minimal",
]

STAGE_KEY = "stage"
"""The ``extra`` key saying how far a hook's handoff got: ``minimal`` or ``enriched``."""
MINIMAL_STAGE = "minimal"
_SCHEMA = "hrm-handoff-v1"
_VERSION = "1.0"
_HEAD_BYTES = 256 << 10
"""How much of the transcript's head is searched for the first prompt (the full read is later)."""
_HEAD_LINES = 400
_NOT_PROMPTS = ("<command-", "<local-command", "Caveat:", "[Request interrupted")


def session_dirname(session_id: str) -> str:
    """The folder of a session's handoffs: its id with anything unsafe in a name replaced."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", session_id).strip("-.")[:64]
    return slug or "general"


def _iso_now() -> str:
    now = time.time()
    micros = int((now % 1) * 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{micros:06d}+00:00"


def first_prompt(transcript: str | None) -> str:
    """The first thing the person typed, from the head of the transcript; ``""`` if not found.

    Reads at most `_HEAD_BYTES` of a regular file (never a FIFO), skips what is not a JSON
    object, and drops ``<private>`` text; the caller scrubs it with the rest of the document.
    """
    if not transcript:
        return ""
    from hrm._paths import read_bytes
    from hrm.errors import HRMError

    try:
        head = read_bytes(transcript, max_bytes=_HEAD_BYTES, truncate=True, what="transcript")
    except (HRMError, OSError):
        return ""
    for line in head.splitlines()[:_HEAD_LINES]:
        text = _prompt_of(line)
        if text:
            from hrm.scrubbing import strip_private

            cleaned = strip_private(text).strip()
            if cleaned and not cleaned.startswith(_NOT_PROMPTS):
                first = next(s.strip() for s in cleaned.splitlines() if s.strip())
                return first if len(first) <= 200 else first[:199] + "…"
    return ""


def _prompt_of(line: bytes) -> str:
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return ""
    if not isinstance(entry, dict) or entry.get("type") != "user" or entry.get("isMeta"):
        return ""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        if any(isinstance(p, dict) and p.get("type") == "tool_result" for p in content):
            return ""
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def minimal_document(
    *,
    session_id: str,
    project_path: str,
    moment: str,
    trigger: str,
    transcript_path: str | None,
    prompt: str,
) -> dict[str, Any]:
    """The native handoff document a hook can write before it has read the transcript.

    Args:
        session_id: The ending session.
        project_path: Its project.
        moment: ``session end`` or ``compaction``.
        trigger: SessionEnd's ``reason`` or PreCompact's ``trigger``.
        transcript_path: Where the transcript is, so the next session can read it.
        prompt: The first thing the person asked (`first_prompt`), or ``""``.
    """
    now = _iso_now()
    where = f" The transcript is at {transcript_path}." if transcript_path else ""
    steps = [f"Read the transcript at {transcript_path} to pick up the session"] if (
        transcript_path
    ) else []
    return {
        "version": _VERSION,
        "schema": _SCHEMA,
        "session": {"id": session_id, "started_at": now, "ended_at": now},
        "task": {
            "description": prompt or f"Continue the work of session {session_id}",
            "status": "paused",
            "skills_used": [],
        },
        "context": {
            "project_path": project_path, "git_commit": "", "git_branch": "", "key_files": [],
        },
        "decisions": [],
        "artifacts": {"created": [], "modified": [], "deleted": []},
        "learnings": [],
        "blockers": [],
        "resume": {"next_steps": steps, "context_needed": [], "warnings": []},
        "notes": (
            f"Written by `hrm hook` at {moment}{f' ({trigger})' if trigger else ''} before the "
            f"session was summarised; the summary did not finish in time.{where}"
        ),
        "extra": {
            "source": "hrm-hook",
            STAGE_KEY: MINIMAL_STAGE,
            "trigger": trigger,
            "transcript_path": transcript_path or "",
        },
    }


def is_minimal(document: Any) -> bool:
    """Whether a handoff document is a hook's minimal one, which enrichment may replace."""
    extra = document.get("extra") if isinstance(document, dict) else None
    return isinstance(extra, dict) and extra.get(STAGE_KEY) == MINIMAL_STAGE


def publish(folder: Path, stem: str, suffix: str, payload: bytes) -> Path:
    """Write `payload` durably under a new name ``<stem>[-N]<suffix>`` in `folder`; return it.

    The bytes go to a private temporary file, are fsynced, and are published with ``link``,
    which fails instead of replacing a file another process published under the same name; the
    folder is fsynced after, so the name survives a crash too.

    Raises:
        OSError: The home cannot be written.
    """
    from hrm._private import make_private_dirs

    make_private_dirs(folder)
    temporary = folder / f".{stem}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.write(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        target = _link_new_name(temporary, folder, stem, suffix)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    fsync_directory(folder)
    return target


def _link_new_name(temporary: Path, folder: Path, stem: str, suffix: str) -> Path:
    for counter in range(10_000):
        target = folder / (f"{stem}{suffix}" if counter == 0 else f"{stem}-{counter}{suffix}")
        try:
            os.link(temporary, target)
        except FileExistsError:
            continue
        except OSError:
            # A file system without hard links: check-then-rename, racy only there.
            if target.exists():
                continue
            os.rename(temporary, target)
        return target
    raise FileExistsError(f"no free handoff name for {stem} in {folder}")


def fsync_directory(folder: Path) -> None:
    """Make a rename or link in `folder` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        return
    finally:
        os.close(fd)


def write_minimal(handoffs_dir: Path, document: dict[str, Any]) -> Path:
    """Scrub `document` and publish it as ``<handoffs>/<session>/<UTC stamp>.yaml``."""
    from hrm.scrubbing import scrub

    clean = scrub(document)
    now = time.time()
    stamp = time.strftime("%Y-%m-%d_%H-%M-%S", time.gmtime(now)) + f"-{int((now % 1) * 1e6):06d}"
    payload = json.dumps(clean, ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
    folder = handoffs_dir / session_dirname(str(clean["session"]["id"]))
    return publish(folder, stamp, ".yaml", payload)
