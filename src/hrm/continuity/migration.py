"""Import a Ring (``.ring/``) or Continuous-Claude (``thoughts/``) project's data (003 §1).

`migrate_legacy_data` reads handoffs, continuity ledgers or state files from a legacy project and
writes them into the home. The source is only ever read. Re-running is safe: what is already in
the home is skipped, so nothing is migrated twice. Files that cannot be read become warnings and
count as skipped; the rest still migrate.

* HANDOFFS: ``thoughts/shared/handoffs/**``, ``docs/handoffs/**``, ``.ring/handoffs/**`` (or the
  given folder itself) → ``handoffs/<session>/<original name>.yaml``, with the gaps legacy files
  leave filled (see `fill_legacy_gaps`).
* LEDGERS: ``CONTINUITY*.md`` ledgers, synthesised ``current.md`` and handoff-type ledger events
  → handoffs too (Continuous-Claude v3 made the ledger an alias of the handoff), so resuming and
  the session-start hook see them; the ledger text is kept whole in the notes.
* STATE: JSON / YAML state files under ``.ring/state`` and ``.claude/state`` → copied, scrubbed,
  to ``imports/<layout>/…`` in the home, for the learning tools to pick up.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from hrm import _yaml
from hrm._atomic import atomic_write
from hrm._paths import read_text
from hrm._private import make_private_dirs
from hrm.continuity.continuity_ledger import find_ledgers, parse_ledger
from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.handoffs import (
    ContextInfo,
    Decision,
    HandoffData,
    ResumeInstructions,
    SessionMetadata,
    TaskInfo,
    TaskStatus,
    deserialize,
    fill_legacy_gaps,
)
from hrm.errors import ErrorCode, HRMError
from hrm.scrubbing import scrub

if TYPE_CHECKING:
    from hrm.home import HRMHome

__all__ = ["DataType", "MigrationResult", "detect_layout", "migrate_legacy_data"]

logger = logging.getLogger(__name__)

_HANDOFF_DIRS = ("thoughts/shared/handoffs", "docs/handoffs", ".ring/handoffs", "handoffs")
_NOT_HANDOFFS = frozenset({"readme.md", "changelog.md", "license.md", "index.md"})
_STATE_DIRS = (".ring/state", ".claude/state")
_HANDOFF_SUFFIXES = (".md", ".yaml", ".yml")
_STATE_SUFFIXES = (".json", ".yaml", ".yml", ".jsonl")
MIGRATED_FROM = "hrm_migrated_from"
"""The ``extra`` key recording which legacy file a migrated handoff came from."""


class DataType(str, Enum):
    """What to migrate (003 §1)."""

    HANDOFFS = "handoffs"
    LEDGERS = "ledgers"
    STATE = "state"


@dataclass(frozen=True, kw_only=True)
class MigrationResult:
    """What `migrate_legacy_data` did (003 §1)."""

    source: Path
    destination: Path
    items_migrated: int
    items_skipped: int
    warnings: list[str] = field(default_factory=list)


def detect_layout(path: Path) -> str:
    """``"ring"``, ``"continuous-claude"`` or ``"unknown"``, from folders and then file contents."""
    path = Path(path)
    if path.name == ".ring" or (path / ".ring").is_dir() or (path / "docs" / "handoffs").is_dir():
        return "ring"
    if path.name == "thoughts" or (path / "thoughts").is_dir():
        return "continuous-claude"
    if (path / ".claude" / "skills" / "skill-rules.json").is_file():
        return "continuous-claude"
    if not path.is_dir():
        return "unknown"
    # Strongest sign first, over the whole sample: a README.md says nothing about the layout.
    # A bounded walk: pointed at a large tree, detection must not read all of it.
    try:
        sample = list(itertools.islice(path.rglob("*"), 500))
    except OSError:
        return "unknown"
    if any(
        c.suffix in (".yaml", ".yml")
        or c.name.startswith("CONTINUITY_CLAUDE")
        or (c.name.startswith("skill-rules") and c.suffix == ".json")
        for c in sample
    ):
        return "continuous-claude"
    if any(
        c.name.startswith("CONTINUITY-")
        or (c.suffix == ".md" and c.name.lower() not in _GENERIC_MARKDOWN)
        for c in sample
    ):
        return "ring"
    return "unknown"


_GENERIC_MARKDOWN = frozenset({"readme.md", "license.md", "changelog.md", "contributing.md"})
"""Markdown files every kind of project has: no sign of a Ring layout."""


def migrate_legacy_data(
    source_path: Path,
    data_type: DataType,
    home: HRMHome,
    *,
    progress: Callable[[int, int], None] | None = None,
    layout: str | None = None,
) -> MigrationResult:
    """Import one kind of legacy data from `source_path` into `home`, leaving the source untouched.

    Files named as templates (``CONTINUITY-template.md``, ``handoff-template.md``) are skipped
    with a warning: their placeholders would otherwise become the newest handoff to resume.

    Args:
        source_path: A legacy project, or a folder of handoffs / ledgers / state files.
        data_type: What to import.
        home: The hrm home to import into.
        progress: Called as ``progress(done, total)`` after each file.
        layout: ``"ring"`` or ``"continuous-claude"`` when the caller knows it (names the
            folder state files are copied to); by default it is detected from the source.

    Raises:
        HRMError: ``SOURCE_NOT_FOUND`` when `source_path` does not exist; ``PERMISSION_DENIED``
            when the home cannot be written.
    """
    source = Path(source_path).expanduser()
    if not source.exists():
        raise HRMError(
            ErrorCode.SOURCE_NOT_FOUND,
            f"No legacy data at '{source}'",
            recoverable=False,
            context={"path": str(source)},
        )
    if data_type is DataType.STATE:
        files = _state_files(source)
        destination = home.root / "imports" / (layout or detect_layout(source))
    else:
        files = _handoff_files(source) if data_type is DataType.HANDOFFS else _ledger_files(source)
        destination = home.handoffs_dir
    store = HandoffStore(home)
    migrated, skipped, warnings = 0, 0, []
    for done, path in enumerate(files, start=1):
        try:
            if data_type is DataType.STATE:
                wrote = _copy_state(path, source, destination)
            else:
                wrote = _store_handoff(path, source, store, as_ledger=data_type is DataType.LEDGERS)
        except HRMError as exc:
            if exc.code is ErrorCode.PERMISSION_DENIED:
                raise
            located = str(path) in exc.message
            warnings.append(exc.message if located else f"{path}: {exc.message}")
            wrote = False
        except (OSError, UnicodeDecodeError) as exc:
            warnings.append(f"{path}: cannot read ({exc})")
            wrote = False
        migrated += wrote
        skipped += not wrote
        if progress is not None:
            progress(done, len(files))
    logger.info("migrated %d %s from %s (%d skipped)", migrated, data_type.value, source, skipped)
    return MigrationResult(
        source=source,
        destination=destination,
        items_migrated=migrated,
        items_skipped=skipped,
        warnings=warnings,
    )


def _visible(path: Path, root: Path) -> bool:
    return path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)


def _handoff_files(source: Path) -> list[Path]:
    roots = [source / d for d in _HANDOFF_DIRS if (source / d).is_dir()] or [source]
    files: set[Path] = set()
    for root in roots:
        if root.is_file():
            files.add(root)
            continue
        for path in root.rglob("*"):
            in_events = "events" in path.relative_to(root).parts
            ledger = path.name == "current.md" or path.name.startswith("CONTINUITY")
            ledger = ledger or path.name.lower() in _NOT_HANDOFFS
            if path.suffix in _HANDOFF_SUFFIXES and _visible(path, root) and not in_events:
                files.update([] if ledger else [path])
    return sorted(files)


def _ledger_files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    files = set(find_ledgers(source))
    files.update(p for p in source.glob("CONTINUITY*.md") if p.is_file())
    for root in [source, *(source / d for d in _HANDOFF_DIRS)]:
        if root.is_dir():
            files.update(p for p in root.rglob("events/*.md") if p.is_file())
            files.update(p for p in root.rglob("current.md") if p.is_file())
    return sorted(files)


def _state_files(source: Path) -> list[Path]:
    roots = [source / d for d in _STATE_DIRS if (source / d).is_dir()]
    if not roots and source.name == "state":
        roots = [source]  # the state folder itself was given
    files = {
        path
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and path.suffix in _STATE_SUFFIXES
    }
    return sorted(files)


def _relative(path: Path, source: Path) -> str:
    try:
        return path.relative_to(source).as_posix()
    except ValueError:
        return path.name


def _read_source(path: Path, source: Path, what: str) -> str:
    """A file of the project being migrated: regular, bounded, not through a link out of it
    (D131). A refusal skips the file with a warning, like any unreadable one."""
    try:
        return read_text(path, max_bytes=_yaml.MAX_BYTES, root=source, what=what)
    except HRMError as exc:
        raise HRMError.validation_failed(exc.message, path=str(path)) from exc


def _store_handoff(path: Path, source: Path, store: HandoffStore, *, as_ledger: bool) -> bool:
    if path.stem.lower().endswith("template"):
        raise HRMError.validation_failed(
            f"{path}: a template, not a {'ledger' if as_ledger else 'handoff'}; skipped",
            path=str(path),
        )
    text = _read_source(path, source, "handoff")
    if as_ledger and (path.name.startswith("CONTINUITY") or path.name == "current.md"):
        handoff = _ledger_handoff(text, path)
        filename = f"ledger-{path.parent.name if path.name == 'current.md' else path.stem}"
    else:
        handoff = deserialize(text, path=str(path))
        if as_ledger and not (
            handoff.extra.get("event_type") == "handoff" or handoff.task.description
        ):
            return False  # a session_end event carries nothing to resume from
        filename = path.stem
    project = str(source) if source.is_dir() and detect_layout(source) != "unknown" else None
    handoff, notes = fill_legacy_gaps(handoff, source_path=path, project_path=project)
    extra = {**handoff.extra, MIGRATED_FROM: _relative(path, source)}
    handoff = HandoffData(**{**vars(handoff), "extra": extra})
    try:
        store.write(handoff, filename=filename)
    except HRMError as exc:
        if exc.code is ErrorCode.PATH_EXISTS:
            return False  # migrated on an earlier run
        raise
    for note in notes:
        logger.debug("%s: %s", path, note)
    return True


def _ledger_handoff(text: str, path: Path) -> HandoffData:
    ledger = parse_ledger(text, path=path)
    updated = ledger.updated or datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    return HandoffData(
        session=SessionMetadata(id=ledger.session or path.stem, started_at=updated),
        task=TaskInfo(
            description=ledger.goal or f"Continuity ledger {ledger.session}",
            status=TaskStatus.PAUSED,
        ),
        context=ContextInfo(project_path=""),
        decisions=[Decision(decision=item) for item in ledger.decisions],
        resume=ResumeInstructions(
            next_steps=[*ledger.now, *ledger.next],
            context_needed=ledger.open_questions,
            warnings=ledger.constraints,
        ),
        notes=text,
        extra={"kind": "continuity_ledger", "done": ledger.done, "working_set": ledger.working_set},
    )


def _copy_state(path: Path, source: Path, destination: Path) -> bool:
    target = destination / _relative(path, source)
    if target.exists():
        return False
    text = _read_source(path, source, "state file")
    try:
        if path.suffix == ".json":
            content = json.dumps(scrub(json.loads(text)), indent=2, ensure_ascii=False) + "\n"
        elif path.suffix == ".jsonl":
            rows = [scrub(json.loads(line)) for line in text.splitlines() if line.strip()]
            content = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        else:
            content = yaml.safe_dump(
                scrub(_yaml.safe_load(text)), sort_keys=False, allow_unicode=True
            )
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise HRMError.parse_error(f"not valid {path.suffix[1:]}: {exc}", path=path) from exc
    try:
        make_private_dirs(target.parent)
        atomic_write(target, content)
    except PermissionError as exc:
        raise HRMError.permission_denied(target) from exc
    return True
