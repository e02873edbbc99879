"""Handoffs in the home: ``handoffs/<session>/<timestamp>.yaml`` (003 §3, ARCHITECTURE §4).

The format (typed records, YAML and Markdown, validation) is `hrm.continuity.handoffs`; this
module is the I/O: atomic, scrubbed writes that never overwrite, and lenient listing that skips
(and logs) what it cannot read, so one bad file never hides the others.
"""

from __future__ import annotations

import builtins
import json
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from hrm._atomic import atomic_write
from hrm._clock import system_clock
from hrm._paths import is_within, read_text
from hrm._yaml import MAX_BYTES
from hrm.continuity._durable_handoff import fsync_directory, is_minimal, publish, session_dirname
from hrm.continuity.handoffs import (
    HandoffData,
    HandoffFormat,
    HandoffSummary,
    TaskStatus,
    deserialize,
    handoff_from_dict,
    handoff_to_dict,
    serialize,
)
from hrm.errors import HRMError
from hrm.scrubbing import scrub

if TYPE_CHECKING:
    from hrm.home import HRMHome
    from hrm.types import Clock

__all__ = ["HandoffStore"]

logger = logging.getLogger(__name__)

_session_dirname = session_dirname


class HandoffStore:
    """Handoffs in the home: ``handoffs/<session>/<timestamp>.yaml`` (ARCHITECTURE §4).

    Writes are atomic, fsynced and scrubbed of secrets; a file is never overwritten, except a
    hook's minimal handoff by its enrichment (`enrich`). Listing reads every file (skipping,
    with a log line, any that cannot be read), newest first. Safe to use from several
    processes: names carry microseconds, and a file is published with ``link``, which fails
    rather than replace one another process published under the same name (D240).
    """

    def __init__(self, home: HRMHome, *, clock: Clock = system_clock) -> None:
        self.home = home
        self._clock = clock

    @property
    def root(self) -> Path:
        """The handoffs directory of the home."""
        return self.home.handoffs_dir

    def write(
        self,
        handoff: HandoffData,
        *,
        format: HandoffFormat = HandoffFormat.YAML,
        filename: str | None = None,
    ) -> Path:
        """Validate, scrub and write a handoff; return its path.

        Args:
            handoff: The handoff to store.
            format: YAML (``.yaml``) or Markdown (``.md``).
            filename: A name to use instead of the timestamp (migration keeps legacy names).

        Raises:
            HRMError: ``VALIDATION_FAILED`` (see `serialize`); ``PATH_EXISTS`` when `filename`
                is taken; ``PERMISSION_DENIED`` when the home cannot be written.
        """
        content = self._render(handoff, format)
        folder = self.root / _session_dirname(handoff.session.id)
        suffix = ".yaml" if format is HandoffFormat.YAML else ".md"
        try:
            if filename is not None:
                stem = re.sub(r"\.(ya?ml|md)$", "", Path(filename).name)
                if (folder / (stem + suffix)).exists():
                    raise HRMError.path_exists(folder / (stem + suffix), "Handoff")
            else:
                stem = self._clock().astimezone(UTC).strftime("%Y-%m-%d_%H-%M-%S-%f")
            target = publish(folder, stem, suffix, content.encode("utf-8"))
        except PermissionError as exc:
            raise HRMError.permission_denied(folder) from exc
        logger.debug("wrote handoff %s", target)
        return target

    def enrich(self, path: Path, handoff: HandoffData) -> Path:
        """Replace the hook's minimal handoff at `path` by `handoff`; return where it is now.

        Only a minimal handoff (`_durable_handoff.is_minimal`) is replaced, atomically; when
        `path` is gone or holds anything else, `handoff` is written as a new file instead, so
        nothing a person or another process wrote is ever overwritten.

        Raises:
            HRMError: as `write`.
        """
        content = self._render(handoff, HandoffFormat.YAML)
        try:
            current = read_text(path, max_bytes=MAX_BYTES, root=self.root, what="handoff")
            minimal = is_minimal(json.loads(current))
        except (HRMError, OSError, ValueError):
            minimal = False
        if not minimal or path.suffix != ".yaml":
            return self.write(handoff)
        try:
            atomic_write(path, content)
        except PermissionError as exc:
            raise HRMError.permission_denied(path.parent) from exc
        fsync_directory(path.parent)
        logger.debug("enriched handoff %s", path)
        return path

    @staticmethod
    def _render(handoff: HandoffData, format: HandoffFormat) -> str:
        clean = handoff_from_dict(scrub(handoff_to_dict(handoff)))
        return serialize(clean, format).content

    def _files(self) -> builtins.list[Path]:
        if not self.root.is_dir():
            return []
        found = [p for p in self.root.glob("*/*") if p.suffix in (".yaml", ".yml", ".md")]
        return [p for p in found if p.is_file() and not p.name.startswith(".")]

    def list(
        self, *, project_path: str | None = None, limit: int | None = None
    ) -> builtins.list[HandoffSummary]:
        """Stored handoffs, newest first, optionally only those of one project."""
        return [
            HandoffSummary(
                path=path,
                session_id=handoff.session.id,
                created_at=created,
                status=_status(handoff.task.status),
                description=handoff.task.description,
                project_path=handoff.context.project_path,
            )
            for path, handoff, created in self.recent(project_path=project_path, limit=limit)
        ]

    def recent(
        self, *, project_path: str | None = None, limit: int | None = None
    ) -> builtins.list[tuple[Path, HandoffData, datetime]]:
        """``(path, handoff, created)`` of stored handoffs, newest first (one read each)."""
        wanted = _normal_project(project_path) if project_path else None
        found: builtins.list[tuple[Path, HandoffData, datetime]] = []
        for path in self._files():
            try:
                # Bounded, and never through a link leading out of the home.
                text = read_text(path, max_bytes=MAX_BYTES, root=self.root, what="handoff")
                handoff = deserialize(text, path=str(path))
            except (HRMError, OSError, UnicodeDecodeError) as exc:
                logger.warning("skipping unreadable handoff %s: %s", path, exc)
                continue
            if wanted is not None and _normal_project(handoff.context.project_path) != wanted:
                continue
            created = handoff.session.ended_at or handoff.session.started_at
            if created is None:
                created = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
            found.append((path, handoff, created))
        found.sort(key=lambda item: (item[2], item[0].name), reverse=True)
        return found if limit is None else found[: max(limit, 0)]

    def latest(self, *, project_path: str | None = None) -> tuple[Path, HandoffData] | None:
        """The newest handoff (of one project, if given), or None when there is none."""
        newest = self.recent(project_path=project_path, limit=1)
        if not newest:
            return None
        return newest[0][0], newest[0][1]

    def load(self, path_or_id: str | Path) -> HandoffData:
        """Read a handoff by path, by ``<session>/<name>`` under the store, or by unique file stem.

        Raises:
            HRMError: ``NOT_FOUND`` (also when a stem is ambiguous), or a `deserialize` error.
        """
        path = Path(path_or_id)
        if not path.is_file():
            path = self._resolve_id(str(path_or_id))
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise HRMError.not_found("handoff", str(path_or_id), str(exc)) from exc
        except UnicodeDecodeError as exc:
            raise HRMError.parse_error(
                f"not UTF-8 text (byte {exc.start}): not a handoff", path=path
            ) from None
        return deserialize(text, path=str(path))

    def read(self, key: str) -> tuple[Path, HandoffData]:
        """A stored handoff by ``<session>/<name>``, unique file stem, or a path in the store.

        Unlike `load`, never a file outside the store: callers on the other side of a protocol
        (the MCP tool) name handoffs, not files.

        Raises:
            HRMError: ``NOT_FOUND``; ``PERMISSION_DENIED`` for a path outside the store.
        """
        candidate = Path(key)
        if candidate.is_absolute():
            if not is_within(candidate, self.root):
                raise HRMError.not_found("handoff", key, "give an id from `hrm handoff list`")
            path = candidate
        else:
            path = self._resolve_id(key)
        text = read_text(path, max_bytes=MAX_BYTES, root=self.root, what="handoff")
        return path, deserialize(text, path=str(path))

    def _resolve_id(self, key: str) -> Path:
        for candidate in (self.root / key, *(self.root / f"{key}{s}" for s in (".yaml", ".md"))):
            if candidate.is_file() and self.root in candidate.resolve().parents:
                return candidate
        matches = [p for p in self._files() if key in (p.stem, p.name)]
        if len(matches) == 1:
            return matches[0]
        hint = "ambiguous: give <session>/<name>" if matches else "see `hrm handoff list`"
        raise HRMError.not_found("handoff", key, hint)


def _normal_project(path: str | None) -> str:
    if not path:
        return ""
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError):
        return path.rstrip("/")


def _status(status: TaskStatus | str) -> str:
    return status.value if isinstance(status, TaskStatus) else status
