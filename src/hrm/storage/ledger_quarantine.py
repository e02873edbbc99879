"""Setting a damaged ledger's bad records aside so that it can be written again.

Appends refuse to chain onto a damaged ledger — chaining would vouch for the damage — so one
altered byte, or records cut from below the anchor, stops every later turn of the stack that
owns the ledger. This is the way out, and it loses nothing and stays on the record:

1. the whole file and its anchor are copied aside, byte for byte, beside the ledger as
   ``<name>.quarantined-<UTC time>`` (a name `HRMHome.all_ledgers` does not pick up);
2. the live file is cut back to its last record that verifies;
3. a ``ledger_quarantine`` record, chained onto that record, names the copy, its SHA-256, how
   many bytes were cut and why; the anchor is moved to it.

So the cut is itself a hash-chained fact: anyone reading the ledger later sees where it was
repaired, by which evidence, and can check the copy against the recorded digest.

It works in place under the ledger's exclusive lock, never by replacing the file: a process that
has the ledger open holds a descriptor to the same file and re-reads the tail before it appends
(if the file shrank under it, it refuses until reopened). Interrupted between the cut and the
new anchor, the ledger is left short of its old anchor, and running it again completes it (the
first copy stays).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hrm._file_lock import held
from hrm._private import open_new_private
from hrm.errors import HRMError
from hrm.storage._ledger_format import (
    GENESIS_HASH,
    VerifyError,
    _Anchor,
    _check_anchor_after_scan,
    _check_line,
    _Corrupt,
    _encode_line,
    _format_ts,
    _prepare_item,
    _scan,
)
from hrm.storage.ledger import (
    QUARANTINE_KIND,
    _anchor_path,
    _anchor_payload,
    _fstat_size,
    _last_line_starts,
    _os_error,
    _read_anchor,
    _sync_data,
)
from hrm.types import Clock, system_clock

__all__ = ["QUARANTINE_KIND", "QuarantineReport", "quarantine_damage"]

_COPY_CHUNK = 1 << 20


@dataclass(frozen=True, kw_only=True)
class QuarantineReport:
    """What `quarantine_damage` found and did (or, for a dry run, would do)."""

    path: Path
    damage: VerifyError | None
    """The first problem found; None when the ledger verified and nothing was done."""
    kept_records: int
    """Records that verified and stay in the ledger."""
    cut_bytes: int
    """Bytes removed from the live file (all of them are in the copy)."""
    copy: Path | None = None
    """Where the whole damaged file was copied; None for a dry run or a sound ledger."""
    anchor_copy: Path | None = None
    copy_sha256: str | None = None
    record_seq: int | None = None
    """Seq of the ``ledger_quarantine`` record appended; None for a dry run."""
    dry_run: bool = False

    @property
    def quarantined(self) -> bool:
        """Whether the ledger was (or, in a dry run, would be) repaired."""
        return self.damage is not None

    def describe(self) -> str:
        """One line for logs and the CLI."""
        if self.damage is None:
            return f"{self.path}: ok, nothing to quarantine"
        where = f"{self.path}:{self.damage.line}"
        seq = f" seq {self.damage.seq}" if self.damage.seq is not None else ""
        verb = "would keep" if self.dry_run else "kept"
        moved = "" if self.copy is None else f"; the whole file was copied to {self.copy.name}"
        return (
            f"{where}{seq}: {self.damage.reason}; {verb} {self.kept_records} records and cut "
            f"{self.cut_bytes} bytes{moved}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json`` output."""
        return {
            "path": str(self.path),
            "quarantined": self.quarantined,
            "dry_run": self.dry_run,
            "damage": self.damage.to_dict() if self.damage else None,
            "kept_records": self.kept_records,
            "cut_bytes": self.cut_bytes,
            "copy": str(self.copy) if self.copy else None,
            "anchor_copy": str(self.anchor_copy) if self.anchor_copy else None,
            "copy_sha256": self.copy_sha256,
            "record_seq": self.record_seq,
        }


def quarantine_damage(
    path: str | Path,
    *,
    also: VerifyError | None = None,
    dry_run: bool = False,
    clock: Clock = system_clock,
) -> QuarantineReport:
    """Copy a damaged ledger aside, cut it back to its last good record, and record the cut.

    `also` is a problem found outside the file — the home's ledger index holding a record the
    ledger no longer has — to act on when the file itself verifies: nothing is cut then, but the
    copy and the record are still made, so the loss stays on the record once the index is
    rebuilt.

    Raises:
        HRMError: ``NOT_FOUND`` when there is no file at `path`; ``PERMISSION_DENIED`` /
            ``DISK_FULL`` from the filesystem. The live file is not touched before the copy is
            safely on disk.
    """
    ledger = Path(path)
    try:
        fd = os.open(ledger, (os.O_RDONLY if dry_run else os.O_RDWR) | os.O_CLOEXEC)
    except FileNotFoundError:
        raise HRMError.not_found("ledger", str(ledger)) from None
    except IsADirectoryError:
        raise HRMError.validation_failed(
            f"'{ledger}' is a directory, not a ledger", path=str(ledger)
        ) from None
    except OSError as exc:
        raise _os_error(exc, ledger) from exc
    try:
        with held(fd, path=str(ledger)):
            size = _fstat_size(fd, ledger)
            good_end, kept, last_hash, damage = _verified_prefix(fd, ledger, size)
            damage = damage or also
            if damage is None or dry_run:
                return QuarantineReport(
                    path=ledger, damage=damage, kept_records=kept,
                    cut_bytes=size - good_end if damage else 0, dry_run=dry_run,
                )
            stamp = clock().strftime("%Y%m%dT%H%M%S%fZ")
            copy = ledger.with_name(f"{ledger.name}.quarantined-{stamp}")
            digest = _copy_exclusive(fd, size, copy)
            anchor_copy = _copy_anchor(ledger, copy)
            data: dict[str, Any] = {
                "reason": damage.reason,
                "first_bad_line": damage.line,
                "first_bad_seq": damage.seq,
                "kept_records": kept,
                "cut_bytes": size - good_end,
                "copy": copy.name,
                "copy_bytes": size,
                "copy_sha256": digest,
                "anchor_copy": anchor_copy.name if anchor_copy else None,
            }
            seq, ts = kept + 1, _format_ts(clock())
            while True:
                kind, _, data_json = _prepare_item(QUARANTINE_KIND, data)
                record_hash, line = _encode_line(seq, ts, kind, last_hash, data_json, path=ledger)
                if good_end + len(line) != size:
                    break
                # An open handle notices other writers by the file's size: never leave it equal.
                data["padding"] = data.get("padding", "") + " "
            try:
                os.ftruncate(fd, good_end)
                os.pwrite(fd, line, good_end)
                _sync_data(fd)
                end = good_end + len(line)
                _write_anchor_file(ledger, _Anchor(seq, record_hash, end))
            except OSError as exc:
                raise _os_error(exc, ledger) from exc
            _sync_directory(ledger.parent)
    finally:
        os.close(fd)
    return QuarantineReport(
        path=ledger, damage=damage, kept_records=kept, cut_bytes=size - good_end, copy=copy,
        anchor_copy=anchor_copy, copy_sha256=digest, record_seq=seq,
    )


def _verified_prefix(fd: int, ledger: Path, size: int) -> tuple[int, int, str, VerifyError | None]:
    """End offset, count and last hash of the records that verify, and the first problem."""
    good_end, count, last = 0, 0, GENESIS_HASH.encode()
    try:
        with open(fd, "rb", closefd=False) as fh:
            for offset, raw, seq, digest in _scan(fh, 0, size, 1, last):
                good_end, count, last = offset + len(raw), seq, digest

            def hash_at(end: int) -> tuple[int, bytes] | None:
                starts = _last_line_starts(fh, end, 1) if 0 < end <= size else []
                if not starts:
                    return None
                try:
                    found, digest, _ = _check_line(os.pread(fd, end - starts[0], starts[0]))
                except ValueError:
                    return None
                return found, digest.encode()

            _check_anchor_after_scan(_read_anchor(ledger), count, last, hash_at)
    except _Corrupt as bad:
        return good_end, count, last.decode(), bad.error
    return good_end, count, last.decode(), None


def _copy_exclusive(fd: int, size: int, copy: Path) -> str:
    """Copy the first `size` bytes of `fd` to a new file `copy`, durably; return their SHA-256."""
    digest = hashlib.sha256()
    try:
        with os.fdopen(open_new_private(copy), "wb") as out:
            position = 0
            while position < size:
                chunk = os.pread(fd, min(_COPY_CHUNK, size - position), position)
                if not chunk:
                    break
                digest.update(chunk)
                out.write(chunk)
                position += len(chunk)
            out.flush()
            os.fsync(out.fileno())
    except FileExistsError:
        raise HRMError.path_exists(copy, "quarantine copy", hint="run it again") from None
    except OSError as exc:
        with contextlib.suppress(OSError):
            copy.unlink()
        raise _os_error(exc, copy) from exc
    return digest.hexdigest()


def _copy_anchor(ledger: Path, copy: Path) -> Path | None:
    source = _anchor_path(ledger)
    try:
        raw = source.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _os_error(exc, source) from exc
    target = copy.with_name(copy.name + ".anchor")
    try:
        with os.fdopen(open_new_private(target), "wb") as out:
            out.write(raw)
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        raise _os_error(exc, target) from exc
    return target


def _write_anchor_file(ledger: Path, anchor: _Anchor) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC
    anchor_fd = os.open(_anchor_path(ledger), flags, 0o600)
    try:
        os.pwrite(anchor_fd, _anchor_payload(anchor), 0)
        _sync_data(anchor_fd)
    finally:
        os.close(anchor_fd)


def _sync_directory(directory: Path) -> None:
    """Make the new copies' names durable (best effort: not every filesystem allows it)."""
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
