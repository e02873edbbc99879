"""Registering `hrm hook` in Claude Code's settings.json (reference/claude-code-hooks.md §1, §11).

Settings files belong to the user: other hooks, other keys and their order must survive. So the
merge is surgical — only handlers whose command runs ``hrm hook`` are ours, found again by that
pattern, updated in place or removed — and the file is rewritten atomically after a backup copy
(``settings.json.bak-<UTC timestamp>``). Running install twice changes nothing the second time;
an unreadable settings file is an error naming its line, and nothing is written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from hrm._atomic import atomic_write
from hrm._paths import read_text
from hrm.errors import HRMError

__all__ = [
    "HOOK_REGISTRATIONS",
    "HookChanges",
    "HookRegistration",
    "InstallResult",
    "hook_command",
    "install_claude_code",
    "is_hrm_hook_command",
    "merge_hooks",
    "remove_hooks",
    "settings_path",
]

Scope = Literal["project", "global"]


@dataclass(frozen=True)
class HookRegistration:
    """One event hrm registers for, as in the reference registration (§11)."""

    event: str
    argument: str
    timeout: int
    """Seconds before Claude Code kills the hook."""
    matcher: str | None = None


HOOK_REGISTRATIONS: tuple[HookRegistration, ...] = (
    HookRegistration("SessionStart", "session-start", 10),
    HookRegistration("UserPromptSubmit", "user-prompt-submit", 5),
    HookRegistration("PostToolUse", "post-tool-use", 10, matcher="Write|Edit|MultiEdit"),
    HookRegistration("PreCompact", "pre-compact", 10),
    HookRegistration("Stop", "stop", 10),
    HookRegistration("SessionEnd", "session-end", 5),
)
"""What `install_claude_code` registers, in this order."""

_OURS = re.compile(r"""(?:^|[\s/\\"'])hrm(?:\.exe)?["']?\s+hook(?:\s|$)""")
_SHELL_SAFE = re.compile(r"^[A-Za-z0-9_./:+=@%,-]+$")


@dataclass(frozen=True, kw_only=True)
class InstallResult:
    """What an install or uninstall did to one settings file."""

    settings_path: Path
    action: Literal["installed", "updated", "unchanged", "uninstalled"]
    command: str
    """The hook command line registered (without the event argument)."""
    added: tuple[str, ...] = ()
    """Events that got an hrm handler."""
    updated: tuple[str, ...] = ()
    """Events whose hrm handler changed (another executable path or timeout)."""
    removed: tuple[str, ...] = ()
    """Events whose hrm handlers were removed."""
    backup_path: Path | None = None
    """The copy of the previous file, when there was one and it changed."""

    @property
    def changed(self) -> bool:
        """True when the settings file was written."""
        return bool(self.added or self.updated or self.removed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json``."""
        return {
            "settings_path": str(self.settings_path),
            "action": self.action,
            "changed": self.changed,
            "command": self.command,
            "added": list(self.added),
            "updated": list(self.updated),
            "removed": list(self.removed),
            "backup_path": str(self.backup_path) if self.backup_path else None,
        }


@dataclass
class HookChanges:
    """Which events a merge or removal touched."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def is_hrm_hook_command(command: object) -> bool:
    """True for a handler command that runs ``hrm hook`` (bare, by path, or quoted path)."""
    return isinstance(command, str) and bool(_OURS.search(command))


def hook_command(executable: str | Path | None = None) -> str:
    """The shell command prefix that runs this hrm's hook: ``<absolute hrm> hook``.

    Args:
        executable: The ``hrm`` executable; default `shutil.which("hrm")`, else the running
            program (``sys.argv[0]``) when it is ``hrm``, else ``hrm`` beside the interpreter.
    """
    path = Path(executable) if executable is not None else _find_executable()
    text = str(path.absolute())
    if not _SHELL_SAFE.match(text):
        escaped = re.sub(r'(["\\$`])', r"\\\1", text)
        text = f'"{escaped}"'
    return f"{text} hook"


def _find_executable() -> Path:
    found = shutil.which("hrm")
    if found:
        return Path(found).resolve()
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in ("hrm", "hrm.exe") and argv0.exists():
        return argv0.resolve()
    return Path(sys.executable).parent / "hrm"


def settings_path(
    scope: Scope, *, project_dir: Path | None = None, user_home: Path | None = None
) -> Path:
    """``<project>/.claude/settings.json`` or ``~/.claude/settings.json``."""
    if scope == "global":
        return (user_home or Path.home()) / ".claude" / "settings.json"
    return (project_dir or Path.cwd()) / ".claude" / "settings.json"


def merge_hooks(settings: dict[str, Any], command: str) -> tuple[dict[str, Any], HookChanges]:
    """Return `settings` with hrm's handlers registered; other content untouched. Pure."""
    result = json.loads(json.dumps(settings))
    changes = HookChanges()
    hooks = result.setdefault("hooks", {})
    for reg in HOOK_REGISTRATIONS:
        groups = hooks.setdefault(reg.event, [])
        wanted = {"type": "command", "command": f"{command} {reg.argument}", "timeout": reg.timeout}
        ours = [h for g in groups for h in _handlers(g) if is_hrm_hook_command(h.get("command"))]
        if not ours:
            group: dict[str, Any] = {"matcher": reg.matcher} if reg.matcher else {}
            group["hooks"] = [wanted]
            groups.append(group)
            changes.added.append(reg.event)
            continue
        if any(_same(h, wanted) for h in ours):
            _drop_duplicates(groups, keep=wanted)
            continue
        ours[0].update(wanted)
        _drop_duplicates(groups, keep=wanted)
        changes.updated.append(reg.event)
    return result, changes


def remove_hooks(settings: dict[str, Any]) -> tuple[dict[str, Any], HookChanges]:
    """Return `settings` without hrm's handlers; groups and events left empty by it go too."""
    result = json.loads(json.dumps(settings))
    changes = HookChanges()
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result, changes
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        touched = False
        for group in groups:
            handlers = _handlers(group)
            kept = [h for h in handlers if not is_hrm_hook_command(h.get("command"))]
            if len(kept) == len(handlers):
                kept_groups.append(group)
                continue
            touched = True
            if kept:
                group["hooks"] = kept
                kept_groups.append(group)
        if touched:
            changes.removed.append(event)
            if kept_groups:
                hooks[event] = kept_groups
            else:
                del hooks[event]
    if changes.removed and not hooks:
        del result["hooks"]
    return result, changes


def _handlers(group: object) -> list[dict[str, Any]]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return []
    return [h for h in group["hooks"] if isinstance(h, dict)]


def _same(handler: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(handler.get(k) == v for k, v in wanted.items())


def _drop_duplicates(groups: list[Any], *, keep: dict[str, Any]) -> None:
    """Leave exactly one hrm handler for the event (the first matching `keep`)."""
    seen = False
    for group in list(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        handlers = group["hooks"]
        dropped = False
        for handler in list(handlers):
            if not isinstance(handler, dict) or not is_hrm_hook_command(handler.get("command")):
                continue
            if not seen and _same(handler, keep):
                seen = True
                continue
            handlers.remove(handler)
            dropped = True
        if dropped and not handlers:
            # By identity: `list.remove` compares by value, and a foreign group can equal the
            # one emptied here (same matcher, no handlers) — it would go in its place.
            del groups[next(i for i, g in enumerate(groups) if g is group)]


def install_claude_code(
    path: Path,
    *,
    command: str | None = None,
    uninstall: bool = False,
    clock: Callable[[], datetime] | None = None,
) -> InstallResult:
    """Register (or with `uninstall`, remove) hrm's hooks in the settings file at `path`.

    Args:
        path: The settings.json to change; created (with its directory) if missing.
        command: The hook command prefix; default `hook_command()`.
        uninstall: Remove hrm's handlers instead of adding them.
        clock: Current time for the backup's name (aware UTC).

    Raises:
        HRMError: ``PARSE_ERROR`` naming the file and line when the existing file is not a JSON
            object (or its ``hooks`` is malformed); ``PERMISSION_DENIED`` when it cannot be
            written. Nothing is written in either case.
    """
    prefix = command or hook_command()
    existed = path.exists()
    current = _read_settings(path) if existed else {}
    if uninstall:
        updated, changes = remove_hooks(current)
    else:
        updated, changes = merge_hooks(current, prefix)
    if not (changes.added or changes.updated or changes.removed):
        return InstallResult(settings_path=path, action="unchanged", command=prefix)
    backup = _backup(path, clock) if existed else None
    _write_settings(path, updated)
    action: Literal["installed", "updated", "uninstalled"] = (
        "uninstalled" if uninstall else "installed" if changes.added else "updated"
    )
    return InstallResult(
        settings_path=path,
        action=action,
        command=prefix,
        added=tuple(changes.added),
        updated=tuple(changes.updated),
        removed=tuple(changes.removed),
        backup_path=backup,
    )


def _read_settings(path: Path) -> dict[str, Any]:
    try:
        text = read_text(path, max_bytes=16 << 20, what="settings file")  # never a FIFO (D131)
    except UnicodeDecodeError as exc:
        raise HRMError.parse_error("settings file is not UTF-8 text", path=path) from exc
    except OSError as exc:
        raise HRMError.parse_error(f"cannot read settings file: {exc.strerror}", path=path) from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HRMError.parse_error(
            f"invalid JSON at column {exc.colno}: {exc.msg}; fix or move the file and retry",
            path=path,
            line=exc.lineno,
        ) from exc
    if not isinstance(data, dict):
        raise HRMError.parse_error(
            f"settings must be a JSON object, got {type(data).__name__}", path=path, line=1
        )
    _check_hooks_shape(data, path)
    return data


def _check_hooks_shape(data: dict[str, Any], path: Path) -> None:
    hooks = data.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise HRMError.parse_error(
            f'"hooks" must be an object of event names, got {type(hooks).__name__}', path=path
        )
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise HRMError.parse_error(
                f'"hooks.{event}" must be a list of matcher groups, got {type(groups).__name__}',
                path=path,
            )


def _backup(path: Path, clock: Callable[[], datetime] | None) -> Path:
    now = clock() if clock is not None else datetime.now(UTC)
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.bak-{stamp}")
    counter = 1
    while target.exists():
        target = path.with_name(f"{path.name}.bak-{stamp}-{counter}")
        counter += 1
    try:
        shutil.copy2(path, target)
    except OSError as exc:
        raise HRMError.permission_denied(target) from exc
    return target


def _write_settings(path: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else None
        atomic_write(path, text)
        if mode is not None:
            os.chmod(path, mode)
    except OSError as exc:
        raise HRMError.permission_denied(path) from exc
