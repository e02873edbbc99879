"""Redaction: replacing forgotten text inside ledger records without breaking the chain.

A forget must leave no byte of the forgotten text under the home, yet ledgers are append-only
and hash-chained. The scheme (D184): each record holding the text is rewritten in place with
the text replaced by `MARKER` in its data, and marked ``"redacted": true``; it keeps its
original ``hash`` and ``prev``, so the records after it still link to it. A new
``ledger_redaction`` record, chained at the end of the same ledger, names each rewritten record
by seq, original hash and the hash of its new line — never the text, nor a hash of it (a hash
of a short phrase would let anyone confirm a guess). `verify` accepts a record whose hash no
longer recomputes only when a later redaction record vouches for exactly the line it holds, so
everything else a forget did not touch is still proved unaltered.

The rewrite is in place under the ledger's lock, through a redo file (`hrm.storage._rewrite`),
so it survives a crash and open handles in other processes re-read the tail (their next
append chains onto the redaction record, as after a quarantine). Lines that are not records
(damage) have the text's bytes overwritten with ``x``. `redact_items` is the same replacement
for records not written yet: the turn that asks to forget something redacts its own record.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hrm._file_lock import held
from hrm.errors import HRMError
from hrm.storage._ledger_format import (
    REDACTION_KIND,
    _Anchor,
    _check_line,
    _encode_line,
    _encode_redacted,
    _format_ts,
    _parse_record,
    _prepare_item,
)
from hrm.storage._rewrite import lines_of
from hrm.types import Clock, system_clock

__all__ = [
    "MARKER",
    "MIN_TEXT",
    "LedgerRedaction",
    "Needles",
    "redact_copy",
    "redact_items",
    "redact_ledger",
    "redact_value",
]

MARKER = "[forgotten]"
"""What a forgotten text is replaced with, in ledgers, rows and files."""
MIN_TEXT = 3
"""The shortest text a forget accepts (non-space characters): "a" would erase every record."""


class Needles:
    """The texts to forget, in every form they are stored in.

    A text is matched case-insensitively, as written, as a key made of it (its words joined
    by ``-``, ``_`` or ``.``), and as JSON escapes each of those (a value stored as JSON text
    inside a JSON record holds its quotes and non-ASCII letters escaped).
    """

    def __init__(self, texts: Sequence[str]) -> None:
        cleaned = []
        for text in texts:
            if not isinstance(text, str) or len("".join(text.split())) < MIN_TEXT:
                raise HRMError.validation_failed(
                    f"Cannot forget {text!r}: give at least {MIN_TEXT} characters of the text "
                    "to forget", text=str(text)[:40],
                )
            cleaned.append(text.strip())
        self.texts = tuple(dict.fromkeys(cleaned))
        variants: list[str] = []
        for text in self.texts:
            words = text.split()
            # Keys made from the text ("fact.i-live-in-lisbon") hold it too, slugged: from its
            # words as written, and from its letters and digits alone, as keys are made ("12
            # Rua Augusta, Lisbon" is "12-rua-augusta-lisbon" in a key, D450).
            plain = re.findall(r"[^\W_]+", text)
            slugs = [sep.join(w) for w in (words, plain) for sep in ("-", "_", ".")
                     if len(w) > 1]  # fmt: skip
            slugs = list(dict.fromkeys(slugs))
            for form in (text, *slugs):
                for stored in (form, json.dumps(form)[1:-1],
                               json.dumps(form, ensure_ascii=False)[1:-1]):
                    if stored not in variants:
                        variants.append(stored)
        self.variants = tuple(sorted(variants, key=len, reverse=True))
        self.pattern = re.compile("|".join(re.escape(v) for v in self.variants), re.IGNORECASE)
        # As bytes, each form also as a JSON line holds it (its backslashes and quotes escaped
        # once more): a prefilter over raw lines must not miss a JSON text inside a JSON field.
        lined = [*variants, *(json.dumps(v, ensure_ascii=False)[1:-1] for v in variants)]
        raw = {v.encode() for v in lined} | {v.lower().encode() for v in lined}
        self._lowered = tuple(sorted({b.lower() for b in raw}))
        self.byte_pattern = re.compile(
            b"|".join(re.escape(b) for b in sorted(raw, key=len, reverse=True)), re.IGNORECASE
        )

    def in_bytes(self, raw: bytes) -> bool:
        """Whether `raw` may hold a text (ASCII case folded; a prefilter, never a miss)."""
        low = raw.lower()
        return any(needle in low for needle in self._lowered)

    def sub(self, text: str) -> str:
        """`text` with every occurrence replaced by `MARKER`."""
        return self.pattern.sub(MARKER, text)

    def like_patterns(self) -> list[str]:
        """SQL ``LIKE`` patterns (escape ``\\``) finding a value that holds a text."""
        return [
            "%" + v.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            for v in self.variants
        ]


def redact_value(value: Any, needles: Needles) -> Any:
    """`value` with every string (and dict key) redacted; the same object if nothing changed."""
    if isinstance(value, str):
        return needles.sub(value) if needles.pattern.search(value) else value
    if isinstance(value, list):
        items = [redact_value(item, needles) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for key, item in value.items():
            new_key = redact_value(key, needles) if isinstance(key, str) else key
            new_item = redact_value(item, needles)
            changed |= new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value
    return value


def redact_items(
    items: Sequence[tuple[str, dict[str, Any]]], texts: Sequence[str]
) -> list[tuple[str, dict[str, Any]]]:
    """Records about to be appended, with `texts` replaced by `MARKER`.

    The turn loop's record step runs its own records through this when the turn itself asked
    to forget something ("Forget that I live in Lisbon"), so the turn does not write down the
    very text it was asked to forget.
    """
    if not texts:
        return list(items)
    needles = Needles(texts)
    return [(kind, redact_value(data, needles)) for kind, data in items]


# ── ledgers ─────────────────────────────────────────────────────────────────


@dataclass(frozen=True, kw_only=True)
class LedgerRedaction:
    """What `redact_ledger` rewrote in one ledger."""

    path: Path
    seqs: list[int] = field(default_factory=list)
    """The records rewritten (marked redacted)."""
    damaged_lines: int = 0
    """Lines that were not records, whose matching bytes were overwritten."""
    record_seq: int | None = None
    """Seq of the ``ledger_redaction`` record appended."""


def redact_ledger(
    path: Path, needles: Needles, *, reason: str = "forget", clock: Clock = system_clock
) -> LedgerRedaction | None:
    """Rewrite every record of the ledger at `path` that holds a needle; None if none does.

    Raises:
        HRMError: ``PERMISSION_DENIED`` / ``DISK_FULL`` from the filesystem (the ledger is then
            untouched, or finished by the next writable open).
    """
    from hrm.storage.ledger import Ledger, _fstat_size, _os_error

    with Ledger(path):  # finishes an interrupted rewrite, cuts a torn tail past the anchor
        pass
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _os_error(exc, path) from exc
    try:
        with held(fd, path=str(path)):
            size = _fstat_size(fd, path)
            plan = _plan(fd, path, size, needles)
            if plan is None:
                return None
            first, tail, seqs, damaged, vouched, last = plan
            anchor: _Anchor | None = None
            record_line = b""
            if last is not None:  # a damaged last line takes no record after it
                record_line, anchor = _redaction_record(
                    path, vouched, last, reason, first + len(tail), size, clock
                )
            try:
                from hrm.storage._rewrite import rewrite_tail

                rewrite_tail(fd, path, first, tail + record_line, anchor)
            except OSError as exc:
                raise _os_error(exc, path) from exc
    finally:
        os.close(fd)
    if anchor is None:
        return LedgerRedaction(path=path, seqs=seqs, damaged_lines=damaged)
    from hrm.storage.manifest import Head, set_heads

    set_heads(path, Head(anchor.seq, anchor.hash, anchor.end))
    return LedgerRedaction(path=path, seqs=seqs, damaged_lines=damaged, record_seq=anchor.seq)


def _plan(
    fd: int, path: Path, size: int, needles: Needles
) -> tuple[int, bytes, list[int], int, list[dict[str, Any]], tuple[int, str] | None] | None:
    """The new tail from the first affected line, the seqs rewritten, the damaged lines
    overwritten, what the redaction record vouches for, and the last record's seq and hash
    (None when the last line is no record)."""
    first = -1
    parts: list[bytes] = []
    seqs: list[int] = []
    vouched: list[dict[str, Any]] = []
    damaged = 0
    final = b""
    for offset, raw in lines_of(fd, 0, size):
        new = raw
        final = raw
        if needles.in_bytes(raw):
            try:
                seq = _check_line(raw)[0]
            except ValueError:
                seq = -1
            if seq > 0:
                record = _parse_record(raw, line=seq, offset=offset, path=path)
                data = redact_value(record.data, needles)
                if data is not record.data:
                    new, redacted_hash = _encode_redacted(record, data)
                    seqs.append(seq)
                    vouched.append(
                        {"seq": seq, "hash": record.hash, "redacted_hash": redacted_hash}
                    )
            else:
                new = needles.byte_pattern.sub(lambda m: b"x" * len(m.group()), raw)
                damaged += new != raw
        if new is not raw and first < 0:
            first = offset
        if first >= 0:
            parts.append(new)
    if first < 0:
        return None
    try:
        seq, digest, _ = _check_line(final) if final.endswith(b"\n") else (0, "", "")
        last: tuple[int, str] | None = (seq, digest) if seq else None
    except ValueError:
        last = None
    return first, b"".join(parts), seqs, damaged, vouched, last


def _redaction_record(
    path: Path,
    vouched: list[dict[str, Any]],
    last: tuple[int, str],
    reason: str,
    start: int,
    old_size: int,
    clock: Clock,
) -> tuple[bytes, _Anchor]:
    """The ``ledger_redaction`` line chained after the last record, and the anchor at it.

    Padded when the file would keep its size: open handles notice other writers by it.
    """
    data: dict[str, Any] = {"reason": reason, "marker": MARKER, "records": vouched}
    seq, ts = last[0] + 1, _format_ts(clock())
    while True:
        kind, _, data_json = _prepare_item(REDACTION_KIND, data)
        digest, line = _encode_line(seq, ts, kind, last[1], data_json, path=path)
        if start + len(line) != old_size:
            return line, _Anchor(seq, digest, start + len(line))
        data["padding"] = data.get("padding", "") + " "


def redact_copy(path: Path, needles: Needles) -> int:
    """Redact a copy of a ledger set aside by a quarantine (no chain to keep: rewrite it).

    Returns how many lines changed. The copy's SHA-256 in the quarantine record no longer
    matches afterwards; the forget's report says so.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return 0
    if not needles.in_bytes(raw):
        return 0
    changed = 0
    out: list[bytes] = []
    for line in raw.splitlines(keepends=True):
        new = line
        if needles.in_bytes(line):
            try:
                record = _parse_record(line, line=0, offset=0, path=path)
                data = redact_value(record.data, needles)
                new = _encode_redacted(record, data)[0] if data is not record.data else line
            except HRMError:
                new = line
            if needles.byte_pattern.search(new):
                new = needles.byte_pattern.sub(lambda m: b"x" * len(m.group()), new)
        changed += new != line
        out.append(new)
    _replace_file(path, b"".join(out))
    return changed


def _replace_file(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically (temp, fsync, rename), keeping its mode."""
    temp = path.with_name(path.name + ".forget-tmp")
    mode = path.stat().st_mode & 0o777
    with open(temp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(temp, mode)
    os.replace(temp, path)
