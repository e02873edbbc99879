"""Project trust: which of a project's settings files the person has trusted, by content hash.

A project directory is data (ARCHITECTURE §7, "Trust"): a cloned repository's
``.hrm/config.yaml`` could point the model at a server of its choosing and so receive the
person's API key, its ``.hrm/agents/`` could ask for tools, its skill rules could block every
prompt. Such settings apply only once the person has trusted the project with
``hrm trust [PATH]``, which records the SHA-256 of each settings file the project has now in
``<home>/trust.json``. A file whose content changed since, or one added since, is untrusted
until the person trusts the project again (D215). What a settings file may set without trust is
decided by its reader (`hrm._config_trust` for the config, the agent and skill-rule loaders).

Hrm says once which settings it left aside (D217): `TrustStore.first_notice` remembers, per
channel (the terminal, the hook), each file and hash it has told about, in
``<home>/cache/trust-notices.json``.

The hooks read this module on a prompt only when a project rules file could block, so it
imports no `dataclasses` or `typing` (see `hrm._values`).
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

from hrm._values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hrm.home import HRMHome

__all__ = [
    "TRUST_FILE",
    "FileTrust",
    "ProjectTrust",
    "TrustStore",
    "TrustedFile",
    "digest_of",
    "file_digest",
    "project_root",
    "project_settings_files",
]

TRUST_FILE = "trust.json"
"""The trust records, in the home's root (0600)."""
_NOTICES_FILE = "trust-notices.json"
_FORMAT = 1
_MAX_SETTINGS_BYTES = 4 << 20
"""A settings file larger than this is never trusted (hashing it would be the least of it)."""

_SETTINGS_PATHS = (".hrm/config.yaml", ".hrm/skill-rules.json", ".claude/skills/skill-rules.json")
_AGENTS_DIR = ".hrm/agents"
_AGENT_SUFFIXES = (".yaml", ".yml")


class FileTrust(Value):
    """Whether one settings file is trusted now, and if not, why."""

    _fields = ("path", "relative", "digest", "state")
    __slots__ = _fields
    path: Path
    relative: str
    """The file's path inside its project, with ``/`` separators (``.hrm/config.yaml``)."""
    digest: str | None
    """SHA-256 of the file's bytes now; None when it cannot be read as a regular file."""
    state: str
    """``trusted``; ``untrusted`` (never trusted); or ``changed`` (trusted with other content)."""

    def __init__(self, path: Path, relative: str, digest: str | None, state: str) -> None:
        self._init(path=path, relative=relative, digest=digest, state=state)

    @property
    def trusted(self) -> bool:
        """Whether the file's settings apply."""
        return self.state == "trusted"


class TrustedFile(Value):
    """A project settings file as it was when a setting was read from it, trusted then.

    `hrm.config.load_config` stamps it on a base URL a trusted project set, so the adapter
    factory can check, when it hands that URL a credential, that the file is still trusted
    with that content (a long-running process may outlive the trust, D218).
    """

    _fields = ("home", "project", "path", "digest")
    __slots__ = _fields
    home: str
    project: str
    path: str
    digest: str

    def __init__(self, home: str, project: str, path: str, digest: str) -> None:
        self._init(home=home, project=project, path=path, digest=digest)

    def still_trusted(self) -> bool:
        """Whether the home's trust store still trusts this file with this content."""
        from hrm.home import HRMHome

        store = TrustStore(HRMHome(self.home))
        return store.check(self.project, Path(self.path), self.digest).trusted


class ProjectTrust(Value):
    """One trusted project: its root and the hash of each settings file when it was trusted."""

    _fields = ("root", "files", "trusted_at")
    __slots__ = _fields
    root: str
    """The project's directory, resolved."""
    files: dict[str, str]
    """Each settings file (relative, ``/``-separated) → its SHA-256 when trusted."""
    trusted_at: str
    """When, in ISO 8601 (UTC)."""

    def __init__(self, root: str, files: dict[str, str], trusted_at: str) -> None:
        self._init(root=root, files=dict(files), trusted_at=trusted_at)

    def to_dict(self) -> dict[str, object]:
        """The JSON form (``hrm trust --list --json`` and the store's own file)."""
        return {"root": self.root, "files": dict(self.files), "trusted_at": self.trusted_at}


def project_root(project: str | Path) -> Path:
    """The form of a project's directory trust is recorded under: absolute, symlinks resolved."""
    return Path(project).expanduser().resolve()


def project_settings_files(project: str | Path) -> list[Path]:
    """The project's settings files that trust covers, those that exist, in a stable order.

    ``.hrm/config.yaml``, ``.hrm/skill-rules.json``, ``.claude/skills/skill-rules.json`` and
    every ``.hrm/agents/*.yaml`` (or ``.yml``).
    """
    root = project_root(project)
    found = [root / relative for relative in _SETTINGS_PATHS if (root / relative).is_file()]
    agents = root / _AGENTS_DIR
    if agents.is_dir():
        found.extend(
            path
            for path in sorted(agents.iterdir())
            if path.name.endswith(_AGENT_SUFFIXES) and not path.name.startswith(".")
            and path.is_file()
        )
    return found


def file_digest(path: Path) -> str | None:
    """SHA-256 of a regular file's bytes; None for anything else (a FIFO, a device, too large).

    A FIFO named like a settings file would hang a plain ``open``; it is refused before opening.
    """
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_SETTINGS_BYTES:
            return None
        with open(path, "rb") as fh:
            return digest_of(fh.read(_MAX_SETTINGS_BYTES + 1))
    except OSError:
        return None


def digest_of(data: bytes) -> str:
    """SHA-256 of bytes already read (so what is hashed is what was parsed)."""
    import hashlib  # deferred: the hook imports this module and rarely hashes

    return hashlib.sha256(data).hexdigest()


def _relative(root: Path, path: Path) -> str | None:
    try:
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return None


class TrustStore:
    """The home's trust records. Reads are lock-free; each change is atomic under a file lock.

    A damaged or unreadable ``trust.json`` trusts nothing (fail closed), and the next
    `trust` replaces it.
    """

    def __init__(self, home: HRMHome) -> None:
        self.home = home
        self.path = home.root / TRUST_FILE
        self._notices = home.cache_dir / _NOTICES_FILE

    # -- reading ------------------------------------------------------------------------------

    def projects(self) -> list[ProjectTrust]:
        """Every trusted project, by root."""
        return sorted(self._read().values(), key=lambda p: p.root)

    def get(self, project: str | Path) -> ProjectTrust | None:
        """The trust record of a project, or None when it was never trusted."""
        return self._read().get(str(project_root(project)))

    def check(self, project: str | Path, path: Path, digest: str | None = None) -> FileTrust:
        """Whether the settings file `path` of `project` is trusted with its current content.

        Args:
            project: The project's directory.
            path: One of its settings files.
            digest: The SHA-256 of the bytes the caller read (so what is judged is what it
                parsed); default: hashed now.
        """
        root = project_root(project)
        relative = _relative(root, path) or str(path)
        if digest is None:
            digest = file_digest(path)
        record = self._read().get(str(root))
        if digest is None or record is None or relative not in record.files:
            return FileTrust(path, relative, digest, "untrusted")
        state = "trusted" if record.files[relative] == digest else "changed"
        return FileTrust(path, relative, digest, state)

    def status(self, project: str | Path) -> list[FileTrust]:
        """Each settings file of the project with whether it is trusted now."""
        return [self.check(project, path) for path in project_settings_files(project)]

    def _read(self) -> dict[str, ProjectTrust]:
        try:
            doc = json.loads(self.path.read_bytes())
            entries = doc["projects"] if isinstance(doc, dict) else []
            records = [
                ProjectTrust(str(e["root"]), {str(k): str(v) for k, v in e["files"].items()},
                             str(e.get("trusted_at", "")))
                for e in entries
            ]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return {}  # none yet, or damaged: nothing is trusted
        return {record.root: record for record in records}

    # -- changing -----------------------------------------------------------------------------

    def trust(self, project: str | Path) -> ProjectTrust:
        """Trust the project's settings files as they are now; returns the record.

        Raises:
            HRMError: ``NOT_FOUND`` when the directory holds no settings file to trust;
                ``PERMISSION_DENIED`` when the home cannot be written.
        """
        from hrm.errors import HRMError

        root = project_root(project)
        files: dict[str, str] = {}
        for path in project_settings_files(root):
            digest = file_digest(path)
            relative = _relative(root, path)
            if digest is not None and relative is not None:
                files[relative] = digest
        if not files:
            raise HRMError.not_found(
                "project settings", str(root),
                "a project has .hrm/config.yaml, .hrm/agents/*.yaml, .hrm/skill-rules.json or "
                ".claude/skills/skill-rules.json; nothing there to trust",
            )
        record = ProjectTrust(str(root), files, _now())
        with self._changing() as records:
            records[record.root] = record
        return record

    def untrust(self, project: str | Path) -> bool:
        """Forget a project's trust; True when it had been trusted."""
        root = str(project_root(project))
        with self._changing() as records:
            return records.pop(root, None) is not None

    def _changing(self) -> _Change:
        return _Change(self)

    def _write(self, records: dict[str, ProjectTrust]) -> None:
        from hrm._atomic import atomic_write

        doc = {"format": _FORMAT, "projects": [r.to_dict() for r in
                                               sorted(records.values(), key=lambda r: r.root)]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps(doc, indent=2) + "\n")  # created 0600 (mkstemp)

    # -- notices ------------------------------------------------------------------------------

    def first_notice(self, channel: str, path: Path, digest: str | None) -> bool:
        """True the first time `channel` asks about this file with this content, then False.

        What was told is remembered in the home's cache; when it cannot be read or written,
        the notice is given (telling twice is better than never).
        """
        key = f"{channel}|{os.path.abspath(path)}"
        try:
            told = json.loads(self._notices.read_bytes())
            if not isinstance(told, dict):
                told = {}
        except (OSError, ValueError):
            told = {}
        if told.get(key) == digest:
            return False
        told[key] = digest
        try:
            from hrm._atomic import atomic_write

            self._notices.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self._notices, json.dumps(told, sort_keys=True))
        except OSError:
            return True
        return True


class _Change:
    """Read-modify-write of the trust records under the store's lock file."""

    def __init__(self, store: TrustStore) -> None:
        from hrm._file_lock import FileLock

        self._store = store
        self._lock = FileLock(store.path.with_name(f".{TRUST_FILE}.lock"), wait_s=30.0)
        self._records: dict[str, ProjectTrust] = {}

    def __enter__(self) -> dict[str, ProjectTrust]:
        self._lock.acquire()
        self._records = self._store._read()
        return self._records

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        try:
            if kind is None:
                self._store._write(self._records)
        finally:
            self._lock.close()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

