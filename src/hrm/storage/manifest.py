"""The home's manifest: the committed head of every ledger, so a deleted or cut ledger shows.

A hash chain cannot show records cut from its end, and a ledger's ``.anchor`` sidecar closes
that gap only while the sidecar itself survives: cut a ledger's last records and delete its
anchor, or delete the ledger with its anchor, and nothing inside the ledger says so. The
manifest, ``HOT/ledger/manifest.json``, is the home-wide record that does: for every ledger in
the home (by its path relative to the home) the seq, hash and end offset of its last committed
record. `Ledger.commit` notes its head here after the anchor; `verify_manifest` holds every
ledger to it. The first time a ledger enters the manifest, its creation is also appended to
the governance ledger (``ledger_created``), so a ledger deleted together with its manifest
entry is still missed by name.

Writing: read, merge, write a temporary file beside it and rename it over the old one, under an
exclusive lock on ``manifest.lock`` — readers always see a whole manifest. The file is not
fsynced (D183): it is written after the ledgers it names were synced, so it can only lag
behind them, never vouch for more than they hold; a power loss may leave it older (or, on
filesystems that do not order a rename after its data, unreadable, which `verify` reports
as a warning, not as damage). Inside `batched` (a group commit of several ledgers) the heads
are gathered and written once when the block ends.

Reading is pure: `verify_manifest` opens files read-only and creates nothing, so it works on a
full disk and without ``memory.db``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hrm._file_lock import held

__all__ = [
    "LEDGER_CREATED_KIND",
    "MANIFEST_NAME",
    "Head",
    "ManifestProblem",
    "batched",
    "home_root_of",
    "note_head",
    "read_manifest",
    "set_heads",
    "verify_manifest",
]

logger = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
LEDGER_CREATED_KIND = "ledger_created"
"""Governance record kind naming a ledger the first time the manifest lists it."""
_TIERS = ("HOT", "HO2", "HO1")
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Head:
    """A ledger's last committed record as the manifest holds it."""

    seq: int
    hash: str
    end: int
    """Where the record's line ends (a hint: a redaction moves it; seq and hash decide)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"end": self.end, "hash": self.hash, "seq": self.seq}


@dataclass(frozen=True, slots=True)
class ManifestProblem:
    """One thing `verify_manifest` found wrong (or, with ``warning``, worth saying)."""

    ledger: str
    """The ledger's path relative to the home (or the manifest's own name)."""
    reason: str
    warning: bool = False

    def describe(self) -> str:
        """``ledger: reason`` for the CLI."""
        return f"{self.ledger}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"ledger": self.ledger, "reason": self.reason, "warning": self.warning}


def home_root_of(ledger: Path) -> Path | None:
    """The home a ledger belongs to (``<root>/<tier>/ledger/…``), or None outside a home."""
    parts = ledger.parts
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == "ledger" and parts[index - 1] in _TIERS:
            return Path(*parts[: index - 1]) if index > 1 else Path(parts[0])
    return None


def manifest_path(root: Path) -> Path:
    """Where the manifest of the home at `root` lives."""
    return root / "HOT" / "ledger" / MANIFEST_NAME


def read_manifest(root: Path) -> dict[str, Head] | None:
    """The heads the manifest of `root` holds; None when there is no manifest.

    Raises:
        ValueError: the manifest exists but cannot be read as one.
    """
    try:
        raw = manifest_path(root).read_bytes()
    except FileNotFoundError:
        return None
    obj = json.loads(raw)
    if not isinstance(obj, dict) or not isinstance(obj.get("ledgers"), dict):
        raise ValueError("not a manifest: no 'ledgers' object")
    heads: dict[str, Head] = {}
    for name, entry in obj["ledgers"].items():
        heads[str(name)] = Head(int(entry["seq"]), str(entry["hash"]), int(entry["end"]))
    return heads


# ── writing ─────────────────────────────────────────────────────────────────

_pending: dict[Path, dict[str, tuple[Head, bool]]] = {}
_pending_lock = threading.Lock()
_batch = threading.local()


def note_head(ledger: Path, seq: int, digest: str, end: int) -> None:
    """Record that `ledger`'s records up to `seq` are committed (after its anchor is written).

    A no-op for a ledger outside a home. Never raises: the manifest strengthens detection,
    and a ledger whose head could not be noted is still a valid ledger (logged).
    """
    _note(ledger, Head(seq, digest, end), force=False)


def set_heads(ledger: Path, head: Head | None) -> None:
    """Set `ledger`'s head exactly, even lower than before (a repair cut or renumbered it).

    None removes the entry (a ledger moved aside on purpose).
    """
    root = home_root_of(ledger)
    if root is None:
        return
    name = _relative(ledger, root)
    try:
        _write(root, {name: (head, True)})
    except OSError as exc:
        logger.warning("cannot update the manifest of %s: %s", root, exc)


def _note(ledger: Path, head: Head, *, force: bool) -> None:
    root = home_root_of(ledger)
    if root is None or ledger.name == MANIFEST_NAME:
        return
    name = _relative(ledger, root)
    if getattr(_batch, "depth", 0):
        with _pending_lock:
            _pending.setdefault(root, {})[name] = (head, force)
        return
    try:
        _write(root, {name: (head, force)})
    except OSError as exc:
        logger.warning("cannot update the manifest of %s: %s", root, exc)


@contextlib.contextmanager
def batched() -> Iterator[None]:
    """Gather the heads noted in this thread and write each home's manifest once at the end."""
    _batch.depth = getattr(_batch, "depth", 0) + 1
    try:
        yield
    finally:
        _batch.depth -= 1
        if not _batch.depth:
            with _pending_lock:
                work = dict(_pending)
                _pending.clear()
            for root, heads in work.items():
                try:
                    _write(root, heads)
                except OSError as exc:
                    logger.warning("cannot update the manifest of %s: %s", root, exc)


def _relative(ledger: Path, root: Path) -> str:
    return ledger.relative_to(root).as_posix()


def _write(root: Path, updates: Mapping[str, tuple[Head | None, bool]]) -> None:
    """Merge `updates` into the manifest of `root` under its lock; rename into place."""
    directory = manifest_path(root).parent
    directory.mkdir(parents=True, exist_ok=True)
    lock_fd = os.open(directory / "manifest.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        with held(lock_fd, path=str(directory / "manifest.lock")):
            current = _read_for_update(root)
            heads = current[0]
            created = [
                name for name, (head, _) in updates.items()
                if head is not None and name not in heads and name != _GOVERNANCE
            ]
            changed = False
            for name, (head, force) in updates.items():
                old = heads.get(name)
                if head is None:
                    changed |= heads.pop(name, None) is not None
                elif force or old is None or _newer(head, old):
                    changed |= old != head
                    heads[name] = head
            if created:
                gov = _record_creations(root, created)
                if gov is not None:
                    heads[_GOVERNANCE] = gov
                    changed = True
            if changed:
                _replace(root, heads, current[1])
    finally:
        os.close(lock_fd)


_GOVERNANCE = "HOT/ledger/governance.jsonl"


def _newer(head: Head, old: Head) -> bool:
    return head.seq > old.seq or (head.seq == old.seq and head.end != old.end)


def _read_for_update(root: Path) -> tuple[dict[str, Head], int]:
    try:
        raw = manifest_path(root).read_bytes()
        obj = json.loads(raw)
        heads = {
            str(k): Head(int(v["seq"]), str(v["hash"]), int(v["end"]))
            for k, v in obj["ledgers"].items()
        }
        return heads, int(obj.get("generation", 0))
    except FileNotFoundError:
        return {}, 0
    except (ValueError, KeyError, TypeError, AttributeError):
        logger.warning("the manifest of %s was unreadable; starting it again", root)
        return {}, 0


def _replace(root: Path, heads: dict[str, Head], generation: int) -> None:
    target = manifest_path(root)
    body = {
        "format": _FORMAT,
        "generation": generation + 1,
        "ledgers": {name: heads[name].to_dict() for name in sorted(heads)},
    }
    data = (json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n").encode()
    temp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    os.close(fd)
    os.replace(temp, target)


def _record_creations(root: Path, names: list[str]) -> Head | None:
    """Append ``ledger_created`` for `names` to the governance ledger; its new head."""
    from hrm.storage.ledger import Ledger

    try:
        with Ledger(root / _GOVERNANCE, manifest=False) as governance:
            records = governance.append_many(
                [(LEDGER_CREATED_KIND, {"path": name}) for name in names]
            )
            governance.commit()
    except Exception:  # the creation record strengthens detection; its loss is logged
        logger.warning("cannot record new ledgers in the governance ledger", exc_info=True)
        return None
    last = records[-1]
    return Head(last.seq, last.hash, governance.appended_end)


# ── verifying ───────────────────────────────────────────────────────────────


def verify_manifest(root: Path, tails: dict[str, tuple[int, str, dict[int, str]]]) -> list[
    ManifestProblem
]:
    """Hold every ledger of the home at `root` to the manifest and the creation records.

    Args:
        root: The home.
        tails: For each ledger that exists (relative path): its last verified seq, hash, and
            the hashes of the records the manifest names (seq → hash), as `verify` read them.

    Returns:
        Problems: a ledger the manifest or the governance ledger names that is missing; one
        that ends before its committed head or disagrees with it. An absent manifest in a
        home with ledgers is a warning (a home written before manifests existed).
    """
    problems: list[ManifestProblem] = []
    try:
        heads = read_manifest(root)
    except (ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        problems.append(ManifestProblem(
            MANIFEST_NAME, f"unreadable ({exc}); it is rewritten by the next commit", True
        ))
        heads = None
    if heads is None:
        if tails and not problems:
            problems.append(ManifestProblem(
                MANIFEST_NAME, "no manifest: ledger deletions cannot be checked until the next "
                "commit writes one", True,
            ))
        heads = {}
    for name, head in sorted(heads.items()):
        problems.extend(_check_head(name, head, tails.get(name)))
    for name in _created_names(root, tails):
        if name not in tails and name not in heads:
            problems.append(ManifestProblem(
                name, "the governance ledger records its creation, but the file is gone",
            ))
    return problems


def _check_head(
    name: str, head: Head, tail: tuple[int, str, dict[int, str]] | None
) -> list[ManifestProblem]:
    if tail is None:
        return [ManifestProblem(
            name, f"missing: the manifest says it holds {head.seq} committed records",
        )]
    last_seq, _last_hash, at = tail
    if last_seq < head.seq:
        return [ManifestProblem(
            name, f"ends at seq {last_seq}, but the manifest says seq {head.seq} was committed: "
            "records were cut from the end",
        )]
    found = at.get(head.seq)
    if found is not None and found != head.hash:
        return [ManifestProblem(
            name, f"record {head.seq} does not match the hash the manifest recorded: the ledger "
            "was rewritten",
        )]
    return []


def _created_names(root: Path, tails: dict[str, tuple[int, str, dict[int, str]]]) -> list[str]:
    """Ledgers the governance ledger records as created (read leniently: verify checks it)."""
    path = root / _GOVERNANCE
    names: list[str] = []
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                if b'"kind":"' + LEDGER_CREATED_KIND.encode() + b'"' not in raw:
                    continue
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    names.append(str(json.loads(raw)["data"]["path"]))
    except OSError:
        return names
    return names
