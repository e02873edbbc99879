"""What matched skill rules do to a prompt: shown as required steps, or a block, and why.

Issue 31 found every ordinary prompt ("Fix the typo in the README", "Open a PR for this branch")
erased by Continuous-Claude's real rules, whose ``systematic-debugging``, ``databases`` and
``code-review`` are marked ``enforcement: block``: Claude Code drops a blocked prompt, and
resubmitting blocks again. So a rule marked ``block`` is a required step in the context the
assistant sees, as Continuous-Claude's own hook presents its critical skills (D221), and stops
a prompt only when the person opted in with ``continuity.enforcement: block`` — and, for a
rule from the project's own files, once the person trusts the project (D220). A block says
which rule, from which file, and how to turn blocking off.

The UserPromptSubmit hook imports this module on every prompt that matched a rule; it imports
nothing beyond the standard library's cheapest modules (see `hrm.continuity.hooks`).
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from hrm.home import HRMHome

__all__ = ["HeldRule", "block_reason", "blocking_permission", "required_section", "rule_sources"]


def rule_sources(rules: Any, matches: list[Any]) -> dict[str, Path]:
    """The file each matched rule was loaded from, by skill name."""
    sources: dict[str, Path] = {}
    for match in matches:
        table = rules.agents if getattr(match, "kind", "skill") == "agent" else rules.skills
        rule = table.get(match.skill)
        path = getattr(rule, "source_path", None)
        if path is not None:
            sources[match.skill] = Path(path)
    return sources


class HeldRule:
    """A ``block`` rule of a project file that is not trusted: shown as required, not blocking."""

    __slots__ = ("digest", "path", "project", "skill")

    def __init__(self, skill: str, path: Path, digest: str | None, project: Path) -> None:
        self.skill = skill
        self.path = path
        self.digest = digest
        self.project = project

    def note(self) -> str:
        """One line for the assistant's context and the hook log."""
        return (
            f"hrm: the project's skill rule '{self.skill}' in {self.path} is marked block, but "
            f"the project is not trusted, so it is shown as a required step instead; the person "
            f"can run `hrm trust {self.project}` to let it block"
        )


def blocking_permission(
    home: HRMHome, project: Path, sources: dict[str, Path], held: list[HeldRule]
) -> Callable[[Any], bool]:
    """Which matched ``block`` rules may stop the prompt: the home's and the configured extra
    files' always; the project's own files' only when the project trusts them (D220). Each one
    held back is added to `held`."""
    from hrm.continuity.skills import RULES_FILENAME
    from hrm.trust import TrustStore

    project_files = {
        project / ".claude" / "skills" / RULES_FILENAME,
        project / ".hrm" / RULES_FILENAME,
    }
    store = TrustStore(home)
    verdicts: dict[Path, Any] = {}

    def may_block(match: Any) -> bool:
        path = sources.get(match.skill)
        if path is None or path not in project_files:
            return True
        if path not in verdicts:
            verdicts[path] = store.check(project, path)
        verdict = verdicts[path]
        if not verdict.trusted:
            held.append(HeldRule(match.skill, path, verdict.digest, project))
        return bool(verdict.trusted)

    return may_block


def required_section(required: list[Any], render: Callable[[Any], str]) -> str:
    """The rules marked ``block`` as required steps, the way Continuous-Claude presents
    critical skills: before anything else, and with what to do about them."""
    if not required:
        return ""
    lines = ["## REQUIRED before responding (skill rules marked block)"]
    lines.extend(render(match) for match in required)
    lines.append("ACTION: use the required skill(s) above BEFORE responding.")
    return "\n".join(lines)


def block_reason(
    blocking: list[str], matches: list[Any], sources: dict[str, Path], config_path: Path
) -> str:
    """Why a prompt was blocked: each rule with its file, and how to stop rules blocking."""
    by_name = {m.skill: m for m in matches}
    parts = []
    for name in blocking:
        source = sources.get(name)
        where = f" in {source}" if source is not None else ""
        description = str(getattr(by_name.get(name), "description", "") or "").strip()
        about = f": {description}" if description else ""
        parts.append(f"the skill rule '{name}' (enforcement: block{where}){about}")
    them = "that skill" if len(blocking) == 1 else "those skills"
    return (
        f"Blocked by {'; '.join(parts)}. Use {them}, then resubmit the prompt. To stop skill "
        f"rules from blocking prompts, set `continuity.enforcement: suggest` in {config_path} "
        "(a rule marked block is then shown as a required step), or mark the rule "
        "`enforcement: suggest`."
    )
