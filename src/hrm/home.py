"""The hrm home: where every piece of state lives (ARCHITECTURE §4, 004 §5, 003 §1).

`HRMHome` turns a root directory into the paths of the layout, and is the only place that
maps an agent class to its partition directories, so a crafted class name can never point a
stack outside its own partition. `initialize` creates the layout idempotently and, when the
root cannot be written, raises ``PERMISSION_DENIED`` with a fallback path that can.

Everything in a home is the person's alone: folders are created 0700 and files 0600 whatever
the umask, and a home found open to other users is tightened on `initialize` with a warning
(`hrm._private`).

Files that hrm ships into a home (schemas, default attention templates, built-in agents) live in
the package under ``hrm/data/home/`` and are copied on init: existing copies are kept unless
``force`` asks to reinstall them. Ledgers, ``memory.db`` and ``config.yaml`` are never touched by
``force``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hrm._atomic import atomic_write as _atomic_write
from hrm._private import make_private_dirs, tighten_home

__all__ = [
    "ENV_HOME",
    "HRMHome",
    "InitResult",
    "default_home_path",
    "fallback_home_path",
    "initialize",
    "parse_agent_class",
    "stack_dirname",
]

ENV_HOME = "HRM_HOME"
"""Environment variable naming the home directory."""

_RESIDENT_NAME = r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}"
MAX_RESIDENT_NAME = 64

_DEFAULT_CONFIG = """\
# hrm configuration. Precedence: built-in defaults < this file < ./.hrm/config.yaml < HRM_* env.
# `hrm config show` prints every effective value with where it came from.
# Uncomment a key to change it, e.g.:
# llm:
#   provider: offline
# altitude_default_level: operations
"""


def parse_agent_class(agent_class: str) -> tuple[str, str | None]:
    """Split and validate an agent class: ``"ADMIN"`` or ``"RESIDENT:<name>"``.

    Returns:
        ``("ADMIN", None)`` or ``("RESIDENT", name)``.

    Raises:
        HRMError: ``VALIDATION_FAILED`` for anything else, including names with path separators,
            ``..``, leading dots, control characters or more than 64 characters.
    """
    from hrm.errors import HRMError

    if not isinstance(agent_class, str):
        raise HRMError.validation_failed(
            f"Agent class must be a string, got {type(agent_class).__name__}"
        )
    if agent_class == "ADMIN":
        return ("ADMIN", None)
    prefix, sep, name = agent_class.partition(":")
    if prefix != "RESIDENT" or not sep:
        raise HRMError.validation_failed(
            f"Unknown agent class {agent_class!r}: use 'ADMIN' or 'RESIDENT:<name>'",
            agent_class=agent_class,
        )
    if ".." in name or not re.fullmatch(_RESIDENT_NAME, name):
        raise HRMError.validation_failed(
            f"Invalid resident name {name!r} in agent class {agent_class!r}: "
            f"use 1-{MAX_RESIDENT_NAME}"
            " letters, digits, '_', '-' or '.', starting with a letter or digit, with no '..'",
            agent_class=agent_class,
        )
    return ("RESIDENT", name)


def stack_dirname(agent_class: str) -> str:
    """The partition directory of an agent class: ``RESIDENT:DoPeJar`` → ``RESIDENT_DoPeJar``."""
    kind, name = parse_agent_class(agent_class)
    return kind if name is None else f"{kind}_{name}"


def default_home_path() -> Path:
    """``$HRM_HOME`` if set, else ``~/.hrm``."""
    env = os.environ.get(ENV_HOME)
    return Path(env).expanduser() if env else Path.home() / ".hrm"


def fallback_home_path() -> Path:
    """A home that should be writable when the default is not (003 §1 fallback)."""
    candidates = []
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        candidates.append(Path(xdg) / "hrm")
    import tempfile  # deferred: only needed when the default home is not writable

    user = os.getuid() if hasattr(os, "getuid") else "user"
    candidates.append(Path(tempfile.gettempdir()) / f"hrm-{user}")
    for candidate in candidates:
        if _writable_or_creatable(candidate):
            return candidate
    return candidates[-1]


def _writable_or_creatable(path: Path) -> bool:
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            return False
        probe = probe.parent
    return os.access(probe, os.W_OK | os.X_OK)


class HRMHome:
    """Paths of one hrm home. Pure path arithmetic: constructing it touches nothing.

    A frozen value (equal and hashed by `root`), written by hand rather than as a dataclass:
    `hrm hook` builds one on every prompt and importing `dataclasses` would cost it ~15 ms.
    """

    __slots__ = ("root",)
    root: Path

    def __init__(self, root: Path | str) -> None:
        # A str is taken as given (not expanded or made absolute: that is `resolve`'s job).
        object.__setattr__(self, "root", root if isinstance(root, Path) else Path(root))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen HRMHome")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen HRMHome")

    def __reduce__(self) -> tuple[type[HRMHome], tuple[Path]]:
        return (HRMHome, (self.root,))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self.root == other.root)

    def __hash__(self) -> int:
        return hash((self.root,))

    def __repr__(self) -> str:
        return f"HRMHome(root={self.root!r})"

    @classmethod
    def resolve(cls, home: str | Path | None = None) -> HRMHome:
        """The home at `home`, else ``$HRM_HOME``, else ``~/.hrm`` (absolute)."""
        path = Path(home).expanduser() if home is not None else default_home_path()
        return cls(path.absolute())

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def memory_db(self) -> Path:
        return self.root / "memory.db"

    @property
    def handoffs_dir(self) -> Path:
        return self.root / "handoffs"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def cache_dir(self) -> Path:
        """Derived data kept to save work (parsed skill rules); safe to delete at any time."""
        return self.root / "cache"

    @property
    def hot_dir(self) -> Path:
        return self.root / "HOT"

    @property
    def governance_ledger(self) -> Path:
        return self.hot_dir / "ledger" / "governance.jsonl"

    @property
    def meta_learning_ledger(self) -> Path:
        return self.hot_dir / "ledger" / "meta_learning.jsonl"

    @property
    def schemas_dir(self) -> Path:
        return self.hot_dir / "schemas"

    @property
    def hot_config_dir(self) -> Path:
        return self.hot_dir / "config"

    @property
    def agents_dir(self) -> Path:
        return self.hot_config_dir / "agents"

    @property
    def registries_dir(self) -> Path:
        return self.hot_dir / "registries"

    def ho2_dir(self, agent_class: str) -> Path:
        """The stack's HO2 ledger partition (validated agent class)."""
        return self.root / "HO2" / "ledger" / stack_dirname(agent_class)

    def ho1_dir(self, agent_class: str) -> Path:
        """The stack's HO1 ledger partition (validated agent class)."""
        return self.root / "HO1" / "ledger" / stack_dirname(agent_class)

    def decision_ledger(self, agent_class: str) -> Path:
        """HO2m: the stack's decision ledger."""
        return self.ho2_dir(agent_class) / "workorder.jsonl"

    def execution_ledger(self, agent_class: str) -> Path:
        """HO1m: the stack's execution ledger (one work order per model or tool call)."""
        return self.ho1_dir(agent_class) / "worker.jsonl"

    def episodic_ledger(self, agent_class: str) -> Path:
        """The stack's episodic trace (001 §6), a ledger beside its decision ledger."""
        return self.ho2_dir(agent_class) / "episodic.jsonl"

    def stack_memory_db(self, agent_class: str) -> Path:
        """The stack's own database: its per-stack tables, and nothing of any other stack's
        (issue 31 item 7, D320). It lives in the stack's HO2 partition."""
        return self.ho2_dir(agent_class) / "memory.db"

    def stack_memory_ledger(self, agent_class: str) -> Path:
        """The memory journal of the stack's own database, beside it (D321)."""
        return self.ho2_dir(agent_class) / "memory.jsonl"

    def memory_databases(self) -> list[Path]:
        """The home's ``memory.db`` and every stack's own database that exists, home first."""
        found = [self.memory_db] if self.memory_db.is_file() else []
        for agent_class in self.stack_classes():
            path = self.stack_memory_db(agent_class)
            if path.is_file() and not path.is_symlink():
                found.append(path)
        return found

    def all_ledgers(self) -> list[Path]:
        """Every ledger file that exists in this home, sorted."""
        found: list[Path] = []
        for tier in ("HOT", "HO2", "HO1"):
            base = self.root / tier / "ledger"
            if base.is_dir():
                found.extend(p for p in base.rglob("*.jsonl") if p.is_file())
        return sorted(found)

    def stack_classes(self) -> list[str]:
        """Agent classes that have a partition in this home (``RESIDENT_x`` → ``RESIDENT:x``)."""
        classes: set[str] = set()
        for tier in ("HO2", "HO1"):
            base = self.root / tier / "ledger"
            if not base.is_dir():
                continue
            for entry in base.iterdir():
                if not entry.is_dir() or entry.is_symlink():
                    continue
                name = entry.name
                candidate = (
                    "ADMIN" if name == "ADMIN" else name.replace("RESIDENT_", "RESIDENT:", 1)
                )
                if _is_stack_dirname(candidate, name):
                    classes.add(candidate)
        return sorted(classes)


def _is_stack_dirname(agent_class: str, name: str) -> bool:
    from hrm.errors import HRMError

    try:
        return stack_dirname(agent_class) == name
    except HRMError:
        return False


class InitResult:
    """What `initialize` did (003 §1 RingHome). A frozen value, like `HRMHome`."""

    __slots__ = (
        "config_path", "created", "handoffs_path", "installed_files", "memory_path", "path"
    )
    _FIELDS = ("path", "config_path", "memory_path", "handoffs_path", "created", "installed_files")
    path: Path
    config_path: Path
    memory_path: Path
    handoffs_path: Path
    created: bool
    """True if the home did not exist before."""
    installed_files: tuple[str, ...]
    """Shipped files copied into the home on this run, relative to its root."""

    def __init__(
        self,
        path: Path,
        config_path: Path,
        memory_path: Path,
        handoffs_path: Path,
        created: bool,
        installed_files: tuple[str, ...] = (),
    ) -> None:
        values = (path, config_path, memory_path, handoffs_path, created, installed_files)
        for name, value in zip(self._FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen InitResult")

    def __reduce__(self) -> tuple[type[InitResult], tuple[object, ...]]:
        return (InitResult, self._values())

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InitResult) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS)
        return f"InitResult({fields})"


def initialize(
    home: HRMHome | str | Path | None = None,
    *,
    force: bool = False,
    agent_class: str = "ADMIN",
) -> InitResult:
    """Create the home layout with the partitions of `agent_class`. Idempotent.

    Args:
        home: The home (or its root); default `HRMHome.resolve()`.
        force: Reinstall shipped files and recreate missing structure. Never deletes or
            rewrites ledgers, ``memory.db``, handoffs or ``config.yaml``.
        agent_class: The stack whose partitions to create.

    Raises:
        HRMError: ``PERMISSION_DENIED`` with ``context["fallback_path"]`` when the root cannot be
            written; ``DISK_FULL`` when the disk is full; ``PATH_EXISTS`` when the root is a file.
    """
    from hrm.errors import ErrorCode, HRMError

    h = home if isinstance(home, HRMHome) else HRMHome.resolve(home)
    root = h.root
    if root.exists() and not root.is_dir():
        raise HRMError(
            ErrorCode.PATH_EXISTS,
            f"'{root}' exists and is not a directory; choose another home with --home",
            recoverable=False,
            context={"path": str(root), "fallback_path": str(fallback_home_path())},
        )
    created = not root.exists()
    dirs = [
        root,
        h.handoffs_dir,
        h.logs_dir,
        h.hot_dir / "ledger",
        h.hot_dir / "kernel",
        h.schemas_dir,
        h.hot_config_dir,
        h.agents_dir,
        h.registries_dir,
        h.ho2_dir(agent_class),
        h.ho1_dir(agent_class),
    ]
    installed: list[str] = []
    try:
        if not created:
            tighten_home(root)  # a home another user can read is made private, with a warning
        for d in dirs:
            make_private_dirs(d)
        if not os.access(root, os.W_OK):
            raise PermissionError(root)
        if not h.config_path.exists():
            _atomic_write(h.config_path, _DEFAULT_CONFIG)
        installed = _install_shipped_files(root, force=force)
    except PermissionError as exc:
        raise HRMError.permission_denied(root, fallback_home_path()) from exc
    except OSError as exc:
        if exc.errno == 28:  # ENOSPC
            raise HRMError(
                ErrorCode.DISK_FULL,
                f"No space left on the device holding '{root}'",
                recoverable=False,
                context={"path": str(root), "fallback_path": str(fallback_home_path())},
            ) from exc
        if exc.errno in (13, 30):  # EACCES, EROFS
            raise HRMError.permission_denied(root, fallback_home_path()) from exc
        raise HRMError.internal(f"Could not create home at '{root}': {exc}") from exc
    return InitResult(
        path=root,
        config_path=h.config_path,
        memory_path=h.memory_db,
        handoffs_path=h.handoffs_dir,
        created=created,
        installed_files=tuple(installed),
    )


def _install_shipped_files(root: Path, *, force: bool) -> list[str]:
    from importlib import resources
    from importlib.resources.abc import Traversable

    shipped = resources.files("hrm").joinpath("data", "home")
    installed: list[str] = []
    if not shipped.is_dir():
        return installed

    def walk(node: Traversable, rel: Path) -> None:
        for child in node.iterdir():
            child_rel = rel / child.name
            if child.is_dir():
                walk(child, child_rel)
                continue
            if child.name.startswith(".") or child.name.endswith((".pyc", ".pyo")):
                continue
            target = root / child_rel
            if target.exists() and not force:
                continue
            make_private_dirs(target.parent)
            _atomic_write(target, child.read_bytes())
            installed.append(child_rel.as_posix())

    walk(shipped, Path())
    return sorted(installed)
