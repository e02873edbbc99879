"""The ledger's record and line format: what one record is, how it is hashed, encoded,
checked and parsed, and how data is prepared (scrubbed, validated) before it is stored.

Pure code with no file handling — `hrm.storage.ledger` does the I/O, locking and anchoring.
Kept apart because the format is the contract other tools verify against (`record_hash`,
`canonical_json`), and because verification's hot loop lives here.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from hrm.errors import HRMError
from hrm.scrubbing import SCRUBBED as _SCRUBBED
from hrm.scrubbing import scrub_text

__all__ = [
    "GENESIS_HASH",
    "REDACTION_KIND",
    "LedgerRecord",
    "VerifyError",
    "canonical_json",
    "record_hash",
]

GENESIS_HASH = "0" * 64
"""The ``prev`` of a ledger's first record."""

REDACTION_KIND = "ledger_redaction"
"""Kind of the record a forget appends after rewriting records in place (see `_scan`)."""

_FIELDS = ("data", "hash", "kind", "prev", "seq", "ts")
_HASH_KEY = b',"hash":"'
_PREV_KEY = b',"prev":"'
_SEQ_KEY = b',"seq":'
_TS_KEY = b',"ts":'
_TS_TAIL = len('2026-01-02T03:04:05.000000Z"}\n')  # bytes after the ts key's opening quote
_REDACTED_KEY = b',"redacted":true,'
_REDACTION_MARK = b'"kind":"' + REDACTION_KIND.encode() + b'"'
_MAX_KIND = 200
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS
_PLAIN_FLOATS = (1e-4, 1e16)
"""Floats whose magnitude lies in [low, high) print the same from orjson as from `json`
(Python's repr); outside it Python writes an exponent (``1e-05``) and orjson may not."""
_WALK = threading.local()
"""Per thread: did the last `_prepare` walk meet a float outside `_PLAIN_FLOATS`?"""


@dataclass(frozen=True, slots=True)
class LedgerRecord:
    """One record of a ledger, as stored (a value: never mutated)."""

    seq: int
    """Position in the ledger, from 1."""
    ts: str
    """When it was appended: ISO-8601 UTC ending in ``Z``."""
    kind: str
    """What kind of record this is (e.g. ``"turn"``, ``"work_order"``)."""
    data: dict[str, Any]
    """The payload, scrubbed of secrets."""
    prev: str
    """Hash of the previous record (`GENESIS_HASH` for the first)."""
    hash: str
    """SHA-256 over the canonical JSON of seq, ts, kind, data and prev."""
    line: int
    """1-based line number in the file (not hashed)."""
    offset: int = 0
    """Byte offset of the line in the file (not hashed); `Ledger.read_at` takes it."""
    redacted: bool = False
    """Text in `data` was replaced by a forget: `hash` is the original record's, and a later
    ``ledger_redaction`` record vouches for what the line holds now."""

    @property
    def timestamp(self) -> datetime:
        """`ts` as an aware UTC datetime."""
        return datetime.fromisoformat(self.ts).astimezone(UTC)

    def to_dict(self) -> dict[str, Any]:
        """The stored fields plus line and offset, JSON-ready."""
        return {
            "seq": self.seq,
            "ts": self.ts,
            "kind": self.kind,
            "data": self.data,
            "prev": self.prev,
            "hash": self.hash,
            "line": self.line,
            "offset": self.offset,
            **({"redacted": True} if self.redacted else {}),
        }


@dataclass(frozen=True, slots=True)
class VerifyError:
    """Where a ledger first goes wrong and why."""

    line: int
    seq: int | None
    """The sequence number expected at that line."""
    reason: str
    offset: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"line": self.line, "seq": self.seq, "reason": self.reason, "offset": self.offset}


@dataclass(frozen=True, slots=True)
class _Anchor:
    seq: int
    hash: str
    end: int


class _Corrupt(Exception):
    """A bad line found while scanning (internal; becomes a VerifyError or HRMError)."""

    def __init__(self, line: int, seq: int | None, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.error = VerifyError(line=line, seq=seq, reason=reason, offset=offset)


class _BadValue(Exception):
    """Data that cannot be stored; `path` is filled in while unwinding."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []


def canonical_json(value: Any) -> str:
    """The canonical JSON text hrm hashes: sorted keys, no spaces, UTF-8 characters kept."""
    return _ENCODER.encode(value)


def record_hash(*, seq: int, ts: str, kind: str, data: Mapping[str, Any], prev: str) -> str:
    """SHA-256 (hex) of a record: the hash any independent tool can recompute."""
    body = canonical_json({"data": data, "kind": kind, "prev": prev, "seq": seq, "ts": ts})
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


# ── line format ─────────────────────────────────────────────────────────────


def _encode_line(
    seq: int, ts: str, kind: str, prev: str, data_json: str, *, path: Path
) -> tuple[str, bytes]:
    """Hash and stored line of one record; identical to canonical JSON of all six fields."""
    head = '{"data":' + data_json
    tail = f',"kind":{_ENCODER.encode(kind)},"prev":"{prev}","seq":{seq},"ts":"{ts}"}}'
    try:
        head_b, tail_b = head.encode("utf-8"), tail.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise HRMError.validation_failed(
            f"Ledger data for '{path}' holds a string that is not valid Unicode "
            f"(a lone surrogate): {exc.reason}",
            path=str(path),
        ) from None
    digest = hashlib.sha256(head_b + tail_b).hexdigest()
    return digest, b"".join((head_b, b',"hash":"', digest.encode(), b'"', tail_b, b"\n"))


def _encode_redacted(record: LedgerRecord, data: Mapping[str, Any]) -> tuple[bytes, str]:
    """The line of `record` with `data` in place of its own, marked redacted, and the hash a
    redaction record names for it (SHA-256 of the line without its ``hash`` member).

    ``hash`` and ``prev`` stay the original record's, so the chain still links through it.
    """
    fields = {
        "data": data, "kind": record.kind, "prev": record.prev, "redacted": True,
        "seq": record.seq, "ts": record.ts,
    }
    body = _ENCODER.encode(fields).encode("utf-8")
    digest = hashlib.sha256(body).hexdigest()
    cut = body.rindex(b',"kind":')  # the top-level key: data (first) may nest a "kind"
    line = body[:cut] + b',"hash":"' + record.hash.encode() + b'"' + body[cut:] + b"\n"
    return line, digest


def _check_line(raw: bytes) -> tuple[int, str, str]:
    """Seq, hash and prev of one stored line whose own hash verifies; ValueError otherwise."""
    seq, digest, prev = _check_fast(raw)
    return seq, digest.decode(), prev.decode()


def _check_fast(raw: bytes) -> tuple[int, bytes, bytes]:
    body = raw[:-1] if raw.endswith(b"\n") else raw
    i = body.rfind(_HASH_KEY)
    digest = body[i + 9 : i + 73]
    if i < 0 or body[i + 73 : i + 74] != b'"':
        raise ValueError("no hash")
    if (
        hashlib.sha256(body[:i] + body[i + 74 :]).hexdigest().encode() != digest
        and _REDACTED_KEY not in body[i + 74 :]
    ):
        # A record a forget rewrote keeps its original hash; a single line cannot prove its
        # redaction (the later redaction record does, which `_scan` checks), so a local read
        # takes it as marked.
        raise ValueError("hash mismatch")
    # The hash held, so these are the writer's bytes: the markers are unambiguous because
    # quotes inside JSON strings are always escaped.
    p = body.find(_PREV_KEY, i + 74)
    s = body.find(_SEQ_KEY, p + 73)
    t = body.find(_TS_KEY, s + 7)
    if p < 0 or s < 0 or t < 0:
        raise ValueError("not in canonical form")
    return int(body[s + 7 : t]), digest, body[p + 9 : p + 73]


def _scan(
    fh: BinaryIO, offset: int, end: int, seq: int, prev: bytes
) -> Iterator[tuple[int, bytes, int, bytes]]:
    """Yield (offset, raw line, seq, hash) of verified records from `offset` up to `end`.

    Raises `_Corrupt` at the first line whose hash, seq or link to its predecessor is wrong.
    """
    fh.seek(offset)
    sha256 = hashlib.sha256
    redacted: dict[int, tuple[bytes, bytes, int]] = {}
    """Records marked redacted, awaiting the later redaction record that names them:
    seq → (original hash, hash of the line as it is now, offset)."""
    for raw in fh:
        if offset >= end:
            break
        n = len(raw)
        if offset + n > end or raw[-1:] != b"\n":
            raise _Corrupt(seq, seq, "incomplete final line", offset)
        i = raw.rfind(_HASH_KEY)
        digest = raw[i + 9 : i + 73]
        if i < 0 or raw[i + 73 : i + 74] != b'"':  # the closing quote is not hashed: check it
            raise _Corrupt(seq, seq, _diagnose(raw), offset)
        now = sha256(raw[:i] + raw[i + 74 : -1]).hexdigest().encode()
        if now != digest:
            if _REDACTED_KEY not in raw[i + 74 :]:
                raise _Corrupt(seq, seq, _diagnose(raw), offset)
            redacted[seq] = (digest, now, offset)
            _check_links(raw, i, seq, prev, offset)
        else:
            # Fast path: hrm writes ts at a fixed width, so seq and prev sit at known places.
            marker = b'","seq":%d,"ts":"' % seq
            m = n - _TS_TAIL - len(marker)
            if (
                raw[m : m + len(marker)] != marker
                or raw[m - 64 : m] != prev
                or raw[m - 73 : m - 64] != _PREV_KEY
            ):
                _check_links(raw, i, seq, prev, offset)
            if redacted and _REDACTION_MARK in raw[i + 74 :]:
                _confirm_redactions(raw, redacted)
        yield offset, raw, seq, digest
        prev = digest
        seq += 1
        offset += n
    if redacted:
        first = min(redacted)
        raise _Corrupt(
            first, first,
            f"record {first} was rewritten and marked redacted, but no later redaction record "
            "vouches for what it holds now",
            redacted[first][2],
        )


def _confirm_redactions(raw: bytes, redacted: dict[int, tuple[bytes, bytes, int]]) -> None:
    """Drop from `redacted` the records a (verified) redaction record vouches for.

    It names each record it rewrote by seq, original hash and the hash of its new line (the
    line's bytes without its ``hash`` member, as for any record), so a redacted line is
    exactly what the forget wrote, and nothing else may change in it.
    """
    try:
        entries = json.loads(raw)["data"]["records"]
        for entry in entries:
            seq = int(entry["seq"])
            expected = (str(entry["hash"]).encode(), str(entry["redacted_hash"]).encode())
            if seq in redacted and redacted[seq][:2] == expected:
                del redacted[seq]
    except (ValueError, KeyError, TypeError):
        return  # not a redaction record hrm wrote: it vouches for nothing


def _check_links(raw: bytes, i: int, seq: int, prev: bytes, offset: int) -> None:
    """Slow path of `_scan`: find seq and prev wherever they are; raise `_Corrupt` if wrong."""
    p = raw.find(_PREV_KEY, i + 74)
    s = raw.find(_SEQ_KEY, p + 73)
    t = raw.find(_TS_KEY, s + 7)
    try:
        found = int(raw[s + 7 : t]) if p > 0 and s > 0 and t > 0 else -1
    except ValueError:
        found = -1
    if found != seq:
        raise _Corrupt(seq, seq, _seq_reason(seq, found), offset)
    if raw[p + 9 : p + 73] != prev:
        reason = (
            f"chain broken: prev does not match the hash of record {seq - 1}"
            if seq > 1
            else "chain broken: the first record's prev is not the genesis hash"
        )
        raise _Corrupt(seq, seq, reason, offset)


def _seq_reason(expected: int, found: int) -> str:
    if found < 0:
        return "not in canonical form: no readable seq"
    if found < expected:
        return f"seq {found} where {expected} was expected: a duplicated or reordered record"
    return f"seq {found} where {expected} was expected: records are missing or reordered"


def _diagnose(raw: bytes) -> str:
    """Why a line failed its hash check, in words (slow path: only for bad lines)."""
    text = raw.rstrip(b"\n")
    if not text.strip():
        return "empty line"
    try:
        obj = json.loads(text)
    except ValueError:
        return "not valid JSON (or not UTF-8)"
    if not isinstance(obj, dict):
        return "not a ledger record: not a JSON object"
    missing = [name for name in _FIELDS if name not in obj]
    if missing:
        return f"not a ledger record: missing {', '.join(missing)}"
    try:
        expected = record_hash(
            seq=obj["seq"], ts=obj["ts"], kind=obj["kind"], data=obj["data"], prev=obj["prev"]
        )
    except (TypeError, ValueError):
        return "not a ledger record: a field has the wrong type"
    if obj["hash"] != expected:
        return "hash mismatch: the record's content was altered"
    return "not in canonical form: the line was rewritten after it was appended"


def _parse_record(raw: bytes, *, line: int, offset: int, path: Path) -> LedgerRecord:
    try:
        obj = json.loads(raw)
        return LedgerRecord(
            seq=obj["seq"],
            ts=obj["ts"],
            kind=obj["kind"],
            data=obj["data"],
            prev=obj["prev"],
            hash=obj["hash"],
            line=line,
            offset=offset,
            redacted=obj.get("redacted") is True,
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        raise HRMError.ledger_corrupt(path, line, line, _diagnose(raw)) from None


def _check_anchor_after_scan(
    anchor: _Anchor | None,
    last_seq: int,
    last_hash: bytes,
    hash_at: Callable[[int], tuple[int, bytes] | None],
) -> None:
    """Raise `_Corrupt` if the records read end before the anchor or contradict it."""
    if anchor is None:
        return
    if last_seq < anchor.seq:
        raise _Corrupt(
            last_seq + 1, last_seq + 1,
            f"the ledger ends at seq {last_seq} but its anchor vouches for seq {anchor.seq}: "
            "committed records were cut from the end",
            0,
        )
    found = last_hash if last_seq == anchor.seq else None
    if found is None:
        at = hash_at(anchor.end)
        found = at[1] if at is not None and at[0] == anchor.seq else None
    if found != anchor.hash.encode():
        raise _Corrupt(
            anchor.seq, anchor.seq,
            f"record {anchor.seq} does not match the hash its anchor recorded: the ledger was "
            "rewritten",
            anchor.end,
        )


# ── data preparation ────────────────────────────────────────────────────────


def _prepare(value: Any) -> Any:
    """Scrub `value` like `hrm.scrubbing.scrub` and check it is JSON, in one walk.

    Ordered by cost: concrete types first, the `Mapping` ABC check (slower than scrubbing a
    memoised string) only for what is not a plain dict. A turn's records hold hundreds of
    values, most of them short strings seen before: those are looked up in the scrubber's memo
    directly (`SCRUBBED`), a dictionary lookup instead of two calls.
    """
    if isinstance(value, str):
        return _SCRUBBED.get(value) or scrub_text(value)
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            if value and not _PLAIN_FLOATS[0] <= abs(value) < _PLAIN_FLOATS[1]:
                _WALK.exotic = True
            return value
        raise _BadValue(f"is {value!r}; ledger numbers must be finite")
    memo = _SCRUBBED.get
    if isinstance(value, list | tuple):
        items: list[Any] = []
        for index, item in enumerate(value):
            try:
                items.append(
                    (memo(item) or scrub_text(item)) if type(item) is str else _prepare(item)
                )
            except _BadValue as bad:
                bad.path.append(f"[{index}]")
                raise
        return items
    if isinstance(value, (dict, Mapping)):  # dict first: the Mapping ABC check is slow
        out: dict[str, Any] = {}
        low, high = _PLAIN_FLOATS
        for key, item in value.items():
            if type(key) is not str and not isinstance(key, str):
                raise _BadValue(f"has a non-string key {key!r}; JSON object keys are strings")
            kind = type(item)
            stored = item
            try:
                # Scalars (most values) inline: a call less for each. A float is taken here
                # only when it is plainly printable (NaN fails both tests): else the call
                # refuses it or marks the walk exotic (D360).
                if kind is str:
                    stored = memo(item) or scrub_text(item)
                elif kind is float:
                    if not (low <= abs(item) < high or item == 0.0):
                        stored = _prepare(item)
                elif not (kind is int or item is None or kind is bool):
                    stored = _prepare(item)
            except _BadValue as bad:
                bad.path.append(f"[{key!r}]")
                raise
            out[memo(key) or scrub_text(key)] = stored
        return out
    raise _BadValue(f"is a {type(value).__name__}, which JSON cannot hold; convert it first")


def _check_kind(kind: str) -> None:
    if not isinstance(kind, str) or not kind or len(kind) > _MAX_KIND:
        raise HRMError.validation_failed(
            f"Ledger record kind must be a non-empty string of at most {_MAX_KIND} characters, "
            f"got {kind!r}",
            kind=repr(kind)[:100],
        )


def _prepare_item(kind: str, data: Any) -> tuple[str, dict[str, Any], str]:
    _check_kind(kind)
    if not isinstance(data, Mapping):
        raise HRMError.validation_failed(
            f"Ledger record data must be a dict, got {type(data).__name__}", kind=kind
        )
    _WALK.exotic = False
    try:
        prepared = _prepare(data)
    except _BadValue as bad:
        key = "data" + "".join(reversed(bad.path))
        raise HRMError.validation_failed(
            f"Cannot append '{kind}' record: {key} {bad.reason}", key=key, kind=kind
        ) from None
    return scrub_text(kind), prepared, _canonical_prepared(prepared, exotic=_WALK.exotic)


def _canonical_prepared(prepared: dict[str, Any], *, exotic: bool) -> str:
    """`canonical_json` of data `_prepare` returned, byte for byte, about 7x faster.

    orjson writes the same text as the standard encoder for what `_prepare` lets through
    (sorted keys, no spaces, UTF-8 kept, the same string escapes), except floats that Python
    prints with an exponent and integers beyond 64 bits: those records take the standard
    encoder, so the canonical form, and every hash, stays what any tool recomputes (D314).
    """
    if not exotic:
        try:
            return orjson.dumps(prepared, option=_ORJSON_OPTIONS).decode("utf-8")
        except orjson.JSONEncodeError:
            pass  # a big integer or a lone surrogate: the standard encoder says which
    return _ENCODER.encode(prepared)


def _encoded_item(kind: str, data: Any) -> tuple[str, dict[str, Any], str]:
    """`_prepare_item` for data the caller already scrubbed and made plain JSON."""
    _check_kind(kind)
    try:
        return kind, data, _ENCODER.encode(data)
    except (TypeError, ValueError) as exc:
        raise HRMError.validation_failed(
            f"Cannot append '{kind}' record: {exc}", kind=kind
        ) from None


def _format_ts(moment: datetime) -> str:
    # isoformat is several times faster than strftime; microseconds keep the width fixed.
    if moment.tzinfo is UTC:  # the system clock's own times: no conversion to pay for
        return moment.isoformat(timespec="microseconds")[:-6] + "Z"
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
