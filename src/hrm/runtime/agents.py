"""Agents as definitions: YAML files validated by a schema, layered built-in < home < project.

`AgentRegistry.load` reads the agents hrm ships (package data), then the home's
``HOT/config/agents/*.yaml``, then a project's ``.hrm/agents/*.yaml``; a later layer replaces an
earlier definition with the same id. Each file is validated against
``agent_definition.schema.json`` at load. A bad file is reported — file, field and problem — and
skipped, so one typo never hides the other agents; `AgentRegistry.errors` lists what was skipped.

A project's agent that asks for tools, capabilities (delegation among them) or another provider
or model is loaded only once the person trusts the project with that file's content
(`hrm trust`, D219); until then it is set aside, listed in `AgentRegistry.untrusted`, and said
once per file content. An agent that only writes text with the configured model needs no trust.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from hrm import _yaml
from hrm._paths import read_bytes
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.runtime.tools import BUILTIN_TOOL_CAPABILITIES

__all__ = [
    "AGENT_FILE_SUFFIXES",
    "ORIGINS",
    "AgentDefinition",
    "AgentLoadError",
    "AgentRegistry",
    "agent_schema",
    "parse_agent_definition",
]

logger = logging.getLogger(__name__)

AGENT_FILE_SUFFIXES = (".yaml", ".yml")
"""File names the registry reads as agent definitions."""
ORIGINS = ("builtin", "home", "project")
"""Where a definition came from, in override order."""

_PROJECT_AGENTS = Path(".hrm") / "agents"
_NEEDS_TRUST = ("tools", "capabilities", "provider", "model")
"""What a project's agent may ask for only once the project is trusted."""


@dataclass(frozen=True, kw_only=True)
class AgentDefinition:
    """One agent: its role, prompt, model overrides and what it may do."""

    id: str
    """Unique id, used in proposals and on the command line."""
    role: str
    """One line saying what the agent is for."""
    system_prompt: str
    """The agent's system prompt."""
    description: str = ""
    """Longer notes for people."""
    provider: str | None = None
    """Provider override; ``None`` uses the configured one."""
    model: str | None = None
    """Model override."""
    temperature: float | None = None
    """Temperature override."""
    max_tokens: int | None = None
    """Answer length override."""
    timeout_ms: int | None = None
    """Per-agent timeout; ``None`` uses ``AGENT_TIMEOUT_MS``."""
    output_type: str = "proposal"
    """The packet type the agent returns."""
    capabilities: tuple[str, ...] = ()
    """What the agent may do beyond writing text."""
    tools: tuple[str, ...] = ()
    """Tools the agent may call (each needs its capability)."""
    origin: str = field(default="builtin", compare=False)
    """``builtin``, ``home`` or ``project``."""
    source: str = field(default="", compare=False)
    """The file it was read from."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for ``hrm agents show --json``."""
        return {
            "id": self.id,
            "role": self.role,
            "description": self.description,
            "system_prompt": self.system_prompt,
            "provider": self.provider,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout_ms": self.timeout_ms,
            "output_type": self.output_type,
            "capabilities": list(self.capabilities),
            "tools": list(self.tools),
            "origin": self.origin,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class AgentLoadError:
    """A definition file that was skipped: which file, which field, what is wrong."""

    path: str
    """The file."""
    field: str
    """The field path (``tools[1]``), or ``(file)`` when the file as a whole is bad."""
    problem: str
    """What is wrong and, where it can, what fixes it."""

    @property
    def message(self) -> str:
        """``path: field: problem``, one line."""
        return f"{self.path}: {self.field}: {self.problem}"

    def to_dict(self) -> dict[str, str]:
        """``{path, field, problem}``."""
        return {"path": self.path, "field": self.field, "problem": self.problem}


@cache
def agent_schema() -> dict[str, Any]:
    """The agent definition JSON schema hrm ships (read once)."""
    text = (
        resources.files("hrm")
        .joinpath("data", "home", "HOT", "schemas", "agent_definition.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(agent_schema())


def _field_path(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(file)"


def parse_agent_definition(
    data: Any, *, source: str = "<memory>", origin: str = "builtin"
) -> AgentDefinition:
    """Validate a parsed YAML mapping and build the definition.

    Raises:
        HRMError: ``SCHEMA_MISMATCH`` naming the source, the field and the problem (the first
            problem by position; ``context["problems"]`` holds them all).
    """
    problems = _problems(data)
    if problems:
        first = problems[0]
        raise HRMError(
            ErrorCode.SCHEMA_MISMATCH,
            f"{source}: {first[0]}: {first[1]}",
            recoverable=False,
            context={"path": source, "field": first[0], "problems": problems},
        )
    return AgentDefinition(
        id=data["id"],
        role=data["role"].strip(),
        system_prompt=data["system_prompt"].strip(),
        description=str(data.get("description", "")).strip(),
        provider=data.get("provider"),
        model=data.get("model"),
        temperature=data.get("temperature"),
        max_tokens=data.get("max_tokens"),
        timeout_ms=data.get("timeout_ms"),
        output_type=data.get("output_type", "proposal"),
        capabilities=tuple(data.get("capabilities", ())),
        tools=tuple(data.get("tools", ())),
        origin=origin,
        source=source,
    )


def _problems(data: Any) -> list[tuple[str, str]]:
    if not isinstance(data, dict):
        return [("(file)", f"expected a mapping of agent fields, got {type(data).__name__}")]
    problems: list[tuple[str, str]] = []
    for error in sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path)):
        where = _field_path(error.absolute_path)
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else error.message
            problems.append((missing, "is required"))
        elif error.validator == "additionalProperties":
            extra = sorted(set(data) - set(agent_schema()["properties"]))
            allowed = ", ".join(sorted(agent_schema()["properties"]))
            problems.extend((name, f"unknown field (allowed: {allowed})") for name in extra)
        else:
            problems.append((where, error.message))
    capabilities = data.get("capabilities", [])
    for index, tool in enumerate(data.get("tools", []) or []):
        needed = BUILTIN_TOOL_CAPABILITIES.get(tool) if isinstance(tool, str) else None
        if needed is not None and isinstance(capabilities, list) and needed not in capabilities:
            problems.append((
                f"tools[{index}]",
                f"tool '{tool}' needs capability '{needed}'; add it to capabilities",
            ))
    return problems


class AgentRegistry:
    """The agents available to a home (and project), by id.

    Read-only once loaded and safe to share between threads.
    """

    def __init__(
        self,
        definitions: Iterable[AgentDefinition] = (),
        *,
        errors: Iterable[AgentLoadError] = (),
    ) -> None:
        self._agents: dict[str, AgentDefinition] = {}
        for definition in definitions:
            self._agents[definition.id] = definition
        self.errors: list[AgentLoadError] = list(errors)
        """Files that were skipped, with file, field and problem."""
        self.untrusted: list[AgentLoadError] = []
        """Project agents set aside until the project is trusted (D219), with what they ask."""

    @classmethod
    def load(
        cls,
        home: HRMHome | str | Path | None = None,
        project_dir: str | Path | None = None,
        *,
        include_builtins: bool = True,
    ) -> AgentRegistry:
        """Built-ins, then the home's agents, then the project's; later ids win.

        Args:
            home: The hrm home (default: ``$HRM_HOME`` or ``~/.hrm``); a missing agents
                directory simply adds nothing.
            project_dir: A project whose ``.hrm/agents/`` adds or overrides agents.
            include_builtins: Whether to start from the agents hrm ships.
        """
        h = home if isinstance(home, HRMHome) else HRMHome.resolve(home)
        registry = cls()
        builtins: dict[str, AgentDefinition] = {}
        if include_builtins:
            for definition in _load_builtins(registry.errors):
                builtins[definition.id] = definition
                registry._agents[definition.id] = definition
        for definition in _load_directory(h.agents_dir, "home", registry.errors, root=h.root):
            shipped = builtins.get(definition.id)
            if shipped is not None and shipped == definition:
                continue  # `hrm init` copies the built-ins into the home unchanged
            registry._agents[definition.id] = definition
        if project_dir is not None:
            project = Path(project_dir)
            gate = _TrustGate(h, project, registry.untrusted)
            directory = project / _PROJECT_AGENTS
            for definition in _load_directory(
                directory, "project", registry.errors, root=project, gate=gate
            ):
                registry._agents[definition.id] = definition
        for error in registry.errors:
            logger.warning("agent definition skipped: %s", error.message)
        return registry

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._agents

    def __iter__(self) -> Iterator[AgentDefinition]:
        return iter(self.list())

    def __len__(self) -> int:
        return len(self._agents)

    def ids(self) -> list[str]:
        """Agent ids, sorted."""
        return sorted(self._agents)

    def list(self) -> list[AgentDefinition]:
        """Definitions sorted by id."""
        return [self._agents[i] for i in self.ids()]

    def get(self, agent_id: str) -> AgentDefinition:
        """The definition of ``agent_id``.

        Raises:
            HRMError: ``NOT_FOUND`` naming the known agents.
        """
        definition = self._agents.get(agent_id)
        if definition is None:
            raise HRMError.not_found(
                "agent", agent_id, f"known agents: {', '.join(self.ids()) or '(none)'}"
            )
        return definition

    def register(self, definition: AgentDefinition) -> None:
        """Add or replace a definition (tests and programmatic setups)."""
        self._agents[definition.id] = definition


def _load_builtins(errors: list[AgentLoadError]) -> list[AgentDefinition]:
    directory = resources.files("hrm").joinpath("data", "home", "HOT", "config", "agents")
    if not directory.is_dir():
        return []
    loaded: list[AgentDefinition] = []
    for child in sorted(directory.iterdir(), key=lambda c: c.name):
        if not child.name.endswith(AGENT_FILE_SUFFIXES):
            continue
        source = f"builtin:{child.name}"
        definition = _parse_text(child.read_text(encoding="utf-8"), source, "builtin", errors)
        if definition is not None:
            loaded.append(definition)
    return loaded


class _TrustGate:
    """Lets a project's agent through when it asks for nothing that needs trust, or when the
    project is trusted with the file's content; records and says once what it held back."""

    def __init__(self, home: HRMHome, project: Path, held: list[AgentLoadError]) -> None:
        from hrm.trust import TrustStore

        self._store = TrustStore(home)
        self._project = project
        self._held = held

    def admits(self, definition: AgentDefinition, path: Path, raw: bytes) -> bool:
        asked = [name for name in _NEEDS_TRUST if getattr(definition, name)]
        if not asked:
            return True
        from hrm.trust import digest_of

        digest = digest_of(raw)
        verdict = self._store.check(self._project, path, digest)
        if verdict.trusted:
            return True
        why = "changed since you trusted the project" if verdict.state == "changed" else (
            "the project is not trusted"
        )
        problem = (
            f"asks for {', '.join(asked)} and {why}; set aside until "
            f"`hrm trust {self._project.resolve()}`"
        )
        self._held.append(AgentLoadError(str(path), asked[0], problem))
        if self._store.first_notice("log", path, digest):
            logger.warning("project agent '%s' (%s) %s", definition.id, path, problem)
        return False


def _load_directory(
    directory: Path,
    origin: str,
    errors: list[AgentLoadError],
    *,
    root: Path,
    gate: _TrustGate | None = None,
) -> list[AgentDefinition]:
    if not directory.is_dir():
        return []
    loaded: dict[str, AgentDefinition] = {}
    for path in sorted(directory.iterdir()):
        if not path.name.endswith(AGENT_FILE_SUFFIXES) or path.name.startswith("."):
            continue
        try:
            # Bounded, regular files only, and never through a link out of the home or project.
            raw = read_bytes(path, max_bytes=_yaml.MAX_BYTES, root=root, what="agent definition")
            text = raw.decode("utf-8-sig")
        except HRMError as exc:
            errors.append(AgentLoadError(str(path), "(file)", f"cannot be read: {exc.message}"))
            continue
        except UnicodeDecodeError:
            errors.append(AgentLoadError(str(path), "(file)", "cannot be read: not UTF-8 text"))
            continue
        definition = _parse_text(text, str(path), origin, errors)
        if definition is None or (gate is not None and not gate.admits(definition, path, raw)):
            continue
        earlier = loaded.get(definition.id)
        if earlier is not None:
            errors.append(AgentLoadError(
                str(path), "id",
                f"'{definition.id}' is already defined by {earlier.source} in the same directory",
            ))
            continue
        loaded[definition.id] = definition
    return list(loaded.values())


def _parse_text(
    text: str, source: str, origin: str, errors: list[AgentLoadError]
) -> AgentDefinition | None:
    try:
        data = _yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        problem = getattr(exc, "problem", None) or str(exc)
        errors.append(AgentLoadError(source, where, f"invalid YAML: {problem}"))
        return None
    try:
        return parse_agent_definition(data, source=source, origin=origin)
    except HRMError as exc:
        for where, problem in exc.context.get("problems", []):
            errors.append(AgentLoadError(source, where, problem))
        return None
