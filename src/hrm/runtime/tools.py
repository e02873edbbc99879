"""Tools agents and plan steps may call, each behind a declared capability.

`ToolRegistry.call` is the only way in: it refuses a tool whose capability the caller does not
hold, so an agent's definition (its ``capabilities``) bounds what it can touch. The built-in
tools are read-only: reading a file and listing a directory inside allowed roots (symlinks are
resolved first, so neither ``..`` nor a link can leave a root), and searching memory or
learnings through callables the caller injects (the runtime sits below the stores it searches).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hrm.errors import HRMError
from hrm.scrubbing import scrub, scrub_text

__all__ = [
    "BUILTIN_TOOL_CAPABILITIES",
    "CAPABILITY_DELEGATE",
    "CAPABILITY_READ_FILES",
    "CAPABILITY_SEARCH_LEARNINGS",
    "CAPABILITY_SEARCH_MEMORY",
    "SearchFn",
    "Tool",
    "ToolRegistry",
]

logger = logging.getLogger(__name__)

CAPABILITY_READ_FILES = "read_files"
"""Read files and list directories inside the allowed roots."""
CAPABILITY_SEARCH_MEMORY = "search_memory"
"""Search the episodic and shared memory compartments."""
CAPABILITY_SEARCH_LEARNINGS = "search_learnings"
"""Search long-term learnings."""
CAPABILITY_DELEGATE = "delegate"
"""Ask the runtime to run further agents (bounded by a bundle's ``max_depth``)."""

BUILTIN_TOOL_CAPABILITIES: dict[str, str] = {
    "read_file": CAPABILITY_READ_FILES,
    "list_dir": CAPABILITY_READ_FILES,
    "search_memory": CAPABILITY_SEARCH_MEMORY,
    "search_learnings": CAPABILITY_SEARCH_LEARNINGS,
}
"""Each built-in tool and the capability it needs."""

SearchFn = Callable[[str, int], Sequence[Mapping[str, Any]]]
"""``(query, limit) -> hits``: a search over a store the caller owns."""

_DEFAULT_MAX_BYTES = 64 * 1024
_MAX_ENTRIES = 500
_MAX_LIMIT = 50


@dataclass(frozen=True, kw_only=True)
class Tool:
    """One callable tool and the capability a caller needs to use it."""

    name: str
    """How agents and steps name the tool."""
    description: str
    """One line for prompts and ``hrm agents show``."""
    capability: str
    """The capability a caller must hold."""
    handler: Callable[[Mapping[str, Any]], Any] = field(repr=False)
    """Does the work; receives the call's arguments."""
    parameters: Mapping[str, str] = field(default_factory=dict)
    """Argument names and what each means (for prompts)."""


class ToolRegistry:
    """The tools available in one runtime; calls are checked against the caller's capabilities.

    Thread-safe for calls (the registry is read-only once built); register tools before use.
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    @classmethod
    def with_builtins(
        cls,
        *,
        allowed_roots: Iterable[str | Path] = (),
        search_memory: SearchFn | None = None,
        search_learnings: SearchFn | None = None,
        max_read_bytes: int = _DEFAULT_MAX_BYTES,
    ) -> ToolRegistry:
        """A registry with the safe built-ins.

        File tools are registered only when ``allowed_roots`` is non-empty, and each search tool
        only when its callable is given, so a tool that could not work is absent, not silent.
        """
        registry = cls()
        roots = [Path(r).resolve() for r in allowed_roots]
        if roots:
            files = _FileTools(roots, max_read_bytes=max_read_bytes)
            registry.register(Tool(
                name="read_file",
                description="Read a text file inside the allowed roots.",
                capability=CAPABILITY_READ_FILES,
                handler=files.read_file,
                parameters={"path": "file path (relative to the first root or absolute)"},
            ))
            registry.register(Tool(
                name="list_dir",
                description="List a directory inside the allowed roots.",
                capability=CAPABILITY_READ_FILES,
                handler=files.list_dir,
                parameters={"path": "directory path (default: the first root)"},
            ))
        if search_memory is not None:
            registry.register(_search_tool(
                "search_memory", "Search episodic and shared memory.",
                CAPABILITY_SEARCH_MEMORY, search_memory,
            ))
        if search_learnings is not None:
            registry.register(_search_tool(
                "search_learnings", "Search long-term learnings.",
                CAPABILITY_SEARCH_LEARNINGS, search_learnings,
            ))
        return registry

    def register(self, tool: Tool) -> None:
        """Add a tool; a second tool with the same name is refused."""
        if tool.name in self._tools:
            raise HRMError.validation_failed(
                f"A tool named '{tool.name}' is already registered", tool=tool.name
            )
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        """Registered tool names, sorted."""
        return sorted(self._tools)

    def get(self, name: str) -> Tool:
        """The tool called ``name``.

        Raises:
            HRMError: ``NOT_FOUND`` naming the registered tools.
        """
        tool = self._tools.get(name)
        if tool is None:
            raise HRMError.not_found("tool", name, f"registered: {', '.join(self.names())}")
        return tool

    def tools_for(self, capabilities: Iterable[str]) -> list[Tool]:
        """The tools a holder of ``capabilities`` may call, sorted by name."""
        held = set(capabilities)
        return [self._tools[n] for n in self.names() if self._tools[n].capability in held]

    def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        capabilities: Iterable[str],
        caller: str = "caller",
    ) -> Any:
        """Run a tool for a caller holding ``capabilities``.

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown tool; ``GATE_DENIED`` when the caller lacks
                the tool's capability or a path leaves the allowed roots; ``VALIDATION_FAILED``
                for bad arguments.
        """
        tool = self.get(name)
        if tool.capability not in set(capabilities):
            raise HRMError.gate_denied(
                "tool_capability",
                f"'{caller}' may not call tool '{name}': it needs capability "
                f"'{tool.capability}', which '{caller}' does not hold",
                tool=name,
                capability=tool.capability,
                caller=caller,
            )
        logger.debug("tool %s called by %s", name, caller)
        return tool.handler(dict(arguments or {}))


def _search_tool(name: str, description: str, capability: str, search: SearchFn) -> Tool:
    def handler(arguments: Mapping[str, Any]) -> Any:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise HRMError.validation_failed(f"Tool '{name}' needs a non-empty 'query'", tool=name)
        limit = arguments.get("limit", 5)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= _MAX_LIMIT:
            raise HRMError.validation_failed(
                f"Tool '{name}': 'limit' must be an integer from 1 to {_MAX_LIMIT}", tool=name
            )
        return [scrub(dict(hit)) for hit in search(query, limit)]

    return Tool(
        name=name,
        description=description,
        capability=capability,
        handler=handler,
        parameters={
            "query": "what to look for",
            "limit": f"at most this many hits (1-{_MAX_LIMIT})",
        },
    )


class _FileTools:
    """Read-only file access confined to resolved roots."""

    def __init__(self, roots: list[Path], *, max_read_bytes: int) -> None:
        self.roots = roots
        self.max_read_bytes = max_read_bytes

    def confine(self, raw: Any) -> Path:
        """The resolved path, if it lies inside a root; symlinks are followed before checking."""
        if raw is None or raw == "":
            return self.roots[0]
        if not isinstance(raw, str) or "\x00" in raw:
            raise HRMError.validation_failed("'path' must be a string", path=repr(raw))
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.roots[0] / candidate
        resolved = candidate.resolve()
        if not any(resolved.is_relative_to(root) for root in self.roots):
            raise HRMError.gate_denied(
                "tool_path",
                f"Path '{raw}' resolves outside the allowed roots "
                f"({', '.join(str(r) for r in self.roots)})",
                path=raw,
            )
        return resolved

    def read_file(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        path = self.confine(arguments.get("path"))
        if not path.is_file():
            raise HRMError.not_found("file", str(path), "list_dir shows what exists")
        try:
            with path.open("rb") as handle:
                data = handle.read(self.max_read_bytes + 1)
        except OSError as exc:
            raise HRMError.permission_denied(path) from exc
        truncated = len(data) > self.max_read_bytes
        text = data[: self.max_read_bytes].decode("utf-8", errors="replace")
        return {"path": str(path), "content": scrub_text(text), "truncated": truncated}

    def list_dir(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        path = self.confine(arguments.get("path"))
        if not path.is_dir():
            raise HRMError.not_found("directory", str(path))
        entries: list[dict[str, Any]] = []
        try:
            children = sorted(path.iterdir(), key=lambda p: p.name)
        except OSError as exc:
            raise HRMError.permission_denied(path) from exc
        for child in children[:_MAX_ENTRIES]:
            kind = "dir" if child.is_dir() else "file" if child.is_file() else "other"
            size = child.stat().st_size if kind == "file" else None
            entries.append({"name": child.name, "type": kind, "size": size})
        return {"path": str(path), "entries": entries, "truncated": len(children) > _MAX_ENTRIES}
