"""Rewriting a ledger's tail in place, so that a crash at any point leaves it whole.

A forget (redaction) and a quarantine (salvage) rewrite a ledger from some offset to its end.
They do it in place — the same file, the same inode — because other processes may hold the
ledger open: a file renamed over it would leave their descriptors on the old, unlinked one,
and whatever they appended next would be lost. In place, they re-read the tail under the lock
before their next append and carry on.

In place is not atomic by itself, so the new tail is first written, synced, to a redo file
beside the ledger (``<name>.rewrite``: one JSON header line, then the bytes). Only then is the
ledger overwritten, cut to its new length, synced and anchored; then the redo file goes.
Interrupted before the redo file is complete, the ledger was not touched yet; interrupted
after, the next writable open of the ledger (or `finish_rewrite`) finishes the job from the
redo file. The redo file holds only the new bytes, never what a forget removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from hrm.storage._ledger_format import _Anchor

__all__ = [
    "REWRITE_SUFFIX",
    "finish_rewrite",
    "lines_of",
    "rewrite_pending",
    "rewrite_tail",
    "sync_directory",
]

REWRITE_SUFFIX = ".rewrite"
_sync_data = getattr(os, "fdatasync", os.fsync)


def _redo_path(ledger: Path) -> Path:
    return ledger.with_name(ledger.name + REWRITE_SUFFIX)


def rewrite_pending(ledger: Path) -> bool:
    """Whether an interrupted rewrite of `ledger` waits to be finished."""
    return _redo_path(ledger).exists()


def rewrite_tail(
    fd: int, ledger: Path, offset: int, tail: bytes, anchor: _Anchor | None
) -> None:
    """Replace the bytes of `fd` from `offset` on with `tail` and anchor at `anchor`
    (None: leave the anchor file as it is — a damaged ledger that cannot be anchored).

    The caller holds the ledger's exclusive lock. Raises `OSError` from the filesystem; the
    ledger is then either untouched or finished by the next writable open.
    """
    redo = _redo_path(ledger)
    header = {
        "offset": offset,
        "length": len(tail),
        "sha256": hashlib.sha256(tail).hexdigest(),
        "anchor": (
            None if anchor is None
            else {"seq": anchor.seq, "hash": anchor.hash, "end": anchor.end}
        ),
    }
    with open(redo, "wb") as out:
        out.write(json.dumps(header, sort_keys=True).encode() + b"\n")
        out.write(tail)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(redo, 0o600)
    sync_directory(ledger.parent)
    _apply(fd, ledger, offset, tail, anchor)
    redo.unlink()
    sync_directory(ledger.parent)


def finish_rewrite(fd: int, ledger: Path) -> bool:
    """Finish an interrupted `rewrite_tail` of `ledger` (the caller holds the lock on `fd`).

    Returns whether there was one to finish. A redo file that is not complete (the crash came
    while it was being written) is dropped: the ledger was not touched yet.
    """
    redo = _redo_path(ledger)
    try:
        raw = redo.read_bytes()
    except FileNotFoundError:
        return False
    newline = raw.find(b"\n")
    try:
        header = json.loads(raw[:newline])
        tail = raw[newline + 1 :]
        complete = (
            newline > 0
            and len(tail) == int(header["length"])
            and hashlib.sha256(tail).hexdigest() == header["sha256"]
        )
        found = header["anchor"]
        anchor = (
            None if found is None
            else _Anchor(int(found["seq"]), str(found["hash"]), int(found["end"]))
        )
        offset = int(header["offset"])
    except (ValueError, KeyError, TypeError):
        complete = False
    if complete:
        # A descriptor of its own: the ledger's is opened O_APPEND, and Linux appends a
        # pwrite on such a descriptor at the end, whatever offset it names.
        own = os.open(ledger, os.O_RDWR | os.O_CLOEXEC)
        try:
            _apply(own, ledger, offset, tail, anchor)
        finally:
            os.close(own)
    redo.unlink()
    sync_directory(ledger.parent)
    return complete


def _apply(fd: int, ledger: Path, offset: int, tail: bytes, anchor: _Anchor | None) -> None:
    view, position = memoryview(tail), offset
    while view:
        written = os.pwrite(fd, view, position)
        view, position = view[written:], position + written
    os.ftruncate(fd, offset + len(tail))
    _sync_data(fd)
    if anchor is None:
        return
    from hrm.storage.ledger import _anchor_path, _anchor_payload

    anchor_fd = os.open(_anchor_path(ledger), os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.pwrite(anchor_fd, _anchor_payload(anchor), 0)
        _sync_data(anchor_fd)
    finally:
        os.close(anchor_fd)


def lines_of(fd: int, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """(offset, line) for each line of `fd` from byte `start` up to byte `end`."""
    with open(fd, "rb", closefd=False) as fh:
        fh.seek(start)
        offset = start
        for raw in fh:
            if offset >= end:
                return
            yield offset, raw
            offset += len(raw)


def sync_directory(directory: Path) -> None:
    """Make a new or removed name durable (best effort: not every filesystem allows it)."""
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
