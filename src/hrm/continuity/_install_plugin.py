"""The command hrm writes into Claude Code's files, the project's ``.mcp.json``, and the plugin.

A project's ``.claude/settings.json`` and ``.mcp.json`` are committed and shared, so what they
say to run must work on every machine that checks the project out (issue 31 item 8). Before,
the installer wrote the absolute path of the hrm it ran from — ``/home/me/.venv/bin/hrm`` — a
path that exists only on one machine. Now (D250) the command is, in order:

* what the person chose (``--command``), as given;
* ``"$CLAUDE_PROJECT_DIR"/<path>`` when the hrm that runs lies inside the project (its own
  ``.venv``): the same relative place on every checkout;
* ``hrm``, found on ``PATH`` — with a note when this machine cannot find it there.

The person's own ``~/.claude/settings.json`` is not shared: it keeps the absolute path, which
works without ``PATH``. The plugin layout (``.claude-plugin/plugin.json`` with the MCP server,
``hooks/hooks.json`` with the hooks, as Claude Code's plugin reference lays them out) uses the
portable command too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hrm._atomic import atomic_write
from hrm.errors import HRMError

__all__ = [
    "MCP_SERVER_NAME",
    "PortableCommand",
    "install_mcp_json",
    "portable_command",
    "write_plugin",
]

MCP_SERVER_NAME = "hrm"
"""The key hrm's server has under ``mcpServers``."""
_PROJECT_VAR = "$CLAUDE_PROJECT_DIR"
_SHELL_SAFE = re.compile(r"^[A-Za-z0-9_./:+=@%,-]+$")


@dataclass(frozen=True)
class PortableCommand:
    """How a shared file runs hrm: in a shell (hooks) and as an MCP server's ``command``."""

    shell: str
    """The executable as a shell word (quoted where needed), for ``"<shell> hook <event>"``."""
    mcp: str
    """The same for ``.mcp.json``, where ``${VAR}`` is expanded but no shell runs."""
    note: str = ""
    """A warning for the person (hrm is not on this machine's ``PATH``), or empty."""


def portable_command(
    project_dir: Path, *, chosen: str | None = None, executable: Path | None = None
) -> PortableCommand:
    """The command a committed file should use to run hrm (see the module docstring).

    Args:
        project_dir: The project whose files are written.
        chosen: ``--command``: used as given (a word such as ``hrm`` or ``uvx hrm``, or a path).
        executable: The hrm running now; default: ``hrm`` on ``PATH``, else beside Python.
    """
    if chosen is not None:
        if not chosen.strip():
            raise HRMError.validation_failed("--command is empty; give hrm's command or path",
                                             field="command")
        return PortableCommand(shell=chosen.strip(), mcp=chosen.strip())
    running = executable or _running_hrm()
    try:
        inside = running.resolve().relative_to(project_dir.resolve())
    except (OSError, ValueError):
        inside = None
    if inside is not None:
        relative = inside.as_posix()
        return PortableCommand(shell=f'"{_PROJECT_VAR}"/{_quoted(relative)}',
                               mcp=f"${{CLAUDE_PROJECT_DIR:-.}}/{relative}")
    note = "" if shutil.which("hrm") else (
        "hrm is not on this machine's PATH: Claude Code will not find `hrm` until it is (or "
        "rerun with --command PATH)"
    )
    return PortableCommand(shell="hrm", mcp="hrm", note=note)


def _running_hrm() -> Path:
    import sys

    found = shutil.which("hrm")
    if found:
        return Path(found)
    return Path(sys.executable).parent / "hrm"


def _quoted(text: str) -> str:
    if _SHELL_SAFE.match(text):
        return text
    return '"' + re.sub(r'(["\\$`])', r"\\\1", text) + '"'


# -- .mcp.json ---------------------------------------------------------------------------------


def install_mcp_json(
    path: Path, command: PortableCommand, *, uninstall: bool = False
) -> str:
    """Register (or remove) hrm's server in a ``.mcp.json``; other servers stay as they were.

    Returns:
        ``added``, ``updated``, ``removed`` or ``unchanged``.

    Raises:
        HRMError: ``PARSE_ERROR`` naming the file when it is not a JSON object with an object
            ``mcpServers``; nothing is written then.
    """
    current = _read_object(path)
    servers = current.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise HRMError.parse_error('"mcpServers" must be an object of server names', path=path)
    wanted = {"command": command.mcp, "args": ["mcp"]}
    if uninstall:
        if MCP_SERVER_NAME not in servers:
            return "unchanged"
        del servers[MCP_SERVER_NAME]
        outcome = "removed"
    elif servers.get(MCP_SERVER_NAME) == wanted:
        return "unchanged"
    else:
        outcome = "updated" if MCP_SERVER_NAME in servers else "added"
        servers[MCP_SERVER_NAME] = wanted
    _write_json(path, current)
    return outcome


def _read_object(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    from hrm._paths import read_text

    try:
        text = read_text(path, max_bytes=4 << 20, what="MCP configuration")
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise HRMError.parse_error(f"invalid JSON at column {exc.colno}: {exc.msg}", path=path,
                                   line=exc.lineno) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise HRMError.parse_error(f"cannot read: {exc}", path=path) from exc
    if not isinstance(data, dict):
        raise HRMError.parse_error("must be a JSON object", path=path, line=1)
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        os.chmod(path, mode)  # a shared project file, not a private one
    except OSError as exc:
        raise HRMError.permission_denied(path) from exc


# -- the plugin --------------------------------------------------------------------------------


def write_plugin(directory: Path, command: PortableCommand, *, version: str) -> list[Path]:
    """Lay out a Claude Code plugin of hrm's hooks and MCP server in `directory`.

    ``.claude-plugin/plugin.json`` names the plugin and its MCP server; ``hooks/hooks.json``
    holds the same registrations `install_claude_code` merges into settings. Files there are
    replaced: the directory is hrm's.

    Returns:
        The files written.
    """
    from hrm.continuity.install import merge_hooks

    hooks, _ = merge_hooks({}, f"{command.shell} hook")
    manifest = {
        "name": "hrm",
        "version": version,
        "description": "Continuity for Claude Code: handoffs that are never lost, learnings "
                       "captured by themselves, skill activation, and hrm's MCP tools.",
        "mcpServers": {MCP_SERVER_NAME: {"command": command.mcp, "args": ["mcp"]}},
    }
    files = {
        directory / ".claude-plugin" / "plugin.json": manifest,
        directory / "hooks" / "hooks.json": {
            "description": "hrm's continuity hooks (handoffs, learnings, skill activation)",
            **hooks,
        },
    }
    for path, content in files.items():
        _write_json(path, content)
    return list(files)
