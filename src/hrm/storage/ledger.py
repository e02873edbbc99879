"""Tamper-evident, append-only ledgers: the truth every table in hrm is a view of (ARCHITECTURE §4).

A ledger is a JSON Lines file, one record per line::

    {"data":{...},"hash":"<sha256>","kind":"turn","prev":"<sha256>","seq":7,"ts":"...Z"}

``hash`` is SHA-256 over the canonical JSON (sorted keys, no spaces, UTF-8) of the other five
fields; ``prev`` is the previous record's hash (``"0" * 64`` for the first) and ``seq`` counts
from 1, so record *n* sits on line *n*. Each line is itself the canonical JSON of all six
fields, which means the hashed bytes are exactly the stored line with its ``"hash"`` member
removed: verification hashes the bytes on disk instead of re-serialising them, and so checks
what is really stored at several hundred thousand records per second.

What verification detects: any changed, inserted or deleted byte inside the file, a deleted,
duplicated or reordered record, a line that is not JSON, a wrong ``seq``, and truncation in the
middle. What a hash chain alone cannot detect is whole records cut from the *end*, because the
shorter file is itself a valid chain. hrm closes most of that gap with an **anchor**: a sidecar
``<ledger>.anchor`` holding the seq, hash and end offset of the last *committed* record, written
after the records it names are on disk (every append under ``Durability.FSYNC``, every `commit`
under ``Durability.GROUP``). `Ledger.verify` and `Ledger.records` fail when the ledger ends
before its anchor or disagrees with it, and appends refuse to chain onto such a ledger. Records
appended after the last commit, or a truncation made together with deleting or rewriting the
anchor, remain undetectable — as is any forgery that recomputes every hash, since the chain is
unkeyed. The SQLite index (`hrm.storage.ledger_index`) keeps a second copy of seq and hash.

Concurrency: several processes may append at once. Each append holds an exclusive ``flock`` on
the ledger file, re-reads the true tail only if the file size changed since this handle last saw
it, writes one line with one ``write(2)`` and releases. Within a process a `Ledger` is
thread-safe. A writer killed mid-append leaves a final line without ``"\\n"`` (a torn tail);
the next handle to open or lock the file cuts exactly those bytes, logs a warning and reports
them in `Ledger.repaired`. Complete lines are never modified; a damaged complete line is
corruption, reported by `verify` and raised by `records`, never skipped.
A torn line that starts before the committed point (the anchor, or the home's manifest) is no
interrupted append but a damaged committed record: it is reported and never cut (D186).
Only a person repairs a damaged ledger: `hrm ledger quarantine` (`hrm.storage.ledger_quarantine`)
copies it aside whole, keeps every record that still verifies and chains a record of what it
skipped. A forget rewrites records in place (`hrm.storage.redaction`): each keeps its hash and
is marked ``redacted``, and a later ``ledger_redaction`` record vouches for the new line.
Every commit notes the ledger's head in the home's manifest (`hrm.storage.manifest`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO

from hrm._file_lock import held, lock, unlock
from hrm._private import make_private_dirs
from hrm._process import pid
from hrm.errors import ErrorCode, HRMError
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
    _encoded_item,
    _format_ts,
    _parse_record,
    _prepare_item,
    _scan,
    canonical_json,
    record_hash,
)
from hrm.types import Clock, ProgressCallback, system_clock

__all__ = [
    "GENESIS_HASH",
    "Durability",
    "Ledger",
    "LedgerRecord",
    "TornTail",
    "VerifyError",
    "VerifyReport",
    "canonical_json",
    "record_hash",
    "verify_ledger",
]

logger = logging.getLogger(__name__)

_ANCHOR_SIZE = 256
QUARANTINE_KIND = "ledger_quarantine"
"""Kind of the record `hrm ledger quarantine` appends after cutting damage away."""
_REPAIR_KINDS = frozenset({QUARANTINE_KIND, REDACTION_KIND})
"""Records that end a ledger a person's repair or a forget rewrote: open handles re-read."""
_READ_CHUNK = 1 << 16
PROGRESS_BYTES = 1 << 20
"""How often `Ledger.verify` reports progress: about once a MiB (a few ms of hashing)."""
_OWN_KEPT = 64
"""How many of its latest appends a handle keeps for `Ledger.appended_after` (a few turns')."""
_OPEN_FLAGS = os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
_sync_data = getattr(os, "fdatasync", os.fsync)


class Durability(str, Enum):
    """When appended records are forced to stable storage."""

    FSYNC = "fsync"
    """Every append is on disk before it returns (slow: one fsync per record)."""
    GROUP = "group"
    """Appends reach the OS at once (other processes see them); `Ledger.commit` makes them durable
    at a boundary such as the end of a turn. A power loss can lose records since the last commit."""


@dataclass(frozen=True, slots=True)
class TornTail:
    """Bytes of an interrupted append found at the end of a ledger."""

    path: Path
    offset: int
    """Where the torn line started (the ledger's size after the cut)."""
    length: int
    """How many bytes it had."""
    line: int
    """The line number the record would have had."""
    preview: str
    """Its first bytes, decoded leniently, for the report."""
    cut: bool = True
    """False when the file was opened read-only or could not be written: the bytes remain."""

    def describe(self) -> str:
        """One line for logs and the CLI."""
        action = "cut" if self.cut else "found (not cut: read-only)"
        return (
            f"{self.path}:{self.line}: torn final line {action}: {self.length} bytes at offset "
            f"{self.offset} left by an interrupted append"
        )


@dataclass(frozen=True, kw_only=True)
class VerifyReport:
    """What `Ledger.verify` found. Content problems live here; they are never raised."""

    path: Path
    ok: bool
    records: int
    """How many records verified, counting from the first, before any error."""
    last_seq: int
    """Seq of the last good record (0 if none)."""
    last_hash: str
    first_error: VerifyError | None = None
    repaired: TornTail | None = None
    """A torn tail cut (or found) when the ledger was opened or locked."""
    anchor_seq: int | None = None
    """The last committed seq the anchor sidecar vouches for, if there is an anchor."""

    def describe(self) -> str:
        """``"file:line seq N: reason"`` for a failure, a one-line summary otherwise."""
        if self.first_error is None:
            return f"{self.path}: ok, {self.records} records"
        err = self.first_error
        seq = f" seq {err.seq}" if err.seq is not None else ""
        return f"{self.path}:{err.line}{seq}: {err.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json`` output."""
        return {
            "path": str(self.path),
            "ok": self.ok,
            "records": self.records,
            "last_seq": self.last_seq,
            "last_hash": self.last_hash,
            "first_error": self.first_error.to_dict() if self.first_error else None,
            "repaired": self.repaired.describe() if self.repaired else None,
            "anchor_seq": self.anchor_seq,
        }


def verify_ledger(path: str | Path) -> VerifyReport:
    """Verify every record of the ledger at `path` without changing the file.

    A torn final line is reported, not cut (the next writer that opens the ledger cuts it).
    """
    with Ledger(path, read_only=True) as ledger:
        return ledger.verify()


class Ledger:
    """An append-only, hash-chained JSON Lines file shared by threads and processes.

    Opening touches nothing but a torn tail; the file and its parent directories are created
    on the first append. Use as a context manager, or call `close` (which commits).
    ``read_only=True`` opens without write access and changes nothing, not even a torn tail
    (it is reported in `repaired`): what `hrm ledger verify` and `tail` use, since they may be
    pointed at any file.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        durability: Durability | str = Durability.GROUP,
        clock: Clock = system_clock,
        read_only: bool = False,
        manifest: bool = True,
    ) -> None:
        self.path = Path(path)
        self._manifest = manifest and not read_only
        """Note each committed head in the home's manifest (off for the governance ledger's
        own creation records, which the manifest writes while holding its lock)."""
        self.read_only = read_only
        self.durability = _parse_durability(durability)
        self.repaired: TornTail | None = None
        self._clock = clock
        self._mutex = threading.Lock()
        self._sync_lock = threading.Lock()
        """Held by a `commit` through its sync: commits wait for each other, appends do not."""
        self._fd: int | None = None
        self._anchor_fd: int | None = None
        self._pid = pid()
        self._writable = True
        self._closed = False
        self._size = -1  # file size when the tail was last read; -1: never read
        self._end = 0  # where this handle's last append ended
        self._last_seq = 0
        self._last_hash = GENESIS_HASH
        self._dirty = False
        self._anchor_checked = False
        self._own: deque[LedgerRecord] | None = None
        """This handle's latest records, in order and with nothing between them: what
        `appended_after` answers from memory. Emptied when another writer appends; kept only
        once `appended_after` was asked (most handles never are)."""
        with self._mutex:
            fd = self._ensure_fd(create=False)
            if fd is not None:
                with held(fd, path=str(self.path)):
                    if self._writable and not read_only:
                        self._finish_rewrite(fd)
                    self._complete_end(fd)

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r}, durability={self.durability.value!r})"

    # ── lifecycle ──────────────────────────────────────────────────────────

    def close(self) -> None:
        """Commit pending records and release the file. Idempotent."""
        if self._closed:
            return
        try:
            self.commit()
        finally:
            self._release()

    def _release(self) -> None:
        with self._mutex:
            self._closed = True
            for fd in (self._fd, self._anchor_fd):
                if fd is not None and self._pid == pid():
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._fd = self._anchor_fd = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ── writing ────────────────────────────────────────────────────────────

    def append(self, kind: str, data: dict[str, Any]) -> LedgerRecord:
        """Append one record; return it as stored.

        `data` is scrubbed of secrets and must be JSON: str keys; str, int, finite float, bool,
        None, list, tuple or dict values.

        Raises:
            HRMError: ``VALIDATION_FAILED`` naming the bad key path (nothing written);
                ``LEDGER_CORRUPT`` if the ledger's tail is damaged or it was truncated below its
                anchor; ``DISK_FULL`` / ``PERMISSION_DENIED`` from the filesystem.
        """
        return self.append_many([(kind, data)])[0]

    def append_many(
        self, items: Sequence[tuple[str, dict[str, Any]]], *, scrubbed: bool = False
    ) -> list[LedgerRecord]:
        """Append several records under one lock with one write: all of them or none.

        `scrubbed`: the caller has already scrubbed `items` and made them plain JSON (str
        keys; str, int, finite float, None, list and dict values) — the memory journal, which
        scrubs row images only where a secret can be (`hrm.storage.journal`). They are then
        only encoded, not walked again.
        """
        prepare = _encoded_item if scrubbed else _prepare_item
        prepared = [prepare(kind, data) for kind, data in items]
        if not prepared:
            return []
        with self._mutex:
            fd = self._require_fd(create=True)
            lock(fd, path=str(self.path))  # not `held`: a hot path
            try:
                own_end = self._end
                self._sync_tail(fd)
                start = self._size
                seq, prev = self._last_seq, self._last_hash
                own = self._own
                if own and (start != own_end or own[-1].hash != prev):
                    own.clear()  # another writer's records now follow ours
                ts = _format_ts(self._clock())
                lines: list[bytes] = []
                records: list[LedgerRecord] = []
                offset = start
                for kind, data, data_json in prepared:
                    seq += 1
                    digest, line = _encode_line(seq, ts, kind, prev, data_json, path=self.path)
                    records.append(LedgerRecord(seq, ts, kind, data, prev, digest, seq, offset))
                    lines.append(line)
                    offset += len(line)
                    prev = digest
                self._write_all(fd, b"".join(lines), restore_size=start)
                self._size = self._end = offset
                self._last_seq, self._last_hash = seq, prev
                if own is not None:
                    own.extend(records)
                self._dirty = True
                if self.durability is Durability.FSYNC:
                    # Under the lock no anchor can be ahead of this tail: write without reading.
                    self._sync_and_anchor(fd, _Anchor(seq, prev, offset))
            finally:
                unlock(fd)
        if self.durability is Durability.FSYNC:
            self._note_manifest(_Anchor(seq, prev, offset))  # after the lock: see `commit`
        return records

    def retract(self, records: Sequence[LedgerRecord]) -> bool:
        """Cut `records` — this handle's last append, not yet committed — off the ledger.

        For a caller whose own commit failed after the append (the memory journal, when
        SQLite cannot commit): what was never acknowledged leaves no trace. Refused (False)
        when anything was appended after them, when they are no longer at the end, or when a
        commit already made them durable.
        """
        if not records:
            return True
        first, last = records[0], records[-1]
        with self._sync_lock, self._mutex:
            fd = self._fd
            if fd is None or self._pid != pid() or not self._dirty:
                return False
            with held(fd, path=str(self.path)):
                size = _fstat_size(fd, self.path)
                if size != self._end or last.seq != self._last_seq or last.hash != self._last_hash:
                    return False
                try:
                    os.ftruncate(fd, first.offset)
                except OSError as exc:
                    raise _os_error(exc, self.path) from exc
                self._size = -1  # the next append re-reads the tail
                if self._own is not None:
                    self._own.clear()
                self._sync_tail(fd)
                self._dirty = self._last_seq > 0 and self._dirty
        return True

    def commit(self) -> None:
        """Group-commit boundary: make every record appended so far durable.

        A no-op under ``Durability.FSYNC`` (already durable) or when nothing was appended. Also
        advances the anchor, so a later truncation below this point is detected.
        """
        # Commits take turns (one returning means what came before it is durable, even when
        # another thread's commit was syncing), but appends do not wait for them: the sync
        # runs outside the mutex, as it takes a disk's time (~0.2 ms here, far more on some
        # disks) while a group commit on its own thread overlaps the next turn's appends.
        with self._sync_lock:
            with self._mutex:
                if not self._dirty or self._fd is None or self._pid != pid():
                    return
                anchor = _Anchor(self._last_seq, self._last_hash, self._end)
                try:
                    # A descriptor of its own, so closing the ledger meanwhile cannot pull
                    # the file out from under the sync.
                    synced = os.dup(self._fd)
                except OSError as exc:
                    raise _os_error(exc, self.path) from exc
                self._dirty = False
            try:
                _sync_data(synced)  # what `anchor` vouches for was written before it began
            except OSError as exc:
                with self._mutex:
                    self._dirty = True  # the next boundary tries again
                raise _os_error(exc, self.path) from exc
            finally:
                os.close(synced)
            with self._mutex:
                if self._fd is None or self._closed:
                    return
                with held(self._fd, path=str(self.path)):
                    current = self._read_own_anchor()
                    advanced = current is None or current.seq < anchor.seq
                    if advanced:
                        self._write_anchor(anchor)
            # Outside the ledger's lock: the manifest's writer takes the governance ledger's
            # lock while holding its own, so taking them the other way round could deadlock.
            if advanced:
                self._note_manifest(anchor)

    @contextlib.contextmanager
    def batch(self) -> Iterator[Ledger]:
        """A group of appends (a turn) that is committed when the block exits, even on error."""
        try:
            yield self
        finally:
            self.commit()

    # ── reading ────────────────────────────────────────────────────────────

    def records(self, *, start_seq: int = 1) -> Iterator[LedgerRecord]:
        """Every record from `start_seq` on, in order, each verified against the whole chain.

        Reads the records present when iteration starts. Records before `start_seq` are still
        verified (the chain runs from the first record).

        Raises:
            HRMError: ``LEDGER_CORRUPT`` with path, line, seq and reason at the first bad record
                (or when the ledger ends before its anchor). Nothing is skipped.
        """
        end, anchor = self._snapshot()
        yield from self._iter(
            0, end=end, seq=1, prev=GENESIS_HASH.encode(), start_seq=start_seq, anchor=anchor
        )

    def records_after(self, record: LedgerRecord) -> Iterator[LedgerRecord]:
        """The records that follow `record`, checking first that `record` is still in place.

        Indexes use this to catch up without rescanning; the chain from `record` on is verified,
        the part before it is not (run `verify` for that).

        Raises:
            HRMError: ``LEDGER_CORRUPT`` if `record` no longer sits at its offset or a later
                record is bad.
        """
        end, anchor = self._snapshot()
        prev = record.prev.encode()
        first = self._iter(
            record.offset, end=end, seq=record.seq, prev=prev, start_seq=record.seq, anchor=anchor
        )
        found = next(first, None)
        if found is None or found.hash != record.hash:
            raise HRMError.ledger_corrupt(
                self.path, record.line, record.seq,
                f"record {record.seq} is no longer at offset {record.offset}: the ledger was "
                "changed or replaced",
            )
        yield from first

    def appended_after(
        self, record: LedgerRecord, *, size: int | None = None
    ) -> list[LedgerRecord] | None:
        """The records after `record`, from memory, when this handle appended every one of
        them and the file still ends where its last append did; else None (read the file
        with `records_after`).

        For a reader that catches up after its own process's append every turn (the session's
        usage, D380): no file is opened, parsed or hashed. It trusts the sign `_snapshot`
        trusts — the file's size is still this handle's last end — and that `record` is the
        one its next record chains onto (seq and hash). `size`: the file's size as the caller
        just read it (`size`), saving a second `fstat`.
        """
        with self._mutex:
            own, fd = self._own, self._fd
            if own is None:
                self._own = deque(maxlen=_OWN_KEPT)  # asked once: kept from the next append
                return None
            if not own or fd is None or self._pid != pid():
                return None
            if (_fstat_size(fd, self.path) if size is None else size) != self._end:
                return None
            last = own[-1]
            if record.seq == last.seq:
                return [] if record.hash == last.hash else None
            index = record.seq + 1 - own[0].seq
            if not 0 <= index < len(own):
                return None
            after = list(own)[index:]
            return after if after[0].prev == record.hash else None

    def read_at(self, offset: int) -> LedgerRecord:
        """The record whose line starts at byte `offset` (its own hash verified).

        Raises:
            HRMError: ``NOT_FOUND`` if no line starts there; ``LEDGER_CORRUPT`` if it is bad.
        """
        end, _ = self._snapshot(anchor=False)
        with self._reader() as fh:
            at_start = offset == 0 or (0 < offset < end and _pread(fh, offset - 1, 1) == b"\n")
            if offset < 0 or offset >= end or not at_start:
                raise HRMError.not_found(
                    "ledger record", f"{self.path}@{offset}", "offsets come from LedgerIndex"
                )
            fh.seek(offset)
            raw = fh.readline()
        seq, _digest, _prev = self._check_raw(raw, offset)
        return _parse_record(raw, line=seq, offset=offset, path=self.path)

    def holding_back(self, needles: Sequence[bytes], *, reach: int) -> Iterator[LedgerRecord]:
        """Records whose line holds every one of `needles`, newest first, among those in the
        file's last `reach` bytes; each one's own hash checked.

        The file's end is read backwards in growing pieces (what is wanted is usually near
        the end) and searched for the first needle (give the rarest first): only the lines
        that hold it are tested for the others, checked and parsed. For a context lookup
        (D86), not an audit: records between two found ones are not verified (`verify` is).
        """
        if not needles:
            return
        end, _ = self._snapshot(anchor=False)
        if end == 0:
            return
        floor = max(0, end - reach)
        rarest, others = needles[0], needles[1:]
        hi, size, carry = end, _BACK_PIECE, b""
        with self._reader() as fh:
            while hi > floor:
                lo = max(floor, hi - size)
                piece = _pread(fh, lo, hi - lo)
                if carry:
                    piece += carry
                # The piece's first line may begin in the piece before it: carried over,
                # unless it starts the file or follows a line's end. Searched in place, not
                # copied: only a found line is.
                whole = lo == 0 or _pread(fh, lo - 1, 1) == b"\n"
                cut = 0 if whole else piece.find(b"\n") + 1
                carry = piece[:cut]
                at = piece.rfind(rarest, cut)
                while at >= 0:
                    begin = max(cut, piece.rfind(b"\n", cut, at) + 1)
                    stop = piece.find(b"\n", at) + 1
                    raw = piece[begin:stop]
                    if stop and all(needle in raw for needle in others):
                        offset = lo + begin
                        seq, _digest, _prev = self._check_raw(raw, offset)
                        yield _parse_record(raw, line=seq, offset=offset, path=self.path)
                    at = piece.rfind(rarest, cut, begin)
                hi, size = lo, size * 4

    def tail(self, n: int = 10) -> list[LedgerRecord]:
        """The last `n` records, oldest first; each hash and the links between them verified."""
        if n <= 0:
            return []
        end, _ = self._snapshot(anchor=False)
        if end == 0:
            return []
        with self._reader() as fh:
            starts = _last_line_starts(fh, end, n)
            records: list[LedgerRecord] = []
            for start in starts:
                fh.seek(start)
                raw = fh.readline()
                seq, _digest, prev = self._check_raw(raw, start)
                if records and (seq != records[-1].seq + 1 or prev != records[-1].hash):
                    raise HRMError.ledger_corrupt(
                        self.path, seq, seq, f"does not follow record {records[-1].seq}"
                    )
                records.append(_parse_record(raw, line=seq, offset=start, path=self.path))
        return records

    def last(self) -> LedgerRecord | None:
        """The last record, or None for an empty or missing ledger."""
        found = self.tail(1)
        return found[0] if found else None

    def size(self) -> int:
        """The file's size in bytes now, 0 before it exists; counts other processes' appends.

        One `fstat` of the open descriptor when there is one: a caller that polls for other
        writers once a turn pays no path lookup (seven directories deep in a home).
        """
        with self._mutex:
            if self._fd is not None and self._pid == pid():
                return _fstat_size(self._fd, self.path)
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise _os_error(exc, self.path) from exc

    @property
    def appended_end(self) -> int:
        """Where this handle's last append ended: the file's size just after it (0 before)."""
        return self._end

    def verify(self, *, progress: ProgressCallback | None = None) -> VerifyReport:
        """Check every record and the anchor. Never raises for what it finds in the file.

        Args:
            progress: Called as ``progress(bytes_checked, bytes_total)`` every
                `PROGRESS_BYTES` or so and once at the end (not after a bad record).
        """
        end, anchor = self._snapshot()
        count, last_hash = 0, GENESIS_HASH.encode()
        try:
            if end > 0:
                report_at = PROGRESS_BYTES
                with self._reader() as fh:
                    for offset, _raw, seq, digest in _scan(fh, 0, end, 1, last_hash):
                        count, last_hash = seq, digest
                        if progress is not None and offset >= report_at:
                            progress(offset, end)
                            report_at = offset + PROGRESS_BYTES
            _check_anchor_after_scan(anchor, count, last_hash, self._hash_at)
        except _Corrupt as bad:
            return self._report(count, last_hash.decode(), bad.error, anchor)
        if progress is not None:
            progress(end, end)
        return self._report(count, last_hash.decode(), None, anchor)

    # ── internals ──────────────────────────────────────────────────────────

    def _report(
        self, count: int, last_hash: str, error: VerifyError | None, anchor: _Anchor | None
    ) -> VerifyReport:
        return VerifyReport(
            path=self.path,
            ok=error is None,
            records=count,
            last_seq=count,
            last_hash=last_hash,
            first_error=error,
            repaired=self.repaired,
            anchor_seq=anchor.seq if anchor else None,
        )

    def _iter(
        self,
        offset: int,
        *,
        end: int,
        seq: int,
        prev: bytes,
        start_seq: int,
        anchor: _Anchor | None,
    ) -> Iterator[LedgerRecord]:
        last_seq, last_hash = seq - 1, prev
        try:
            if end > offset:
                with self._reader() as fh:
                    for line_offset, raw, rec_seq, digest in _scan(fh, offset, end, seq, prev):
                        last_seq, last_hash = rec_seq, digest
                        if rec_seq >= start_seq:
                            yield _parse_record(
                                raw, line=rec_seq, offset=line_offset, path=self.path
                            )
            _check_anchor_after_scan(anchor, last_seq, last_hash, self._hash_at)
        except _Corrupt as bad:
            err = bad.error
            raise HRMError.ledger_corrupt(self.path, err.line, err.seq, err.reason) from None

    def _hash_at(self, end: int) -> tuple[int, bytes] | None:
        """Seq and hash of the complete line ending at byte `end`, if it is a good record."""
        with self._reader() as fh:
            starts = _last_line_starts(fh, end, 1)
            if not starts:
                return None
            fh.seek(starts[0])
            raw = fh.readline()
        if starts[0] + len(raw) != end:
            return None  # no line ends there: the bytes before `end` moved
        try:
            seq, digest, _ = _check_line(raw)
        except ValueError:
            return None
        return seq, digest.encode()

    def _check_raw(self, raw: bytes, offset: int) -> tuple[int, str, str]:
        try:
            return _check_line(raw)
        except ValueError:
            line = self._line_number(offset)  # record n sits on line n
            raise HRMError.ledger_corrupt(self.path, line, line, _diagnose(raw)) from None

    def _line_number(self, offset: int) -> int:
        with self._reader() as fh:
            return _count_lines(fh.fileno(), offset) + 1

    @contextlib.contextmanager
    def _reader(self) -> Iterator[BinaryIO]:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed by the context manager
        except FileNotFoundError:
            raise HRMError.ledger_corrupt(
                self.path, 1, None, "the ledger file disappeared while it was being read"
            ) from None
        except OSError as exc:
            raise _os_error(exc, self.path) from exc
        with fh:
            yield fh

    def _snapshot(self, *, anchor: bool = True) -> tuple[int, _Anchor | None]:
        """End of the complete records (cutting a torn tail) and the anchor, read together."""
        with self._mutex:
            fd = self._ensure_fd(create=False)
            if fd is None:
                return 0, self._read_anchor() if anchor else None
            if self._end > 0:
                # The file ends where this handle last saw complete records end (its own
                # append, usually): nobody appended since, so there is no torn tail to cut,
                # and an anchor read before that check vouches for no more than is there. A
                # reader catching up after its own turn's append (every turn) takes no lock.
                found = self._read_anchor() if anchor else None
                if _fstat_size(fd, self.path) == self._end:
                    return self._end, found
            with held(fd, path=str(self.path)):
                end = self._complete_end(fd)
                return end, self._read_anchor() if anchor else None

    def _complete_end(self, fd: int) -> int:
        """Cut a torn final line (or note it, read-only) and return where complete lines end."""
        size = _fstat_size(fd, self.path)
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return size
        start = _line_start(fd, size)
        preview = os.pread(fd, min(80, size - start), start).decode("utf-8", "replace")
        line = _count_lines(fd, start) + 1
        committed = self._committed_end()
        cut = self._writable and start >= committed
        if self._writable and not cut:
            # Bytes of a record some commit vouched for: damage, not an interrupted append.
            # Cutting them would destroy evidence (and acknowledged data); verify reports it,
            # appends refuse, and `hrm ledger quarantine` sets it aside.
            logger.warning(
                "%s:%s: the last line is incomplete but starts before the last committed record "
                "ends (byte %s): left as it is; run `hrm ledger verify`", self.path, line,
                committed,
            )
        if cut:
            try:
                os.ftruncate(fd, start)
            except OSError as exc:
                raise _os_error(exc, self.path) from exc
        torn = TornTail(self.path, start, size - start, line, preview, cut)
        known = self.repaired
        self.repaired = torn
        if known is None or (known.offset, known.length, known.cut) != (start, size - start, cut):
            logger.warning("%s", torn.describe())  # once per tail, not once per read
        return start

    def _sync_tail(self, fd: int) -> None:
        """Under the lock: learn the true last seq and hash if another handle appended."""
        size = _fstat_size(fd, self.path)
        if size == self._size:
            return
        end = self._complete_end(fd)
        if end < self._size and not self._repaired_at(fd, end):
            raise HRMError.ledger_corrupt(
                self.path, self._last_seq, self._last_seq,
                f"the ledger shrank from {self._size} to {end} bytes while open: records were "
                "removed; run `hrm ledger verify`, and `hrm ledger quarantine` to set the "
                "damage aside",
            )
        last_seq, last_hash = 0, GENESIS_HASH
        if end > 0:
            start = _line_start(fd, end - 1)
            last_seq, last_hash, _ = self._check_raw(os.pread(fd, end - start, start), start)
        if (
            self._size > 0 and end > self._size
            and self._hash_at(self._size) != (self._last_seq, self._last_hash.encode())
            and not self._chain_holds(end)
        ):
            # The file grew under this handle, the record it last knew no longer ends where it
            # did, and the chain does not hold: someone edited the records before it (a
            # forget's redaction or a quarantine moves them too, but leaves the chain whole).
            # A long-running writer (a server) must stop here as a new one does at open. One
            # read when another writer appended; the whole chain only when records moved.
            raise HRMError.ledger_corrupt(
                self.path, self._last_seq, self._last_seq,
                f"record {self._last_seq} no longer ends at byte {self._size}: the records "
                "before it were altered while the ledger was open; refusing to append "
                "(`hrm ledger verify` shows it; `hrm ledger quarantine` sets it aside)",
            )
        if not self._anchor_checked:
            anchor = self._read_anchor()
            found = self._hash_at(anchor.end) if anchor is not None and anchor.end <= end else None
            if anchor is not None and found != (anchor.seq, anchor.hash.encode()):
                # Not cached: every later append re-checks and refuses until a person acts.
                raise HRMError.ledger_corrupt(
                    self.path, last_seq + 1, anchor.seq,
                    f"the ledger ends at seq {last_seq} but its anchor vouches for seq "
                    f"{anchor.seq}: committed records were removed or altered; refusing to "
                    "append (`hrm ledger verify` shows it; `hrm ledger quarantine` sets it aside)",
                )
            self._anchor_checked = True
        self._size = self._end = end
        self._last_seq, self._last_hash = last_seq, last_hash

    def _chain_holds(self, end: int) -> bool:
        """Whether every record up to byte `end` verifies and chains onto the one before."""
        try:
            with self._reader() as fh:
                # `_scan` checks each record as it yields it: reading them all checks them all
                deque(_scan(fh, 0, end, 1, GENESIS_HASH.encode()), maxlen=0)
        except _Corrupt:
            return False
        return True

    def _repaired_at(self, fd: int, end: int) -> bool:
        """Whether the record ending at `end` closes a quarantine or a forget's redaction.

        A ledger that shrank under an open handle was cut or rewritten; if a quarantine or a
        redaction did it (its record chained at the end), this handle re-reads the tail
        instead of refusing until it is reopened. Anything else that shrank the file is
        still refused.
        """
        if end <= 0:
            return False
        start = _line_start(fd, end - 1)
        try:
            raw = os.pread(fd, end - start, start)
            record = _parse_record(raw, line=0, offset=start, path=self.path)
        except HRMError:
            return False
        if record.kind not in _REPAIR_KINDS:
            return False
        self._anchor_checked = False  # the repair moved the anchor: check it again
        return True

    def _committed_end(self) -> int:
        """Where the last committed record ends, by the anchor or the home's manifest."""
        ends = [a.end for a in (_read_anchor(self.path), _manifest_anchor(self.path)) if a]
        return max(ends, default=0)

    def _note_manifest(self, anchor: _Anchor) -> None:
        if self._manifest:
            from hrm.storage.manifest import note_head

            note_head(self.path, anchor.seq, anchor.hash, anchor.end)

    def _finish_rewrite(self, fd: int) -> None:
        """Finish a forget's or a quarantine's rewrite a crash interrupted (under the lock)."""
        from hrm.storage._rewrite import finish_rewrite

        try:
            if finish_rewrite(fd, self.path):
                logger.warning("%s: finished a rewrite that was interrupted", self.path)
        except OSError as exc:
            raise _os_error(exc, self.path) from exc

    def _sync_and_anchor(self, fd: int, anchor: _Anchor) -> None:
        """Sync and anchor under the mutex and the file lock (`Durability.FSYNC` appends)."""
        try:
            _sync_data(fd)
        except OSError as exc:
            raise _os_error(exc, self.path) from exc
        self._dirty = False
        self._write_anchor(anchor)

    def _anchor_path(self) -> Path:
        return _anchor_path(self.path)

    def _read_anchor(self) -> _Anchor | None:
        """The anchor sidecar, or — deleted with records cut from the end — the head the home's
        manifest recorded at the same commit, so that cut still shows (D185)."""
        return _read_anchor(self.path) or _manifest_anchor(self.path)

    def _read_own_anchor(self) -> _Anchor | None:
        """The anchor, read through the descriptor this handle writes it with (one `pread`).

        Every group commit reads it; opening the file each time cost six system calls, each
        a moment the committer's thread and a turn's trade the interpreter lock.
        """
        if self._anchor_fd is None:
            return self._read_anchor()
        try:
            raw = os.pread(self._anchor_fd, _ANCHOR_SIZE, 0)
        except OSError:
            return self._read_anchor()
        return _parse_anchor(raw, self._anchor_path()) if raw else None

    def _write_anchor(self, anchor: _Anchor) -> None:
        """Record that the records up to `anchor` are durable (caller holds the lock)."""
        payload = _anchor_payload(anchor)
        try:
            if self._anchor_fd is None:
                flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                self._anchor_fd = os.open(self._anchor_path(), flags, 0o600)
            os.pwrite(self._anchor_fd, payload, 0)
        except OSError as exc:
            # The anchor only strengthens detection; a ledger without one is still valid.
            logger.warning("cannot write ledger anchor %s: %s", self._anchor_path(), exc)

    def _ensure_fd(self, *, create: bool) -> int | None:
        if self._closed:
            raise HRMError.validation_failed(f"Ledger '{self.path}' is closed", path=str(self.path))
        if self._pid != pid():
            # A descriptor inherited through fork would share the parent's flock: reopen.
            # Closing the child's copies leaves the parent's descriptors and lock untouched.
            for inherited in (self._fd, self._anchor_fd):
                if inherited is not None:
                    with contextlib.suppress(OSError):
                        os.close(inherited)
            self._fd = self._anchor_fd = None
            self._pid = pid()
            self._size = -1
            self._anchor_checked = False
        if self._fd is not None:
            return self._fd
        try:
            if create:
                make_private_dirs(self.path.parent)
            if self.read_only:
                if create:
                    raise HRMError.permission_denied(self.path)
                self._fd = os.open(self.path, os.O_RDONLY | _OPEN_FLAGS)
                self._writable = False
                return self._fd
            flags = os.O_RDWR | _OPEN_FLAGS | (os.O_CREAT if create else 0)
            try:
                self._fd = os.open(self.path, flags, 0o600)
                self._writable = True
            except PermissionError:
                if create:
                    raise
                self._fd = os.open(self.path, os.O_RDONLY | _OPEN_FLAGS)
                self._writable = False
        except FileNotFoundError:
            if create:
                raise HRMError.permission_denied(self.path) from None
            return None
        except OSError as exc:
            raise _os_error(exc, self.path) from exc
        return self._fd

    def _require_fd(self, *, create: bool) -> int:
        if self.read_only:
            raise HRMError.validation_failed(
                f"Ledger '{self.path}' was opened read-only; nothing can be appended",
                path=str(self.path),
            )
        fd = self._ensure_fd(create=create)
        if fd is None or not self._writable:
            raise HRMError.permission_denied(self.path)
        return fd

    def _write_all(self, fd: int, payload: bytes, *, restore_size: int) -> None:
        view = memoryview(payload)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except OSError as exc:
            # Never leave part of a record behind: cut back to where this append began.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, restore_size)
            self._size = -1
            raise _os_error(exc, self.path) from exc


# ── small helpers ───────────────────────────────────────────────────────────


def _parse_durability(value: Durability | str) -> Durability:
    try:
        return Durability(value)
    except ValueError:
        choices = ", ".join(d.value for d in Durability)
        raise HRMError.validation_failed(
            f"Unknown ledger durability {value!r}: use one of {choices}", durability=str(value)
        ) from None


def _anchor_path(path: Path) -> Path:
    return path.with_name(path.name + ".anchor")


def _read_anchor(path: Path) -> _Anchor | None:
    """The anchor sidecar of the ledger at `path`; None if absent or unreadable (logged)."""
    anchor_path = _anchor_path(path)
    try:
        with open(anchor_path, "rb") as fh:
            raw = fh.read(_ANCHOR_SIZE)
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("cannot read ledger anchor %s: %s", anchor_path, exc)
        return None
    return _parse_anchor(raw, anchor_path)


def _manifest_anchor(path: Path) -> _Anchor | None:
    """The head the home's manifest holds for the ledger at `path` (None outside a home)."""
    from hrm.storage.manifest import home_root_of, read_manifest

    root = home_root_of(path)
    if root is None:
        return None
    try:
        heads = read_manifest(root)
        head = heads.get(path.relative_to(root).as_posix()) if heads else None
    except (ValueError, KeyError, TypeError, OSError):
        return None
    return None if head is None else _Anchor(head.seq, head.hash, head.end)


def _parse_anchor(raw: bytes, anchor_path: Path) -> _Anchor | None:
    try:
        obj = json.loads(raw)
        return _Anchor(int(obj["seq"]), str(obj["hash"]), int(obj["end"]))
    except (ValueError, KeyError, TypeError):
        logger.warning("ignoring unreadable ledger anchor %s", anchor_path)
        return None


def _anchor_payload(anchor: _Anchor) -> bytes:
    """The fixed-width bytes of an anchor file (rewritten in place with one `pwrite`)."""
    text = canonical_json({"end": anchor.end, "hash": anchor.hash, "seq": anchor.seq})
    return text.encode().ljust(_ANCHOR_SIZE - 1) + b"\n"


def _fstat_size(fd: int, path: Path) -> int:
    try:
        return os.fstat(fd).st_size
    except OSError as exc:
        raise _os_error(exc, path) from exc


def _line_start(fd: int, pos: int) -> int:
    """Offset just after the last ``\\n`` strictly before `pos` (0 if there is none)."""
    cursor = pos
    while cursor > 0:
        start = max(0, cursor - _READ_CHUNK)
        found = os.pread(fd, cursor - start, start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        cursor = start
    return 0


def _count_lines(fd: int, end: int) -> int:
    """Newlines in the first `end` bytes (error paths only: reads in bounded chunks)."""
    count, pos = 0, 0
    while pos < end:
        chunk = os.pread(fd, min(_READ_CHUNK * 16, end - pos), pos)
        if not chunk:
            break
        count += chunk.count(b"\n")
        pos += len(chunk)
    return count


def _pread(fh: BinaryIO, offset: int, length: int) -> bytes:
    return os.pread(fh.fileno(), length, offset)


_BACK_PIECE = 128 << 10
"""The first piece `holding_back` reads (then four times the last): about a dozen turns."""


def _last_line_starts(fh: BinaryIO, end: int, n: int) -> list[int]:
    """Start offsets of the last `n` complete lines before `end`, oldest first."""
    fd = fh.fileno()
    starts: list[int] = []
    pos = end - 1  # the "\n" ending the last line
    while len(starts) < n and pos >= 0:
        start = _line_start(fd, pos)
        starts.append(start)
        pos = start - 1
    return list(reversed(starts))


def _os_error(exc: OSError, path: Path) -> HRMError:
    if exc.errno == errno.ENOSPC:
        return HRMError(
            ErrorCode.DISK_FULL,
            f"No space left to write ledger '{path}'",
            recoverable=False,
            context={"path": str(path)},
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return HRMError.permission_denied(path)
    return HRMError.internal(f"I/O error on ledger '{path}': {exc}", path=str(path))

