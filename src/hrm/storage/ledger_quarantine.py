"""Setting a damaged ledger's bad records aside so that it can be written again.

Appends refuse to chain onto a damaged ledger — chaining would vouch for the damage — so one
altered byte, or records cut from below the anchor, stops every later turn of the stack that
owns the ledger. This is the way out, and it loses nothing and stays on the record:

1. the whole file and its anchor are copied aside, byte for byte, beside the ledger as
   ``<name>.quarantined-<UTC time>`` (a name `HRMHome.all_ledgers` does not pick up);
2. the records before the damage stay as they are; every later line that is still a whole
   record on its own (its own hash holds) is salvaged: kept with its time, kind and data, and
   chained anew after the good ones (D187). One bad byte costs one record, not the rest;
3. a ``ledger_quarantine`` record, chained at the end, names the copy, its SHA-256, what was
   skipped (line, offset, length, SHA-256 and why, for each bad line), which original seqs were
   salvaged, and the highest turn number any line held, so a turn number is never used twice;
   the anchor is moved to it.

So the repair is itself a hash-chained fact: anyone reading the ledger later sees where it was
repaired, by which evidence, and can check the copy against the recorded digest.

It works in place under the ledger's exclusive lock, never by replacing the file: a process that
has the ledger open holds a descriptor to the same file and re-reads the tail before it appends.
The new tail goes through a redo file (`hrm.storage._rewrite`): interrupted, the next writable
open finishes it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hrm._file_lock import held
from hrm._private import open_new_private
from hrm.errors import HRMError
from hrm.storage._ledger_format import (
    GENESIS_HASH,
    REDACTION_KIND,
    LedgerRecord,
    VerifyError,
    _Anchor,
    _check_anchor_after_scan,
    _check_line,
    _Corrupt,
    _diagnose,
    _encode_line,
    _format_ts,
    _parse_record,
    _prepare_item,
    _scan,
)
from hrm.storage._rewrite import lines_of, rewrite_tail, sync_directory
from hrm.storage.ledger import (
    QUARANTINE_KIND,
    _anchor_path,
    _fstat_size,
    _last_line_starts,
    _manifest_anchor,
    _os_error,
    _read_anchor,
)
from hrm.types import Clock, system_clock

__all__ = ["QUARANTINE_KIND", "QuarantineReport", "highest_turn", "quarantine_damage"]

_COPY_CHUNK = 1 << 20
_MAX_LISTED = 1000
"""Skipped lines listed one by one in the quarantine record; beyond, only counted."""
_TURN = re.compile(rb'"turn":(\d{1,12})[,}]')
_REDACTED_FLAG = b',"redacted":true,'
"""In a line, after its hash: the line was rewritten by a forget (see `hrm.storage.redaction`)."""


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
    salvaged: int = 0
    """Whole records after the damage kept (chained anew after the good ones)."""
    skipped: int = 0
    """Lines after the damage that were no whole record and were set aside."""
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
        salvage = f", salvaged {self.salvaged} after it" if self.salvaged else ""
        return (
            f"{where}{seq}: {self.damage.reason}; {verb} {self.kept_records} records{salvage} "
            f"and set aside {self.cut_bytes} bytes ({self.skipped} lines){moved}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json`` output."""
        return {
            "path": str(self.path),
            "quarantined": self.quarantined,
            "dry_run": self.dry_run,
            "damage": self.damage.to_dict() if self.damage else None,
            "kept_records": self.kept_records,
            "salvaged": self.salvaged,
            "skipped": self.skipped,
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
    fd = _open(ledger, dry_run=dry_run)
    try:
        with held(fd, path=str(ledger)):
            size = _fstat_size(fd, ledger)
            good_end, kept, last_hash, damage = _verified_prefix(fd, ledger, size)
            damage = damage or also
            rest = _salvage(fd, ledger, good_end, size) if damage is not None else _Salvage()
            rest.drop_copies(_hashes_before(fd, good_end))
            if damage is None or dry_run:
                return QuarantineReport(
                    path=ledger, damage=damage, kept_records=kept,
                    cut_bytes=rest.skipped_bytes, dry_run=dry_run,
                    salvaged=len(rest.records), skipped=len(rest.skipped),
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
                "salvaged": len(rest.records),
                "salvaged_from": _ranges(r.seq for r in rest.records),
                "skipped": rest.skipped[:_MAX_LISTED],
                "skipped_lines": len(rest.skipped),
                "cut_bytes": rest.skipped_bytes,
                "copy": copy.name,
                "copy_bytes": size,
                "copy_sha256": digest,
                "anchor_copy": anchor_copy.name if anchor_copy else None,
            }
            top = _highest_turn_in(fd, size)
            if top is not None:
                data["highest_turn"] = top
            anchor = _write_repair(fd, ledger, (good_end, size, kept, last_hash), rest, data,
                                   clock)
    finally:
        os.close(fd)
    from hrm.storage.manifest import Head, set_heads

    set_heads(ledger, Head(anchor.seq, anchor.hash, anchor.end))
    return QuarantineReport(
        path=ledger, damage=damage, kept_records=kept, cut_bytes=rest.skipped_bytes, copy=copy,
        anchor_copy=anchor_copy, copy_sha256=digest, record_seq=anchor.seq,
        salvaged=len(rest.records), skipped=len(rest.skipped),
    )


def _open(ledger: Path, *, dry_run: bool) -> int:
    try:
        return os.open(ledger, (os.O_RDONLY if dry_run else os.O_RDWR) | os.O_CLOEXEC)
    except FileNotFoundError:
        raise HRMError.not_found("ledger", str(ledger)) from None
    except IsADirectoryError:
        raise HRMError.validation_failed(
            f"'{ledger}' is a directory, not a ledger", path=str(ledger)
        ) from None
    except OSError as exc:
        raise _os_error(exc, ledger) from exc


def _write_repair(
    fd: int,
    ledger: Path,
    where: tuple[int, int, int, str],
    rest: _Salvage,
    data: dict[str, Any],
    clock: Clock,
) -> _Anchor:
    """Replace everything after the good records with the salvaged ones and the quarantine
    record (`where`: good end, file size, kept records, last good hash); its anchor."""
    good_end, size, kept, last_hash = where
    ts = _format_ts(clock())
    tail, seq, record_hash = _rechain(ledger, rest.records, kept, last_hash)
    while True:
        kind, _, data_json = _prepare_item(QUARANTINE_KIND, data)
        note_hash, line = _encode_line(seq + 1, ts, kind, record_hash, data_json, path=ledger)
        if good_end + len(tail) + len(line) != size:
            break
        # An open handle notices other writers by the file's size: never leave it equal.
        data["padding"] = data.get("padding", "") + " "
    anchor = _Anchor(seq + 1, note_hash, good_end + len(tail) + len(line))
    try:
        rewrite_tail(fd, ledger, good_end, tail + line, anchor)
    except OSError as exc:
        raise _os_error(exc, ledger) from exc
    sync_directory(ledger.parent)
    return anchor


def highest_turn(records: Iterable[LedgerRecord]) -> int:
    """The highest turn number quarantine records among `records` saw (0 if none).

    The turn loop takes the next turn number from the larger of this and its last turn
    record, so a turn whose record was set aside is never numbered again.
    """
    top = 0
    for record in records:
        if record.kind == QUARANTINE_KIND:
            found = record.data.get("highest_turn")
            if isinstance(found, int) and found > top:
                top = found
    return top


class _Salvage:
    """What follows the damage: the whole records to keep and the lines to set aside."""

    def __init__(self) -> None:
        self.records: list[LedgerRecord] = []
        self.skipped: list[dict[str, Any]] = []
        self.skipped_bytes = 0

    def drop_copies(self, kept: set[str]) -> None:
        """Keep one of each record (a line duplicated by the damage is skipped), in the order
        of their original seqs (records the damage swapped go back in place)."""
        seen = set(kept)
        unique: list[LedgerRecord] = []
        for record in sorted(self.records, key=lambda r: r.seq):
            if record.hash in seen:
                raw_length = 0  # its bytes stay in the copy; it is listed as skipped
                self.skipped.append({
                    "offset": record.offset, "length": raw_length, "sha256": None,
                    "reason": f"a second copy of the record with hash {record.hash[:12]}…",
                })
                continue
            seen.add(record.hash)
            unique.append(record)
        self.records = unique


def _salvage(fd: int, ledger: Path, start: int, size: int) -> _Salvage:
    """Every line from `start`: whole records (own hash holds) salvaged, the rest skipped.

    A line marked redacted is whole only when a whole redaction record in the file vouches
    for exactly what it holds (its own hash cannot: a forget changed it).
    """
    found = _Salvage()
    vouched = _vouched(fd, ledger, start, size)
    for offset, raw in lines_of(fd, start, size):
        record, reason = None, "incomplete final line"
        if raw.endswith(b"\n"):
            reason = _diagnose(raw)
            try:
                _check_line(raw)
                record = _parse_record(raw, line=0, offset=offset, path=ledger)
            except (ValueError, HRMError):
                record = None
            if record is not None and record.redacted and (
                vouched.get((record.seq, record.hash)) != _body_hash(raw)
            ):
                record, reason = None, "marked redacted, but no redaction record vouches for it"
        if record is not None:
            found.records.append(record)
            continue
        found.skipped_bytes += len(raw)
        found.skipped.append({
            "offset": offset,
            "length": len(raw),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "reason": reason,
        })
    return found


def _vouched(fd: int, ledger: Path, start: int, size: int) -> dict[tuple[int, str], str]:
    """(seq, original hash) → hash of the redacted line, from every whole redaction record."""
    found: dict[tuple[int, str], str] = {}
    for offset, raw in lines_of(fd, start, size):
        if b'"kind":"' + REDACTION_KIND.encode() not in raw:
            continue
        try:
            _check_line(raw)
            record = _parse_record(raw, line=0, offset=offset, path=ledger)
            for entry in record.data.get("records", ()):
                found[(int(entry["seq"]), str(entry["hash"]))] = str(entry["redacted_hash"])
        except (ValueError, HRMError, KeyError, TypeError, AttributeError):
            continue
    return found


def _is_redacted(raw: bytes) -> bool:
    """Whether the line carries the redacted flag (in its own fields, after the hash)."""
    i = raw.rfind(b',"hash":"')
    return i >= 0 and _REDACTED_FLAG in raw[i + 74 :]


def _body_hash(raw: bytes) -> str:
    """SHA-256 of a line without its ``hash`` member: what a redaction record names."""
    body = raw[:-1] if raw.endswith(b"\n") else raw
    i = body.rfind(b',"hash":"')
    return hashlib.sha256(body[:i] + body[i + 74 :]).hexdigest()


def _hashes_before(fd: int, end: int) -> set[str]:
    """The hashes of the records in the first `end` bytes (the verified prefix)."""
    return {_check_line(raw)[1] for _, raw in lines_of(fd, 0, end)}


def _rechain(
    ledger: Path, records: list[LedgerRecord], kept: int, last_hash: str
) -> tuple[bytes, int, str]:
    """Salvaged records chained anew after the `kept` good ones: bytes, last seq and hash."""
    lines: list[bytes] = []
    seq, prev = kept, last_hash
    for record in records:
        seq += 1
        kind, _, data_json = _prepare_item(record.kind, record.data)
        prev, line = _encode_line(seq, record.ts, kind, prev, data_json, path=ledger)
        lines.append(line)
    return b"".join(lines), seq, prev


def _ranges(seqs: Iterable[int]) -> list[list[int]]:
    """``[[first, last], …]`` runs of consecutive seqs (a salvage is usually one or two)."""
    runs: list[list[int]] = []
    for seq in seqs:
        if runs and runs[-1][1] == seq - 1:
            runs[-1][1] = seq
        else:
            runs.append([seq, seq])
    return runs


def _highest_turn_in(fd: int, size: int) -> int | None:
    """The highest ``"turn":N`` any line of the file holds, damaged ones too (read leniently)."""
    found = [int(m.group(1)) for _, raw in lines_of(fd, 0, size) for m in _TURN.finditer(raw)]
    return max(found, default=None)


def _verified_prefix(fd: int, ledger: Path, size: int) -> tuple[int, int, str, VerifyError | None]:
    """End offset, count and last hash of the records that verify, and the first problem."""
    good_end, count, last = 0, 0, GENESIS_HASH.encode()
    ends: list[tuple[int, bytes]] = []  # per record: where its line ends, its hash
    redacted: list[tuple[int, str, str]] = []  # records read as redacted: seq, hash, line hash
    try:
        with open(fd, "rb", closefd=False) as fh:
            for offset, raw, seq, digest in _scan(fh, 0, size, 1, last):
                good_end, count, last = offset + len(raw), seq, digest
                ends.append((good_end, digest))
                if _is_redacted(raw):
                    redacted.append((seq, digest.decode(), _body_hash(raw)))

            def hash_at(end: int) -> tuple[int, bytes] | None:
                starts = _last_line_starts(fh, end, 1) if 0 < end <= size else []
                if not starts:
                    return None
                try:
                    found, digest, _ = _check_line(os.pread(fd, end - starts[0], starts[0]))
                except ValueError:
                    return None
                return found, digest.encode()

            anchor = _read_anchor(ledger) or _manifest_anchor(ledger)
            _check_anchor_after_scan(anchor, count, last, hash_at)
    except _Corrupt as bad:
        bad_seq = bad.error.seq
        # A record read as good may not be: one marked redacted that no whole redaction
        # record in the file vouches for (the scan only knows once it is through, and the one
        # that vouched may be the damage). Keep only what precedes the first such record.
        vouched = _vouched(fd, ledger, 0, size)
        for first, original, line_hash in redacted:
            if vouched.get((first, original)) != line_hash:
                bad_seq = first if bad_seq is None else min(bad_seq, first)
                break
        if bad_seq is not None and 0 < bad_seq <= count:
            count = bad_seq - 1
            good_end, last = ends[count - 1] if count else (0, GENESIS_HASH.encode())
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
