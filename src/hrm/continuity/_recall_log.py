"""Recalls the hooks made, kept for the next process that may write the learnings.

A recall stamps each learning it returns (``accessed_at``, ``access_count``: what decay weighs).
Stamping them in ``memory.db`` made every prompt a write transaction: ``BEGIN IMMEDIATE``, which
waits behind any other writer (a session's capture, a long import) up to the busy timeout, then
a commit and, the hook's connection being the last one open, a checkpoint with its fsync at
close — 1.4 ms of a 36 ms hook at 10k learnings (D397). A process that opens the learnings with
``recalls="log"`` (the hooks) appends one line per recall to this file instead: one
``O_APPEND`` write of a line well under a page, which Linux does not interleave with another's.
`LearningsRepository` applies the lines when a process other than a hook opens the learnings
or writes them, and the hook itself once the file passes `FOLD_BYTES`.

The stamps are bookkeeping, not journaled (D182): a line lost — to a crash, or written by a
hook into a file another process had just taken — leaves a count one short, nothing more. A
line that does not parse (a torn write, an edit) is skipped and counted, never applied.
"""

from __future__ import annotations

import _thread  # not `threading`: the prompt hook imports this module
import json
import os
import re

TYPE_CHECKING = False  # the prompt hook imports this module: no `typing` at run time
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["FOLD_BYTES", "MAX_READ_BYTES", "Recalls", "append_recall", "take_recalls"]

FOLD_BYTES = 64 << 10
"""A log this large is applied by the hook that finds it so (about a thousand recalls)."""

MAX_READ_BYTES = 16 << 20
"""What one fold reads at most; the rest of an overgrown log is dropped (a count short)."""

_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")
"""`format_ts`'s fixed width: string order is time order, which the fold's ``max`` relies on."""


class Recalls:
    """What a taken log says: per learning id, its latest stamp and how often it was recalled.

    A plain class: `dataclasses` imports `inspect`, 5 ms of the hook's start.
    """

    __slots__ = ("counts", "latest", "skipped_lines")

    def __init__(self) -> None:
        self.latest: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self.skipped_lines = 0

    def add(self, stamp: str, ids: list[str]) -> None:
        for learning_id in ids:
            self.counts[learning_id] = self.counts.get(learning_id, 0) + 1
            if stamp > self.latest.get(learning_id, ""):
                self.latest[learning_id] = stamp

    def rows(self) -> list[tuple[str, int, str]]:
        """``(latest stamp, count, id)`` per learning, for one ``executemany``."""
        return [(self.latest[i], n, i) for i, n in self.counts.items()]


def append_recall(path: Path, stamp: str, ids: list[str]) -> int:
    """Append one recall (the stamp and the ids it returned); the log's size after it.

    The file is created private (0600): it names learnings of the person's home.
    """
    line = json.dumps([stamp, ids], ensure_ascii=False, separators=(",", ":")) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def take_recalls(path: Path) -> Recalls:
    """Take the log away (renamed, read, removed) and return what it holds.

    Renaming first means a hook appending meanwhile either reaches the taken file before it is
    read or starts a new log; no line is applied twice.
    """
    taking = path.with_name(f"{path.name}.{os.getpid()}.{_thread.get_ident()}.taking")
    try:
        os.rename(path, taking)
    except FileNotFoundError:
        return Recalls()
    try:
        with open(taking, "rb") as fh:
            data = fh.read(MAX_READ_BYTES)
    finally:
        taking.unlink(missing_ok=True)
    recalls = Recalls()
    for raw in data.splitlines():
        parsed = _parse(raw)
        if parsed is None:
            recalls.skipped_lines += 1
        else:
            recalls.add(*parsed)
    return recalls


def _parse(raw: bytes) -> tuple[str, list[str]] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not (isinstance(value, list) and len(value) == 2):
        return None
    stamp, ids = value
    if not isinstance(stamp, str) or not _STAMP.fullmatch(stamp) or not isinstance(ids, list):
        return None
    if not all(isinstance(i, str) and i for i in ids):
        return None
    return stamp, ids
