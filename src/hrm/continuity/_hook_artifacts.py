"""The continuity files the hooks off the prompt path read and write: handoffs, ledgers, plans.

SessionStart renders the latest handoff and the active continuity ledger as context, PostToolUse
recognises a handoff, plan or ledger just written so it can be indexed, and PreCompact and
SessionEnd write the session as a handoff. They live apart from `hrm.continuity.hooks`, which
every prompt imports: those handlers import this module when they run, so UserPromptSubmit never
loads it (D21). Like `hooks`, it imports no `typing`, `dataclasses` or `logging` at module level.
"""

from __future__ import annotations

import re
from pathlib import Path

from hrm.continuity.hooks import MAX_ADDITIONAL_CONTEXT, _name, _one_line

TYPE_CHECKING = False  # as in `hooks`: hook processes import this module; no typing at run time
if TYPE_CHECKING:
    from typing import Any

    from hrm.home import HRMHome

_ARTIFACT_READ_LIMIT = 1 << 20
"""At most 1 MB of an artifact is read for indexing; the rest is not worth a hook's time."""
_PLAN_NAME = r"(?:^|[-_.\s])plans?(?:[-_.\s]|$)"


# -- SessionStart: the last session's handoff and ledger as context --------------------------


def _ledger_summary(project: Path) -> tuple[Path, str] | None:
    from hrm.continuity.continuity_ledger import find_active_ledger, summarize_ledger

    path = find_active_ledger(project)
    if path is None:
        return None
    return Path(path), summarize_ledger(path, MAX_ADDITIONAL_CONTEXT // 2)


def _git_branch(project: Path) -> str:
    """The checked-out branch, read from ``.git/HEAD`` (no subprocess: hooks must be fast)."""
    from hrm._paths import read_bytes
    from hrm.errors import HRMError

    git = project / ".git"
    try:
        if git.is_file():
            pointer = _small_text(read_bytes(git, max_bytes=4096, truncate=True))
            if not pointer.startswith("gitdir:"):
                return ""
            gitdir = Path(pointer.removeprefix("gitdir:").strip())
            git = gitdir if gitdir.is_absolute() else project / gitdir
        head = _small_text(read_bytes(git / "HEAD", max_bytes=4096, truncate=True))
    except (OSError, HRMError):  # a project's files are data: a FIFO here must not hang us
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: ") else ""


def _small_text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").strip()


def _project_query(project: Path, description: str) -> str:
    """The SessionStart memory query: project name, git branch, the last task's description."""
    parts = [project.name, _git_branch(project), description]
    words = " ".join(p for p in parts if p).replace("-", " ").replace("_", " ")
    return _one_line(words, 300)


def _handoff_description(data: Any) -> str:
    task = getattr(data, "task", None)
    return _one_line(getattr(task, "description", "") or "", 200)


def _render_header(project: Path, mode: str) -> str:
    return f"hrm continuity notes for project '{project.name}' ({project}); session {mode.lower()}."


def _render_handoff_section(path: Path, data: Any, origin: str = "") -> str:
    task = getattr(data, "task", None)
    resume = getattr(data, "resume", None)
    session = getattr(data, "session", None)
    ended = getattr(session, "ended_at", None) or getattr(session, "started_at", None)
    lines = [f"## Latest handoff ({ended or 'undated'}, {path})"]
    if origin:
        lines.append(f"Source: {_one_line(origin, 400)}.")
    lines.append(f"Task: {_one_line(getattr(task, 'description', '') or '(none)', 500)}")
    status = getattr(task, "status", None)
    if status is not None:
        lines.append(f"Status: {_name(status)}")
    steps = list(getattr(resume, "next_steps", None) or [])
    if steps:
        lines.append("Next steps:")
        lines.extend(f"- {_one_line(step, 300)}" for step in steps[:10])
    blockers = list(getattr(data, "blockers", None) or [])
    if blockers:
        lines.append("Blockers:")
        lines.extend(f"- {_one_line(b, 300)}" for b in blockers[:5])
    warnings = list(getattr(resume, "warnings", None) or [])
    if warnings:
        lines.append("Warnings:")
        lines.extend(f"- {_one_line(w, 300)}" for w in warnings[:5])
    learned = list(getattr(data, "learnings", None) or [])
    if learned:
        lines.append("Learnings (✓ verified, ? inferred, ✗ uncertain):")
        lines.extend(f"- {_marked(item)}" for item in learned[:8])
    return "\n".join(lines)


def _marked(item: Any) -> str:
    """A handoff's finding with the ConfidenceMarker symbol of how it was checked (003 §5)."""
    from hrm.confidence import MARKERS, VerificationStatus

    raw = getattr(item, "confidence", VerificationStatus.UNCERTAIN)
    try:
        status = VerificationStatus(str(getattr(raw, "value", raw)).lower())
    except ValueError:
        status = VerificationStatus.UNCERTAIN  # a level nobody can vouch for is not a check
    kind = _name(getattr(item, "type", "LEARNING"))
    return f"{MARKERS[status]} [{kind}] {_one_line(getattr(item, 'content', ''), 300)}"


def _render_ledger_section(path: Path, summary: str) -> str:
    if not summary.strip():
        return ""
    return f"## Active continuity ledger ({path})\n{summary.strip()}"


# -- PostToolUse: recognising an artifact just written ---------------------------------------


def _classify_artifact(path: Path, home: HRMHome) -> str | None:
    """``handoff``, ``plan`` or ``ledger`` when `path` looks like one (003 Integration 5)."""
    name = path.name.lower()
    suffix = path.suffix.lower()
    parents = {p.lower() for p in path.parent.parts}
    if suffix not in (".md", ".yaml", ".yml"):
        return None
    if suffix == ".md" and (name.startswith("continuity") or "ledgers" in parents):
        return "ledger"
    in_handoffs = "handoffs" in parents or _is_under(path, home.handoffs_dir)
    if in_handoffs or "handoff" in name:
        return "handoff"
    if suffix == ".md" and ("plans" in parents or re.search(_PLAN_NAME, path.stem.lower())):
        return "plan"
    return None


def _is_under(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return False
    return True


def _artifact_roots(home: HRMHome, project: Path) -> list[Path]:
    """Where an artifact a tool wrote may be read from: the project, the home, Claude's own."""
    import os

    claude = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return [project, home.root, Path(claude)]


def _read_bounded(path: Path, roots: list[Path]) -> str:
    """The first megabyte of an artifact: a regular file inside one of `roots`, or an error.

    The path is a tool's input, so it is data: a FIFO, a device or a path leading out of the
    roots (by ``..`` or a symlink) is refused, never opened for reading.
    """
    from hrm._paths import read_bytes

    data = read_bytes(
        path, max_bytes=_ARTIFACT_READ_LIMIT, root=roots, what="artifact", truncate=True
    )
    return data.decode("utf-8", errors="replace")
